"""Entry facts (spec §8): user, assistant and tool messages and the compaction entry, in reducer order."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final

from sessaudit.formats.tiny_agent.check import notes
from sessaudit.formats.tiny_agent.check.compaction import apply_compaction
from sessaudit.formats.tiny_agent.check.state import (
    ASSISTANT,
    FACT,
    RESERVED_IDENTITY,
    RESERVED_TOOL_RESULT,
    STARTED,
    SYNTHETIC,
    TOOL,
    UNTOUCHED,
    USER,
    Answer,
    Place,
)
from sessaudit.formats.tiny_agent.read.messages import Message, canonical_message, parse_message
from sessaudit.formats.tiny_agent.read.shapes import (
    DUPLICATE_ID,
    INVALID_FACT,
    INVALID_REFERENCE,
    INVALID_TRANSCRIPT,
    INVALID_TRANSITION,
    JS_WHITESPACE,
    MISSING,
    SYNTHETIC_TEXTS,
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

ENTRY_FACT_KEYS: Final = frozenset(("kind", "seq", "id", "timestamp", "entry"))
USER_ENTRY_KEYS: Final = frozenset(("type", "message"))
ASSISTANT_ENTRY_KEYS: Final = frozenset(("type", "stepId", "attemptId", "stopReason", "message"))
PRE_EXECUTION_KEYS: Final = frozenset(
    ("type", "stepId", "assistantEntryId", "toolIndex", "message", "toolName", "result")
)
STARTED_RESULT_KEYS: Final = frozenset(("type", "stepId", "message", "toolName", "toolStartedId", "result"))
RESULT_KEYS: Final = frozenset(("type", "reason"))
PRE_EXECUTION_REASONS: Final = ("invalidArguments", "unknownTool", "truncated", "aborted")
STOP_REASONS: Final = ("stop", "toolUse", "length")


def apply_entry(r: ReducerState, fact: dict[str, Any], fact_id: str, place: Place) -> int:
    """Apply an entry fact; return its entry ordinal (the namespace value of its id)."""
    if not ENTRY_FACT_KEYS.issuperset(fact):
        require_exact(fact, ENTRY_FACT_KEYS, INVALID_FACT, "", "entry fact")
    entry = require_object(fact.get("entry", MISSING), INVALID_FACT, "/entry", "entry")
    kind = entry.get("type", MISSING)
    if kind == "message":
        raw_message = entry.get("message", MISSING)
        message = parse_message(raw_message, "/entry/message")
        answer: Answer | None = None
        if message.role == "user":
            kind_code = USER
            if r.namespace.get(fact_id, 0) <= RESERVED_IDENTITY:
                raise _reserved_collision(fact)
            if not USER_ENTRY_KEYS.issuperset(entry):
                require_exact(entry, USER_ENTRY_KEYS, INVALID_FACT, "/entry", "user entry")
        elif message.role == "assistant":
            kind_code = ASSISTANT
            answer = _apply_assistant(r, fact, entry, message, fact_id, place)
        else:
            kind_code = TOOL
            # the reserved id's own string: the state keeps one copy of each id
            fact_id = _apply_tool_result(r, fact, entry, message, fact_id, place) or fact_id
        r.transcript_message(message, place, "/entry/message")
        ordinal = r.add_entry(fact_id, kind_code, place)
        r.hash_message(fact_id, canonical_message(message))
        # journaled: a rejected transaction must not move the boundary a plan on the prefix relies on
        r.journal.set(r, "active_boundary", fact_id)
        if kind_code == USER:
            r.journal.set(r, "last_user", fact_id)
        elif kind_code == ASSISTANT:
            current = r.current
            assert current is not None and answer is not None
            r.journal.put(current.answers, fact_id, answer)
            r.journal.set(current, "last_answer", answer)
        return ordinal
    if kind != "compaction":
        raise Violation(
            INVALID_FACT, "/entry/type", f"entry type: expected message or compaction, found {show(kind)}"
        )
    return apply_compaction(r, fact, entry, fact_id, place)


def _reserved_collision(fact: dict[str, Any]) -> Violation:
    return Violation(
        DUPLICATE_ID,
        "/id",
        f"fact id {short_id(fact['id'])} collides with a reserved id (operation, step, attempt or result "
        "slot)",
        evidence={"id": fact["id"]},
    )


def _apply_assistant(
    r: ReducerState, fact: dict[str, Any], entry: dict[str, Any], message: Message, fact_id: str, place: Place
) -> Answer:
    """§8.2: an assistant entry settles the open attempt of the current run."""
    if r.namespace.get(fact_id, 0) <= RESERVED_IDENTITY:
        raise _reserved_collision(fact)
    if not ASSISTANT_ENTRY_KEYS.issuperset(entry):
        require_exact(entry, ASSISTANT_ENTRY_KEYS, INVALID_FACT, "/entry", "assistant entry")
    step_id = r.ref(entry.get("stepId", MISSING), "/entry/stepId", "stepId")
    attempt_id = r.ref(entry.get("attemptId", MISSING), "/entry/attemptId", "attemptId")
    stop_reason = entry.get("stopReason", MISSING)
    if type(stop_reason) is not str or stop_reason not in STOP_REASONS:
        raise Violation(
            INVALID_FACT,
            "/entry/stopReason",
            f"stopReason: expected stop, toolUse or length, found {show(stop_reason)}",
        )
    stop_reason = sys.intern(stop_reason)  # one string, not one per attempt kept
    attempt = r.attempts.get(attempt_id)
    if attempt is None or attempt.step != step_id or attempt.closed or attempt.kind != "assistant":
        if attempt is None:
            why = "names no attempt"
        elif attempt.step != step_id:
            why = f"belongs to step {short_id(attempt.step)}, not {short_id(entry['stepId'])}"
        elif attempt.kind != "assistant":
            why = "is a compaction attempt"
        else:
            why = "is already closed (settled, failed or superseded by attempt 2)"
        raise Violation(
            INVALID_REFERENCE,
            "/entry/attemptId",
            f"attemptId {short_id(entry['attemptId'])} {why}; expected the open assistant attempt",
            evidence={"attemptId": entry["attemptId"], "stepId": entry["stepId"]},
        )
    current = r.current
    if current is None or current.kind != "run" or current.operation_id != attempt.operation:
        raise Violation(
            INVALID_TRANSITION,
            "/entry/attemptId",
            f"the attempt belongs to operation {short_id(attempt.operation)}, which is not the open run",
            evidence={"operationId": attempt.operation},
        )
    if stop_reason == "toolUse" and not message.calls:
        raise Violation(
            INVALID_TRANSCRIPT, "/entry/message", "stopReason toolUse: expected tool_calls, found none"
        )
    if stop_reason == "stop" and message.calls:
        raise Violation(
            INVALID_TRANSCRIPT,
            "/entry/message/tool_calls",
            f"stopReason stop: expected no tool_calls, found {len(message.calls)}",
        )
    journal = r.journal
    journal.set(attempt, "closed", True)
    journal.set(attempt, "settled_entry", fact_id)
    journal.set(attempt, "stop_reason", stop_reason)
    has_text = bool(message.content and message.content.strip(JS_WHITESPACE))
    return Answer(fact_id, step_id, attempt, stop_reason, message.calls, has_text, place)


def _apply_tool_result(
    r: ReducerState, fact: dict[str, Any], entry: dict[str, Any], message: Message, fact_id: str, place: Place
) -> str | None:
    """§8.3 (a started result at its provisioned id) and §8.4 (a pre-execution synthetic). A started
    result answers the provisioned id as its tool intent holds it (equal to `fact_id`)."""
    pre_execution = "assistantEntryId" in entry or "toolIndex" in entry
    require_exact(
        entry,
        PRE_EXECUTION_KEYS if pre_execution else STARTED_RESULT_KEYS,
        INVALID_FACT,
        "/entry",
        "tool entry",
    )
    result = require_object(entry.get("result", MISSING), INVALID_FACT, "/entry/result", "result")
    if not RESULT_KEYS.issuperset(result):
        require_exact(result, RESULT_KEYS, INVALID_FACT, "/entry/result", "result")
    step_id = r.ref(entry.get("stepId", MISSING), "/entry/stepId", "stepId")
    tool_name = require_string(entry.get("toolName", MISSING), INVALID_FACT, "/entry/toolName", "toolName")
    if pre_execution:
        _apply_pre_execution(r, entry, result, message, step_id, tool_name, place)
        return None
    if r.namespace.get(fact_id, 0) != RESERVED_TOOL_RESULT:
        raise Violation(
            INVALID_REFERENCE,
            "/id",
            f"a started tool result must use a provisioned resultEntryId; {short_id(fact['id'])} is none",
            evidence={"id": fact["id"]},
        )
    result_type = result.get("type", MISSING)
    if js_string(result_type) not in ("success", "error", "synthetic"):
        raise Violation(
            INVALID_FACT,
            "/entry/result/type",
            f"result type: expected success, error or synthetic, found {show(result_type)}",
        )
    if result_type == "synthetic":
        reason = result.get("reason", MISSING)
        if reason != "interrupted":
            raise Violation(
                INVALID_FACT,
                "/entry/result/reason",
                f"a started result's synthetic reason must be interrupted, found {show(reason)}",
            )
        _check_synthetic_text("interrupted", message, "/entry/message/content")
    elif "reason" in result:
        raise Violation(INVALID_FACT, "/entry/result/reason", f"a {show(result_type)} result has no reason")
    started_id = r.ref(entry.get("toolStartedId", MISSING), "/entry/toolStartedId", "toolStartedId")
    intent = r.pending_intents.get(started_id)
    if (
        intent is None
        or intent.step != step_id
        or intent.result_slot != fact_id
        or intent.call_id != message.tool_call_id
        or intent.name != tool_name
    ):
        raise Violation(
            INVALID_REFERENCE,
            "/entry/toolStartedId",
            _started_mismatch(intent, step_id, fact_id, message.tool_call_id, tool_name, entry),
            evidence={"toolStartedId": entry["toolStartedId"]},
        )
    journal = r.journal
    journal.set(intent, "pending", False)
    journal.remove(r.pending_intents, started_id)
    operation = r.operations[intent.operation]
    journal.set(operation, "pending", operation.pending - 1)
    r.namespace[fact_id] = FACT  # the reservation is consumed
    notes.coerced(r, place, "/entry/result/type", result_type)
    notes.result_after_finish(r, operation, intent, place)
    return intent.result_slot


def _started_mismatch(
    intent: Any, step_id: str, fact_id: str, call_id: str, tool_name: str, entry: dict[str, Any]
) -> str:
    if intent is None:
        return f"toolStartedId {short_id(entry['toolStartedId'])} names no pending tool intent"
    if intent.step != step_id:
        return "the intent belongs to another step"
    if intent.result_slot != fact_id:
        return f"the intent provisioned result slot {short_id(intent.result_slot)}, not this id"
    if intent.call_id != call_id:
        return f"the intent is for call {show(intent.call_id)}, the message answers {show(call_id)}"
    return f"the intent is for tool {show(intent.name)}, the entry names {show(tool_name)}"


def _check_synthetic_text(reason: str, message: Message, pointer: str) -> None:
    expected = SYNTHETIC_TEXTS[reason]
    if message.content != expected:
        raise Violation(
            INVALID_TRANSCRIPT,
            pointer,
            f"the {reason} synthetic result must read exactly {show(expected, 200)}, found "
            f"{show(message.content)}",
            rule="SA212",
            evidence={"reason": reason, "expected": expected, "found": message.content},
        )


def _apply_pre_execution(
    r: ReducerState,
    entry: dict[str, Any],
    result: dict[str, Any],
    message: Message,
    step_id: str,
    tool_name: str,
    place: Place,
) -> None:
    if result.get("type", MISSING) != "synthetic":
        raise Violation(
            INVALID_FACT,
            "/entry/result/type",
            f"a pre-execution result must be synthetic, found {show(result.get('type', MISSING))}",
        )
    reason = js_string(result.get("reason", MISSING))
    if reason not in PRE_EXECUTION_REASONS:
        raise Violation(
            INVALID_FACT,
            "/entry/result/reason",
            "reason: expected invalidArguments, unknownTool, truncated or aborted, found "
            + show(result.get("reason", MISSING)),
        )
    assistant_id = r.ref(
        entry.get("assistantEntryId", MISSING), "/entry/assistantEntryId", "assistantEntryId"
    )
    index = require_integer(entry.get("toolIndex", MISSING), INVALID_FACT, "/entry/toolIndex", "toolIndex")
    current = r.current
    answer = current.answers.get(assistant_id) if current is not None and current.kind == "run" else None
    if answer is None or answer.step != step_id:
        raise Violation(
            INVALID_REFERENCE,
            "/entry/assistantEntryId",
            f"assistantEntryId {short_id(entry['assistantEntryId'])}: expected an assistant entry of the "
            "open run with the same stepId",
            evidence={"assistantEntryId": entry["assistantEntryId"]},
        )
    call = answer.calls[index] if index < len(answer.calls) else None
    if call is None or call[0] != message.tool_call_id or call[1] != tool_name:
        raise Violation(
            INVALID_REFERENCE,
            "/entry/toolIndex",
            f"toolIndex {index}: expected call {show(message.tool_call_id)} of tool {show(tool_name)}, found "
            + (f"call {show(call[0])} of {show(call[1])}" if call else f"only {len(answer.calls)} calls"),
            evidence={"toolIndex": index, "tool_call_id": message.tool_call_id, "toolName": tool_name},
        )
    if answer.states[index] != UNTOUCHED:
        raise Violation(
            INVALID_TRANSITION,
            "/entry/toolIndex",
            f"call {index} ({show(call[0])}) already has "
            + ("a toolStarted" if answer.states[index] == STARTED else "a synthetic result"),
            evidence={"toolIndex": index, "tool_call_id": call[0]},
        )
    _check_synthetic_text(reason, message, "/entry/message/content")
    r.journal.put(answer.states, index, SYNTHETIC)
    if type(entry["toolIndex"]) is float:
        r.observations.add("SA111", place, "/entry/toolIndex", "toolIndex is written as a float", {})
    notes.synthetic_reason(r, answer, index, reason, place)
    notes.coerced(r, place, "/entry/result/reason", result["reason"])
