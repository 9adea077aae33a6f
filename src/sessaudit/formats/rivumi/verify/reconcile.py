"""Resume reconciliation (spec §4) and the run's open state (CONTRACT §4, §4.1), from verified files.

Pure: it reads only the EventLog and the manifest artifact that `read.reader.check_run_directory` produced.
Decisions where the spec or contract leave room:
- The manifest/log sequence comparison follows Rivumi's resume (the last event in file order); the open
  state follows CONTRACT §4.1 (the last event by sequence).
- When the log itself is corrupt (a framing, JSON, envelope, sequence or id finding with a `corrupt`
  effect) Rivumi refuses before comparing sequences, so no sequence finding is made; the open state is
  still derived from the last decodable event.
- A terminal run is one whose last event is `run.completed`/`run.failed`/`run.cancelled`, or whose
  manifest is terminal (the manifest is saved before the terminal event, so a lost terminal event
  leaves a terminal manifest one ahead: spec §3.1).
- A last `approval.requested` without a usable manifest (phase unknown) is `approval-pending`.
- Phase `paused` gives `step-pending`, except over a last `tool.started`/`verification.started`, whose
  unknown or replayable effect is never hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from sessaudit.formats.rivumi.read.eventlog import Event, EventLog
from sessaudit.formats.rivumi.read.manifest import JsonArtifact
from sessaudit.formats.rivumi.spec.manifest_fields import TERMINAL_PHASES
from sessaudit.model import SEED_KIND, Condition, Finding, PendingEffect, Recovery, Run, RunState
from sessaudit.rules import finding, verdict_of
from sessaudit.verdicts import Verdict, worst

TERMINAL_EVENTS: Final[dict[str, RunState]] = {
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
}
SIDE_EFFECT_STARTS: Final = frozenset({"tool.started", "verification.started"})
MODEL_OPEN: Final = frozenset({"model.requested", "model.retry", "model.fallback"})
NOT_STARTED: Final = frozenset({"tool.requested", "approval.reused", "tool.batch_started"})
AWAITING_TERMINAL: Final = frozenset({"verification.completed", "model.failed", "run.error"})
# named in CONTRACT §4.1's step-pending row: no note for these
STEP_PENDING: Final = frozenset(
    {
        "tool.completed",
        "approval.abandoned",
        "session.resumed",
        "run.created",
        "workspace.prepared",
        "run.forked",
    }
)
ALLOW: Final = frozenset({"allow_once", "allow_session"})
NOT_RECORDED: Final = "replay policy and key of the calls that did not start are not recorded in the log"


@dataclass(frozen=True, slots=True)
class OpenState:
    """The condition a non-terminal run is left in, and why (a note when the last event is not named)."""

    condition: Condition
    note: str | None = None


@dataclass(slots=True)
class Reconciliation:
    """The §4 outcome as findings, the run as the report shows it, and the verdict both give."""

    run: Run
    findings: list[Finding] = field(default_factory=list)
    verdict: Verdict = Verdict.CLEAN
    repaired_to: int | None = None  # what Rivumi's resume would set last_event_sequence to
    last_event: Event | None = None


def reconcile(log: EventLog | None, manifest: JsonArtifact | None, *, events_path: str) -> Reconciliation:
    """Reconcile the manifest with the log (spec §4) and derive the run's state and recovery.

    `log` is None when events.jsonl is absent; `events_path` is then where findings about it point."""
    document = manifest.document if manifest is not None else None
    manifest_path = manifest.path if manifest is not None else None
    events = [event for event in (log.events if log is not None else []) if event.sequence is not None]
    last_event = max(events, key=lambda event: event.sequence or 0) if events else None
    findings: list[Finding] = []
    repaired_to = _sequences(log, document, manifest_path, events_path, findings)
    state = _terminal_state(last_event, document)
    recovery = None
    if state == "open":
        phase = document.get("phase") if document is not None else None
        open_state = open_state_of(last_event, phase if isinstance(phase, str) else None)
        if open_state.note is not None:
            findings.append(_at(last_event, "SA556", open_state.note, events_path))
        recovery = _recovery(open_state.condition, last_event, events)
    run = Run(run_id=_run_id(log, document, events_path), kind="run", state=state, recovery=recovery)
    findings.sort(key=Finding.sort_key)
    verdict = worst(verdict_of(findings), Verdict.NEEDS_RECOVERY if recovery is not None else None)
    return Reconciliation(run, findings, verdict, repaired_to, last_event)


def _sequences(
    log: EventLog | None,
    document: dict[str, Any] | None,
    manifest_path: str | None,
    events_path: str,
    findings: list[Finding],
) -> int | None:
    """Spec §4 steps 4–6: the manifest's last_event_sequence against the log; the repaired value, if any."""
    recorded = document.get("last_event_sequence", -1) if document is not None else None
    if not isinstance(recorded, int) or isinstance(recorded, bool):
        return None  # no usable manifest: its own findings say why
    if log is None:
        if recorded == -1:
            findings.append(
                finding(
                    "SA555",
                    "events.jsonl is absent and session.json records no event (last_event_sequence -1); "
                    "Rivumi resumes such a run from its start",
                    path=events_path,
                )
            )
        else:
            findings.append(
                finding(
                    "SA553",
                    f"events.jsonl is missing, but session.json records events up to sequence {recorded}; "
                    "Rivumi refuses to resume (events.jsonl is missing)",
                    path=events_path,
                    evidence={"manifest_last_event_sequence": recorded},
                )
            )
        return None
    if verdict_of(log.findings) is Verdict.CORRUPT:
        return None  # Rivumi rejects the log before it compares sequences
    last = log.last_sequence if log.last_sequence is not None else -1
    final = log.events[-1] if log.events else None
    evidence = {"manifest_last_event_sequence": recorded, "log_last_sequence": last}
    if recorded == last + 1:
        findings.append(
            finding(
                "SA550",
                f"session.json records last_event_sequence {recorded} but events.jsonl ends at {last}: the "
                f"writer died after saving the manifest for event {recorded} and before appending it; "
                f"Rivumi's resume sets last_event_sequence back to {last} (nothing else of the manifest "
                f"changes){_after_repair(document, recorded)}",
                path=manifest_path,
                pointer="/last_event_sequence",
                evidence=evidence,
            )
        )
        if final is not None and _unknown_effect(final):
            findings.append(
                _at(
                    final,
                    "SA551",
                    f"the manifest is one ahead over a last {final.event_type} (sequence {last}): the effect "
                    "ran or was still running when the writer died and its completion event was lost; "
                    "Rivumi repairs and resumes anyway, and the model never sees the outcome",
                    events_path,
                    **_effect_evidence(final),
                )
            )
        return last
    if recorded != last:
        relation = "behind" if recorded < last else f"{recorded - last} ahead of"
        findings.append(
            finding(
                "SA552",
                f"session.json records last_event_sequence {recorded}, {relation} events.jsonl's last "
                f"sequence {last}; Rivumi refuses to resume (manifest event sequence does not match "
                "events.jsonl)",
                path=manifest_path,
                pointer="/last_event_sequence",
                evidence=evidence,
            )
        )
        return None
    if final is not None and final.event_type in SIDE_EFFECT_STARTS:
        findings.append(
            _at(
                final,
                "SA554",
                f"the log ends in {final.event_type} (sequence {last}); Rivumi refuses to resume (session "
                "stopped during a side effect; automatic resume cannot prove whether the action completed)",
                events_path,
                **_effect_evidence(final),
            )
        )
    return None


def _after_repair(document: dict[str, Any] | None, recorded: int) -> str:
    if document is not None and document.get("terminal") is True:
        return "; the run is terminal, so nothing more is written"
    return f" and writes its next event as sequence {recorded}"


def _unknown_effect(event: Event) -> bool:
    """A started side effect whose outcome nobody can know: a non-read tool, or a verification command."""
    if event.event_type == "verification.started":
        return True
    return event.event_type == "tool.started" and event.data.get("effect") != "read"


def _effect_evidence(event: Event) -> dict[str, Any]:
    keys = ("tool_call_id", "name", "effect") if event.event_type == "tool.started" else ("name", "argv")
    return {key: event.data.get(key) for key in keys}


def _terminal_state(last_event: Event | None, document: dict[str, Any] | None) -> RunState:
    if last_event is not None and last_event.event_type in TERMINAL_EVENTS:
        return TERMINAL_EVENTS[last_event.event_type]
    phase = document.get("phase") if document is not None else None
    if document is not None and document.get("terminal") is True and phase in TERMINAL_PHASES:
        state: RunState = phase
        return state
    return "open"


def open_state_of(last_event: Event | None, phase: str | None) -> OpenState:
    """CONTRACT §4.1: the condition of a non-terminal run from its last event (and manifest phase)."""
    if last_event is None:
        return OpenState("step-pending")  # a run with no step yet
    event_type = last_event.event_type or ""
    data = last_event.data
    if event_type == "tool.started":
        return OpenState("effect-replayable" if data.get("effect") == "read" else "effect-unknown")
    if event_type == "verification.started":
        return OpenState("effect-unknown")
    if phase == "paused":
        return OpenState("step-pending")
    if event_type in MODEL_OPEN:
        return OpenState("model-request-open")
    if event_type == "approval.requested":
        if phase in ("waiting_approval", None):  # None: no usable manifest; the event alone says it
            return OpenState("approval-pending")
        return OpenState(
            "step-pending",
            f"the run ends in approval.requested (sequence {last_event.sequence}) while the manifest phase "
            f"is {phase!r}, not 'waiting_approval'; step-pending assumed",
        )
    if event_type in NOT_STARTED:
        return OpenState("tool-not-started")
    if event_type == "model.completed":
        calls = data.get("tool_calls")
        return OpenState("tool-not-started" if isinstance(calls, list) and calls else "awaiting-terminal")
    if event_type in AWAITING_TERMINAL:
        return OpenState("awaiting-terminal")
    if event_type == "approval.resolved":
        decision = data.get("decision")
        if decision in ALLOW:
            return OpenState("tool-not-started")
        if decision == "cancel":
            return OpenState("awaiting-terminal")
        if decision == "deny":
            return OpenState("step-pending")
        return OpenState(
            "step-pending",
            f"the run ends in approval.resolved (sequence {last_event.sequence}) with decision "
            f"{decision!r}; step-pending assumed",
        )
    if event_type in STEP_PENDING or event_type.startswith("context_pressure."):
        return OpenState("step-pending")
    return OpenState(
        "step-pending",
        f"the run ends in {event_type or 'an event without a type'} (sequence {last_event.sequence}), "
        "which the open-state table does not name; step-pending assumed",
    )


def _recovery(condition: Condition, last_event: Event | None, events: list[Event]) -> Recovery:
    pending: list[PendingEffect] = []
    assumes: list[str] = []
    if last_event is not None and condition in ("effect-unknown", "effect-replayable"):
        policy: Literal["safe", "never"] = "safe" if condition == "effect-replayable" else "never"
        pending.append(_pending_effect(last_event, events, policy))
    if condition == "tool-not-started":
        assumes.append(NOT_RECORDED)
    return Recovery(
        condition=condition,
        conditions=[condition],
        seed_kind=SEED_KIND[condition],
        assumes=assumes,
        pending_effects=pending,
    )


def _pending_effect(started: Event, events: list[Event], policy: Literal["safe", "never"]) -> PendingEffect:
    data = started.data
    event_id = started.record.get("event_id")
    intent_id = event_id if isinstance(event_id, str) else None
    if started.event_type == "verification.started":
        name = str(data.get("name"))
        return PendingEffect(
            tool_call_id=f"verification:{name}",
            tool_name=name,
            arguments={"argv": data.get("argv")},
            intent_id=intent_id,
            result_slot=None,
            replay_policy=policy,
        )
    call_id = str(data.get("tool_call_id"))
    arguments: Any = None
    for event in reversed(events):
        if event.event_type == "tool.requested" and event.data.get("tool_call_id") == call_id:
            arguments = event.data.get("arguments")
            break
    return PendingEffect(
        tool_call_id=call_id,
        tool_name=str(data.get("name")),
        arguments=arguments,
        intent_id=intent_id,
        result_slot=None,
        replay_policy=policy,
    )


def _run_id(log: EventLog | None, document: dict[str, Any] | None, events_path: str) -> str:
    for candidate in (
        document.get("run_id") if document is not None else None,
        log.run_id if log is not None else None,
    ):
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    parts = events_path.replace("\\", "/").rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 else events_path


def _at(event: Event | None, code: str, message: str, events_path: str, **evidence: Any) -> Finding:
    return finding(
        code,
        message,
        path=events_path,
        line=event.line if event is not None else None,
        byte_offset=event.byte_offset if event is not None else None,
        seq=event.sequence if event is not None else None,
        evidence=evidence,
    )
