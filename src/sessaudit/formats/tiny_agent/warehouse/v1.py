"""Legacy tiny-agent v1 lines → facts, the usage ledger and tool calls (spec §15.1).

Each verified line after the header is one fact; its seq is its line number (CONTRACT §4). Lines are read
with the v1 verifier's own line reader, so a usage counts here exactly when the verifier counted it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sessaudit.formats.tiny_agent.v1.lines import (
    ABORTED,
    ABORTED_BEFORE_EXECUTION,
    TRUNCATED,
    AssistantMessage,
    Compaction,
    Interruption,
    ToolResult,
    UserMessage,
    read_line,
)
from sessaudit.formats.tiny_agent.warehouse.lines import verified_header
from sessaudit.framing import Line
from sessaudit.warehouse.drafts import (
    FAILED,
    NOT_EXECUTED,
    NOT_STARTED,
    SUCCEEDED,
    UNKNOWN,
    CallDraft,
    Extraction,
    SessionDetails,
    arguments_json,
)
from sessaudit.warehouse.rows import FactRow, LedgerRow, micros_from_text, raw_json, text


@dataclass(slots=True)
class _Turn:
    run_id: str | None = None
    open_calls: dict[str, CallDraft] = field(default_factory=dict)  # unanswered calls of the last answer
    aborted: bool = False  # an abort was recorded for the last answer's calls: later ones never ran


def extract_v1(
    lines: Iterable[Line], cut: int | None, source_id: str, session_id: str | None, into: Extraction
) -> None:
    """`lines` are the committed lines in order, from line 1; lines from `cut` on are left out (all of
    them, the header too, when the header itself is not verified). Reads no further than it needs."""
    opened = verified_header(lines, cut)
    if opened is None:
        return
    header, raw, iterator = opened
    provider, model = text(header.get("provider")), text(header.get("model"))
    into.sessions[session_id] = SessionDetails(provider, model, text(header.get("cwd")), raw_json(raw))
    turn = _Turn()
    for line in iterator:
        if cut is not None and line.number >= cut:
            break
        if line.data:  # v1's reader skips empty lines; they are not facts
            _line(line.data, line.number, line.offset, source_id, session_id, provider, model, turn, into)
    _close(turn)


def _line(
    data: bytes,
    number: int,
    offset: int,
    source_id: str,
    session_id: str | None,
    provider: str | None,
    model: str | None,
    turn: _Turn,
    into: Extraction,
) -> None:
    value: Any = json.loads(data)
    record = value if isinstance(value, dict) else {}
    moment = micros_from_text(record.get("timestamp"))
    event = read_line(value).event
    message = record.get("message")
    role = text(message.get("role")) if isinstance(message, dict) else None
    if isinstance(event, UserMessage):
        _close(turn)
        turn.run_id, turn.aborted = f"turn:{number}", False
    run_id = None if isinstance(event, Compaction) else turn.run_id
    if isinstance(event, Interruption) and event.phase == "compact":
        run_id = None
    if isinstance(event, AssistantMessage):
        _close(turn)
        turn.aborted = False
        for call in event.calls:
            draft = CallDraft(
                session_id,
                run_id,
                call.call_id,
                call.name,
                call_seq=number,
                requested_at=moment,
                arguments=arguments_json(call.arguments),
            )
            into.calls.append(draft)
            turn.open_calls[call.call_id] = draft
    elif isinstance(event, ToolResult):
        _answer(event, number, moment, turn)
    elif isinstance(event, Interruption) and event.phase == "tool":
        turn.aborted = True
    if isinstance(event, AssistantMessage | Compaction) and event.usage is not None:
        tokens = event.usage
        into.add_usage(
            LedgerRow(
                source_id,
                session_id,
                run_id,
                number,
                number,
                None,
                None,
                moment,
                "compaction" if isinstance(event, Compaction) else "model",
                provider,
                model,
                tokens.input,
                tokens.output,
                tokens.cache_read,
                tokens.cache_write,
                tokens.input + tokens.cache_read + tokens.cache_write,
                None,
            )
        )
    if run_id is not None:
        into.span(session_id, run_id).add(number, moment)
    into.add_fact(
        FactRow(
            source_id,
            session_id,
            run_id,
            number,
            number,
            offset,
            None,
            "line",
            text(record.get("type")),
            role,
            None,
            moment,
            raw_json(data.decode("utf-8")),
        )
    )


def _answer(event: ToolResult, number: int, moment: int | None, turn: _Turn) -> None:
    draft = turn.open_calls.pop(event.call_id, None)
    if draft is None:
        return
    content = event.content or ""
    if content == ABORTED:  # the call that was running when the user aborted: it may have had an effect
        status, result_type, turn.aborted = UNKNOWN, "aborted", True
    elif content == ABORTED_BEFORE_EXECUTION:
        status, result_type = NOT_EXECUTED, "aborted-before-execution"
    elif content == TRUNCATED:
        status, result_type = NOT_EXECUTED, "truncated"
    elif content.startswith("Error:"):
        status, result_type = FAILED, "error"
    else:
        status, result_type = SUCCEEDED, "success"
    draft.status, draft.result_type, draft.result_seq, draft.finished_at = status, result_type, number, moment


def _close(turn: _Turn) -> None:
    """The last answer's unanswered calls: calls run in order, so the first may have run, later ones not
    (and none after an abort)."""
    for index, draft in enumerate(turn.open_calls.values()):
        draft.status = UNKNOWN if index == 0 and not turn.aborted else NOT_STARTED
    turn.open_calls.clear()
