"""tiny-agent v2 records → facts, the usage ledger and tool calls (spec §5, §8–§10).

Only verified lines reach this module (the header and the transactions before the first corrupting line),
so a standard JSON decoder reads them as tiny-agent's reducer did (orjson where it reads them alike).
Usage facts are counted one row each, as the reducer sums them (spec §10)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sessaudit.formats.tiny_agent.warehouse.lines import transaction_facts, verified_header
from sessaudit.framing import Line
from sessaudit.plugin import UNDECODED
from sessaudit.warehouse.drafts import (
    FAILED,
    NOT_EXECUTED,
    SUCCEEDED,
    UNKNOWN,
    CallDraft,
    Extraction,
    SessionDetails,
    arguments_json,
    call_row,
)
from sessaudit.warehouse.rows import (
    FactRow,
    LedgerRow,
    integer,
    micros_from_ms,
    raw_json,
    raw_json_bytes,
    text,
)

_RESULT_STATUS = {"success": SUCCEEDED, "error": FAILED}


@dataclass(slots=True)
class _Run:
    """What the records said so far about operations, steps, attempts and tool calls (ids, not payloads).

    A finished run's settled tool calls leave as rows when it finishes (`_finished`), with its steps; what
    stays is what a later line may still name: every attempt (usage facts), and the calls, steps and
    intents of runs still open or left with pending intents (a late result)."""

    steps: dict[str, str] = field(default_factory=dict)  # stepId → operationId
    attempts: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # → (stepKind, model)
    calls: dict[tuple[str, int], CallDraft] = field(default_factory=dict)  # (assistant entry, index) → call
    intents: dict[str, CallDraft] = field(default_factory=dict)  # toolStarted fact id → call, until a result
    # user entry id → where its fact is, until a runStarted gives it a run id
    entries: dict[str, _UserFact] = field(default_factory=dict)
    run_calls: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # run → its calls' keys
    run_steps: dict[str, list[str]] = field(default_factory=dict)  # run → its step ids
    shared: dict[Any, Any] = field(default_factory=dict)  # one object for each repeated value (run ids, …)


class _UserFact(NamedTuple):
    line: int
    seq: int | None
    timestamp: int | None


def extract_v2(
    lines: Iterable[Line], cut: int | None, source_id: str, session_id: str | None, into: Extraction
) -> None:
    """`lines` are the committed lines in order, from line 1; lines from `cut` on are left out (all of
    them, the header too, when the header itself is not verified). Reads no further than it needs."""
    opened = verified_header(lines, cut)
    if opened is None:
        return
    header, raw, iterator = opened
    extractor = V2Extractor(source_id, session_id, header, raw, into)
    for line in iterator:
        if cut is not None and line.number >= cut:
            break
        extractor.line(line)
    extractor.finish()


class V2Extractor:
    """The rows of one v2 session, a verified line at a time: the header first (as an object and as its
    text), then `line()` for each line after it in order, then `finish()`."""

    __slots__ = ("into", "provider", "session_id", "source_id", "state")

    def __init__(
        self, source_id: str, session_id: str | None, header: dict[str, Any], raw: str, into: Extraction
    ) -> None:
        self.source_id, self.session_id, self.into = source_id, session_id, into
        self.provider = text(header.get("provider"))
        into.sessions[session_id] = SessionDetails(
            self.provider, text(header.get("model")), text(header.get("cwd")), raw_json(raw)
        )
        self.state = _Run()

    def line(self, line: Line, value: Any = UNDECODED) -> None:
        """One line after the header; `value` is its JSON value when the caller has decoded it already."""
        number, offset = line.number, line.offset
        source_id, session_id, provider, state, into = (
            self.source_id,
            self.session_id,
            self.provider,
            self.state,
            self.into,
        )
        for fact, text_of_fact in transaction_facts(line.data, value):
            _fact(fact, text_of_fact, number, offset, source_id, session_id, provider, state, into)

    def finish(self) -> None:
        """Hand over the tool calls (their rows are made with the report's runs)."""
        self.into.calls.extend(self.state.calls.values())


def _fact(
    fact: Any,
    line: str | bytes,
    number: int,
    offset: int,
    source_id: str,
    session_id: str | None,
    provider: str | None,
    state: _Run,
    into: Extraction,
) -> None:
    if not isinstance(fact, dict):
        return
    kind = fact.get("kind")
    seq, fact_id, moment = (
        integer(fact.get("seq")),
        text(fact.get("id")),
        micros_from_ms(fact.get("timestamp")),
    )
    role: str | None = None
    run_id: str | None = None
    fact_type: str | None = None
    if kind == "entry":
        entry = fact.get("entry")
        entry = entry if isinstance(entry, dict) else {}
        fact_type = text(entry.get("type"))
        message = entry.get("message")
        role = text(message.get("role")) if isinstance(message, dict) else None
        run_id = text(entry.get("operationId")) or state.steps.get(str(entry.get("stepId")))
        _entry(entry, message, role, fact_id, seq, moment, run_id, session_id, state)
        if role == "user" and fact_id is not None and run_id is None:
            state.entries[fact_id] = _UserFact(number, seq, moment)
    elif kind == "record":
        record = fact.get("record")
        record = record if isinstance(record, dict) else {}
        fact_type = text(record.get("type"))
        run_id = text(record.get("operationId"))
        _record(record, fact_type, fact_id, seq, moment, run_id, source_id, session_id, state, into)
    elif kind == "usage":
        run_id = text(fact.get("operationId"))
        fact_type = "attempt" if "attemptId" in fact else "tool"
        _usage(fact, fact_id, seq, number, moment, run_id, source_id, session_id, provider, state, into)
    if run_id is not None:
        into.span(session_id, run_id).add(seq, moment)
    payload = raw_json_bytes(line) if isinstance(line, bytes) else raw_json(line)
    into.add_fact(
        FactRow(
            source_id,
            session_id,
            run_id,
            seq,
            number,
            offset,
            None,
            text(kind),
            fact_type,
            role,
            fact_id,
            moment,
            payload,
        ),
        awaiting_run=role == "user" and run_id is None,  # a later runStarted may name it its input
    )


def _entry(
    entry: dict[str, Any],
    message: Any,
    role: str | None,
    fact_id: str | None,
    seq: int | None,
    moment: int | None,
    run_id: str | None,
    session_id: str | None,
    state: _Run,
) -> None:
    if not isinstance(message, dict) or fact_id is None:
        return
    if role == "assistant":
        keys = state.run_calls.setdefault(run_id, []) if run_id is not None else None
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            if keys is not None:
                keys.append((fact_id, index))
            state.calls[(fact_id, index)] = CallDraft(
                session_id,
                run_id,
                text(call.get("id")) if isinstance(call, dict) else None,
                text(function.get("name")),
                call_seq=seq,
                requested_at=moment,
                arguments=arguments_json(function.get("arguments")),
            )
        return
    if role != "tool":
        return
    result = entry.get("result")
    result = result if isinstance(result, dict) else {}
    result_type = text(result.get("type"))
    reason = text(result.get("reason"))
    started = text(entry.get("toolStartedId"))
    if started is not None:
        draft = state.intents.pop(started, None)  # one result per intent (the verifier's rule)
        status = _RESULT_STATUS.get(result_type or "", UNKNOWN)  # an `interrupted` synthetic: outcome unknown
    else:
        draft = state.calls.get((str(entry.get("assistantEntryId")), integer(entry.get("toolIndex")) or 0))
        status = NOT_EXECUTED  # a pre-execution synthetic: the tool never ran
    if draft is None:
        return
    draft.status, draft.result_seq, draft.finished_at = status, seq, moment
    draft.result_type = f"{result_type}:{reason}" if reason else result_type


def _record(
    record: dict[str, Any],
    record_type: str | None,
    fact_id: str | None,
    seq: int | None,
    moment: int | None,
    run_id: str | None,
    source_id: str,
    session_id: str | None,
    state: _Run,
    into: Extraction,
) -> None:
    if record_type == "stepAttempt":
        snapshot = record.get("configurationSnapshot")
        model = text(snapshot.get("model")) if isinstance(snapshot, dict) else None
        step_id, shared = str(record.get("stepId")), state.shared
        run = str(run_id)
        run = shared.setdefault(run, run)
        if step_id not in state.steps:
            state.run_steps.setdefault(run, []).append(step_id)
        state.steps[step_id] = run
        shape = (text(record.get("stepKind")), model)
        state.attempts[str(record.get("attemptId"))] = shared.setdefault(shape, shape)
    elif record_type == "runStarted":
        entry_id = str(record.get("inputEntryId"))
        user = state.entries.pop(entry_id, None)
        if user is not None and run_id is not None:
            into.assign_run(user.line, entry_id, run_id)
            into.span(session_id, run_id).add(user.seq, user.timestamp)
    elif record_type == "toolStarted":
        key = (str(record.get("assistantEntryId")), integer(record.get("toolIndex")) or 0)
        draft = state.calls.get(key)
        if draft is None:
            return
        draft.status, draft.intent_seq, draft.intent_id = UNKNOWN, seq, fact_id
        draft.replay_policy, draft.replay_key = text(record.get("replay")), text(record.get("replayKey"))
        draft.arguments = arguments_json(record.get("arguments"))  # the effective, parsed arguments
        if fact_id is not None:
            state.intents[fact_id] = draft
    elif record_type == "operationFinished" and run_id is not None:
        _finished(run_id, source_id, state, into)


def _finished(run_id: str, source_id: str, state: _Run, into: Extraction) -> None:
    """A run finished: its calls that nothing can change any more become rows now. A call whose intent is
    still pending stays (a late result may settle it, and the report makes it a pending effect of the run,
    matched by its call id; so does every call of the run with that id), and so do the run's steps then
    (the late result names its step)."""
    calls = state.calls
    drafts = [(key, calls[key]) for key in dict.fromkeys(state.run_calls.pop(run_id, [])) if key in calls]
    waiting = {draft.tool_call_id for _, draft in drafts if draft.status == UNKNOWN}
    for key, draft in drafts:
        if draft.tool_call_id not in waiting:
            del calls[key]
            into.add_call(call_row(source_id, draft))
    steps = state.run_steps.pop(run_id, [])
    if not waiting:
        for step_id in steps:
            state.steps.pop(step_id, None)
    state.shared.pop(run_id, None)


def _usage(
    fact: dict[str, Any],
    fact_id: str | None,
    seq: int | None,
    number: int,
    moment: int | None,
    run_id: str | None,
    source_id: str,
    session_id: str | None,
    provider: str | None,
    state: _Run,
    into: Extraction,
) -> None:
    counters = fact.get("usage")
    if not isinstance(counters, dict):
        return
    numbers = [integer(counters.get(key)) or 0 for key in ("input", "output", "cacheRead", "cacheWrite")]
    if "attemptId" in fact:
        step_kind, model = state.attempts.get(str(fact.get("attemptId")), (None, None))
        scope = "compaction" if step_kind == "compaction" else "model"
        used_provider = provider
    else:
        scope, model, used_provider = "tool", None, None  # a tool's own model is not recorded
    input_, output, cache_read, cache_write = numbers
    into.add_usage(
        LedgerRow(
            source_id,
            session_id,
            run_id,
            seq,
            number,
            None,
            fact_id,
            moment,
            scope,
            used_provider,
            model,
            input_,
            output,
            cache_read,
            cache_write,
            input_ + cache_read + cache_write,
            None,
        )
    )
