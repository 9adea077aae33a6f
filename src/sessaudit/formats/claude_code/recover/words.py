"""What Claude Code's own `--resume` does with an open turn (spec §8), as the recovery's `native_plan`, and
in words for the console."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sessaudit.model import PendingEffect

REPAIR = "sessaudit seed PATH --native --output FILE"


def resume_plan(effects: Sequence[PendingEffect]) -> dict[str, Any]:
    """`claude --resume` sends the rebuilt history to the API, which refuses a tool_use without its
    tool_result (HTTP 400, on every later prompt too): with open calls it fails until they are answered."""
    if effects:
        return {
            "resume": "fails",
            "reason": "a tool_use without its tool_result (API 400 invalid_request_error)",
            "unanswered": [effect.tool_call_id for effect in effects],
            "repair": REPAIR,
        }
    return {"resume": "loads", "unanswered": []}


def describe_plan(plan: Mapping[str, Any]) -> str | None:
    unanswered = plan.get("unanswered")
    count = len(unanswered) if isinstance(unanswered, list) else 0
    if plan.get("resume") == "fails":
        calls = "the open call is" if count == 1 else f"the {count} open calls are"
        return (
            f"`claude --resume` fails (API 400: a tool_use without its tool_result) until {calls} "
            f"answered; `{REPAIR}` writes a copy that answers {'it' if count == 1 else 'them'} as errors"
        )
    if plan.get("resume") == "loads":
        return "`claude --resume` loads the session as it is (no call is left unanswered)"
    return None
