"""Go's encoding/json reproduced byte for byte (Half-Pi spec §6.1): Marshal output and Unmarshal's reading.

Half-Pi's digests hash what Go's `json.Marshal` writes, so every byte must match:

- maps (Python dicts) are written with keys sorted by their UTF-8 bytes; a Go struct (`Struct`) keeps its
  declaration order; arrays keep their order;
- strings escape `"` and `\\`, write `\\n \\r \\t \\b \\f` short (Go ≥ 1.22; Half-Pi builds with Go 1.25),
  other C0 controls as `\\u00xx`, `< > &` as `\\u003c \\u003e \\u0026` and U+2028/U+2029 as `\\u2028 \\u2029`,
  with lowercase hex; everything else (DEL, non-ASCII, astral characters) is raw UTF-8;
- a lone surrogate in a str stands for one byte of invalid UTF-8 in a Go string (the convention of
  Python's `surrogateescape`) and is written as the six characters `\\ufffd`, as Go's encoder writes each
  invalid byte; `decode` never produces one (Go's decoder turns lone `\\ud800` escapes and invalid bytes
  into a real U+FFFD character, which is then written raw);
- a float is a float64: shortest round-trip digits, plain notation unless |x| < 1e-6 or |x| ≥ 1e21, then
  `1e-7` / `1e+21` (a negative exponent loses its leading zero), `-0` stays `-0`, NaN and ±Inf refused;
- an int is a Go integer (`int64`, `uint64`): its decimal digits; a `Number` (json.Number) is written
  verbatim.

Decoding models Go's Unmarshal into `interface{}`: numbers become float64 (or `Number` with UseNumber),
duplicate keys keep the last value, invalid UTF-8 becomes one U+FFFD per bad byte, and NaN, Infinity, a
byte-order mark or trailing data are refused.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

GO_WHITESPACE = " \t\n\r"
_NUMBER_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
# Go's float64 encoder switches to exponent form below 1e-6 and from 1e21 on (ES6 number-to-string cutoffs).
_SMALLEST_PLAIN = 1e-6
_LARGEST_PLAIN = 1e21


class GoJSONError(ValueError):
    """A value Go's encoding/json would refuse to write or read; `pointer` locates it (JSON Pointer)."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{message} at {pointer}" if pointer else message)
        self.message = message
        self.pointer = pointer


@dataclass(frozen=True, slots=True)
class Number:
    """A `json.Number`: a number literal kept as text and written verbatim (Go writes "" as 0)."""

    literal: str

    def __post_init__(self) -> None:
        if self.literal and _NUMBER_LITERAL.fullmatch(self.literal) is None:
            raise GoJSONError(f"invalid number literal {self.literal!r}")

    def as_float(self) -> float:
        """The float64 Go's strconv.ParseFloat gives; GoJSONError when it overflows (Go's range error)."""
        return _float64(self.literal or "0")


@dataclass(frozen=True, slots=True)
class Struct:
    """A Go struct value: its JSON fields in declaration order, written as given (never sorted)."""

    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, **fields: Any) -> Struct:
        """A struct from keyword arguments, in the order they are written."""
        return cls(tuple(fields.items()))


def marshal(value: Any) -> str:
    """What Go's json.Marshal writes for `value` (module docstring for the mapping of types)."""
    parts: list[str] = []
    try:
        _write(value, parts, "")
    except RecursionError:
        raise GoJSONError("value nested too deeply") from None
    return "".join(parts)


def marshal_bytes(value: Any) -> bytes:
    """`marshal` as the UTF-8 bytes a digest is computed over."""
    return marshal(value).encode("utf-8")


def quote(text: str) -> str:
    """One Go JSON string literal, quotes included."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def format_float64(value: float) -> str:
    """A float64 exactly as Go's encoding/json writes it; GoJSONError for NaN and ±Inf."""
    if not math.isfinite(value):
        raise GoJSONError(f"unsupported value: {value!r}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    digits, point = _shortest_digits(magnitude)
    if _SMALLEST_PLAIN <= magnitude < _LARGEST_PLAIN:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return f"{sign}{digits[:point]}.{digits[point:]}"
    exponent = point - 1
    head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    # strconv pads the exponent to two digits (e-07, e+21); encoding/json then drops the zero of e-0X.
    tail = f"e-{-exponent}" if exponent < 0 else f"e+{exponent:02d}"
    return sign + head + tail


def go_utf8_decode(data: bytes) -> str:
    """Bytes as Go reads them: each byte that starts no valid UTF-8 sequence becomes one U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    pieces: list[str] = []
    position = 0
    while position < len(data):
        try:
            pieces.append(data[position:].decode("utf-8"))
            break
        except UnicodeDecodeError as error:
            # Python reports a maximal invalid subpart (E2 82 as one error); Go's DecodeRune rejects one
            # byte at a time, so only the first byte is replaced and decoding resumes right after it.
            pieces.append(data[position : position + error.start].decode("utf-8"))
            pieces.append("\ufffd")
            position += error.start + 1
    return "".join(pieces)


def decode(text: str | bytes, *, use_number: bool = False) -> Any:
    """Go's json.Unmarshal of a whole document into `interface{}`; GoJSONError where Go reports an error.

    Numbers come back as float (GoJSONError when one overflows float64, as Go's UnmarshalTypeError) or,
    with `use_number`, as `Number`.
    """
    source = go_utf8_decode(text) if isinstance(text, bytes) else text
    try:
        value = _decoder(use_number).decode(source)
    except GoJSONError:
        raise
    except (ValueError, RecursionError) as error:
        raise GoJSONError(f"invalid JSON: {error}") from None
    return _fix_strings(value)


def decode_first(text: str | bytes, *, use_number: bool = False) -> tuple[Any, str]:
    """One `json.Decoder.Decode`: the first value after leading whitespace, and the text left after it."""
    source = go_utf8_decode(text) if isinstance(text, bytes) else text
    start = len(source) - len(source.lstrip(GO_WHITESPACE))
    if start == len(source):
        raise GoJSONError("EOF: no JSON value")
    try:
        value, end = _decoder(use_number).raw_decode(source, start)
    except GoJSONError:
        raise
    except (ValueError, RecursionError) as error:
        raise GoJSONError(f"invalid JSON: {error}") from None
    return _fix_strings(value), source[end:]


def decodes_as_empty_struct(rest: str) -> bool:
    """Whether a further `Decoder.Decode(&struct{}{})` on `rest` returns nil: a whole object or null next.

    EOF, a syntax error and a value of another type (UnmarshalTypeError) all return an error.
    """
    if not rest.strip(GO_WHITESPACE):
        return False
    try:
        value, _ = decode_first(rest, use_number=True)
    except GoJSONError:
        return False
    return value is None or isinstance(value, dict)


def to_float64_values(value: Any, pointer: str = "") -> Any:
    """A parsed JSON value as Go's Unmarshal into `interface{}` holds it: every number a float64.

    Ints, floats and `Number`s become floats (GoJSONError, located, when one overflows float64 — Go's
    decoder then reports an UnmarshalTypeError); lone surrogates become U+FFFD, merging keys that collide
    (the later one wins, as in Go's map assignment).
    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return _fix_text(value)
    if isinstance(value, int):
        try:
            return float(value)  # correctly rounded, as strconv.ParseFloat reads the integer literal
        except OverflowError:
            raise GoJSONError("number out of float64 range", pointer) from None
    if isinstance(value, float):
        if not math.isfinite(value):
            raise GoJSONError("number out of float64 range", pointer)
        return value
    if isinstance(value, Number):
        return _float64(value.literal or "0", pointer)
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise GoJSONError(f"object key {key!r} is not a string", pointer)
            result[_fix_text(key)] = to_float64_values(item, f"{pointer}/{_pointer_token(key)}")
        return result
    if isinstance(value, list | tuple):
        return [to_float64_values(item, f"{pointer}/{index}") for index, item in enumerate(value)]
    raise GoJSONError(f"{type(value).__name__} is not a JSON value", pointer)


def _write(value: Any, parts: list[str], pointer: str) -> None:
    if isinstance(value, str):
        parts.append(quote(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, float):
        try:
            parts.append(format_float64(value))
        except GoJSONError as error:
            raise GoJSONError(error.message, pointer) from None
    elif isinstance(value, Number):
        parts.append(value.literal or "0")
    elif isinstance(value, Struct):
        _write_members(value.fields, parts, pointer)
    elif isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise GoJSONError(f"object key {key!r} is not a string", pointer)
        keys = sorted(value, key=_go_bytes)
        _write_members([(key, value[key]) for key in keys], parts, pointer)
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _write(item, parts, f"{pointer}/{index}")
        parts.append("]")
    else:
        raise GoJSONError(f"unsupported type: {type(value).__name__}", pointer)


def _write_members(members: Sequence[tuple[str, Any]], parts: list[str], pointer: str) -> None:
    parts.append("{")
    for index, (key, item) in enumerate(members):
        if index:
            parts.append(",")
        parts.append(quote(key))
        parts.append(":")
        _write(item, parts, f"{pointer}/{_pointer_token(key)}")
    parts.append("}")


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    short = _SHORT_ESCAPES.get(character)
    if short is not None:
        return short
    code = ord(character)
    if 0xD800 <= code <= 0xDFFF:
        return "\\ufffd"
    return f"\\u{code:04x}"


def _go_bytes(key: str) -> bytes:
    """A key's bytes in the Go string it stands for: Go sorts map keys by these bytes."""
    try:
        return key.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return key.encode("utf-8", "surrogatepass")


def _shortest_digits(magnitude: float) -> tuple[str, int]:
    """(digits, point) with magnitude = 0.<digits> × 10**point and the shortest digits that round-trip.

    repr() chooses the same digits as Go's strconv with precision -1: the shortest string that reads back
    as the same float64, the closest such string to the exact value.
    """
    mantissa, _, exponent = repr(magnitude).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    return significant.rstrip("0"), point


def _float64(literal: str, pointer: str = "") -> float:
    # float() of a decimal literal is correctly rounded, as strconv.ParseFloat is; an underflow reads as
    # (signed) zero in both, an overflow is Go's range error.
    number = float(literal)
    if not math.isfinite(number):
        raise GoJSONError(f"number {literal} out of float64 range", pointer)
    return number


def _reject_constant(name: str) -> NoReturn:
    raise GoJSONError(f"invalid character in literal {name}")


def _decode_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Keys are repaired here, in document order, so keys that only collide once repaired still let the
    # later one win, as Go's map assignment does.
    result: dict[str, Any] = {}
    for key, item in pairs:
        result[_fix_text(key)] = item
    return result


_FLOAT_DECODER = json.JSONDecoder(
    object_pairs_hook=_decode_object,
    parse_float=_float64,
    parse_int=_float64,
    parse_constant=_reject_constant,
)
_NUMBER_DECODER = json.JSONDecoder(
    object_pairs_hook=_decode_object, parse_float=Number, parse_int=Number, parse_constant=_reject_constant
)


def _decoder(use_number: bool) -> json.JSONDecoder:
    return _NUMBER_DECODER if use_number else _FLOAT_DECODER


def _fix_text(text: str) -> str:
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _fix_strings(value: Any) -> Any:
    """Lone surrogates left by Python's decoder (from `\\ud800` escapes) → U+FFFD, as Go's decoder writes."""
    if isinstance(value, str):
        return _fix_text(value)
    if isinstance(value, dict):
        return {key: _fix_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fix_strings(item) for item in value]
    return value


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
