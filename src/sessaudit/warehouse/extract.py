"""One verified source → its records: handed to its format plugin's extractor (sessaudit.warehouse.parts),
which reads the evidence again read-only, proves it is the bytes that were verified (the helpers here), and
cuts it to the verified prefix."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Final

from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.limits import DEFAULT_MAX_LINE_BYTES
from sessaudit.model import Finding, Source
from sessaudit.registry import registry
from sessaudit.rules import find_rule
from sessaudit.verdicts import Verdict
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.parts import WarehousePart

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
    part = warehouse_part(source.format)
    if part is not None:
        part.extract(source, real_path, findings, source_id, into, max_line_bytes)
    return into


def warehouse_part(name: str | None) -> WarehousePart | None:
    """The row extraction of the format plugin `name`, or None (unknown format, or one without rows)."""
    plugin = registry().get(name)
    part = plugin.warehouse() if plugin is not None else None
    return part if isinstance(part, WarehousePart) else None
