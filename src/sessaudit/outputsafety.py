"""Characters from logs that must not reach an analyst's terminal, a CI log or a JSON file unescaped.

`safe` escapes them for text outputs (the console, messages on stderr, CI annotations); it lives here, not
with the console reporter, so that a command printing one message never imports rich. JSON outputs keep
every value exact but write these characters as `\\uXXXX` escapes (`json_safe`): `json.dumps(...,
ensure_ascii=False)` already escapes C0 controls, and leaves DEL, C1 controls, line/paragraph separators,
bidi controls and lone surrogates raw — a `cat report.json` would hand them to the terminal, and a lone
surrogate cannot even be encoded as UTF-8 (the write would fail)."""

from __future__ import annotations

import re

# C0, DEL, C1 (U+009B is a one-byte CSI), line/paragraph separators, bidi marks, overrides and isolates
# ("Trojan Source"), lone surrogates (a log's invalid bytes or escapes; unprintable as UTF-8)
_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
# DEL and C1 controls (U+0080–U+009F: 0x9B is a one-byte CSI on some terminals), line and paragraph
# separators, bidi marks, embeddings, overrides and isolates ("Trojan Source"), lone surrogates.
JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_safe(text: str) -> str:
    """JSON text with every `JSON_UNSAFE` character written as a `\\uXXXX` escape (same value, valid
    JSON: these characters can only occur inside strings of a document `json.dumps` wrote)."""
    return JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def safe(value: object) -> str:
    """Text from a log made harmless for a terminal: control characters and bidi overrides escaped."""
    return _CONTROL.sub(
        lambda match: (
            f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else f"\\u{ord(match.group()):04x}"
        ),
        str(value),
    )
