"""The tiny-agent v2 recovery planner (spec §13, §18): what to append or do next for an open operation.

Pure: no effects, no ids allocated. It answers in tiny-agent's own plan shape (`recovery-plan`,
spec §13.1) and follows tiny-agent's decision order (§13.2), except where that planner has a known
defect (§13.4); there it plans what the design table intends, so that every appendable plan is
accepted by the reducer and a run reconciled plan by plan reaches its terminal record:

- an idle session (or a finished operation) has no plan, not a `finish` (defect 4);
- a call answered by a pre-execution synthetic is resolved, not untouched (defect 1);
- the answer a plan is about is the run's latest assistant entry, not the transcript's last message
  with calls, so a `stop` after tool steps finishes the run (defect 2); an abort answers every
  unresolved call of that answer even when a later step has failed (§12.2 abort closure), where
  tiny-agent's `finish aborted` would leave calls unanswered and the session unable to continue;
- a new step's context is the active-context boundary the reducer requires (defect 3);
- a call of a tool missing from the snapshot of the attempt that produced it gets `unknownTool`: a
  `toolStarted` for it would be rejected (§9.5);
- a settled `length` answer without calls, or a `stop` answer with blank content, has no legal
  completion: the run is finished as failed (`no_legal_completion`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NoReturn

from sessaudit.formats.tiny_agent.check.state import STARTED, UNTOUCHED, Answer, Operation, ToolIntent
from sessaudit.formats.tiny_agent.read.shapes import SYNTHETIC_TEXTS
from sessaudit.formats.tiny_agent.recover.current import CurrentConfiguration

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer import Reducer

CONFIGURATION_UNCHANGED: Final = "configuration unchanged"
REPLAY_POLICY_UNKNOWN: Final = "replay policy of calls that never started is not recorded"

ABORTED_ERROR: Final = {"code": "aborted", "message": "Operation aborted"}
MODEL_ERROR: Final = {"code": "model_error", "message": "provider request failed"}
NO_LEGAL_COMPLETION: Final = {
    "code": "no_legal_completion",
    "message": "the run settled without a legal completion",
}


@dataclass(frozen=True)
class PlanResult:
    """A plan in tiny-agent's shape, what it assumes (without `--current`), and warnings about it."""

    plan: dict[str, Any]
    assumes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    blocked: bool = False


class _Planning:
    """The configuration a plan is judged against: `--current`, or what the log itself recorded."""

    def __init__(self, current: CurrentConfiguration | None) -> None:
        self.current = current
        self.assumes: list[str] = []
        self.warnings: list[str] = []

    def assume(self, text: str) -> None:
        if self.current is None and text not in self.assumes:
            self.assumes.append(text)

    def result(self, plan: dict[str, Any]) -> PlanResult:
        return PlanResult(
            plan=plan,
            assumes=tuple(self.assumes),
            warnings=tuple(self.warnings),
            blocked=plan["type"] == "blocked",
        )


def plan_recovery(
    reducer: Reducer, operation: Operation | None, current: CurrentConfiguration | None
) -> PlanResult | None:
    """The next action for the open operation, or None for an idle session or a finished operation.

    With `current=None` the plan is the one that holds if nothing changed since the log was written (the
    step's configurationDigest, each intent's environmentIdentity, replay policy and key, the tools of the
    attempt's snapshot), and `assumes` says so wherever the plan depended on it."""
    if operation is None or operation.finished or reducer.current is not operation:
        return None
    planning = _Planning(current)
    return planning.result(_plan(reducer, operation, planning))


def _plan(r: Reducer, operation: Operation, planning: _Planning) -> dict[str, Any]:
    """§13.2 in order, with the design intent where tiny-agent's planner is defective (§13.4)."""
    step = operation.step
    status = operation.status
    if operation.abort_requested:
        if status == "attempting":
            return {"type": "closeAttempt", "error": dict(ABORTED_ERROR)}
        if operation.kind == "run":
            results = _abort_results(operation)
            if results:
                return {"type": "appendSynthetic", "results": results}
        return {"type": "finish", "outcome": "aborted"}
    if step is None:
        return _start_step(r, operation)
    if status == "failed":
        return {"type": "finish", "outcome": "failed", "error": dict(MODEL_ERROR)}
    if status == "attempting":
        if step.number == 2:
            return {"type": "blocked", "reason": "attempts_exhausted"}
        planning.assume(CONFIGURATION_UNCHANGED)
        current = planning.current
        if current is not None and current.configuration_digest != step.digest:
            return {"type": "blocked", "reason": "configuration_changed"}
        return {
            "type": "startStep",
            "stepKind": step.kind,
            "attempt": 2,
            "stepId": step.step,
            "contextThroughEntryId": step.context,
        }
    if operation.kind == "compaction":
        return {"type": "finish", "outcome": "completed", "finalEntryId": operation.result_entry}
    answer = operation.last_answer
    assert answer is not None and answer.entry_id == step.settled_entry
    if answer.stop_reason == "stop":
        if not answer.has_text:
            return _no_legal_completion()
        return {
            "type": "finish",
            "outcome": "completed",
            "completion": "normal",
            "finalEntryId": answer.entry_id,
        }
    if answer.stop_reason == "length":
        if not answer.calls:
            return _no_legal_completion()
        untouched = [index for index, state in enumerate(answer.states) if state == UNTOUCHED]
        if untouched:
            return {
                "type": "appendSynthetic",
                "results": [_pre_execution(answer, index, "truncated") for index in untouched],
            }
        return {
            "type": "finish",
            "outcome": "completed",
            "completion": "truncated",
            "finalEntryId": answer.entry_id,
        }
    return _tool_use(r, operation, answer, planning)


def _tool_use(r: Reducer, operation: Operation, answer: Answer, planning: _Planning) -> dict[str, Any]:
    """A settled toolUse answer: the first untouched call, then the lowest-index pending intent, then the
    next step (§13.2 steps 10–12)."""
    for index, state in enumerate(answer.states):
        if state == UNTOUCHED:
            return _untouched_call(answer, index, planning)
    pending = sorted((intent for intent in operation.intents if intent.pending), key=lambda i: i.index)
    if not pending:
        return _start_step(r, operation)
    return _pending_intent(operation, pending[0], planning)


def _untouched_call(answer: Answer, index: int, planning: _Planning) -> dict[str, Any]:
    _, name, text = answer.calls[index]
    current = planning.current
    planning.assume(CONFIGURATION_UNCHANGED)
    in_snapshot = name in answer.attempt.tools
    if not (in_snapshot if current is None else current.tool(name) is not None):
        return {"type": "appendSynthetic", "results": [_pre_execution(answer, index, "unknownTool")]}
    arguments = javascript_object(text)
    if arguments is None:
        return {"type": "appendSynthetic", "results": [_pre_execution(answer, index, "invalidArguments")]}
    if not in_snapshot:
        # Declared now, but not to the model that made the call: the reducer rejects a toolStarted for a
        # tool outside the attempt's snapshot (§9.5), so tiny-agent's `startTool` here could never be written.
        return {"type": "appendSynthetic", "results": [_pre_execution(answer, index, "unknownTool")]}
    planning.assume(REPLAY_POLICY_UNKNOWN)
    return {
        "type": "startTool",
        "mode": "start",
        "assistantEntryId": answer.entry_id,
        "toolIndex": index,
        "toolName": name,
        "arguments": arguments,
    }


def _pending_intent(operation: Operation, intent: ToolIntent, planning: _Planning) -> dict[str, Any]:
    """§13.2 step 12: a started call whose outcome is unknown."""
    current = planning.current
    planning.assume(CONFIGURATION_UNCHANGED)
    if current is None:
        replay, replay_key = intent.replay, intent.replay_key
    else:
        if intent.environment != current.environment_identity:
            return {"type": "blocked", "reason": "environment_changed"}
        declaration = current.tool(intent.name)
        if declaration is None or declaration.definition_digest == "":
            return {"type": "blocked", "reason": "configuration_changed"}
        replay, replay_key = declaration.replay, declaration.replay_key
    if intent.replay == "safe":
        if replay != "safe" or replay_key != intent.replay_key:
            return {"type": "blocked", "reason": "replay_declaration_changed"}
        step_digest = operation.answers[intent.assistant].attempt.digest
        if current is not None and current.configuration_digest != step_digest:
            planning.warnings.append(
                f"tool {intent.name} ({intent.call_id}) is replayed although the current configurationDigest "
                f"{current.configuration_digest} differs from {step_digest}, the digest of the step that "
                "called it (tiny-agent compares only the environment and the replay declaration)"
            )
        return {
            "type": "startTool",
            "mode": "replay",
            "assistantEntryId": intent.assistant,
            "toolIndex": intent.index,
            "toolStartedId": intent.started_id,
            "toolName": intent.name,
            "arguments": _json_copy(intent.arguments),
        }
    return {"type": "appendSynthetic", "results": [_interrupted(intent)]}


def _json_copy(value: Any) -> Any:
    """A deep copy of a decoded JSON value, without recursion: arguments may nest as deep as the strict
    decoder allows (511 levels), past what copy.deepcopy's recursion survives."""
    if type(value) is not dict and type(value) is not list:
        return value
    root: Any = {} if type(value) is dict else []
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        for key, child in source.items() if type(source) is dict else enumerate(source):
            copied: Any = child
            if type(child) is dict or type(child) is list:
                copied = {} if type(child) is dict else []
                stack.append((child, copied))
            if type(target) is dict:
                target[key] = copied
            else:
                target.append(copied)
    return root


def _abort_results(operation: Operation) -> list[dict[str, Any]]:
    """Abort reconciliation: `interrupted` for every pending intent, `aborted` for every untouched call of
    the run's latest answer; calls already answered (by a result or a synthetic) get nothing."""
    answer = operation.last_answer
    pending = [intent for intent in operation.intents if intent.pending]
    results = [
        _interrupted(intent) for intent in pending if answer is None or intent.assistant != answer.entry_id
    ]
    if answer is not None:
        by_index = {intent.index: intent for intent in pending if intent.assistant == answer.entry_id}
        for index, state in enumerate(answer.states):
            if state == UNTOUCHED:
                results.append(_pre_execution(answer, index, "aborted"))
            elif state == STARTED and index in by_index:
                results.append(_interrupted(by_index[index]))
    return results


def _start_step(r: Reducer, operation: Operation) -> dict[str, Any]:
    """Attempt 1 of a new step at the active-context boundary, which the reducer requires (§9.3)."""
    boundary = r.active_boundary if r.active_boundary is not None else operation.input_through
    return {
        "type": "startStep",
        "stepKind": "assistant" if operation.kind == "run" else "compaction",
        "attempt": 1,
        "contextThroughEntryId": boundary,
    }


def _no_legal_completion() -> dict[str, Any]:
    return {"type": "finish", "outcome": "failed", "error": dict(NO_LEGAL_COMPLETION)}


def _pre_execution(answer: Answer, index: int, reason: str) -> dict[str, Any]:
    call_id, name, _ = answer.calls[index]
    return {
        "assistantEntryId": answer.entry_id,
        "toolIndex": index,
        "toolCallId": call_id,
        "toolName": name,
        "reason": reason,
        "content": SYNTHETIC_TEXTS[reason],
    }


def _interrupted(intent: ToolIntent) -> dict[str, Any]:
    return {
        "assistantEntryId": intent.assistant,
        "toolIndex": intent.index,
        "toolCallId": intent.call_id,
        "toolName": intent.name,
        "toolStartedId": intent.started_id,
        "resultEntryId": intent.result_slot,
        "reason": "interrupted",
        "content": SYNTHETIC_TEXTS["interrupted"],
    }


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


# JavaScript's JSON.parse: duplicate keys keep the last value, lone surrogate escapes are accepted,
# NaN/Infinity are not JSON.
_JAVASCRIPT_JSON: Final = json.JSONDecoder(parse_constant=_reject_constant)


def javascript_object(text: str) -> dict[str, Any] | None:
    """The provider's arguments text read as tiny-agent reads it (`JSON.parse`), if it is a JSON object."""
    try:
        value = _JAVASCRIPT_JSON.decode(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
