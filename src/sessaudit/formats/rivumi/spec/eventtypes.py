"""The event types Rivumi's loop writes and the `data` keys each carries (spec §2.3)."""

from __future__ import annotations

from typing import Final

# Top-level keys of a RunEvent, in the model's declaration order (the order of a fork run's model dump).
ENVELOPE_KEYS: Final = ("event_type", "run_id", "task_id", "sequence", "data", "event_id", "created_at")
REQUIRED_ENVELOPE_KEYS: Final = frozenset({"event_type", "run_id", "sequence"})

TERMINAL_EVENT_TYPES: Final = frozenset({"run.completed", "run.failed", "run.cancelled"})
EFFECTS: Final = frozenset({"read", "modify", "execute", "modify_execute"})
DECISIONS: Final = frozenset({"allow_once", "allow_session", "deny", "cancel"})
USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "reasoning_tokens",
    "provider_total_tokens",
    "total_tokens",
)

_APPROVAL = ("request_id", "action_id", "effect", "reason", "policy_reason")
_TERMINAL = ("terminal_reason", "changed_files")
_BATCH = ("count", "tool_call_ids", "mode")
_ROLE = ("role", "provider", "model")

# event type → (keys always present, keys that may be present)
DATA_KEYS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "run.created": (("provider", "model", "prompt_version", "base_sha"), ()),
    "workspace.prepared": (("workspace", "base_sha"), ()),
    "session.resumed": (("provider", "model", "base_sha", "resumed_step"), ()),
    "run.completed": (_TERMINAL, ()),
    "run.failed": (_TERMINAL, ()),
    "run.cancelled": (_TERMINAL, ()),
    "run.error": (("error_type", "error"), ()),
    "run.forked": (
        (
            "source_run_id",
            "fork_point_sequence",
            "fork_point_event_type",
            "events_included",
            "side_effects_replayed",
            "workspace",
            "base_sha",
        ),
        (),
    ),
    "model.requested": (("step",), ()),
    "model.completed": (("step", "finish_reason", "tool_calls", "content", "usage"), ()),
    "model.retry": (("attempt", "provider", "error", "delay_seconds"), ()),
    "model.fallback": (("from_provider", "from_model", "to_provider", "to_model", "failure_codes"), ()),
    "model.failed": (("provider", "kind", "retryable", "error"), ()),
    "model.cache_trace": (
        (
            "step",
            "lane",
            "provider",
            "model",
            "cache_ready",
            "prompt_cache_key",
            "tool_schema_fingerprint",
            "cache_control_blocks",
            "warnings",
        ),
        (),
    ),
    "tool.requested": (("tool_call_id", "name", "effect", "arguments"), ()),
    "approval.requested": ((*_APPROVAL, "preview"), ()),
    "approval.resolved": ((*_APPROVAL, "decision"), ()),
    "approval.reused": (_APPROVAL, ()),
    # policy_reason is not listed for approval.abandoned in the spec; tolerate it
    "approval.abandoned": (("request_id", "action_id", "effect", "reason"), ("policy_reason",)),
    "tool.started": (("tool_call_id", "name", "effect"), ()),
    # `preview` is absent when the call was denied
    "tool.completed": (("tool_call_id", "name", "ok", "error"), ("preview",)),
    "tool.batch_started": (_BATCH, ()),
    "tool.batch_completed": (_BATCH, ()),
    "verification.started": (("name", "argv"), ()),
    "verification.completed": (("name", "ok", "exit_code", "duration_seconds"), ("error",)),
    "role_lane.requested": ((*_ROLE, "changed_files"), ()),
    "role_lane.completed": ((*_ROLE, "usage", "cost", "preview"), ()),
    "role_lane.failed": ((*_ROLE, "error"), ()),
    "context_pressure.reminder_injected": (("total_tokens", "max_total_tokens"), ()),
    "context_pressure.summary_fallback_applied": (
        ("source_start_index", "source_end_index", "retained_messages"),
        (),
    ),
    "context_pressure.workspace_reminder_injected": (("changed_files", "recent_paths"), ()),
    "context_pressure.summary_fallback_skipped": (("reason", "hook"), ()),
    "hook.completed": (("hook_event", "decision", "reason", "hook"), ()),
    "hook.denied": (("hook_event", "decision", "reason", "hook"), ()),
    "context_provider.failed": (("error",), ()),
    "context_provider.injected": (("sources", "items"), ()),
    "ide.diagnostics_ignored": (("error",), ()),
    "ide.open_files_ignored": (("error",), ()),
    "ide.diagnostics_injected": (("diagnostic_count", "paths"), ()),
    "ide.open_files_injected": (("file_count", "paths"), ()),
    "instructions.reload_ignored": (("error",), ()),
    "instructions.reloaded": (("document_count", "sources", "source_priority"), ()),
    "project_context.reload_ignored": (("error",), ()),
    "project_context.reloaded": (("categories", "sources"), ()),
    "mcp.tools_refreshed": (("tools",), ()),
    "subagents.schedule_normalized": (("count", "waves", "agents"), ()),
    "subagents.dispatch_started": (("count", "ids"), ()),
    "subagents.dispatch_completed": (("count", "ids"), ()),
    "subagents.wave_started": (("ids",), ()),
    "subagents.wave_completed": (("ids",), ()),
    "subagents.transaction_started": (("id", "tool_call_id"), ()),
    "subagents.transaction_completed": (("id", "tool_call_id", "ok", "error"), ()),
}

# Value checks for data keys, whatever the event type: key → (what it must be, test).
BOOLEAN_KEYS: Final = frozenset({"ok", "retryable", "side_effects_replayed"})
COUNT_KEYS: Final = frozenset(
    {"step", "attempt", "resumed_step", "count", "events_included", "fork_point_sequence"}
)
STRING_LIST_KEYS: Final = frozenset({"changed_files", "tool_call_ids", "argv", "tool_calls"})
ENUM_KEYS: Final[dict[str, frozenset[str]]] = {
    "effect": EFFECTS,
    "decision": DECISIONS,
}
REASONS: Final = frozenset({"model_tool", "final_verification"})
APPROVAL_EVENT_TYPES: Final = frozenset({"approval.requested", "approval.resolved", "approval.reused"})
