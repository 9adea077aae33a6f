"""Shared pieces of the Half-Pi history checks: rule codes, id patterns, safe rendering of stored values."""

from __future__ import annotations

import re
from typing import Any, Final

STORE_INTEGRITY: Final = "SA601"
FOREIGN_KEY: Final = "SA602"
SUMMARY_DIGEST: Final = "SA609"
PROJECTION_INVALID: Final = "SA612"
PROJECTION_OUTPUT: Final = "SA613"
TOOL_RESULT_UNCALLED: Final = "SA615"
TOOL_CALL_UNANSWERED: Final = "SA617"
MESSAGE_SHAPE: Final = "SA618"
GROUP_ID: Final = "SA619"
UUID7_ID: Final = "SA620"
CREDENTIAL_SHAPE: Final = "SA624"

# Canonical lowercase UUIDv7 with the RFC 4122 variant (spec §5).
UUID7: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
# Tables whose values are live secrets: never read into a message, never echoed (spec §4.6, §4.7).
CREDENTIAL_TABLES: Final = frozenset({"hand_tokens", "hand_credentials", "face_tokens"})
SHOWN_LIMIT: Final = 80


def lenient_text(data: bytes) -> str:
    """SQLite TEXT as Python text; invalid UTF-8 bytes survive as surrogates (digests hash the bytes back)."""
    return data.decode("utf-8", "surrogateescape")


def printable(text: str) -> str:
    """Text safe to print or encode: surrogates standing for invalid bytes become U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def printable_value(value: Any) -> Any:
    """`printable` applied to every string inside a JSON-like value."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(key)): printable_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [printable_value(item) for item in value]
    return value


def shown(value: Any, limit: int = SHOWN_LIMIT) -> str:
    """A stored id or name for a message: quoted, cut at `limit` characters (never used for secrets)."""
    if isinstance(value, bytes):
        value = lenient_text(value)
    text = printable(str(value)) if value is not None else "NULL"
    if len(text) > limit:
        text = text[:limit] + "…"
    return repr(text)


def as_text(value: Any) -> str | None:
    """A TEXT column's value as str (bytes read back leniently); None for NULL and numbers."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return lenient_text(value)
    return None
