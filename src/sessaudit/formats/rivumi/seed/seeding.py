"""The sessaudit seed (CONTRACT §5) of an open Rivumi run, with Rivumi's own fork seed as `native`.

Decisions (docs/decisions.md): the fork point is the last event by sequence, or the event `--sequence N`
names; `context.messages` is session.json's conversation, which Rivumi keeps only for the latest event, so
a fork point before the log's end has no recorded context (a warning says so, and `native.replay_state`
holds the event timeline up to the fork point); `next_facts` are what Rivumi's own resume would append
in place (`session.resumed`, then `approval.abandoned` for a pending approval), only at the log's end and
only when Rivumi's resume accepts the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from sessaudit.formats.rivumi.native.resume import ResumeAnswer
from sessaudit.formats.rivumi.read.eventlog import Event
from sessaudit.formats.rivumi.seed.forkseed import native_fork_seed
from sessaudit.model import ForkPoint, Recovery, Run, Seed, SeedContext, SeedSource

EVENT_ID: Final = {"$assign": "uuid4-hex"}
TIMESTAMP: Final = {"$assign": "timestamp"}
MODEL_STEP_EVENTS: Final = frozenset({"model.requested", "model.retry", "model.fallback"})


@dataclass(frozen=True, slots=True)
class RunRecords:
    """What a Rivumi seed is made from: the verified log, the manifest (None when unusable), the raw log."""

    run_id: str
    task_id: str | None
    events: list[Event]  # decoded events with a sequence, in file order
    manifest: dict[str, Any] | None
    events_bytes: bytes | None
    events_path: str


def rivumi_seed(
    run: Run,
    recovery: Recovery,
    records: RunRecords,
    *,
    source: SeedSource,
    resume: ResumeAnswer,
    fork_sequence: int | None,
) -> Seed | None:
    """The seed of `run` at its last event (or at `fork_sequence`); None when that event does not exist."""
    point: Event | None = None
    at_end = True
    if records.events:
        last = max(records.events, key=lambda event: event.sequence or 0)
        wanted = last.sequence if fork_sequence is None else fork_sequence
        point = next((event for event in records.events if event.sequence == wanted), None)
        if point is None:
            return None
        at_end = point.sequence == last.sequence
    elif fork_sequence is not None:
        return None
    warnings = list(recovery.warnings)
    messages: list[Any] = []
    manifest = records.manifest
    if at_end and manifest is not None and isinstance(manifest.get("messages"), list):
        messages = manifest["messages"]
        if manifest.get("last_event_sequence") != (point.sequence if point is not None else -1):
            warnings.append(
                "session.json is ahead of the log: its conversation may already include the outcome of an "
                "event the log lacks"
            )
    elif not at_end:
        warnings.append(
            f"session.json keeps only the latest conversation; the model-visible context at sequence "
            f"{fork_sequence} is not recorded (native.replay_state has the event timeline up to it)"
        )
    next_facts: list[Any] = []
    if at_end:
        if resume.ok:
            next_facts = _resume_events(records, resume)
        else:
            warnings.append(
                f"Rivumi refuses to resume this run ({resume.message}): nothing is appended in place"
            )
    native = native_fork_seed(
        records.events_bytes,
        manifest,
        None,
        run_id=records.run_id,
        sequence=point.sequence if point is not None and point.sequence is not None else 0,
        events_path=records.events_path,
    )
    if not native.ok:
        warnings.append(f"Rivumi's own fork seed refuses this log: {native.message}")
    value, text = native.as_native()
    event_id = point.record.get("event_id") if point is not None else None
    return Seed(
        seed_kind=recovery.offered_seed_kind(),
        source=source,
        session_id=records.run_id,
        run_id=run.run_id,
        condition=recovery.condition,
        fork_point=ForkPoint(
            seq=point.sequence if point is not None else None,
            line=point.line if point is not None else None,
            byte_offset=point.byte_offset if point is not None else None,
            fact_id=event_id if isinstance(event_id, str) else None,
        ),
        pending_effects=recovery.pending_effects,
        replay=_replay(recovery, point, manifest) if recovery.seed_kind == "replay" else None,
        context=SeedContext(messages=messages),
        next_facts=next_facts,
        assumes=recovery.assumes,
        warnings=warnings,
        native=value,
        native_text=text,
    )


def _replay(recovery: Recovery, point: Event | None, manifest: dict[str, Any] | None) -> dict[str, Any]:
    """CONTRACT §5 `replay`: a read tool to re-run, a model step to re-request, or appends only."""
    if recovery.condition == "effect-replayable" and recovery.pending_effects:
        effect = recovery.pending_effects[0]
        return {
            "kind": "tool",
            "tool_name": effect.tool_name,
            "arguments": effect.arguments,
            "intent_id": effect.intent_id,
            "result_slot": effect.result_slot,
            "replay_key": effect.replay_key,
        }
    if recovery.condition == "model-request-open" and point is not None:
        step = point.data.get("step") if point.event_type == "model.requested" else None
        if step is None and manifest is not None:
            step = manifest.get("step")
        attempt = point.data.get("attempt") if point.event_type == "model.retry" else None
        return {
            "kind": "model_request",
            "step_id": step,
            "attempt": attempt,
            "context_boundary": point.sequence,
        }
    return {"kind": "append"}


def _resume_events(records: RunRecords, resume: ResumeAnswer) -> list[Any]:
    """The events Rivumi's resume writes first (spec §2.4, §4): session.resumed, then approval.abandoned."""
    manifest = records.manifest
    if manifest is None:
        return []
    recorded = manifest.get("last_event_sequence", -1)
    base = resume.repaired_to if resume.repaired_to is not None else recorded
    if not isinstance(base, int):
        return []
    facts: list[Any] = [
        _event(
            records,
            base + 1,
            "session.resumed",
            {
                "base_sha": manifest.get("base_sha"),
                "model": manifest.get("model_id"),
                "provider": manifest.get("provider_name"),
                "resumed_step": manifest.get("step", 0),
            },
        )
    ]
    pending = manifest.get("pending_action")
    if isinstance(pending, dict):
        facts.append(
            _event(
                records,
                base + 2,
                "approval.abandoned",
                {
                    "action_id": pending.get("action_id"),
                    "effect": pending.get("effect"),
                    "reason": "process_interrupted_before_decision",
                    "request_id": pending.get("request_id"),
                },
            )
        )
    return facts


def _event(records: RunRecords, sequence: int, event_type: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "created_at": TIMESTAMP,
        "data": data,
        "event_id": EVENT_ID,
        "event_type": event_type,
        "run_id": records.run_id,
        "sequence": sequence,
        "task_id": records.task_id,
    }
