"""What Codex's own `codex resume` does with an open turn (spec §7), as the recovery's `native_plan`, and in
words for the console."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sessaudit.model import Condition, PendingEffect

REPAIR = "sessaudit seed PATH --native --output FILE"


def resume_plan(effects: Sequence[PendingEffect], condition: Condition) -> dict[str, Any]:
    """`codex resume` loads the history and, before each request, answers every call without an output
    with the text "aborted" (spec §7 step 5): it continues, but the model is told only that the call was
    aborted, and may run a world-changing call again."""
    if effects:
        return {
            "resume": "loads",
            "unanswered": [effect.tool_call_id for effect in effects],
            "codex_answers": "aborted",
            "risk": (
                'the model sees only "aborted" and may run the call again'
                if any(effect.replay_policy == "never" for effect in effects)
                else None
            ),
            "repair": REPAIR,
        }
    plan: dict[str, Any] = {"resume": "loads", "unanswered": []}
    if condition == "model-request-open":
        plan["next"] = "the next user message sends the history again"
    return plan


def describe_plan(plan: Mapping[str, Any]) -> str | None:
    unanswered = plan.get("unanswered")
    count = len(unanswered) if isinstance(unanswered, list) else 0
    if plan.get("resume") != "loads":
        return None
    if count:
        calls = "the open call" if count == 1 else f"each of the {count} open calls"
        risk = (
            "; the model may run it again"
            if plan.get("risk") and count == 1
            else ("; the model may run them again" if plan.get("risk") else "")
        )
        return (
            f'`codex resume` loads the session and answers {calls} with "aborted"{risk}; `{REPAIR}` '
            f"writes a copy that says the outcome is unknown and nothing was run again"
        )
    return "`codex resume` loads the session as it is (no call is left unanswered)"
