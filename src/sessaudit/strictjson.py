"""Strict JSON decoding of one committed line: the C decoder on the fast path, a precise locator on errors."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, NoReturn

from sessaudit.fastjson import SLOW, fast_decode

# Python's C decoder recurses once per nesting level and its limit depends on how deep the caller already
# is; a fixed limit well below sys.getrecursionlimit() makes the verdict the same wherever we are called
# from, and leaves headroom for the recursive consumers of the decoded value.
MAX_DEPTH = 512

BLANK_LINE = "SA104"
CRLF_LINE_ENDING = "SA105"
DUPLICATE_KEY = "SA107"
INVALID_UTF8 = "SA102"
LONE_SURROGATE_ESCAPE = "SA108"
MALFORMED_JSON = "SA106"
# Nesting past MAX_DEPTH is a resource limit (sessaudit.limits), not a verdict on the JSON: unreadable.
NESTING_TOO_DEEP = "SA011"
UTF8_ENCODED_SURROGATE = "SA103"

_BYTE_ORDER_MARK = b"\xef\xbb\xbf"
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")
# A trigger only (it also fires on valid pairs and on an escaped backslash followed by "ud800"); the
# decoded value decides. Matching only lone escapes in the text with look-arounds measured slower.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_WHITESPACE = re.compile(r"[ \t\r\n]*")
_TOKEN = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_PLAIN_RUN = re.compile('[^"\\\\\x00-\x1f\ud800-\udfff]+')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class LineProblem(Exception):
    """Why a committed line is not one strict JSON value."""

    def __init__(
        self, rule: str, message: str, column: int | None = None, pointer: str | None = None
    ) -> None:
        super().__init__(rule, message, column, pointer)
        self.rule = rule
        self.message = message
        self.column = column
        self.pointer = pointer

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


class _Rejected(Exception):
    """Raised inside the C decoder's hooks; the locator then works out exactly what and where."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Rejected
    return result


def _reject_constant(name: str) -> NoReturn:
    raise _Rejected


def _wide_int(token: str) -> int | float:
    # Python refuses to convert more than sys.get_int_max_str_digits() digits; such a number is far beyond
    # any float, and JavaScript (whose reading we mirror) sees it as an infinity too.
    try:
        return int(token)
    except ValueError:
        return float(token)


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_object, parse_constant=_reject_constant)
_WIDE_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_object, parse_constant=_reject_constant, parse_int=_wide_int
)


def decode_line(data: bytes, *, strip_bom: bool = False) -> Any:
    """One committed line → its JSON value, or raise LineProblem.

    Checks in the order of the strictest JSONL spec verified (its §3): UTF-8-encoded surrogates (SA103),
    strict UTF-8 (SA102), empty line (SA104), CR before the LF (SA105), then strict JSON (SA106, duplicate
    keys SA107, escaped lone surrogates SA108). `strip_bom` drops a leading EF BB BF first, as the
    TypeScript readers do; columns still count from the line's first byte.

    orjson decodes first (sessaudit.fastjson); a line it cannot prove strictly valid takes
    decode_line_exact, which gives the same value or the exact LineProblem.
    """
    value = fast_decode(data[3:] if strip_bom and data[:3] == _BYTE_ORDER_MARK else data, MAX_DEPTH)
    if value is not SLOW:
        return value
    return decode_line_exact(data, strip_bom=strip_bom)


def decode_line_exact(data: bytes, *, strip_bom: bool = False) -> Any:
    """decode_line without the fast path: the reference the fast path is tested against."""
    column_base = 0
    if strip_bom and data[:3] == _BYTE_ORDER_MARK:
        data = data[3:]
        column_base = 3
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        # Valid UTF-8 never holds ED A0..BF, so the surrogate scan only runs once decoding has failed; it
        # still wins over an earlier invalid byte, as in that spec's reader, by searching the whole line.
        raise _encoding_problem(data, error, column_base) from None
    if not text:
        raise LineProblem(
            BLANK_LINE, "the line is empty; every committed line must hold one JSON value", column_base
        )
    if text[-1] == "\r":
        raise LineProblem(
            CRLF_LINE_ENDING,
            "the line ends with CR LF; lines must end with a bare LF",
            column_base + len(data) - 1,
        )
    return _decode(text, column_base)


def loads_strict(text: str) -> Any:
    """Strict parse of a str (the JSON rules of decode_line); raises LineProblem.

    Integer tokens come back as int, any token with a fraction or exponent as float (`1.0` and `1e0` are
    float 1.0; the caller decides whether that matters). An integer token too long for Python to convert
    (over 4300 digits) comes back as a float infinity, which is what JavaScript reads too.
    """
    if _SURROGATE.search(text) is not None:
        # A str can carry raw surrogate code points that no UTF-8 line can; the C decoder would keep them.
        _Locator(text, 0).run()
    return _decode(text, 0)


def _decode(text: str, column_base: int) -> Any:
    try:
        value = _DECODER.decode(text)
    except (json.JSONDecodeError, _Rejected, RecursionError):
        raise _locate(text, column_base) from None
    except ValueError:
        try:
            value = _WIDE_DECODER.decode(text)
        except (ValueError, _Rejected, RecursionError):
            raise _locate(text, column_base) from None
    if "\\u" in text and _ESCAPED_SURROGATE.search(text) is not None and _holds_surrogate(value):
        raise _locate(text, column_base)
    # Nesting deeper than MAX_DEPTH needs more than 2 * MAX_DEPTH brackets, so short lines skip the count.
    if (
        len(text) > 2 * MAX_DEPTH
        and text.count("[") + text.count("{") > MAX_DEPTH
        and _nesting_depth(text) > MAX_DEPTH
    ):
        raise _locate(text, column_base)
    return value


def _holds_surrogate(value: Any) -> bool:
    # Iterative, so that a value nested as deep as the decoder allows cannot exhaust the stack here. The
    # decoder joins escaped pairs into one character, so any surrogate left is lone, and UTF-8 encoding
    # (which refuses surrogates) measured faster than a regular-expression search over wide strings.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.isascii():
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting outside string literals (exact for valid JSON, an estimate otherwise)."""
    skeleton = _NOT_BRACKET.sub("", _STRING_LITERAL.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, skeleton)), default=0)


def _encoding_problem(data: bytes, error: UnicodeDecodeError, column_base: int) -> LineProblem:
    surrogate = _ENCODED_SURROGATE.search(data)
    if surrogate is not None:
        first, second, third = surrogate.group()
        code_point = 0xD000 | ((second & 0x3F) << 6) | (third & 0x3F)
        return LineProblem(
            UTF8_ENCODED_SURROGATE,
            f"bytes {first:02X} {second:02X} {third:02X} encode the UTF-16 surrogate U+{code_point:04X}, "
            "which is not a Unicode character",
            column_base + surrogate.start(),
        )
    bad = data[error.start : error.end]
    return LineProblem(
        INVALID_UTF8,
        f"invalid UTF-8 ({error.reason}): found byte(s) {bad.hex(' ').upper()}",
        column_base + error.start,
    )


def _locate(text: str, column_base: int) -> LineProblem:
    """The first problem in `text`, found by the slow locator; a fallback when it finds none."""
    try:
        _Locator(text, column_base).run()
    except LineProblem as problem:
        return problem
    # Only reachable when the C decoder hit Python's recursion limit below MAX_DEPTH (a deep caller).
    return LineProblem(
        NESTING_TOO_DEEP,
        f"nesting depth {_nesting_depth(text)} is too deep for Python to decode here; the line is not "
        "verified",
        column_base,
    )


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _place(container: _Container) -> str:
    kind = "object" if container.is_object else "array"
    return f"{kind} at {container.pointer}" if container.pointer else f"top-level {kind}"


def _found(text: str, index: int) -> str:
    if index >= len(text):
        return "the end of the line"
    character = text[index]
    if character == "\ufeff":
        return "U+FEFF (a byte order mark)"
    if " " < character < "\x7f":
        return repr(character)
    return f"U+{ord(character):04X}"


@dataclass(slots=True)
class _Container:
    is_object: bool
    pointer: str
    keys: set[str] = field(default_factory=set)
    index: int = 0


class _Locator:
    """A slow, exact, iterative scan with that grammar that raises the first LineProblem."""

    def __init__(self, text: str, column_base: int) -> None:
        self.text = text
        self.column_base = column_base

    def fail(self, rule: str, message: str, index: int, pointer: str | None) -> NoReturn:
        prefix = self.text[:index]
        column = len(prefix) if prefix.isascii() else len(prefix.encode("utf-8", "surrogatepass"))
        raise LineProblem(rule, message, self.column_base + column, pointer)

    def skip(self, index: int) -> int:
        match = _WHITESPACE.match(self.text, index)
        assert match is not None  # the pattern also matches the empty string
        return match.end()

    def run(self) -> None:
        text = self.text
        stack: list[_Container] = []
        pointer = ""
        index = 0
        while True:
            index = self.skip(index)
            character = text[index : index + 1]
            if character in ("{", "["):
                if len(stack) >= MAX_DEPTH:
                    self.fail(
                        NESTING_TOO_DEEP,
                        f"arrays and objects are nested {_nesting_depth(text)} deep; sessaudit's limit is "
                        f"{MAX_DEPTH} (fixed), so the line is not verified",
                        index,
                        pointer,
                    )
                container = _Container(character == "{", pointer)
                stack.append(container)
                index = self.skip(index + 1)
                closer = "}" if container.is_object else "]"
                if text.startswith(closer, index):
                    stack.pop()
                    index += 1
                elif container.is_object:
                    index, pointer = self.member(container, index)
                    continue
                else:
                    pointer = f"{container.pointer}/0"
                    continue
            elif character == '"':
                index = self.string(index, pointer)[1]
            else:
                match = _TOKEN.match(text, index)
                if match is None:
                    self.fail(MALFORMED_JSON, self.bad_value(index), index, pointer)
                index = match.end()
            # A value just ended: close containers until one expects another member or element.
            while True:
                index = self.skip(index)
                if not stack:
                    if index != len(text):
                        self.fail(
                            MALFORMED_JSON,
                            f"expected the end of the line after the JSON value, found {_found(text, index)}",
                            index,
                            None,
                        )
                    return
                container = stack[-1]
                closer = "}" if container.is_object else "]"
                if text.startswith(closer, index):
                    stack.pop()
                    index += 1
                    continue
                if not text.startswith(",", index):
                    item = "member" if container.is_object else "element"
                    self.fail(
                        MALFORMED_JSON,
                        f"expected ',' or '{closer}' after an {item} of the {_place(container)}, "
                        f"found {_found(text, index)}",
                        index,
                        container.pointer,
                    )
                if container.is_object:
                    index, pointer = self.member(container, index + 1)
                else:
                    container.index += 1
                    pointer = f"{container.pointer}/{container.index}"
                    index += 1
                break

    def bad_value(self, index: int) -> str:
        text = self.text
        for literal in ("NaN", "Infinity", "-Infinity"):
            if text.startswith(literal, index):
                return f"expected a JSON value, found {literal}, which JSON does not allow"
        return f"expected a JSON value, found {_found(text, index)}"

    def member(self, container: _Container, index: int) -> tuple[int, str]:
        """Read `"key":` of an object member; return where its value starts and that value's pointer."""
        text = self.text
        index = self.skip(index)
        where = _place(container)
        if not text.startswith('"', index):
            self.fail(
                MALFORMED_JSON,
                f"expected a string key in the {where}, found {_found(text, index)}",
                index,
                container.pointer,
            )
        key, end = self.string(index, container.pointer)
        if key in container.keys:
            self.fail(DUPLICATE_KEY, f"duplicate key {json.dumps(key)} in {where}", index, container.pointer)
        container.keys.add(key)
        end = self.skip(end)
        if not text.startswith(":", end):
            self.fail(
                MALFORMED_JSON,
                f"expected ':' after the key {json.dumps(key)} in the {where}, found {_found(text, end)}",
                end,
                container.pointer,
            )
        return end + 1, f"{container.pointer}/{_pointer_token(key)}"

    def string(self, start: int, pointer: str) -> tuple[str, int]:
        """Decode the string literal at `start`; return it and the index after its closing quote."""
        text = self.text
        pieces: list[str] = []
        index = start + 1
        while True:
            run = _PLAIN_RUN.match(text, index)
            if run is not None:
                pieces.append(run.group())
                index = run.end()
            if index >= len(text):
                self.fail(
                    MALFORMED_JSON,
                    "unterminated string: no closing '\"' before the end of the line",
                    start,
                    pointer,
                )
            character = text[index]
            if character == '"':
                return "".join(pieces), index + 1
            if character == "\\":
                index = self.escape(index, pieces, pointer)
                continue
            code = ord(character)
            if code < 0x20:
                self.fail(
                    MALFORMED_JSON,
                    f"raw control character U+{code:04X} in a string; it must be escaped",
                    index,
                    pointer,
                )
            self.fail(
                LONE_SURROGATE_ESCAPE,
                f"raw surrogate code point U+{code:04X} in a string is not a Unicode character",
                index,
                pointer,
            )

    def escape(self, index: int, pieces: list[str], pointer: str) -> int:
        """Decode the escape at `index` (a backslash) into `pieces`; return the index after it."""
        text = self.text
        kind = text[index + 1 : index + 2]
        if kind in _SIMPLE_ESCAPES:
            pieces.append(_SIMPLE_ESCAPES[kind])
            return index + 2
        if kind != "u":
            if not kind:
                self.fail(MALFORMED_JSON, "unterminated string: it ends in a backslash", index, pointer)
            self.fail(MALFORMED_JSON, f"invalid escape '\\{kind}' in a string", index, pointer)
        digits = text[index + 2 : index + 6]
        if _HEX4.fullmatch(digits) is None:
            self.fail(
                MALFORMED_JSON,
                f"invalid escape: '\\u' must be followed by 4 hex digits, found {digits!r}",
                index,
                pointer,
            )
        code = int(digits, 16)
        if 0xDC00 <= code <= 0xDFFF:
            self.fail(
                LONE_SURROGATE_ESCAPE,
                f"escaped low surrogate \\u{digits} has no high surrogate before it",
                index,
                pointer,
            )
        if 0xD800 <= code <= 0xDBFF:
            low = text[index + 8 : index + 12]
            if (
                text.startswith("\\u", index + 6)
                and _HEX4.fullmatch(low) is not None
                and 0xDC00 <= int(low, 16) <= 0xDFFF
            ):
                pieces.append(chr(0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)))
                return index + 12
            self.fail(
                LONE_SURROGATE_ESCAPE,
                f"escaped high surrogate \\u{digits} is not followed by an escaped low surrogate",
                index,
                pointer,
            )
        pieces.append(chr(code))
        return index + 6
