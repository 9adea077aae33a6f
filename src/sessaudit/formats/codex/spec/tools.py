"""Spec §8 as a table: whether re-running a tool call is safe (a read) or never (it may change the world).

The table decides unless `--current FILE` names the tool (recover/current.py): then the file's policy wins
for the tools it names. MCP tools, dynamic tools and names the table does not hold are "never"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sessaudit.tooltables import ReplayPolicy, ToolTable

REPLAY: Final[dict[str, ReplayPolicy]] = {
    "shell": "never",
    "shell_command": "never",
    "local_shell": "never",
    "container.exec": "never",
    "exec_command": "never",
    "write_stdin": "never",
    "apply_patch": "never",
    "spawn_agent": "never",
    "send_input": "never",
    "close_agent": "never",
    "resume_agent": "never",
    "js_repl": "never",
    "js_repl_poll": "never",
    "js_repl_reset": "never",
    "update_plan": "safe",
    "view_image": "safe",
    "web_search": "safe",
    "read_file": "safe",
    "list_dir": "safe",
    "grep_files": "safe",
    "list_mcp_resources": "safe",
    "list_mcp_resource_templates": "safe",
    "read_mcp_resource": "safe",
    "request_user_input": "safe",
    "wait": "safe",
    "get_memory": "safe",
}


def replay_policy(name: str) -> ReplayPolicy:
    """The table's policy; names it does not hold (MCP and dynamic tools among them): "never"."""
    return REPLAY.get(name, "never")


BUILT_IN: Final = "the built-in table (docs/formats/codex.md §8)"
BUILT_IN_TABLE: Final = ToolTable(replay_policy, BUILT_IN)


def tool_name(payload: Mapping[str, Any]) -> str:
    """The name a call is judged by: a function or custom call's `name` (an MCP call of the newest era as
    `<namespace>__<name>`, the form `--current` names it by), `local_shell` for a local_shell_call."""
    if payload.get("type") == "local_shell_call":
        return "local_shell"
    name = payload.get("name")
    name = name if isinstance(name, str) else "?"
    namespace = payload.get("namespace")
    return f"{namespace}__{name}" if isinstance(namespace, str) and namespace else name
