"""tiny-agent's canonical JSON and sha256 digests (spec §11), UUIDv7 ids (§6) and safe-integer checks."""

from __future__ import annotations

import hashlib
import math
import re
from json.encoder import encode_basestring

# \Z rather than $: `$` also matches before a trailing newline, which would let "…\n" pass as an id.
UUID7_PATTERN = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")
DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}\Z")
MAX_SAFE_INTEGER = 2**53 - 1

# Every integer up to 2**53 is exactly a JavaScript number; larger ones are rounded to one first.
_EXACT_INTEGER_LIMIT = 2**53


def is_uuid7(value: object) -> bool:
    """A lowercase RFC 9562 UUID of version 7 and the RFC variant, as tiny-agent's reducer requires."""
    return isinstance(value, str) and UUID7_PATTERN.match(value) is not None


def uuid7_millis(value: str) -> int:
    """The 48-bit Unix-millisecond timestamp at the front of a UUIDv7."""
    if not is_uuid7(value):
        raise ValueError(f"not a lowercase UUIDv7: {value!r}")
    return int(value[:8] + value[9:13], 16)


def is_safe_integer(value: object) -> bool:
    """JavaScript's Number.isSafeInteger on a parsed value: True for 1.0, as tiny-agent's TS reader does."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return False


def is_integral_float(value: object) -> bool:
    """A float token with an integral value (`1.0`, `1e0`): TS reads an integer, Python a float."""
    return isinstance(value, float) and value.is_integer()


def canonical_json(value: object) -> bytes:
    """tiny-agent's canonical form (§11) as UTF-8 bytes; a lone surrogate raises ValueError."""
    parts: list[str] = []
    _write(value, parts)
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError as error:
        # Catching it once here keeps lone-surrogate detection off the per-string path.
        code_point = ord(error.object[error.start])
        raise ValueError(f"lone surrogate U+{code_point:04X} cannot be written as canonical JSON") from None


def sha256_digest(value: object) -> str:
    """`"sha256:"` + the hex sha256 of the canonical form of `value`."""
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def _write(value: object, parts: list[str]) -> None:
    if isinstance(value, str):
        # The C encoder with ensure_ascii off escapes exactly \" \\ \b \f \n \r \t and other controls as
        # lowercase \u00xx, leaving everything else (non-ASCII, U+2028, DEL) literal, as §11 requires.
        parts.append(encode_basestring(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(
            str(value) if -_EXACT_INTEGER_LIMIT <= value <= _EXACT_INTEGER_LIMIT else _large_integer(value)
        )
    elif isinstance(value, float):
        parts.append(javascript_number(value))
    elif isinstance(value, dict):
        keys = list(value)
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"canonical JSON object keys must be strings, got {type(key).__name__}")
        parts.append("{")
        for position, key in enumerate(_sorted_keys(keys)):
            if position:
                parts.append(",")
            parts.append(encode_basestring(key))
            parts.append(":")
            _write(value[key], parts)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for position, item in enumerate(value):
            if position:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _sorted_keys(keys: list[str]) -> list[str]:
    # Code-point order and UTF-16 code-unit order differ only when a key holds a character above U+FFFF
    # (a surrogate pair, 0xD800..) next to one in U+E000..U+FFFF, so ASCII keys skip the re-encoding.
    if all(key.isascii() for key in keys):
        return sorted(keys)
    try:
        return sorted(keys, key=lambda key: key.encode("utf-16-be"))
    except UnicodeEncodeError as error:
        code_point = ord(error.object[error.start])
        raise ValueError(f"lone surrogate U+{code_point:04X} cannot be written as canonical JSON") from None


def _large_integer(value: int) -> str:
    try:
        return javascript_number(float(value))
    except OverflowError:
        # JavaScript reads such a literal as Infinity, which JSON.stringify writes as null.
        return "null"


def javascript_number(value: float) -> str:
    """A float as JavaScript's JSON.stringify writes it (ECMAScript Number::toString; NaN and ±∞ → null)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # -0 too
    # repr gives the shortest digits that round-trip, the same digits Number::toString chooses.
    mantissa, _, exponent_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent_text) if exponent_text else 0)
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    significant = significant.rstrip("0")
    count = len(significant)
    sign = "-" if value < 0 else ""
    # The names follow the spec's steps: value = 0.<significant> × 10**point, with `count` digits.
    if count <= point <= 21:
        return sign + significant + "0" * (point - count)
    if 0 < point <= 21:
        return sign + significant[:point] + "." + significant[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + significant
    exponent = point - 1
    exponent_sign = "+" if exponent >= 0 else "-"
    head = significant[0] + ("." + significant[1:] if count > 1 else "")
    return f"{sign}{head}e{exponent_sign}{abs(exponent)}"
