"""What the formats that seed an open turn of a log read whole share: the seeding request (the source,
`seed --run/--sequence`, why a seed is withheld), how a finding names a recovery's seed, and the parts of
the seed that depend only on the recovery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessaudit.model import Recovery, SeedSource


@dataclass(frozen=True, slots=True)
class Seeding:
    """What a turn's seed needs beyond its records: the source, `seed --run/--sequence`, and why the seed
    is withheld (a corrupt history), if it is."""

    source: SeedSource
    fork_run: str | None = None
    fork_sequence: int | None = None
    withheld: str | None = None


def seed_words(recovery: Recovery) -> str:
    """The seed an open run's finding offers, in words."""
    if recovery.seed is not None:
        return f"a {recovery.seed.seed_kind} seed (`sessaudit seed`)"
    if recovery.seed_kind is None:
        return "no seed (the history is corrupt)"
    return f"no {recovery.seed_kind} seed at the chosen fork point"


def turn_replay(recovery: Recovery, context_boundary: str | None) -> dict[str, Any]:
    """CONTRACT §5 `replay` of a turn's seed: the read to re-run (its result goes to the call's id; these
    logs have no replay key), or the model request to send again from `context_boundary`, else an append."""
    if recovery.condition == "effect-replayable" and recovery.pending_effects:
        effect = recovery.pending_effects[0]
        return {
            "kind": "tool",
            "tool_name": effect.tool_name,
            "arguments": effect.arguments,
            "intent_id": effect.intent_id,
            "result_slot": effect.tool_call_id,
            "replay_key": effect.replay_key,
        }
    if recovery.condition == "model-request-open":
        return {
            "kind": "model_request",
            "step_id": None,
            "attempt": None,
            "context_boundary": context_boundary,
        }
    return {"kind": "append"}


def unknown_effect_warnings(recovery: Recovery, answered: str) -> list[str]:
    """One seed warning per pending effect that must not run again; `answered` says how next_facts answer
    it (e.g. "as an error")."""
    how = f"answer it {answered} without" if answered else "answer it without"
    return [
        f"{effect.tool_name} ({effect.tool_call_id}) may or may not have run: check its effect by hand; "
        f"next_facts {how} running it again"
        for effect in recovery.pending_effects
        if effect.replay_policy == "never"
    ]
