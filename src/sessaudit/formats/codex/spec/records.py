"""The line envelope and the payload types of a rollout (docs/formats/codex.md §3), and the CLI versions
verified."""

from __future__ import annotations

import re
from typing import Final

# the Codex CLI releases (`session_meta.payload.cli_version`) whose rollouts the spec describes (§10.1: the
# envelope format from the 0.2x/0.3x releases of autumn 2025, facts seen through 0.145)
VERSIONS: Final = ("0.x",)
SEMVER: Final = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)")

# §3: every line is {"timestamp", "type", "payload"}
ENVELOPE: Final = ("timestamp", "type", "payload")
LINE_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})

# §3.2: response_item payload types; the calls and their outputs
CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
RESPONSE_ITEMS: Final = frozenset(
    {
        "message", "reasoning", "local_shell_call", "function_call", "function_call_output",
        "custom_tool_call", "custom_tool_call_output", "web_search_call", "ghost_snapshot", "compaction",
        "compaction_summary", "context_compaction", "tool_search_call", "tool_search_output",
        "image_generation_call",
    }
)  # fmt: skip

# §3.3: event_msg payload types seen in rollouts (others are accepted with a note)
EVENTS: Final = frozenset(
    {
        "task_started", "task_complete", "turn_started", "turn_complete", "turn_aborted", "user_message",
        "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "agent_reasoning_section_break",
        "token_count", "context_compacted", "entered_review_mode", "exited_review_mode", "undo_started",
        "undo_completed", "thread_rolled_back", "exec_command_begin", "exec_command_end",
        "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin", "mcp_tool_call_end",
        "web_search_begin", "web_search_end", "item_completed", "item_started", "view_image_tool_call",
        "plan_update", "stream_error", "error", "warning", "background_event", "turn_diff",
        "get_history_entry_response", "shutdown_complete", "session_configured",
    }
)  # fmt: skip
TURN_STARTS: Final = frozenset({"task_started", "turn_started"})
TURN_ENDS: Final = frozenset({"task_complete", "turn_complete"})
ABORTED: Final = "turn_aborted"
USAGE_FIELDS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)


def version_key(version: object) -> tuple[int, int, int] | None:
    """A `cli_version` as (major, minor, patch), or None when it is not one."""
    found = SEMVER.match(version) if isinstance(version, str) else None
    if found is None:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch
