"""Step and tool records (spec §9.3–§9.5): stepAttempt, stepFailed and toolStarted, in the reducer's order."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final

from sessaudit.formats.tiny_agent.check import notes
from sessaudit.formats.tiny_agent.check.state import (
    RESERVED_IDENTITY,
    RESERVED_TOOL_RESULT,
    STARTED,
    UNTOUCHED,
    Attempt,
    Operation,
    Place,
    ToolIntent,
)
from sessaudit.formats.tiny_agent.read.digests import DIGEST_PATTERN
from sessaudit.formats.tiny_agent.read.messages import parse_configuration
from sessaudit.formats.tiny_agent.read.shapes import (
    DUPLICATE_ID,
    INVALID_FACT,
    INVALID_REFERENCE,
    INVALID_TRANSITION,
    MISSING,
    Violation,
    js_string,
    require_exact,
    require_integer,
    require_object,
    require_string,
    short_id,
    show,
)

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer_state import ReducerState

STEP_ATTEMPT_KEYS: Final = frozenset(
    (
        "type",
        "operationId",
        "stepId",
        "attemptId",
        "stepKind",
        "attempt",
        "contextThroughEntryId",
        "configurationSnapshot",
        "configurationDigest",
    )
)
STEP_FAILED_KEYS: Final = frozenset(("type", "operationId", "stepId", "attemptId", "error"))
TOOL_STARTED_KEYS: Final = frozenset(
    (
        "type",
        "operationId",
        "stepId",
        "assistantEntryId",
        "toolIndex",
        "toolCallId",
        "toolName",
        "arguments",
        "replay",
        "replayKey",
        "environmentIdentity",
        "resultEntryId",
    )
)
ERROR_KEYS: Final = frozenset(("code", "message"))


def lookup_operation(r: ReducerState, value: Any, pointer: str) -> Operation:
    """The reducer's operation helper: a UUIDv7, a known operation, not yet finished."""
    key = r.ref(value, pointer, "operationId")
    operation = r.operations.get(key)
    if operation is None:
        raise Violation(
            INVALID_REFERENCE,
            pointer,
            f"operationId {short_id(value)} names no operation",
            evidence={"operationId": value},
        )
    if operation.finished:
        raise Violation(
            INVALID_TRANSITION,
            pointer,
            f"operation {short_id(value)} is already finished ({operation.outcome})",
            evidence={"operationId": value, "outcome": operation.outcome},
        )
    return operation


def reserve(r: ReducerState, value: Any, pointer: str, what: str, tag: int) -> str:
    """A fresh reservation in the session's one id namespace (§6)."""
    key = r.ref(value, pointer, what)
    if key in r.namespace:
        raise Violation(
            DUPLICATE_ID,
            pointer,
            f"{what} {short_id(value)} is already used in this session (fact ids and reserved ids share one "
            "namespace)",
            evidence={"id": value},
        )
    r.namespace[key] = tag
    return key


def step_attempt(r: ReducerState, record: dict[str, Any], place: Place) -> None:
    """§9.3: one physical model request, attempt 1 of a new step or attempt 2 (the one retry)."""
    if not STEP_ATTEMPT_KEYS.issuperset(record):
        require_exact(record, STEP_ATTEMPT_KEYS, INVALID_FACT, "/record", "stepAttempt")
    operation = lookup_operation(r, record.get("operationId", MISSING), "/record/operationId")
    raw_number = record.get("attempt", MISSING)
    number = require_integer(raw_number, INVALID_FACT, "/record/attempt", "attempt", 1)
    if number == 1:
        step_id = reserve(r, record.get("stepId", MISSING), "/record/stepId", "stepId", RESERVED_IDENTITY)
    else:
        step_id = r.ref(record.get("stepId", MISSING), "/record/stepId", "stepId")
    attempt_id = reserve(
        r, record.get("attemptId", MISSING), "/record/attemptId", "attemptId", RESERVED_IDENTITY
    )
    kind = record.get("stepKind", MISSING)
    if number > 2 or type(kind) is not str or kind not in ("assistant", "compaction"):
        if number > 2:
            raise Violation(INVALID_FACT, "/record/attempt", f"attempt: expected 1 or 2, found {number}")
        raise Violation(
            INVALID_FACT,
            "/record/stepKind",
            f"stepKind: expected assistant or compaction, found {show(kind)}",
        )
    kind = sys.intern(kind)  # one string, not one per attempt kept
    wanted = "assistant" if operation.kind == "run" else "compaction"
    if kind != wanted:
        raise Violation(
            INVALID_TRANSITION,
            "/record/stepKind",
            f"stepKind: a {operation.kind} takes {wanted} steps, found {kind}",
        )
    context = r.ref(
        record.get("contextThroughEntryId", MISSING), "/record/contextThroughEntryId", "contextThroughEntryId"
    )
    context_ordinal = r.namespace.get(context, -1)
    if context_ordinal < 0:
        raise Violation(
            INVALID_REFERENCE,
            "/record/contextThroughEntryId",
            f"contextThroughEntryId {short_id(record['contextThroughEntryId'])} names no entry",
        )
    context = r.entry_ids[context_ordinal]  # the id object the state already holds, not this line's copy
    if number == 1 and context != r.active_boundary:
        boundary = r.active_boundary
        raise Violation(
            INVALID_TRANSITION,
            "/record/contextThroughEntryId",
            f"contextThroughEntryId: attempt 1 must name the active-context boundary "
            f"{short_id(boundary) if boundary else '(none)'}, found "
            f"{short_id(record['contextThroughEntryId'])}",
            evidence={"expected": boundary, "found": record["contextThroughEntryId"]},
        )
    digest, tools = parse_configuration(
        record.get("configurationSnapshot", MISSING), "/record/configurationSnapshot"
    )
    declared = js_string(record.get("configurationDigest", MISSING))
    if DIGEST_PATTERN.match(declared) is None:
        shown = show(record.get("configurationDigest", MISSING))
        raise Violation(
            INVALID_FACT,
            "/record/configurationDigest",
            f"configurationDigest: expected a sha256 digest, found {shown}",
        )
    if digest != declared:
        raise Violation(
            INVALID_FACT,
            "/record/configurationDigest",
            f"configurationDigest: the snapshot digests to {digest[:15]}…, the record says {declared[:15]}…",
            rule="SA210",
            evidence={"expected": digest, "found": declared},
        )
    snapshot = record["configurationSnapshot"]
    notes.coerced(r, place, "/record/configurationDigest", record["configurationDigest"])
    for name in ("systemPromptDigest", "outputOptionsDigest"):
        notes.coerced(r, place, f"/record/configurationSnapshot/{name}", snapshot[name])
    for index, tool in enumerate(snapshot["tools"]):
        notes.coerced(
            r,
            place,
            f"/record/configurationSnapshot/tools/{index}/definitionDigest",
            tool["definitionDigest"],
        )
    first = r.steps.get(step_id)
    active = operation.step
    journal = r.journal
    if number == 1:
        if first is not None or (active is not None and operation.status != "settled"):
            raise Violation(
                INVALID_TRANSITION,
                "/record/attempt",
                f"a new step cannot start while the current step is {operation.status}",
            )
        if active is not None and (
            active.stop_reason != "toolUse" or operation.kind != "run" or operation.pending
        ):
            raise Violation(
                INVALID_TRANSITION,
                "/record/attempt",
                "a new step may follow only a toolUse answer whose tool intents all have results "
                f"(previous stopReason {active.stop_reason}, {operation.pending} pending)",
            )
        if active is not None:
            notes.untouched_before_step(r, operation, place)
    else:
        if (
            first is None
            or first.number != 1
            or first.closed
            or first.failed
            or first.kind != kind
            or first.operation != operation.operation_id
            or first.context != context
            or first.digest != declared
        ):
            raise Violation(
                INVALID_TRANSITION,
                "/record/attempt",
                "attempt 2 must retry an open attempt 1 of the same step with the same context boundary and "
                "configurationDigest",
                evidence={"stepId": record["stepId"]},
            )
        journal.set(first, "closed", True)
        journal.set(first, "superseded", True)
    # `digest` equals `declared` and is the one shared string of its snapshot (kept per attempt).
    attempt = Attempt(attempt_id, operation.operation_id, step_id, number, kind, context, digest, tools)
    journal.put(r.attempts, attempt_id, attempt)
    if first is None:
        r.steps[step_id] = attempt
    journal.set(operation, "latest_step", step_id)
    journal.set(operation, "step", attempt)
    if type(raw_number) is float:
        r.observations.add("SA111", place, "/record/attempt", "attempt is written as a float", {})


def step_failed(r: ReducerState, record: dict[str, Any], place: Place) -> None:
    """§9.4: closes the open attempt as failed."""
    if not STEP_FAILED_KEYS.issuperset(record):
        require_exact(record, STEP_FAILED_KEYS, INVALID_FACT, "/record", "stepFailed")
    operation = lookup_operation(r, record.get("operationId", MISSING), "/record/operationId")
    attempt_id = r.ref(record.get("attemptId", MISSING), "/record/attemptId", "attemptId")
    attempt = r.attempts.get(attempt_id)
    error = require_object(record.get("error", MISSING), INVALID_FACT, "/record/error", "error")
    if not ERROR_KEYS.issuperset(error):
        require_exact(error, ERROR_KEYS, INVALID_FACT, "/record/error", "error")
    require_string(error.get("code", MISSING), INVALID_FACT, "/record/error/code", "error.code")
    require_string(error.get("message", MISSING), INVALID_FACT, "/record/error/message", "error.message")
    if (
        attempt is None
        or attempt.operation != operation.operation_id
        or record.get("stepId", MISSING) != attempt.step
        or attempt.closed
    ):
        raise Violation(
            INVALID_REFERENCE,
            "/record/attemptId",
            f"attemptId {short_id(record['attemptId'])}: expected an open attempt of this operation and step",
            evidence={"attemptId": record["attemptId"]},
        )
    r.journal.set(attempt, "closed", True)
    r.journal.set(attempt, "failed", True)


def tool_started(r: ReducerState, record: dict[str, Any], fact_id: str, place: Place) -> None:
    """§9.5: the durable intent of one call of a toolUse answer of the current run."""
    if not TOOL_STARTED_KEYS.issuperset(record):
        require_exact(record, TOOL_STARTED_KEYS, INVALID_FACT, "/record", "toolStarted")
    operation = lookup_operation(r, record.get("operationId", MISSING), "/record/operationId")
    if operation.kind != "run" or r.current is not operation:
        raise Violation(INVALID_TRANSITION, "/record/operationId", "toolStarted needs the current run")
    assistant_id = r.ref(
        record.get("assistantEntryId", MISSING), "/record/assistantEntryId", "assistantEntryId"
    )
    answer = operation.answers.get(assistant_id)
    if answer is None or answer.stop_reason != "toolUse":
        raise Violation(
            INVALID_REFERENCE,
            "/record/assistantEntryId",
            f"assistantEntryId {short_id(record['assistantEntryId'])}: expected a toolUse assistant entry of "
            "this run" + (f", found stopReason {answer.stop_reason}" if answer is not None else ""),
            evidence={"assistantEntryId": record["assistantEntryId"]},
        )
    raw_index = record.get("toolIndex", MISSING)
    index = require_integer(raw_index, INVALID_FACT, "/record/toolIndex", "toolIndex")
    call = answer.calls[index] if index < len(answer.calls) else None
    call_id = require_string(
        record.get("toolCallId", MISSING), INVALID_FACT, "/record/toolCallId", "toolCallId"
    )
    name = require_string(record.get("toolName", MISSING), INVALID_FACT, "/record/toolName", "toolName")
    if call is None or call[0] != call_id or call[1] != name or record.get("stepId", MISSING) != answer.step:
        if call is None:
            why = f"the answer has only {len(answer.calls)} calls"
        elif call[0] != call_id or call[1] != name:
            why = f"call {index} is {show(call[0])} of tool {show(call[1])}"
        else:
            why = "stepId differs from the answer's step"
        raise Violation(
            INVALID_REFERENCE,
            "/record/toolIndex",
            f"toolIndex {index} ({show(call_id)}, {show(name)}): {why}",
            evidence={"toolIndex": index, "toolCallId": call_id, "toolName": name},
        )
    if answer.states[index] != UNTOUCHED:
        raise Violation(
            INVALID_TRANSITION,
            "/record/toolIndex",
            f"call {index} ({show(call_id)}) already has a toolStarted or a synthetic result; a replay never "
            "writes a second toolStarted",
        )
    arguments = require_object(
        record.get("arguments", MISSING), INVALID_FACT, "/record/arguments", "arguments"
    )
    replay = record.get("replay", MISSING)
    if replay != "safe" and replay != "never":
        raise Violation(
            INVALID_FACT, "/record/replay", f"replay: expected safe or never, found {show(replay)}"
        )
    replay_key = require_string(
        record.get("replayKey", MISSING), INVALID_FACT, "/record/replayKey", "replayKey"
    )
    environment = require_string(
        record.get("environmentIdentity", MISSING),
        INVALID_FACT,
        "/record/environmentIdentity",
        "environmentIdentity",
    )
    if name not in answer.attempt.tools:
        raise Violation(
            INVALID_TRANSITION,
            "/record/toolName",
            f"tool {show(name)} is not declared in the configuration of the attempt that produced the call",
            evidence={"toolName": name, "declared": sorted(answer.attempt.tools)},
        )
    result_slot = reserve(
        r,
        record.get("resultEntryId", MISSING),
        "/record/resultEntryId",
        "resultEntryId",
        RESERVED_TOOL_RESULT,
    )
    intent = ToolIntent(
        fact_id,
        operation.operation_id,
        answer.step,
        assistant_id,
        index,
        call_id,
        name,
        arguments,
        str(replay),
        replay_key,
        environment,
        result_slot,
        place,
    )
    journal = r.journal
    notes.tool_started(r, operation, answer, intent, record, place)
    journal.put(answer.states, index, STARTED)
    journal.append(operation.intents, intent)
    journal.set(operation, "pending", operation.pending + 1)
    journal.put(r.pending_intents, fact_id, intent)
    r.intent_operation[fact_id] = operation.operation_id
    if type(raw_index) is float:
        r.observations.add("SA111", place, "/record/toolIndex", "toolIndex is written as a float", {})
