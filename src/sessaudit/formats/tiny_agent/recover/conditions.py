"""Runs and recovery conditions of a reduced v2 session (CONTRACT §4, tiny-agent v2 column), SA301–SA303."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from sessaudit.formats.tiny_agent.check.notes import parsed_arguments
from sessaudit.formats.tiny_agent.check.state import UNTOUCHED, Operation, ToolIntent
from sessaudit.formats.tiny_agent.read.shapes import short_id, show
from sessaudit.formats.tiny_agent.recover.planner import CONFIGURATION_UNCHANGED, REPLAY_POLICY_UNKNOWN
from sessaudit.model import (
    SEED_KIND,
    Condition,
    Finding,
    PendingEffect,
    Recovery,
    Run,
    RunKind,
    RunState,
    order_conditions,
)
from sessaudit.rules import finding
from sessaudit.times import iso_from_epoch_ms

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer import Reducer

RUN_STATES: dict[str, RunState] = {"completed": "completed", "aborted": "aborted", "failed": "failed"}


def open_conditions(operation: Operation) -> list[Condition]:
    """Every condition of the contract table that applies to an operation (open, or finished with an
    intent still pending), in the contract's order."""
    pending = [intent for intent in operation.intents if intent.pending]
    found: set[Condition] = set()
    if any(intent.replay == "never" for intent in pending):
        found.add("effect-unknown")
    abort = operation.abort_requested and not operation.finished
    if abort:
        found.add("abort-pending")
    if not abort and any(intent.replay == "safe" for intent in pending):
        found.add("effect-replayable")
    if operation.finished:
        return order_conditions(found)
    step = operation.step
    status = operation.status
    if step is not None and status == "attempting":
        found.add("attempts-exhausted" if step.number == 2 else "model-request-open")
    untouched = untouched_calls(operation)
    if untouched and not abort:
        found.add("tool-not-started")
    if step is not None and (
        status == "failed"
        or (
            status == "settled" and (operation.kind == "compaction" or step.stop_reason in ("stop", "length"))
        )
    ):
        found.add("awaiting-terminal")
    if not abort and (
        step is None
        or (
            operation.kind == "run"
            and status == "settled"
            and step.stop_reason == "toolUse"
            and not pending
            and not untouched
        )
    ):
        found.add("step-pending")
    return order_conditions(found)


def untouched_calls(operation: Operation) -> list[int]:
    """Indexes of the latest toolUse answer's calls with neither an intent nor a synthetic result."""
    answer = operation.last_answer
    if operation.finished or answer is None or answer.stop_reason != "toolUse":
        return []
    return [index for index, state in enumerate(answer.states) if state == UNTOUCHED]


def pending_effects(operation: Operation) -> tuple[list[PendingEffect], bool]:
    """Pending intents (start order), then the untouched calls of the relevant answer (index order); and
    whether any call never started."""
    effects = [
        PendingEffect(
            tool_call_id=intent.call_id,
            tool_name=intent.name,
            arguments=intent.arguments,
            intent_id=intent.started_id,
            result_slot=intent.result_slot,
            replay_policy="safe" if intent.replay == "safe" else "never",
            replay_key=intent.replay_key,
        )
        for intent in operation.intents
        if intent.pending
    ]
    untouched = untouched_calls(operation)
    answer = operation.last_answer
    for index in untouched:
        assert answer is not None
        call_id, name, text = answer.calls[index]
        parsed = parsed_arguments(text)
        effects.append(
            PendingEffect(
                tool_call_id=call_id,
                tool_name=name,
                arguments=parsed if parsed is not None else text,
                intent_id=None,
                result_slot=None,
                replay_policy=None,
                replay_key=None,
            )
        )
    return effects, bool(untouched)


# every field of a Run: a settled run's model is built with all of them set, as a validated one is
_SETTLED_FIELDS: Final = set(Run.model_fields)


def build_runs(
    r: Reducer, *, path: str, session_id: str | None, corrupt: bool, last_offset: int
) -> tuple[list[Run], list[Finding]]:
    """Every operation in start order, with recovery where something is open or an effect is unknown;
    SA301–SA303 for an intact session (a corrupt one only carries the recovery; recovery.py withholds it)."""
    runs: list[Run] = []
    findings: list[Finding] = []
    for operation in r.runs:
        run_id = operation.operation_id
        state: RunState = RUN_STATES.get(operation.outcome or "", "failed") if operation.finished else "open"
        pending = [intent for intent in operation.intents if intent.pending]
        recovery = None
        if not operation.finished or pending:
            conditions = open_conditions(operation)
            effects, never_started = pending_effects(operation)
            assumes = [CONFIGURATION_UNCHANGED]
            if never_started:
                assumes.append(REPLAY_POLICY_UNKNOWN)
            if conditions:
                recovery = Recovery(
                    condition=conditions[0],
                    conditions=conditions,
                    seed_kind=SEED_KIND[conditions[0]],
                    assumes=assumes,
                    pending_effects=effects,
                )
                if not corrupt:
                    findings.extend(
                        _open_work_findings(r, operation, conditions, pending, path, session_id, last_offset)
                    )
        kind: RunKind = "run" if operation.kind == "run" else "compaction"
        written = iso_from_epoch_ms(r.last_written.get(run_id))
        if recovery is None:
            # a settled run, of which a dense session has ~90 per MB: built without validation (every value
            # is one of the literals above, or a str), sharing one set of field names (a validated model
            # has a set of its own, ~470 bytes)
            runs.append(
                Run.model_construct(
                    _SETTLED_FIELDS,
                    run_id=run_id,
                    kind=kind,
                    state=state,
                    recovery=None,
                    last_written_at=written,
                )
            )
        else:
            run = Run(run_id=run_id, kind=kind, state=state, recovery=recovery, last_written_at=written)
            runs.append(run)
    return runs, findings


def _open_work_findings(
    r: Reducer,
    operation: Operation,
    conditions: list[Condition],
    pending: list[ToolIntent],
    path: str,
    session_id: str | None,
    last_offset: int,
) -> list[Finding]:
    run_id = operation.operation_id
    result: list[Finding] = []
    if not operation.finished:
        result.append(
            finding(
                "SA301",
                f"{operation.kind} {short_id(run_id)} was left open after line {r.verified_line}: "
                f"{conditions[0]}" + _detail(operation, conditions[0]),
                path=path,
                session_id=session_id,
                line=r.verified_line,
                byte_offset=last_offset,
                seq=r.verified_seq,
                evidence={"run_id": run_id, "condition": conditions[0], "conditions": list(conditions)},
            )
        )
    for intent in pending:
        never = intent.replay == "never"
        place = intent.place
        text = f"tool {intent.name} ({intent.call_id}) intent recorded at line {place.line}, no result: " + (
            "it may or may not have run" if never else "it is declared safe to replay into its result slot"
        )
        if operation.finished:
            text += f" (its run finished as {operation.outcome})"
        evidence: dict[str, Any] = {
            "run_id": run_id,
            "tool_name": intent.name,
            "tool_call_id": intent.call_id,
            "arguments": intent.arguments,
            "intent_id": intent.started_id,
            "result_slot": intent.result_slot,
            "replay_policy": intent.replay,
            "replay_key": intent.replay_key,
        }
        result.append(
            finding(
                "SA302" if never else "SA303",
                text,
                path=path,
                session_id=session_id,
                line=place.line,
                byte_offset=place.offset,
                seq=place.seq,
                pointer=place.prefix + "/record",
                evidence=evidence,
            )
        )
    return result


def _detail(operation: Operation, condition: Condition) -> str:
    pending = [intent for intent in operation.intents if intent.pending]
    if condition in ("effect-unknown", "effect-replayable") and pending:
        intent = pending[0]
        return f" (tool {intent.name} {show(intent.call_id)} started, no result)"
    if condition in ("model-request-open", "attempts-exhausted") and operation.step is not None:
        step = operation.step
        return f" (attempt {step.number} of step {short_id(step.step)} has no answer)"
    if condition == "tool-not-started":
        return f" ({len(untouched_calls(operation))} call(s) of the last answer never started)"
    if condition == "abort-pending":
        return " (the user's abort was recorded, reconciliation was not)"
    if condition == "awaiting-terminal":
        return " (the work is done; operationFinished is missing)"
    return " (the next model step is due)"
