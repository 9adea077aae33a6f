"""Plain words for what a report holds: a finding's place, an open run's recovery, a native plan."""

from __future__ import annotations

from typing import Any

from sessaudit.model import Finding, PendingEffect, Run, Source
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


def describe_recovery(run: Run, *, effects: bool = True) -> list[str]:
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
        lines.append("next (tiny-agent's own recovery): " + describe_plan(recovery.native_plan))
    for warning in recovery.warnings:
        lines.append(f"warning: {readable_epochs(warning)}")
    if recovery.assumes:
        lines.append("assumes: " + "; ".join(recovery.assumes))
    return lines


def describe_native(source: Source, run: Run) -> list[str]:
    """What the source system itself would do with the open run (Rivumi: its resume answer), and the
    seed's own warnings (those the recovery entry does not already say)."""
    lines: list[str] = []
    resume = source.native.get("resume") if source.format == "rivumi" else None
    if isinstance(resume, dict):
        if resume.get("ok"):
            repaired = resume.get("repaired_to")
            repair = f" after setting last_event_sequence back to {repaired}" if repaired is not None else ""
            lines.append(f"Rivumi's own resume: accepts the run{repair}")
        elif resume.get("crash"):
            lines.append(f"Rivumi's own resume: crashes ({resume.get('message')})")
        else:
            lines.append(f"Rivumi's own resume: refuses ({resume.get('message')})")
    seed = run.recovery.seed if run.recovery is not None else None
    if seed is not None:
        shown = set(run.recovery.warnings) if run.recovery is not None else set()
        lines.extend(
            f"seed warning: {readable_epochs(warning)}" for warning in seed.warnings if warning not in shown
        )
    return lines


def describe_plan(plan: dict[str, Any]) -> str:
    """A native plan (tiny-agent's shape) in words."""
    kind = plan.get("type")
    if kind == "appendSynthetic":
        parts = [
            f"{item.get('reason')} result for {item.get('toolName')} ({item.get('toolCallId')})"
            for item in plan.get("results", [])
        ]
        return "append " + ", ".join(parts)
    if kind == "startStep":
        return f"start model step (attempt {plan.get('attempt')}, {plan.get('stepKind')})"
    if kind == "startTool":
        verb = "re-run" if plan.get("mode") == "replay" else "start"
        return f"{verb} tool {plan.get('toolName')} with {short_json(plan.get('arguments'))}"
    if kind == "closeAttempt":
        return "close the open model attempt as aborted"
    if kind == "finish":
        detail = f"/{plan['completion']}" if "completion" in plan else ""
        error = f" ({plan['error'].get('code')})" if isinstance(plan.get("error"), dict) else ""
        return f"finish the run as {plan.get('outcome')}{detail}{error}"
    if kind == "blocked":
        return f"blocked: {plan.get('reason')} (nothing can be appended until the configuration is restored)"
    return str(kind)
