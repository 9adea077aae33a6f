"""tiny-agent sessions → warehouse rows: read again (hashed as read, cut at the first corrupting line), in
the verifier's own pass (SinglePass), or beside it in another process (WholeFile)."""

from __future__ import annotations

import json
from collections import deque
from itertools import chain
from typing import Any

from sessaudit.evidence import open_evidence
from sessaudit.formats.tiny_agent.check.header import read_header
from sessaudit.formats.tiny_agent.warehouse.lines import header_text
from sessaudit.formats.tiny_agent.warehouse.v1 import extract_v1
from sessaudit.formats.tiny_agent.warehouse.v2 import V2Extractor, extract_v2
from sessaudit.framing import Line, LineReader
from sessaudit.model import Finding, Source
from sessaudit.plugin import UNDECODED
from sessaudit.strictjson import LineProblem, decode_line
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import EXTRACTION_ERRORS, EvidenceChanged, cut_line


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


def extract_source(
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
