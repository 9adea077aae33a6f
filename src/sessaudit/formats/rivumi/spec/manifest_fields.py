"""session.json (SessionManifest v1) field order and defaults, shared by the builder and the checks (§3.2)."""

from __future__ import annotations

from typing import Any, Final

# Declaration order of SessionManifest (what a pydantic model dump, e.g. a fork run's, writes).
MANIFEST_FIELDS: Final = (
    "schema_version",
    "run_id",
    "task_id",
    "provider_name",
    "model_id",
    "protocol",
    "prompt_version",
    "base_sha",
    "phase",
    "step",
    "messages",
    "usage",
    "model_usage",
    "final_summary",
    "last_action_fingerprint",
    "repeat_count",
    "last_event_sequence",
    "verification",
    "pending_action",
    "approval_history",
    "granted_effects",
    "active_wall_time_seconds",
    "active_started_at",
    "terminal",
    "active_writer_token",
    "writer_claimed_at",
    "writer_heartbeat_at",
    "updated_at",
)
USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "reasoning_tokens",
    "provider_total_tokens",
)
TASK_CONTRACT_FIELDS: Final = (
    "repository",
    "instruction",
    "allowed_paths",
    "verification",
    "limits",
    "task_id",
    "base_sha",
)
VERIFICATION_COMMAND_FIELDS: Final = ("name", "argv", "timeout_seconds")
LIMITS_FIELDS: Final = (
    "max_steps",
    "wall_time_seconds",
    "max_tool_output_bytes",
    "max_patch_bytes",
    "max_total_tokens",
)
TERMINAL_PHASES: Final = frozenset({"completed", "failed", "cancelled"})


def empty_usage() -> dict[str, Any]:
    return {
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_input_tokens": 0,
        "reasoning_tokens": 0,
        "provider_total_tokens": None,
    }


def usage_record(lane: str, provider: str, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {"cost": None, "lane": lane, "model": model, "provider": provider, "usage": usage}


def manifest_defaults(**identity: str) -> dict[str, Any]:
    """A fresh manifest: the identifier fields given, everything else at its model default."""
    manifest: dict[str, Any] = {
        "schema_version": 1,
        "phase": "created",
        "step": 0,
        "messages": [],
        "usage": empty_usage(),
        "model_usage": [],
        "final_summary": "",
        "last_action_fingerprint": None,
        "repeat_count": 0,
        "last_event_sequence": -1,
        "verification": [],
        "pending_action": None,
        "approval_history": [],
        "granted_effects": [],
        "active_wall_time_seconds": 0.0,
        "active_started_at": None,
        "terminal": False,
        "active_writer_token": None,
        "writer_claimed_at": None,
        "writer_heartbeat_at": None,
        "updated_at": None,
    }
    manifest.update(identity)
    return manifest
