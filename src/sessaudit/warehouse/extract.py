"""One verified source → its records: the evidence read again read-only (and proved to be the bytes that were
verified), cut to the verified prefix, and handed to its format's extractor."""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from collections.abc import Iterable
from itertools import chain
from typing import Any, Final

from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.formats.half_pi.snapshot import SnapshotOptions, SnapshotUnavailable, open_snapshot
from sessaudit.formats.interface import UNDECODED
from sessaudit.formats.tiny_agent.check.header import read_header
from sessaudit.formats.tiny_agent.warehouse.lines import header_text
from sessaudit.formats.tiny_agent.warehouse.v1 import extract_v1
from sessaudit.formats.tiny_agent.warehouse.v2 import V2Extractor, extract_v2
from sessaudit.framing import Line, LineReader
from sessaudit.limits import DEFAULT_MAX_LINE_BYTES
from sessaudit.model import Finding, Source
from sessaudit.rules import find_rule
from sessaudit.strictjson import LineProblem, decode_line
from sessaudit.verdicts import Verdict
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.half_pi import extract_store
from sessaudit.warehouse.rivumi import extract_events

# A record at or after a finding with one of these effects is not verified history (CONTRACT §4 verdicts).
CUTTING: Final = frozenset({Verdict.CORRUPT, Verdict.UNREADABLE, Verdict.UNSUPPORTED})


class EvidenceChanged(Exception):
    """The evidence is no longer the bytes that were verified; its records are not loaded."""


def cutting(item: Finding) -> bool:
    rule = find_rule(item.rule)
    return rule is not None and rule.verdict in CUTTING


def cut_line(findings: Iterable[Finding], path: str) -> int | None:
    """The first line of `path` that is not verified history: the earliest line of a corrupting finding
    there (1 when such a finding has no line), None when there is none."""
    lines = [item.location.line or 1 for item in findings if item.location.path == path and cutting(item)]
    return min(lines) if lines else None


# what a line that is not what the verifier checked may raise in an extractor (the hash decides)
EXTRACTION_ERRORS: Final = (ValueError, LookupError, TypeError, AttributeError, RecursionError)


class WholeFile:
    """A tiny-agent v2 session extracted whole, every committed line, while another process verifies it
    (`load` with more than one job): what was read, to be compared with what was verified. The rows are
    the verified history's exactly when the verifier found nothing that cuts it and read the very same
    bytes (length and sha256), and its session id is the one the rows were given (`matches`)."""

    def __init__(self) -> None:
        self.bytes_read = 0
        self.sha256: str | None = None
        self.session_id: str | None = None
        self.failed = False  # not a v2 session, or a line the extractor could not read

    def extract(self, real_path: str, source_id: str, into: Extraction, max_line_bytes: int) -> None:
        try:
            stream, size = open_evidence(real_path)
        except OSError:
            self.failed = True  # the second read after verification reports it
            return
        with stream:
            reader = LineReader(stream, size, max_line_bytes=max_line_bytes, report_progress=False)
            lines = iter(reader)
            try:
                first = next(lines, None)
                if first is None:
                    self.failed = True
                    return
                header = decode_line(first.data, strip_bom=True)
                opened = read_header(header)
                if not isinstance(header, dict) or opened.unsupported or opened.violation is not None:
                    self.failed = True
                    return
                self.session_id = opened.session_id
                # every line, no cut: a line over --max-line-bytes (no data) fails to decode, and SA010
                # cuts the verified history there too
                extract_v2(chain([first], lines), None, source_id, self.session_id, into)
            except (*EXTRACTION_ERRORS, LineProblem, OSError):
                self.failed = True
                return
        self.bytes_read, self.sha256 = reader.bytes_read, reader.sha256

    def matches(self, source: Source, findings: list[Finding]) -> bool:
        if self.failed or source.format != "tiny-agent" or source.format_version != "2" or not source.files:
            return False
        evidence = source.files[0]
        return (
            bool(source.sessions)
            and source.sessions[0].session_id == self.session_id
            and evidence.bytes == self.bytes_read
            and evidence.sha256 == self.sha256
            and source.sha256 == self.sha256
            and cut_line(findings, evidence.path) is None
        )


class SinglePass:
    """`sessaudit load`'s one pass over a tiny-agent v2 session: a LineTap that extracts each line's rows
    (into `into`, which may spill them) from the value the verifier decoded, right after the verifier
    checked it, so the file is read and decoded once.

    A line is extracted only while no corrupting finding names it or an earlier line; the first such
    finding stops the pass. The rows are the two-pass extraction's exactly when, once the verifier is
    done, its cut (`cut_line` of all findings) is the line the pass stopped at and no finding made later
    named a line already extracted: `complete()` checks that. Otherwise (a finding about an earlier line
    made at the end, --max-findings, a v1 session, an extractor error) the caller discards the rows and
    extracts in a second pass, as it would without this."""

    def __init__(self, path: str, source_id: str, into: Extraction) -> None:
        self.path = path
        self.source_id = source_id
        self.into = into
        self.extractor: V2Extractor | None = None
        self.session_id: str | None = None
        self.seen_header = False
        self.stopped_at: int | None = None  # the first line not extracted, once a corrupting finding came
        self.last_extracted = 0  # the last line extracted (0: none)
        self.spoilt = False  # a finding named a line already extracted, or the extractor failed
        self.checked = 0  # findings looked at so far

    def __call__(self, line: Line, value: Any, session_id: str | None, findings: list[Finding]) -> None:
        if line.number == 1:
            self.seen_header = True  # a v2 verifier's tap (a v1 session never calls it)
            self.session_id = session_id
        if self.stopped_at is not None:
            return
        if len(findings) > self.checked:
            cut = cut_line(findings[self.checked :], self.path)
            self.checked = len(findings)
            if cut is not None:
                self.stopped_at = cut
                self.spoilt = cut <= self.last_extracted
                return
        try:
            if line.number == 1:
                raw = header_text(line.data)
                header = value if value is not UNDECODED else json.loads(raw)
                header = header if isinstance(header, dict) else {}
                self.extractor = V2Extractor(self.source_id, session_id, header, raw, self.into)
            elif self.extractor is not None:
                self.extractor.line(line, value)
        except EXTRACTION_ERRORS:
            self.stopped_at, self.spoilt = line.number, True
            return
        self.last_extracted = line.number

    def complete(self, source: Source, findings: list[Finding]) -> bool:
        """Whether the rows extracted are the verified history's exactly; if so, finish `into` as
        `extract()` would have."""
        if (
            self.spoilt
            or not self.seen_header
            or source.format != "tiny-agent"
            or source.format_version == "1"
            or not source.sessions
            or source.sha256 is None
            or source.sessions[0].session_id != self.session_id
            or cut_line(findings, self.path) != self.stopped_at
        ):
            return False
        self.into.complete = self.stopped_at is None
        if self.extractor is not None:
            self.extractor.finish()
        return True


def read_verified(real_path: str, length: int, sha256: str) -> bytes:
    """The first `length` bytes of the file, which must hash to `sha256` (the verified range)."""
    stream, _ = open_evidence(real_path)
    with stream:
        data = b"".join(read_chunks(stream, length))
    if len(data) != length or hashlib.sha256(data).hexdigest() != sha256:
        raise EvidenceChanged(f"{real_path} changed after it was verified")
    return data


def extract(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Extraction:
    """The records of `source` (found at `real_path`), given the source's own findings, added to `into`
    (which may spill them as they come: then EvidenceChanged means rows already spilled are void)."""
    into = Extraction() if into is None else into
    if not source.sessions or source.sha256 is None:
        return into
    if source.format == "tiny-agent":
        _tiny_agent(source, real_path, findings, source_id, into, max_line_bytes)
    elif source.format == "rivumi":
        _rivumi(source, real_path, findings, source_id, into)
    elif source.format == "half-pi":
        _half_pi(source, real_path, findings, source_id, into)
    return into


def _tiny_agent(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction,
    max_line_bytes: int,
) -> None:
    evidence = source.files[0]
    cut = cut_line(findings, evidence.path)
    into.complete = cut is None
    session_id = source.sessions[0].session_id
    extractor = extract_v1 if source.format_version == "1" else extract_v2
    stream, _ = open_evidence(real_path)
    with stream:
        # read in chunks and hashed as it is read: memory holds a chunk and a line, never the file
        # verification's own line limit: a longer line was SA010, which cuts the extraction at or before it,
        # so its bytes are never needed and are not held (only hashed)
        reader = LineReader(stream, evidence.bytes, max_line_bytes=max_line_bytes, report_progress=False)
        lines = iter(reader)
        failure: Exception | None = None
        try:
            extractor(lines, cut, source_id, session_id, into)
        except EXTRACTION_ERRORS as error:
            failure = error  # a line that is not what was verified? the hash decides
        deque(lines, maxlen=0)  # the rest of the verified range (after a cut) is hashed too
    if reader.bytes_read != evidence.bytes or reader.sha256 != evidence.sha256:
        raise EvidenceChanged(f"{real_path} changed after it was verified")
    if failure is not None:
        raise failure


def _rivumi(
    source: Source, real_path: str, findings: list[Finding], source_id: str, into: Extraction
) -> None:
    events_path = os.path.join(source.path, "events.jsonl")
    evidence = next((item for item in source.files if item.path == events_path), None)
    session_id = source.sessions[0].session_id
    if evidence is None:
        return
    data = read_verified(os.path.join(real_path, "events.jsonl"), evidence.bytes, evidence.sha256)
    cut = cut_line(findings, events_path)
    into.complete = cut is None
    extract_events(data, events_path, cut, source_id, session_id, into)


def _half_pi(
    source: Source, real_path: str, findings: list[Finding], source_id: str, into: Extraction
) -> None:
    verified = {item.path: item.sha256 for item in source.files}
    excluded: set[tuple[str, int]] = set()
    for item in findings:
        table, rowid = item.location.table, item.location.rowid
        if cutting(item) and table is not None and rowid is not None:
            excluded.add((table, rowid))
    try:
        with open_snapshot(real_path, SnapshotOptions(integrity_check=False)) as snapshot:
            copied = {source.path + item.suffix: item.sha256 for item in snapshot.files}
            if copied != verified:
                raise EvidenceChanged(f"{real_path} changed after it was verified")
            extract_store(snapshot.connection, source_id, excluded, into)
    except SnapshotUnavailable as error:
        raise EvidenceChanged(f"{real_path} can no longer be copied: {error}") from None
