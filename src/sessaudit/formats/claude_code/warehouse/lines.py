"""Verified transcript bytes → lines: number, offset, the bytes without their newline, the decoded object."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RawLine:
    """`record` is None for a line that is not a JSON object (the verifier reports it)."""

    number: int  # 1-based
    offset: int
    raw: bytes
    record: dict[str, Any] | None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def split_lines(data: bytes, cut: int | None = None) -> list[RawLine]:
    """The newline-terminated lines of `data` before line `cut` (all when None); a torn tail (bytes after
    the last newline) is never a line of the verified history."""
    lines: list[RawLine] = []
    offset, number = 0, 1
    while offset < len(data) and (cut is None or number < cut):
        end = data.find(b"\n", offset)
        if end < 0:
            break
        raw = data[offset:end]
        lines.append(RawLine(number, offset, raw, decode(raw)))
        offset, number = end + 1, number + 1
    return lines
