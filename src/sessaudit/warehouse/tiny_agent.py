"""tiny-agent v2 records → facts, the usage ledger and tool calls (spec §5, §8–§10).

Only verified lines reach this module (the header and the transactions before the first corrupting line),
so the standard JSON decoder reads them as tiny-agent's reducer did. Usage facts are counted one row each,
as the reducer sums them (spec §10)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sessaudit.warehouse.drafts import (
    FAILED,
    NOT_EXECUTED,
    SUCCEEDED,
    UNKNOWN,
    CallDraft,
    Extraction,
    SessionDetails,
    arguments_json,
)
from sessaudit.warehouse.rows import FactRow, LedgerRow, integer, micros_from_ms, raw_json, text

_RESULT_STATUS = {"success": SUCCEEDED, "error": FAILED}


@dataclass(slots=True)
class _Run:
    """What the records said so far about operations, steps, attempts and tool calls."""

    steps: dict[str, str] = field(default_factory=dict)  # stepId → operationId
    attempts: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # → (stepKind, model)
    calls: dict[tuple[str, int], CallDraft] = field(default_factory=dict)  # (assistant entry, index) → call
    intents: dict[str, CallDraft] = field(default_factory=dict)  # toolStarted fact id → call
    entries: dict[str, int] = field(default_factory=dict)  # user entry id → index in facts, for runStarted


def extract_v2(
    lines: list[bytes], cut: int | None, source_id: str, session_id: str | None, into: Extraction
) -> None:
    """`lines` are the committed lines (LF removed); lines from `cut` on are left out (all of them, the
    header too, when the header itself is not verified)."""
    if not lines or (cut is not None and cut <= 1):
        return
    header, raw = _header(lines[0])
    provider = text(header.get("provider"))
    into.sessions[session_id] = SessionDetails(
        provider, text(header.get("model")), text(header.get("cwd")), raw_json(raw)
    )
    state = _Run()
    end = len(lines) if cut is None else min(cut - 1, len(lines))
    offset = len(lines[0]) + 1
    for number in range(2, end + 1):
        data = lines[number - 1]
        line = data.decode("utf-8")
        for fact, text_of_fact in _transaction(line):
            _fact(fact, text_of_fact, number, offset, source_id, session_id, provider, state, into)
        offset += len(data) + 1
    into.calls.extend(state.calls.values())


_DECODER = json.JSONDecoder()
_BLANK = " \t\r\n"


def _transaction(line: str) -> list[tuple[Any, str]]:
    """The facts of one line with the exact text of each: the line itself, or each element of an array
    (read in one pass by the decoder, so an element's text is what the writer wrote)."""
    start = len(line) - len(line.lstrip(_BLANK))
    if not line.startswith("[", start):
        return [(json.loads(line), line)]
    facts: list[tuple[Any, str]] = []
    index = start + 1
    while True:
        while line[index] in _BLANK:
            index += 1
        if line[index] == "]":
            return facts
        value, end = _DECODER.raw_decode(line, index)
        facts.append((value, line[index:end]))
        index = end
        while line[index] in _BLANK:
            index += 1
        if line[index] == ",":
            index += 1


def _header(data: bytes) -> tuple[dict[str, Any], str]:
    """Line 1 (verified, or the cut is at line 1 and nothing else is read) and its text without a BOM."""
    raw = (data[3:] if data[:3] == b"\xef\xbb\xbf" else data).decode("utf-8")
    value = json.loads(raw)
    return (value if isinstance(value, dict) else {}), raw


def _fact(
    fact: Any,
    line: str,
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
        if role == "user" and fact_id is not None:
            state.entries[fact_id] = len(into.facts)
    elif kind == "record":
        record = fact.get("record")
        record = record if isinstance(record, dict) else {}
        fact_type = text(record.get("type"))
        run_id = text(record.get("operationId"))
        _record(record, fact_type, fact_id, seq, moment, run_id, session_id, state, into)
    elif kind == "usage":
        run_id = text(fact.get("operationId"))
        fact_type = "attempt" if "attemptId" in fact else "tool"
        _usage(fact, fact_id, seq, number, moment, run_id, source_id, session_id, provider, state, into)
    if run_id is not None:
        into.span(session_id, run_id).add(seq, moment)
    payload = raw_json(line)
    into.facts.append(
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
        )
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
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
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
        draft = state.intents.get(started)
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
    session_id: str | None,
    state: _Run,
    into: Extraction,
) -> None:
    if record_type == "stepAttempt":
        snapshot = record.get("configurationSnapshot")
        model = text(snapshot.get("model")) if isinstance(snapshot, dict) else None
        state.steps[str(record.get("stepId"))] = str(run_id)
        state.attempts[str(record.get("attemptId"))] = (text(record.get("stepKind")), model)
    elif record_type == "runStarted":
        index = state.entries.get(str(record.get("inputEntryId")))
        if index is not None and into.facts[index].run_id is None:
            into.facts[index] = into.facts[index]._replace(run_id=run_id)
            if run_id is not None:
                into.span(session_id, run_id).add(into.facts[index].seq, into.facts[index].timestamp)
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
    into.usage.append(
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
