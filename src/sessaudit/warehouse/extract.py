"""One verified source → its records: the evidence read again read-only (and proved to be the bytes that were
verified), cut to the verified prefix, and handed to its format's extractor."""

from __future__ import annotations

import hashlib
import os
from collections import deque
from typing import Final

from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.formats.half_pi.snapshot import SnapshotOptions, SnapshotUnavailable, open_snapshot
from sessaudit.framing import LineReader
from sessaudit.limits import DEFAULT_MAX_LINE_BYTES
from sessaudit.model import Finding, Source
from sessaudit.rules import find_rule
from sessaudit.verdicts import Verdict
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.half_pi import extract_store
from sessaudit.warehouse.rivumi import extract_events
from sessaudit.warehouse.tiny_agent import extract_v2
from sessaudit.warehouse.tiny_agent_v1 import extract_v1

# A record at or after a finding with one of these effects is not verified history (CONTRACT §4 verdicts).
CUTTING: Final = frozenset({Verdict.CORRUPT, Verdict.UNREADABLE, Verdict.UNSUPPORTED})


class EvidenceChanged(Exception):
    """The evidence is no longer the bytes that were verified; its records are not loaded."""


def cutting(item: Finding) -> bool:
    rule = find_rule(item.rule)
    return rule is not None and rule.verdict in CUTTING


def cut_line(findings: list[Finding], path: str) -> int | None:
    """The first line of `path` that is not verified history: the earliest line of a corrupting finding
    there (1 when such a finding has no line), None when there is none."""
    lines = [item.location.line or 1 for item in findings if item.location.path == path and cutting(item)]
    return min(lines) if lines else None


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
        except (ValueError, LookupError, TypeError, AttributeError, RecursionError) as error:
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
