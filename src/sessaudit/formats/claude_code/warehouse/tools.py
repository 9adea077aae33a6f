"""Tool calls of a transcript: each `tool_use` block, its `tool_result`, and the outcome (spec §4, §10)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sessaudit.formats.claude_code.spec.records import INTERRUPT_PREFIX
from sessaudit.formats.claude_code.spec.tools import replay_policy as table_policy

OK: Final = "ok"
ERROR: Final = "error"
INTERRUPTED: Final = "interrupted"
UNKNOWN: Final = "unknown"


def replay_policy(name: str | None) -> str:
    """The verifier's table (spec/tools.py); a call without a name is "never"."""
    return table_policy(name) if name is not None else "never"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(item.get("text", "")) for item in content if isinstance(item, Mapping))
    return ""


def outcome(record: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """ok, error or interrupted: Esc during a tool run writes an error result saying the request was
    interrupted (and `toolUseResult.interrupted`, 1.0.x+); any other `is_error` result is an error."""
    extra = record.get("toolUseResult")
    interrupted = isinstance(extra, Mapping) and extra.get("interrupted") is True
    if result.get("is_error") is True:
        if interrupted or _text_of(result.get("content")).startswith(INTERRUPT_PREFIX):
            return INTERRUPTED
        return ERROR
    return INTERRUPTED if interrupted else OK
