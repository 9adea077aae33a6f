"""The JSON of single rollout lines: the envelope, the payloads of each item, serialisation.

Every line is `{"timestamp":…,"type":…,"payload":{…}}` in that order; payload keys follow the order Codex
writes them. Serialised like Rust's serde_json: compact separators, non-ASCII kept as UTF-8.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sessaudit.formats.codex.build.ids import format_time
from sessaudit.formats.codex.build.parts import JsonObject, Usage


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dump_line(record: JsonObject) -> bytes:
    """One JSONL line, newline included."""
    return compact(record).encode("utf-8") + b"\n"


def envelope(moment: datetime, kind: str, payload: JsonObject) -> JsonObject:
    return {"timestamp": format_time(moment), "type": kind, "payload": payload}


def message(role: str, text: str) -> JsonObject:
    """A `message` response item: user and developer text is `input_text`, the assistant's `output_text`."""
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def reasoning(summaries: list[str], encrypted: str | None) -> JsonObject:
    return {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text} for text in summaries],
        "content": None,
        "encrypted_content": encrypted,
    }


def function_call(name: str, arguments: JsonObject | str, call_id: str) -> JsonObject:
    """`arguments` is a JSON string inside the JSON (the model's raw text)."""
    text = arguments if isinstance(arguments, str) else compact(arguments)
    return {"type": "function_call", "name": name, "arguments": text, "call_id": call_id}


def custom_tool_call(name: str, text: str, call_id: str) -> JsonObject:
    return {
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "input": text,
    }


def local_shell_call(command: list[str], call_id: str) -> JsonObject:
    action = {
        "type": "exec",
        "command": command,
        "timeout_ms": None,
        "working_directory": None,
        "env": None,
        "user": None,
    }
    return {"type": "local_shell_call", "call_id": call_id, "status": "completed", "action": action}


def call_output(kind: str, call_id: str, output: str) -> JsonObject:
    """The answer to a call: `custom_tool_call_output` for a custom tool, else `function_call_output`."""
    item = "custom_tool_call_output" if kind == "custom" else "function_call_output"
    return {"type": item, "call_id": call_id, "output": output}


def shell_output(text: str, exit_code: int, seconds: float) -> str:
    """What the `shell` tool hands back to the model: a JSON string of the output and its metadata."""
    return compact({"output": text, "metadata": {"exit_code": exit_code, "duration_seconds": seconds}})


def unified_output(text: str, exit_code: int, seconds: float, chunk: str) -> str:
    """What `exec_command` (unified exec) hands back: plain text with a header."""
    return (
        f"Chunk ID: {chunk}\nWall time: {seconds:.4f} seconds\nProcess exited with code {exit_code}\n"
        f"Original token count: {max(1, len(text) // 4)}\nOutput:\n{text}"
    )


def token_info(total: Usage, last: Usage, window: int) -> JsonObject:
    return {
        "total_token_usage": total.as_json(),
        "last_token_usage": last.as_json(),
        "model_context_window": window,
    }


def rate_limits(primary: float, secondary: float, resets_at: int) -> JsonObject:
    """The snapshot of the 5-hour and weekly windows (`resets_at` in Unix seconds)."""
    return {
        "primary": {"used_percent": primary, "window_minutes": 300, "resets_at": resets_at},
        "secondary": {"used_percent": secondary, "window_minutes": 10080, "resets_at": resets_at + 388_800},
    }


def token_count(info: JsonObject | None, limits: JsonObject | None) -> JsonObject:
    return {"type": "token_count", "info": info, "rate_limits": limits}


def environment_context(cwd: str, approval: str, sandbox: str, shell: str) -> str:
    """The `<environment_context>` user message Codex puts before the first prompt."""
    return (
        "<environment_context>\n"
        f"  <cwd>{cwd}</cwd>\n"
        f"  <approval_policy>{approval}</approval_policy>\n"
        f"  <sandbox_mode>{sandbox}</sandbox_mode>\n"
        "  <network_access>restricted</network_access>\n"
        f"  <shell>{shell}</shell>\n"
        "</environment_context>"
    )


def sandbox_policy(mode: str) -> JsonObject:
    if mode != "workspace-write":
        return {"type": mode}
    return {
        "type": mode,
        "writable_roots": [],
        "network_access": False,
        "exclude_tmpdir_env_var": False,
        "exclude_slash_tmp": False,
    }


def parsed_command(command: list[str]) -> list[JsonObject]:
    """`parsed_cmd` of an exec_command_end event: what the command reads, lists or searches."""
    script = command[-1] if command else ""
    words = script.split()
    head = words[0] if words else ""
    if head in ("cat", "sed", "head", "tail", "nl"):
        return [{"type": "read", "cmd": script, "name": words[-1].rsplit("/", 1)[-1]}]
    if head in ("ls", "find", "tree"):
        return [{"type": "list_files", "cmd": script, "path": words[-1] if len(words) > 1 else None}]
    if head in ("rg", "grep"):
        query = words[1] if len(words) > 1 else None
        return [{"type": "search", "cmd": script, "query": query, "path": None}]
    return [{"type": "unknown", "cmd": script}]


def duration(seconds: float) -> JsonObject:
    whole = int(seconds)
    return {"secs": whole, "nanos": round((seconds - whole) * 1_000_000) * 1000}


def exec_end(
    call_id: str, turn_id: str | None, command: list[str], cwd: str, text: str, code: int, seconds: float
) -> JsonObject:
    """`exec_command_end` as extended persistence writes it (stdout/stderr/formatted emptied)."""
    return {
        "type": "exec_command_end",
        "call_id": call_id,
        "turn_id": turn_id,
        "command": command,
        "cwd": cwd,
        "parsed_cmd": parsed_command(command),
        "source": "agent",
        "stdout": "",
        "stderr": "",
        "aggregated_output": text[:10_000],
        "exit_code": code,
        "duration": duration(seconds),
        "formatted_output": "",
    }


def patch_changes(cwd: str, patch: str) -> JsonObject:
    """`changes` of patch_apply_end: path -> {add|update|delete}, from the patch's file headers."""
    changes: JsonObject = {}
    for row in patch.splitlines():
        if row.startswith("*** Update File: "):
            changes[f"{cwd}/{row[17:]}"] = {"update": {"unified_diff": "", "move_path": None}}
        elif row.startswith("*** Add File: "):
            changes[f"{cwd}/{row[14:]}"] = {"add": {"content": ""}}
        elif row.startswith("*** Delete File: "):
            changes[f"{cwd}/{row[17:]}"] = {"delete": {"content": ""}}
    return changes


def patch_end(
    call_id: str, turn_id: str | None, cwd: str, patch: str, text: str, success: bool
) -> JsonObject:
    return {
        "type": "patch_apply_end",
        "call_id": call_id,
        "turn_id": turn_id,
        "stdout": text,
        "stderr": "",
        "success": success,
        "changes": patch_changes(cwd, patch),
    }


def mcp_end(call_id: str, server: str, tool: str, arguments: Any, text: str, seconds: float) -> JsonObject:
    result = {"Ok": {"content": [{"type": "text", "text": text}], "isError": False}}
    return {
        "type": "mcp_tool_call_end",
        "call_id": call_id,
        "invocation": {"server": server, "tool": tool, "arguments": arguments},
        "duration": duration(seconds),
        "result": result,
    }
