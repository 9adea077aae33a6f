"""Beyond tiny-agent's reducer (SA111, SA401–SA422): warnings and notes on accepted facts, capped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sessaudit.formats.tiny_agent.check.state import UNTOUCHED, Answer, Attempt, Operation, Place, ToolIntent
from sessaudit.formats.tiny_agent.read.shapes import js_string, short_id, show
from sessaudit.strictjson import LineProblem, loads_strict

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer_state import ReducerState


def parsed_arguments(text: str) -> dict[str, Any] | None:
    """The provider's arguments text as a JSON object, or None when it is not one."""
    try:
        value = loads_strict(text)
    except LineProblem:
        return None
    return value if isinstance(value, dict) else None


def envelope(r: ReducerState, fact: dict[str, Any], fact_id: str, timestamp: int, place: Place) -> None:
    """SA111 integral floats in seq/timestamp, SA401 id time after the timestamp, SA403, SA404."""
    observe = r.observations.add
    if type(fact["seq"]) is float or type(fact["timestamp"]) is float:
        name = "seq" if type(fact["seq"]) is float else "timestamp"
        observe("SA111", place, f"/{name}", f"{name} is written as {fact[name]!r}", {"field": name})
    millis = int(fact_id[:8] + fact_id[9:13], 16)
    if millis > timestamp and r.observations.listed("SA401"):
        observe("SA401", place, "/id", "", {})
    elif millis > timestamp:
        observe(
            "SA401",
            place,
            "/id",
            f"fact id {short_id(fact_id)} carries time {millis}, after its timestamp {timestamp}",
            {"id": fact_id, "id_millis": millis, "timestamp": timestamp},
        )
    previous = r.last_timestamp
    if previous is not None and timestamp < previous and r.observations.listed("SA403"):
        observe("SA403", place, "/timestamp", "", {})
    elif previous is not None and timestamp < previous:
        observe(
            "SA403",
            place,
            "/timestamp",
            f"timestamp {timestamp} is {previous - timestamp} ms before the previous fact's {previous}",
            {"timestamp": timestamp, "previous": previous},
        )
    if timestamp < r.created_at and r.observations.listed("SA404"):
        observe("SA404", place, "/timestamp", "", {})
    elif timestamp < r.created_at:
        observe(
            "SA404",
            place,
            "/timestamp",
            f"timestamp {timestamp} is before the session's createdAt {r.created_at}",
            {"timestamp": timestamp, "created_at": r.created_at},
        )
    r.last_timestamp = timestamp


def usage(r: ReducerState, counters: dict[str, Any], attempt: Attempt | None, place: Place) -> None:
    """SA111 integral floats in usage counters; SA418 for model usage."""
    for name, value in counters.items():
        if type(value) is float:
            r.observations.add("SA111", place, f"/usage/{name}", f"usage.{name} is written as {value!r}", {})
    if attempt is not None:
        attempt_usage(r, attempt, place)


def coerced(r: ReducerState, place: Place, pointer: str, value: Any) -> None:
    """SA423: a value accepted only because the reducer read it through String()."""
    if type(value) is not str:
        r.observations.add(
            "SA423",
            place,
            pointer,
            f"{pointer.rsplit('/', 1)[-1]} is {show(value)}, accepted as the string {show(js_string(value))}",
            {"found": value},
        )


def input_entry(r: ReducerState, input_id: str, place: Place) -> None:
    """SA413: a run's input should be the newest user entry, not one an earlier run consumed."""
    if input_id != r.last_user or input_id in r.used_inputs:
        why = "an earlier run already used it" if input_id in r.used_inputs else "a newer user entry exists"
        r.observations.add(
            "SA413",
            place,
            "/record/inputEntryId",
            f"run input {short_id(input_id)} is not the newest unused user entry: {why}",
            {
                "inputEntryId": input_id,
                "newest_user_entry": r.last_user if r.last_user else None,
            },
        )
    r.used_inputs.add(input_id)


def abort_record(r: ReducerState, operation: Operation, record: dict[str, Any], place: Place) -> None:
    """SA414: a phase that does not fit the operation, an empty toolCallId, or one naming no call."""
    phase = record["phase"]
    problems = []
    if (operation.kind == "run") == (phase == "compact"):
        problems.append(f"phase {phase} on a {operation.kind}")
    call_id = record.get("toolCallId")
    if call_id == "":
        problems.append("an empty toolCallId")
    elif isinstance(call_id, str):
        known = any(call[0] == call_id for answer in operation.answers.values() for call in answer.calls)
        if not known:
            problems.append(f"toolCallId {show(call_id)} names no call of this run")
    if problems:
        r.observations.add(
            "SA414",
            place,
            "/record",
            "abort request: " + "; ".join(problems),
            {"phase": phase, "toolCallId": call_id},
        )


def tool_started(
    r: ReducerState,
    operation: Operation,
    answer: Answer,
    intent: ToolIntent,
    record: dict[str, Any],
    place: Place,
) -> None:
    """SA415 arguments, SA416 environment, SA420 start order, SA421 intent after abort."""
    observe = r.observations.add
    text = answer.calls[intent.index][2]
    try:
        provider = json.loads(text)
    except (ValueError, RecursionError):  # nested past the stack: unreadable, as a broken text is
        provider = None
    if type(provider) is not dict:
        provider = None
    # Python's == equates 1 and 1.0 as JavaScript does (and true with 1, which only hides a note).
    if provider is None or provider != intent.arguments:
        observe(
            "SA415",
            place,
            "/record/arguments",
            f"tool {show(intent.name)} ({show(intent.call_id)}) started with arguments that differ from the "
            + (
                "call's arguments"
                if provider is not None
                else "call's arguments text, which is not a JSON object"
            ),
            {
                "intent_arguments": intent.arguments,
                "call_arguments": provider if provider is not None else text,
            },
        )
    if intent.environment != r.environment:
        observe(
            "SA416",
            place,
            "/record/environmentIdentity",
            f"tool intent environment {show(intent.environment)} differs from the header's "
            f"{show(r.environment)}",
            {"intent": intent.environment, "header": r.environment},
        )
    before = answer.states[: intent.index]
    if UNTOUCHED in before:
        earlier = [index for index, state in enumerate(before) if state == UNTOUCHED][:20]
        observe(
            "SA420",
            place,
            "/record/toolIndex",
            f"call {intent.index} started before call(s) {', '.join(map(str, earlier))} of the same answer "
            "(at most 20 listed)",
            {"toolIndex": intent.index, "untouched_before": earlier},
        )
    if operation.abort_requested:
        observe(
            "SA421",
            place,
            "/record",
            f"tool {show(intent.name)} ({show(intent.call_id)}) was started after the abort request",
            {"toolStartedId": intent.started_id},
        )


def result_after_finish(r: ReducerState, operation: Operation, intent: ToolIntent, place: Place) -> None:
    """SA411: a late result for a tool whose run had already finished."""
    if operation.finished:
        r.observations.add(
            "SA411",
            place,
            "/entry/toolStartedId",
            f"result of tool {show(intent.name)} ({show(intent.call_id)}) arrives after its run finished "
            f"({operation.outcome})",
            {"operationId": operation.operation_id, "outcome": operation.outcome},
        )


def synthetic_reason(r: ReducerState, answer: Answer, index: int, reason: str, place: Place) -> None:
    """SA419: a pre-execution synthetic whose reason does not fit the situation (spec §8.4)."""
    call_id, name, text = answer.calls[index]
    current = r.current
    why = None
    if reason == "aborted" and not (current is not None and current.abort_requested):
        why = "aborted without an abort request"
    elif reason == "truncated" and answer.stop_reason != "length":
        why = f"truncated for a call of a {answer.stop_reason} answer"
    elif reason != "truncated" and reason != "aborted" and answer.stop_reason == "length":
        why = f"{reason} for a call of a length answer (the design writes truncated)"
    elif reason == "unknownTool" and name in answer.attempt.tools:
        why = f"unknownTool for {show(name)}, which the attempt's configuration declares"
    elif reason == "invalidArguments" and parsed_arguments(text) is not None:
        why = "invalidArguments although the call's arguments text is a JSON object"
    if why is not None:
        r.observations.add(
            "SA419",
            place,
            "/entry/result/reason",
            f"synthetic result for call {index} ({show(call_id)}): {why}",
            {"reason": reason, "tool_call_id": call_id, "toolName": name},
        )


def attempt_usage(r: ReducerState, attempt: Attempt, place: Place) -> None:
    """SA418: usage for a superseded or failed attempt, or a second usage fact for one attempt."""
    why = None
    if attempt.superseded:
        why = "a superseded attempt 1"
    elif attempt.failed:
        why = "a failed attempt"
    elif attempt.usage_facts:
        why = f"an attempt that already has {attempt.usage_facts} usage fact(s)"
    attempt.usage_facts += 1
    if why is not None:
        r.observations.add(
            "SA418",
            place,
            "/attemptId",
            f"usage recorded for {why}",
            {"attemptId": attempt.attempt_id},
        )


def untouched_before_step(r: ReducerState, operation: Operation, place: Place) -> None:
    """SA422: a new step while a call of the previous answer has neither intent nor result."""
    answer = operation.last_answer
    if answer is None:
        return
    untouched = [index for index, state in enumerate(answer.states) if state == UNTOUCHED]
    if untouched:
        r.observations.add(
            "SA422",
            place,
            "/record",
            f"a new step started while call(s) {', '.join(map(str, untouched))} of the previous answer have "
            "no intent and no result; the next answer cannot be legal",
            {"assistantEntryId": answer.entry_id, "untouched": untouched},
        )


def operation_finished(r: ReducerState, operation: Operation, record: dict[str, Any], place: Place) -> None:
    """SA410 failed with work open; SA412 truncated without synthetics."""
    outcome = record["outcome"]
    if outcome == "failed" and (operation.pending or operation.status == "attempting"):
        parts = []
        if operation.pending:
            parts.append(f"{operation.pending} tool intent(s) pending")
        if operation.status == "attempting":
            parts.append("a model attempt open")
        r.observations.add(
            "SA410",
            place,
            "/record/outcome",
            f"{operation.kind} finished as failed with " + " and ".join(parts),
            {"pending_intents": operation.pending, "open_attempt": operation.status == "attempting"},
        )
    if outcome == "completed" and record.get("completion") == "truncated":
        answer = operation.answers.get(operation.step.settled_entry or "") if operation.step else None
        untouched = (
            [index for index, state in enumerate(answer.states) if state == UNTOUCHED] if answer else []
        )
        if untouched:
            r.observations.add(
                "SA412",
                place,
                "/record/completion",
                f"run completed as truncated while call(s) {', '.join(map(str, untouched))} of its length "
                "answer have no truncated result",
                {"untouched": untouched},
            )


def compaction_partition(
    r: ReducerState, operation: Operation, through: str, retained: list[str], place: Place
) -> None:
    """SA417: the compaction entry against the partition its compactionStarted declared."""
    if operation.partition is None:
        return
    last_compacted, declared = operation.partition
    if through != last_compacted or tuple(retained) != declared:
        r.observations.add(
            "SA417",
            place,
            "/entry/compactedThroughEntryId",
            f"compactedThroughEntryId {short_id(through)} and {len(retained)} retained message(s) "
            f"differ from the declared partition (last compacted {short_id(last_compacted)}, "
            f"{len(declared)} retained)",
            {
                "compactedThroughEntryId": through,
                "declared_last_compacted": last_compacted,
                "retained": [item for item in retained],
                "declared_retained": [item for item in declared],
            },
        )
