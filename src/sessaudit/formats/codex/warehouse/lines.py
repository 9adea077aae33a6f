"""Verified rollout bytes → lines (number, offset, the bytes without their LF, the decoded record) and the
RolloutFile the verifier's readers take, decoded as read/lines.py decodes (strict JSON, objects only)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sessaudit.formats.codex.read.lines import Record, RolloutFile
from sessaudit.plugin import FileRead
from sessaudit.strictjson import LineProblem, decode_line


@dataclass(frozen=True, slots=True)
class RawLine:
    """`record` is None for a line that is not a JSON object (the verifier reports it)."""

    number: int  # 1-based
    offset: int
    raw: bytes
    record: Record | None


def _record(path: str, number: int, offset: int, raw: bytes) -> Record | None:
    try:
        value = decode_line(raw)
    except LineProblem:
        return None
    return Record(path, number, offset, value) if isinstance(value, dict) else None


def split_lines(
    path: str, data: bytes, cut: int | None = None, max_line_bytes: int | None = None
) -> list[RawLine]:
    """The lines of `data` before line `cut` (all when None): each LF-terminated line, and the bytes after
    the last LF when they are a whole object (the verifier keeps such a line, SA803; a torn tail is no
    line). A line over `max_line_bytes` is never a record (the verifier skipped it, SA010)."""
    lines: list[RawLine] = []
    offset, number = 0, 1
    while offset < len(data) and (cut is None or number < cut):
        end = data.find(b"\n", offset)
        raw = data[offset:] if end < 0 else data[offset:end]
        over = max_line_bytes is not None and len(raw) > max_line_bytes
        record = None if over else _record(path, number, offset, raw)
        if end < 0:
            if record is not None:
                lines.append(RawLine(number, offset, raw, record))
            break
        lines.append(RawLine(number, offset, raw, record))
        offset, number = end + 1, number + 1
    return lines


def rollout_of(path: str, real_path: str, data: bytes, lines: list[RawLine]) -> RolloutFile:
    """The RolloutFile of these lines (its `read` the verified bytes), for segments_of and build_ledger."""
    read = FileRead(path, real_path, len(data), hashlib.sha256(data).hexdigest(), opened_bytes=len(data))
    records = [line.record for line in lines if line.record is not None]
    return RolloutFile(path, real_path, "rollout", read, records, [], len(lines))
