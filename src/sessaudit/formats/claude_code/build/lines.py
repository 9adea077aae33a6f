"""The JSON of single transcript lines: the envelope, assistant messages, usage objects, serialisation.

Key order follows the public samples (spec §3): envelope first, then `type`, `message`, `requestId`,
`uuid`, `timestamp`, and the tool-result extras. Serialised like JavaScript's `JSON.stringify`: compact,
non-ASCII characters kept as UTF-8.
"""

from __future__ import annotations

import json
from typing import Any

from sessaudit.formats.claude_code.build.parts import JsonObject, Usage


def dump_line(record: JsonObject) -> bytes:
    """One JSONL line, newline included."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def usage_object(usage: Usage, output_tokens: int, version: tuple[int, int, int]) -> JsonObject:
    """`message.usage` as a line of `version` writes it, with `output_tokens` as logged on that line.

    The 5m/1h `cache_creation` split appears from 1.0.85 (GIST); `server_tool_use`, `inference_geo`,
    `iterations` and `speed` from 2.1.37 (public excerpts); `service_tier` throughout (spec §6.1).
    """
    value: JsonObject = {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation,
        "cache_read_input_tokens": usage.cache_read,
    }
    if version >= (1, 0, 85):
        value["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_5m,
            "ephemeral_1h_input_tokens": usage.cache_1h,
        }
    value["output_tokens"] = output_tokens
    if version >= (2, 1, 37):
        value["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0}
    value["service_tier"] = "standard"
    if version >= (2, 1, 37):
        value.update({"inference_geo": "", "iterations": [], "speed": "standard"})
    return value


def assistant_message(
    *, model: str, message_id: str, block: JsonObject, stop_reason: str | None, usage: JsonObject
) -> JsonObject:
    """`message` of an assistant line: one content block (spec §5.1)."""
    return {
        "model": model,
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [block],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


def tool_result_block(tool_use_id: str, content: str | list[JsonObject], *, is_error: bool) -> JsonObject:
    block: JsonObject = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
    if is_error:
        block["is_error"] = True
    return block


def default_tool_use_result(name: str, content: str, *, is_error: bool, interrupted: bool) -> Any:
    """`toolUseResult` for a tool's result line: Bash's structured output, else the text (spec §3.2)."""
    if name == "Bash":
        stdout, stderr = ("", content) if is_error and not interrupted else (content, "")
        return {
            "stdout": "" if interrupted else stdout,
            "stderr": stderr,
            "interrupted": interrupted,
            "isImage": False,
        }
    return f"Error: {content}" if is_error else content
