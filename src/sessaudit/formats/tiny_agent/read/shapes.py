"""tiny-agent v2 value shapes (spec §6–§9): JavaScript value semantics, messages, snapshots, violations."""

from __future__ import annotations

import json
import math
from typing import Any, Final

from sessaudit.formats.tiny_agent.read.digests import MAX_SAFE_INTEGER, UUID7_PATTERN

INVALID_FACT: Final = "INVALID_FACT"
INVALID_REFERENCE: Final = "INVALID_REFERENCE"
INVALID_TRANSITION: Final = "INVALID_TRANSITION"
INVALID_TRANSCRIPT: Final = "INVALID_TRANSCRIPT"
DUPLICATE_ID: Final = "DUPLICATE_ID"
SEQ_MISMATCH: Final = "SEQ_MISMATCH"

# The sentinel for an absent key: JavaScript's `undefined`, which is not JSON's `null`.
MISSING: Final[Any] = type("Missing", (), {"__repr__": lambda self: "undefined"})()

# The generic rule of each tiny-agent code; raise sites pick a more specific one where it exists.
RULE_OF_CODE: Final[dict[str, str]] = {
    "INVALID_HEADER": "SA201",
    "UNSUPPORTED_VERSION": "SA202",
    INVALID_FACT: "SA204",
    SEQ_MISMATCH: "SA205",
    DUPLICATE_ID: "SA206",
    INVALID_REFERENCE: "SA207",
    INVALID_TRANSITION: "SA208",
    INVALID_TRANSCRIPT: "SA209",
}

SYNTHETIC_TEXTS: Final[dict[str, str]] = {
    "invalidArguments": "Error: Tool arguments were invalid; the tool was not executed.",
    "unknownTool": "Error: Unknown tool; the tool was not executed.",
    "truncated": (
        "Error: Tool call arguments were truncated by the model token limit; the tool was not executed."
    ),
    "aborted": "Operation aborted before execution.",
    "interrupted": "Operation interrupted after execution status became unknown; the tool was not replayed.",
}

# ECMAScript String.prototype.trim: WhiteSpace (incl. U+FEFF and category Zs) and LineTerminator.
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


class Violation(Exception):
    """One tiny-agent reducer error: its code, our rule, where in the fact, and what was wrong."""

    def __init__(
        self,
        code: str,
        pointer: str,
        message: str,
        *,
        rule: str | None = None,
        evidence: dict[str, Any] | None = None,
        with_seq: bool = True,
    ) -> None:
        super().__init__(code, pointer, message)
        self.code = code
        self.rule = rule or RULE_OF_CODE[code]
        self.pointer = pointer
        self.message = message
        self.evidence = evidence or {}
        self.with_seq = with_seq


def show(value: Any, limit: int = 60) -> str:
    """A short, readable rendering of a found value for messages (exact values go into evidence)."""
    if value is MISSING:
        return "nothing (the key is absent)"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 2] + '…"'
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if value is None:
        return "null"
    return json.dumps(value)


def found(value: Any) -> dict[str, Any]:
    """Evidence for a found value: scalars as they are (long strings cut), containers described."""
    if value is MISSING:
        return {"found": None, "absent": True}
    if isinstance(value, str):
        return {"found": value if len(value) <= 300 else value[:300] + "…"}
    if isinstance(value, float) and not math.isfinite(value):
        return {"found": repr(value)}
    if value is None or isinstance(value, bool | int | float):
        return {"found": value}
    return {"found": show(value)}


def short_id(value: str) -> str:
    """An id shortened for messages: first and last four hex digits."""
    return f"{value[:8]}…{value[-4:]}" if len(value) > 16 else value


def is_safe_integer(value: Any, minimum: int) -> bool:
    """Number.isSafeInteger(value) && value >= minimum, on a parsed JSON value (1.0 counts)."""
    kind = type(value)
    if kind is int:
        return bool(minimum <= value <= MAX_SAFE_INTEGER)
    if kind is float:
        return bool(value.is_integer() and minimum <= value <= MAX_SAFE_INTEGER)
    return False


def js_string(value: Any) -> str:
    """JavaScript's String(value) for the values JSON can produce (and `undefined` for absent keys)."""
    if isinstance(value, str):
        return value
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return json.dumps(value)  # a number: never equal to any string the reducer compares it with


def require_object(value: Any, code: str, pointer: str, what: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise Violation(
            code, pointer, f"{what}: expected an object, found {show(value)}", evidence=found(value)
        )
    return value


def require_exact(value: dict[str, Any], allowed: frozenset[str], code: str, pointer: str, what: str) -> None:
    """No key outside `allowed` (absent keys are checked by the field checks)."""
    if not allowed.issuperset(value):
        extra = next(key for key in value if key not in allowed)
        raise Violation(
            code,
            f"{pointer}/{pointer_token(extra)}",
            f"{what}: unexpected key {json.dumps(extra, ensure_ascii=False)}; allowed keys are "
            + ", ".join(sorted(allowed)),
            evidence={"unexpected_key": extra, "allowed": sorted(allowed)},
        )


def require_string(value: Any, code: str, pointer: str, what: str) -> str:
    if type(value) is not str or not value:
        raise Violation(
            code, pointer, f"{what}: expected a non-empty string, found {show(value)}", evidence=found(value)
        )
    return value


def require_integer(value: Any, code: str, pointer: str, what: str, minimum: int = 0) -> int:
    if not is_safe_integer(value, minimum):
        raise Violation(
            code,
            pointer,
            f"{what}: expected a safe integer ≥ {minimum}, found {show(value)}",
            evidence=found(value),
        )
    return int(value)


def require_id(value: Any, pointer: str, what: str, code: str = INVALID_FACT) -> str:
    """A lowercase UUIDv7 (spec §6), or an invalid-id violation."""
    if type(value) is not str or UUID7_PATTERN.match(value) is None:
        raise invalid_id(value, pointer, what, code)
    return value


def invalid_id(value: Any, pointer: str, what: str, code: str = INVALID_FACT) -> Violation:
    return Violation(
        code,
        pointer,
        f"{what}: expected a lowercase UUIDv7, found {show(value)}",
        rule="SA214" if code == INVALID_FACT else None,
        evidence=found(value),
    )


def pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
