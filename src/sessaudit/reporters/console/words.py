"""Plain words for what a report holds: a finding's place, an open run's recovery (a native plan and answer
in its format plugin's words)."""

from __future__ import annotations

from sessaudit.model import Finding, PendingEffect, Run, Source
from sessaudit.registry import registry
from sessaudit.reporters.console.text import readable_epochs, short_json, short_pointer


def location(item: Finding, *, shorten: bool = False) -> str:
    """A finding's place (`line 3, byte 671, seq 3, /record/attempt`); `shorten`: long pointers counted."""
    place = item.location
    parts = place.parts()
    if place.pointer and shorten:
        parts[-1] = short_pointer(place.pointer)
    return ", ".join(parts)


def outcome_unknown(effect: PendingEffect) -> bool:
    """Started (an intent is recorded), no result, and not declared safe to re-run: it may or may not
    have happened, and only the world outside the log can tell."""
    return effect.intent_id is not None and effect.replay_policy != "safe"


def describe_effect(effect: PendingEffect) -> str:
    """One pending effect in a sentence."""
    arguments = "arguments not recorded" if effect.arguments is None else short_json(effect.arguments)
    tool = f"tool {effect.tool_name} ({effect.tool_call_id}) with {arguments}"
    if effect.intent_id is None:
        return f"{tool} never started"
    if outcome_unknown(effect):
        return f"UNKNOWN: {tool} may or may not have run"
    return f"{tool} started, no result; declared safe to re-run"


def describe_recovery(run: Run, *, effects: bool = True, source_format: str | None = None) -> list[str]:
    """Plain words for a run's recovery entry: which effects may or may not have happened, what comes
    next; `effects=False` leaves out the effects of unknown outcome (said before)."""
    recovery = run.recovery
    if recovery is None:
        return []
    seed_kind = f" (seed: {recovery.seed_kind})" if recovery.seed_kind is not None else ""  # None: withheld
    lines = [f"condition: {recovery.condition}{seed_kind}"]
    for effect in recovery.pending_effects:
        if not outcome_unknown(effect):
            lines.append(describe_effect(effect))
        elif effects:
            lines.append(
                f"{describe_effect(effect)} (intent {effect.intent_id} recorded, no result; "
                "it must not be re-run blindly)"
            )
    if recovery.native_plan is not None:
        plugin = registry().get(source_format)
        words = plugin.describe_plan(recovery.native_plan) if plugin is not None else None
        if plugin is not None and words is not None:
            lines.append(f"next ({plugin.title}'s own recovery): {words}")
    for warning in recovery.warnings:
        lines.append(f"warning: {readable_epochs(warning)}")
    if recovery.assumes:
        lines.append("assumes: " + "; ".join(recovery.assumes))
    return lines


def describe_native(source: Source, run: Run) -> list[str]:
    """What the source system itself would do with the open run (its plugin's words for the source's native
    answers), and the seed's own warnings (those the recovery entry does not already say)."""
    plugin = registry().get(source.format)
    lines = plugin.describe_native(source.native) if plugin is not None else []
    seed = run.recovery.seed if run.recovery is not None else None
    if seed is not None:
        shown = set(run.recovery.warnings) if run.recovery is not None else set()
        lines.extend(
            f"seed warning: {readable_epochs(warning)}" for warning in seed.warnings if warning not in shown
        )
    return lines
