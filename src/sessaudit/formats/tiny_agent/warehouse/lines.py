"""Verified tiny-agent lines as the warehouse reads them: each fact of a transaction with its exact text, and
the header line (v2 or v1) as an object and as its text."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from sessaudit.framing import BYTE_ORDER_MARK, Line
from sessaudit.plugin import UNDECODED

_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n"
_BLANK_BYTES = b" \t\r\n"
# orjson reads an integer beyond 64 bits as a float: a line that may hold one (19 digits in a row) is read
# by the json module. Found by mapping every digit to "0" and looking for a run (faster than a regex).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def _long_number(data: bytes) -> bool:
    return _LONG_RUN in data.translate(_DIGITS_TO_ZERO)


def _loads(data: bytes) -> Any:
    """A verified line's value: orjson where it reads it as the json module does, else the json module."""
    if not _long_number(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # a lone surrogate escape, deeper than orjson reads: the json module decides
    return json.loads(data.decode("utf-8"))


def transaction_facts(data: bytes, value: Any = UNDECODED) -> list[tuple[Any, str | bytes]]:
    """The facts of one line with the exact text of each: the line itself, or each element of an array
    (each element's text is what the writer wrote). `value`, when given, is the line's JSON value."""
    if value is UNDECODED:
        if not data.lstrip(_BLANK_BYTES).startswith(b"["):
            return [(_loads(data), data)]
        if data.startswith(b"[") and not _long_number(data):
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                value = None
    elif type(value) is not list:
        return [(value, data)]
    if type(value) is list and data.startswith(b"["):
        # A compact array, as writers write one: when orjson writes each element back as exactly the
        # line's bytes, each element's text is its orjson text (so no second pass over the line).
        try:
            texts = [orjson.dumps(item) for item in value]
        except orjson.JSONEncodeError:  # an integer beyond 64 bits: the text below decides
            texts = None
        if texts is not None and b"[" + b",".join(texts) + b"]" == data:
            return list(zip(value, texts, strict=True))
    line = data.decode("utf-8")
    start = len(line) - len(line.lstrip(_BLANK))
    facts: list[tuple[Any, str | bytes]] = []
    index = start + 1
    while True:
        while line[index] in _BLANK:
            index += 1
        if line[index] == "]":
            return facts
        value, end = _DECODER.raw_decode(line, index)
        facts.append((value, line[index:end]))
        index = end
        while line[index] in _BLANK:
            index += 1
        if line[index] == ",":
            index += 1


def header_text(data: bytes) -> str:
    """A header line's text without a byte order mark."""
    return (data[len(BYTE_ORDER_MARK) :] if data.startswith(BYTE_ORDER_MARK) else data).decode("utf-8")


def verified_header(
    lines: Iterable[Line], cut: int | None
) -> tuple[dict[str, Any], str, Iterator[Line]] | None:
    """A session's header line (v2 or v1) as an object and as its text without a BOM, and the lines after
    it; None when the header is not verified history (`cut` at line 1) or there is no line at all."""
    if cut is not None and cut <= 1:
        return None
    iterator = iter(lines)
    first = next(iterator, None)
    if first is None:
        return None
    raw = header_text(first.data)
    value = json.loads(raw)
    return (value if isinstance(value, dict) else {}), raw, iterator
