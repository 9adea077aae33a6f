"""The fast path of strictjson.decode_line: orjson decodes, cheap exact tests decide whether to trust it.

orjson is strict about most of what the strict rules demand (UTF-8, surrogates, number syntax, NaN,
control characters, trailing data, a byte order mark), but it keeps the last of duplicate keys, reads an
integer beyond 64 bits as a float and accepts nesting up to 1024. `fast_decode` returns orjson's value
only when it can prove that the strict decoder would return the very same value (same types too) and no
finding; otherwise it returns SLOW and the caller takes the exact path, which also locates the problem.

Two tiers:

1. orjson.dumps(value) == data: the line is exactly what orjson writes for the value (compact JSON, as
   JavaScript's JSON.stringify and `json.dumps(separators=(",", ":"))` write it). Then the text has no
   duplicate keys and no lone surrogate (dumps writes neither), its numbers are orjson's shortest
   round-trip forms (an over-wide integer read as a float would be written back with an exponent, so it
   never matches), and it is no deeper than orjson's writer allows (255 levels; checked once against the
   depth limit, which it must not exceed for this tier).
2. Otherwise (whitespace, escapes written differently, `1.0E2`, …): the count of ':' bytes in the line
   equals that of dumps(value), no `\\u003a`/`\\u003A` escape is in the line, no run of 19 or more
   digits is in it, and a line with more brackets than the depth limit is measured and is no deeper. A
   ':' byte outside strings is one object member; inside a string it is one ':' of the decoded text, and
   only the escape `\\u003a` makes a ':' without a ':' byte. So with no such escape, the counts are equal
   exactly when no member was dropped by a duplicate key. Every integer token beyond 64 bits has 19 or
   more digits.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

import orjson

SLOW: Final[Any] = object()

# bytes.translate table: every ASCII digit becomes "0", so a run of digits becomes a run of zeros.
_DIGITS_TO_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGIT_RUN: Final = b"0" * 19


def fast_decode(data: bytes, max_depth: int) -> Any:
    """The JSON value of one line (no byte order mark) if the strict rules certainly accept it, else SLOW."""
    if not data or data[-1] == 0x0D:  # empty, or CR before the LF: reported by the exact path
        return SLOW
    try:
        value = orjson.loads(data)
        written = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return SLOW
    if written == data and _writer_refuses_deeper_than(max_depth):
        return value
    # Nesting deeper than max_depth needs more brackets than that; orjson reads up to 1024 levels.
    if (
        len(data) > max_depth
        and data.count(b"[") + data.count(b"{") > max_depth
        and _deeper_than(value, max_depth)
    ):
        return SLOW
    if (
        data.count(b":") != written.count(b":")
        or (b"\\u003" in data and (b"\\u003a" in data or b"\\u003A" in data))
        or _LONG_DIGIT_RUN in data.translate(_DIGITS_TO_ZERO)
    ):
        return SLOW
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels (iterative: no recursion limit applies)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if type(value) in (dict, list) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if type(item) is dict else item
        stack.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return False


@cache
def _writer_refuses_deeper_than(limit: int) -> bool:
    """Whether orjson.dumps fails on nesting deeper than `limit`, so that its output is never deeper."""
    nested: list[Any] = []
    for _ in range(limit):
        nested = [nested]
    try:
        orjson.dumps(nested)
    except orjson.JSONEncodeError:
        return True
    return False


def compact_lines_are_strict(max_depth: int) -> bool:
    """Whether tier 1 holds for `max_depth`: a line equal to orjson.dumps of its orjson value is strictly
    valid JSON with that value (a caller that tests the equality itself may skip `fast_decode`)."""
    return _writer_refuses_deeper_than(max_depth)
