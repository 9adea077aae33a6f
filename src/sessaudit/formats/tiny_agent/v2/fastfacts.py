"""Straight-line application of the common fact shapes for the fast path (fast.py).

`apply_fact` checks a fact's envelope and, for the shapes a session is mostly made of (user, assistant and
started tool-result entries; runStarted, stepAttempt 1 and toolStarted records; usage facts), every rule
the exact handlers apply, by exact key counts and type checks, then changes the reducer's state as those
handlers would. Anything else, before any state has changed, goes to the exact handler
(`Reducer.apply_fact`): an unusual but valid shape (a float written for an integer, a value read through
String(), attempt 2, a synthetic result, a compaction, a finish, an abort, a fact whose notes would fire)
is applied by the same code as in the exact pass. A fact the rules reject raises `Violation` from either
side, which the fast path takes as a doubt. The observations (notes.py) a fact may add are called exactly
where their conditions can hold, in the exact handlers' order."""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

from sessaudit.formats.tiny_agent.check import notes
from sessaudit.formats.tiny_agent.check.reducer import Reducer
from sessaudit.formats.tiny_agent.check.state import (
    ASSISTANT,
    FACT,
    RESERVED_IDENTITY,
    RESERVED_TOOL_RESULT,
    STARTED,
    TOOL,
    UNTOUCHED,
    USER,
    Answer,
    Attempt,
    Operation,
    Place,
    ToolIntent,
)
from sessaudit.formats.tiny_agent.read.digests import DIGEST_PATTERN, MAX_SAFE_INTEGER
from sessaudit.formats.tiny_agent.read.messages import (
    Call,
    Message,
    canonical_message,
    parse_call,
    parse_configuration,
)
from sessaudit.formats.tiny_agent.read.shapes import JS_WHITESPACE, Violation

_exact = Reducer.apply_fact
_digest = DIGEST_PATTERN.match
# Every integer orjson cannot read exactly has 19 digits or more.
_LONG_DIGITS: Final = re.compile(r"[0-9]{19}")
# Many new ids at once, one per line: the pattern of `UUID7_PATTERN`, repeated.
_UUID7_LINES: Final = re.compile(
    r"(?:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n)*"
    r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
)
_dumps = orjson.dumps
_loads = orjson.loads
# the namespace's own str keys, without a compacted namespace's __contains__ (most references are to them)
_in_dict = dict.__contains__
# the stopReason strings the exact handler interns, as one object each
_STOP_REASONS: Final = {"stop": "stop", "toolUse": "toolUse", "length": "length"}


class FastReducer(Reducer):
    """The reducer's state, and the ids that entered the namespace since they were last checked to be
    UUIDv7s (`check_fresh_ids`): a new id is taken on trust until its batch is checked, and a batch that
    fails makes the whole file a doubt, so trusting it changes no answer."""

    def __init__(self, **parts: Any) -> None:
        super().__init__(**parts)
        self.fresh_ids: list[str] = []


def check_fresh_ids(fresh: list[str]) -> bool:
    """Whether every id in `fresh` is a lowercase UUIDv7 (one regular expression call); empties it."""
    if not fresh:
        return True
    joined = "\n".join(fresh)
    # 36 characters each: an id holding a line feed cannot pass for two
    valid = len(joined) == 37 * len(fresh) - 1 and _UUID7_LINES.fullmatch(joined) is not None
    fresh.clear()
    return valid


class _Exact(Exception):
    """This fact is not one of the common shapes: the exact handler applies it (nothing has changed)."""


_EXACT: Final = _Exact()


def apply_fact(r: FastReducer, fact: Any, place: Place) -> None:
    """Apply one fact of an accepted transaction as `Reducer.apply_fact` would."""
    if type(fact) is not dict:
        _exact(r, fact, place)
        return
    seq = fact.get("seq")
    fact_id = fact.get("id")
    timestamp = fact.get("timestamp")
    namespace = r.namespace
    # a float or an error in the envelope is the exact handler's, and so is an id already in the namespace
    # but for a reserved result slot (a started result's id), which the result handler takes below
    if (
        type(seq) is not int
        or seq != r.next_seq
        or type(fact_id) is not str
        or type(timestamp) is not int
        or not 0 <= timestamp <= MAX_SAFE_INTEGER
    ):
        _exact(r, fact, place)
        return
    known = fact_id in namespace  # once: a compacted namespace answers it from its cold table
    if known and (namespace[fact_id] != RESERVED_TOOL_RESULT or fact.get("kind") != "entry"):
        _exact(r, fact, place)
        return
    if not known:
        r.fresh_ids.append(fact_id)
    place.seq = seq
    r.last_seen_seq = seq
    kind = fact.get("kind")
    try:
        if kind == "entry":
            ordinal = _entry(r, fact, fact_id, place, known)
        elif kind == "record":
            _record(r, fact, fact_id, place)
            ordinal = FACT
        elif kind == "usage":
            _usage(r, fact, place)
            ordinal = FACT
        else:
            raise _EXACT
    except _Exact:
        _EXACT.__traceback__ = None  # the one instance must not keep this call's frames (and state) alive
        _exact(r, fact, place)
        return
    namespace[fact_id] = ordinal
    r.next_seq = seq + 1
    r.fact_timestamp = timestamp
    previous = r.last_timestamp
    if (
        int(fact_id[:8] + fact_id[9:13], 16) > timestamp
        or (previous is not None and timestamp < previous)
        or timestamp < r.created_at
    ):
        notes.envelope(r, fact, fact_id, timestamp, place)
    else:
        r.last_timestamp = timestamp


# --- entries -------------------------------------------------------------------------------------
def _entry(r: FastReducer, fact: dict[str, Any], fact_id: str, place: Place, known: bool) -> int:
    """A message entry; `known`: its id is in the namespace already (a reserved result slot)."""
    entry = fact.get("entry")
    if len(fact) != 5 or type(entry) is not dict or entry.get("type") != "message":
        raise _EXACT
    message = entry.get("message")
    if type(message) is not dict:
        raise _EXACT
    role = message.get("role")
    if role == "user":
        content = message.get("content")
        if (
            len(entry) != 2
            or len(message) != 2
            or type(content) is not str
            or not content
            or r.pending_calls
            or known
        ):
            raise _EXACT
        canonical = b'{"content":' + _dumps(content) + b',"role":"user"}'
        ordinal = r.add_entry(fact_id, USER, place)
        r.hash_message(fact_id, canonical)
        r.active_boundary = fact_id
        r.last_user = fact_id
        return ordinal
    if role == "assistant":
        if known:
            raise _EXACT
        return _assistant(r, entry, message, fact_id, place)
    if role == "tool":
        return _tool_result(r, entry, message, fact_id, place)
    raise _EXACT


def _calls(raw: Any) -> tuple[Call, ...]:
    """The tool calls of an assistant message, each validated as the exact pass does (a bad one raises
    Violation: a doubt); repeated call ids are the exact handler's."""
    if type(raw) is not list or not raw:
        raise _EXACT
    calls = tuple([parse_call(value, "/entry/message", index) for index, value in enumerate(raw)])
    if len({call[0] for call in calls}) != len(calls):
        raise _EXACT
    return calls


def _ref(r: FastReducer, value: Any) -> str:
    """An id the fact refers to, already in the namespace: in an accepted file every reference names an
    earlier id (else the exact handler decides)."""
    if type(value) is not str or (not _in_dict(r.namespace, value) and value not in r.namespace):
        raise _EXACT
    return value


def _assistant(
    r: FastReducer, entry: dict[str, Any], message: dict[str, Any], fact_id: str, place: Place
) -> int:
    content = message.get("content")
    stop = entry.get("stopReason")
    stop_reason = _STOP_REASONS.get(stop) if type(stop) is str else None
    if (
        len(entry) != 5
        or stop_reason is None
        or (content is not None and type(content) is not str)
        or "content" not in message
        or r.pending_calls
    ):
        raise _EXACT
    size = len(message)
    if size == 3:
        calls = _calls(message.get("tool_calls"))
    elif size == 2:
        calls = ()
    else:
        raise _EXACT
    step_id = _ref(r, entry.get("stepId"))
    attempt = r.attempts.get(_ref(r, entry.get("attemptId")))
    current = r.current
    if (
        attempt is None
        or attempt.step != step_id
        or attempt.closed
        or attempt.kind != "assistant"
        or current is None
        or current.kind != "run"
        or current.operation_id != attempt.operation
        or (stop_reason == "toolUse" and not calls)
        or (stop_reason == "stop" and calls)
    ):
        raise _EXACT
    canonical = canonical_message(Message("assistant", content, calls, ""))
    attempt.closed = True
    attempt.settled_entry = fact_id
    attempt.stop_reason = stop_reason
    has_text = bool(content and content.strip(JS_WHITESPACE))
    answer = Answer(fact_id, step_id, attempt, stop_reason, calls, has_text, place)
    r.pending_calls.update(call[0] for call in calls)
    ordinal = r.add_entry(fact_id, ASSISTANT, place)
    r.hash_message(fact_id, canonical)
    r.active_boundary = fact_id
    current.answers[fact_id] = answer
    current.last_answer = answer
    return ordinal


def _tool_result(
    r: FastReducer, entry: dict[str, Any], message: dict[str, Any], fact_id: str, place: Place
) -> int:
    """§8.3, a started result at its provisioned id; a pre-execution synthetic is the exact handler's."""
    result = entry.get("result")
    content = message.get("content")
    call_id = message.get("tool_call_id")
    tool_name = entry.get("toolName")
    if (
        len(entry) != 6
        or "toolStartedId" not in entry
        or "stepId" not in entry
        or len(message) != 3
        or type(content) is not str
        or type(call_id) is not str
        or not call_id
        or type(tool_name) is not str
        or not tool_name
        or type(result) is not dict
        or len(result) != 1
        or (result.get("type") != "success" and result.get("type") != "error")
        or type(result["type"]) is not str
        or r.namespace.get(fact_id) != RESERVED_TOOL_RESULT
        or call_id not in r.pending_calls
    ):
        raise _EXACT
    step_id = _ref(r, entry["stepId"])
    started_id = _ref(r, entry["toolStartedId"])
    intent = r.pending_intents.get(started_id)
    if (
        intent is None
        or intent.step != step_id
        or intent.result_slot != fact_id
        or intent.call_id != call_id
        or intent.name != tool_name
    ):
        raise _EXACT
    canonical = b'{"content":' + _dumps(content) + b',"role":"tool","tool_call_id":' + _dumps(call_id) + b"}"
    intent.pending = False
    del r.pending_intents[started_id]
    operation = r.operations[intent.operation]
    operation.pending -= 1
    slot = intent.result_slot  # the reserved id's own string: the state keeps one copy of each id
    r.namespace[fact_id] = FACT
    if operation.finished:
        notes.result_after_finish(r, operation, intent, place)
    r.pending_calls.discard(call_id)
    ordinal = r.add_entry(slot, TOOL, place)
    r.hash_message(slot, canonical)
    r.active_boundary = slot
    return ordinal


# --- records -------------------------------------------------------------------------------------
def _record(r: FastReducer, fact: dict[str, Any], fact_id: str, place: Place) -> None:
    record = fact.get("record")
    if len(fact) != 5 or type(record) is not dict:
        raise _EXACT
    kind = record.get("type")
    if kind == "stepAttempt":
        _step_attempt(r, record, fact_id, place)
    elif kind == "toolStarted":
        _tool_started(r, record, fact_id, place)
    elif kind == "runStarted":
        _run_started(r, record, fact_id, place)
    elif kind == "operationFinished":
        _run_completed(r, record)
    else:
        raise _EXACT


def _fresh(r: FastReducer, value: Any) -> str:
    """An id the record reserves, not yet in the namespace (else the exact handler); its UUIDv7 shape is
    checked with its batch."""
    if type(value) is not str or value in r.namespace:
        raise _EXACT
    r.fresh_ids.append(value)
    return value


def _open_operation(r: FastReducer, value: Any) -> Operation:
    operation = r.operations.get(_ref(r, value))
    if operation is None or operation.finished:
        raise _EXACT
    return operation


def _run_started(r: FastReducer, record: dict[str, Any], fact_id: str, place: Place) -> None:
    if len(record) != 4 or record.get("operationKind") != "run" or r.current is not None:
        raise _EXACT
    operation_id = _fresh(r, record.get("operationId"))
    ordinal = r.namespace.get(_ref(r, record.get("inputEntryId")), -1)
    if operation_id == fact_id or ordinal < 0 or r.entry_kinds[ordinal] != USER:
        raise _EXACT
    r.namespace[operation_id] = RESERVED_IDENTITY
    input_id = r.entry_ids[ordinal]
    notes.input_entry(r, input_id, place)
    operation = Operation(operation_id, "run", input_id, None, place)
    r.operations[operation_id] = operation
    r.runs.append(operation)
    r.current = operation


def _run_completed(r: FastReducer, record: dict[str, Any]) -> None:
    """§9.7, a run completed normally (truncated, aborted, failed and compactions: the exact handler)."""
    if (
        len(record) != 6
        or record.get("outcome") != "completed"
        or record.get("completion") != "normal"
        or record.get("operationKind") != "run"
    ):
        raise _EXACT
    operation = _open_operation(r, record.get("operationId"))
    final = _ref(r, record.get("finalEntryId"))
    answer = operation.answers.get(final)
    if (
        operation.kind != "run"
        or r.current is not operation
        or answer is None
        or answer.stop_reason != "stop"
        or answer.attempt.failed
        or answer.attempt.step != operation.latest_step
        or answer.attempt.settled_entry != final
        or not answer.has_text
        or operation.pending
    ):
        raise _EXACT
    operation.finished = True
    operation.outcome = "completed"
    r.current = None
    # a finished operation keeps only what the report needs: its intents still pending (late results)
    operation.answers = {}
    operation.last_answer = None
    operation.intents = [intent for intent in operation.intents if intent.pending]
    operation.partition = None
    r.steps.clear()


def _step_attempt(r: FastReducer, record: dict[str, Any], fact_id: str, place: Place) -> None:
    """§9.3, attempt 1 of a new assistant step (attempt 2 and compaction steps are the exact handler's)."""
    declared = record.get("configurationDigest")
    snapshot = record.get("configurationSnapshot")
    if len(record) != 9 or record.get("attempt") != 1 or type(record["attempt"]) is not int:
        raise _EXACT
    operation = _open_operation(r, record.get("operationId"))
    step_id = _fresh(r, record.get("stepId"))
    attempt_id = _fresh(r, record.get("attemptId"))
    context = record.get("contextThroughEntryId")
    context_ordinal = r.namespace.get(_ref(r, context), -1)
    if (
        attempt_id == step_id
        or fact_id in (step_id, attempt_id)
        or record.get("stepKind") != "assistant"
        or operation.kind != "run"
        or context_ordinal < 0
        or r.entry_ids[context_ordinal] != r.active_boundary
        or type(declared) is not str
        or _digest(declared) is None
        or type(snapshot) is not dict
        or type(snapshot.get("systemPromptDigest")) is not str
        or type(snapshot.get("outputOptionsDigest")) is not str
    ):
        raise _EXACT
    context = r.entry_ids[context_ordinal]
    digest, tools = parse_configuration(snapshot, "/record/configurationSnapshot")
    if digest != declared:
        raise _EXACT
    for tool in snapshot["tools"]:
        if type(tool["definitionDigest"]) is not str:
            raise _EXACT
    active = operation.step
    if active is not None and (
        operation.status != "settled" or active.stop_reason != "toolUse" or operation.pending
    ):
        raise _EXACT
    r.namespace[step_id] = RESERVED_IDENTITY
    r.namespace[attempt_id] = RESERVED_IDENTITY
    if active is not None:
        notes.untouched_before_step(r, operation, place)
    attempt = Attempt(attempt_id, operation.operation_id, step_id, 1, "assistant", context, digest, tools)
    r.attempts[attempt_id] = attempt
    r.steps[step_id] = attempt
    operation.latest_step = step_id
    operation.step = attempt


def _tool_started(r: FastReducer, record: dict[str, Any], fact_id: str, place: Place) -> None:
    """§9.5: the intent of one call of the current run's latest toolUse answer."""
    if len(record) != 12:
        raise _EXACT
    operation = _open_operation(r, record.get("operationId"))
    assistant_id = _ref(r, record.get("assistantEntryId"))
    answer = operation.answers.get(assistant_id)
    index = record.get("toolIndex")
    call_id = record.get("toolCallId")
    name = record.get("toolName")
    arguments = record.get("arguments")
    replay = record.get("replay")
    replay_key = record.get("replayKey")
    environment = record.get("environmentIdentity")
    if (
        operation.kind != "run"
        or r.current is not operation
        or answer is None
        or answer.stop_reason != "toolUse"
        or type(index) is not int
        or not 0 <= index < len(answer.calls)
        or type(call_id) is not str
        or not call_id
        or type(name) is not str
        or not name
        or answer.calls[index][0] != call_id
        or answer.calls[index][1] != name
        or record.get("stepId") != answer.step
        or answer.states[index] != UNTOUCHED
        or type(arguments) is not dict
        or (replay != "safe" and replay != "never")
        or type(replay_key) is not str
        or not replay_key
        or type(environment) is not str
        or not environment
        or name not in answer.attempt.tools
    ):
        raise _EXACT
    result_slot = _fresh(r, record.get("resultEntryId"))
    if result_slot == fact_id:
        raise _EXACT
    r.namespace[result_slot] = RESERVED_TOOL_RESULT
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
    if not _quiet_start(r, operation, answer, intent):
        notes.tool_started(r, operation, answer, intent, record, place)
    answer.states[index] = STARTED
    operation.intents.append(intent)
    operation.pending += 1
    r.pending_intents[fact_id] = intent
    r.intent_operation[fact_id] = operation.operation_id


def _quiet_start(r: FastReducer, operation: Operation, answer: Answer, intent: ToolIntent) -> bool:
    """Whether notes.tool_started would observe nothing: the call's arguments text parses to the intent's
    arguments, the environment is the header's, no earlier call is untouched, no abort was requested.
    orjson parses what it accepts as the standard library does, but for integers beyond 64 bits (read as
    floats), which any run of 19 digits may be; those texts and anything it refuses are left to the note's
    own parse."""
    if intent.environment != r.environment or operation.abort_requested:
        return False
    if UNTOUCHED in answer.states[: intent.index]:
        return False
    text = answer.calls[intent.index][2]
    if _LONG_DIGITS.search(text) is not None:  # an integer beyond 64 bits: orjson reads it as a float
        return False
    try:
        provider = _loads(text)
    except orjson.JSONDecodeError:
        return False
    return type(provider) is dict and provider == intent.arguments


# --- usage ---------------------------------------------------------------------------------------
def _usage(r: FastReducer, fact: dict[str, Any], place: Place) -> None:
    """§10: usage counters for a model attempt or a tool intent of an operation."""
    counters = fact.get("usage")
    if len(fact) != 7 or type(counters) is not dict or len(counters) != 4:
        raise _EXACT
    operation_id = _ref(r, fact.get("operationId"))
    if operation_id not in r.operations:
        raise _EXACT
    attempt: Attempt | None = None
    if "attemptId" in fact:
        attempt = r.attempts.get(_ref(r, fact["attemptId"]))
        if attempt is None or attempt.operation != operation_id:
            raise _EXACT
    elif "toolStartedId" in fact:
        if r.intent_operation.get(_ref(r, fact["toolStartedId"])) != operation_id:
            raise _EXACT
    else:
        raise _EXACT
    totals = r.usage
    spent_input = counters.get("input")
    spent_output = counters.get("output")
    spent_read = counters.get("cacheRead")
    spent_write = counters.get("cacheWrite")
    if (
        type(spent_input) is not int
        or type(spent_output) is not int
        or type(spent_read) is not int
        or type(spent_write) is not int
    ):
        raise _EXACT
    updated = {
        "input": totals["input"] + spent_input,
        "output": totals["output"] + spent_output,
        "cacheRead": totals["cacheRead"] + spent_read,
        "cacheWrite": totals["cacheWrite"] + spent_write,
    }
    if (
        min(spent_input, spent_output, spent_read, spent_write) < 0
        or max(updated.values()) > MAX_SAFE_INTEGER
        or max(spent_input, spent_output, spent_read, spent_write) > MAX_SAFE_INTEGER
    ):
        raise _EXACT
    r.usage = updated
    if attempt is not None:
        if attempt.superseded or attempt.failed or attempt.usage_facts:
            notes.attempt_usage(r, attempt, place)
        else:
            attempt.usage_facts = 1


__all__ = ["Violation", "apply_fact"]
