"""A Claude Code session's verified lines → facts (one per line), the exact ledger, tool calls.

Files are given in order (the session file, then its sub-agent files); `seq` numbers the lines of all of
them in that order, so (line, seq) is unique within the source although `line` restarts per file. Lines
copied from a resumed-from session (its files in `before`) are facts of this file, but their responses
and tool calls belong to the session that made them and are not loaded here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sessaudit.formats.claude_code.spec.records import content_blocks as blocks
from sessaudit.formats.claude_code.spec.records import is_prompt
from sessaudit.formats.claude_code.usage.ledger import Response, TranscriptFile, build_ledger
from sessaudit.formats.claude_code.warehouse.lines import RawLine
from sessaudit.formats.claude_code.warehouse.tools import (
    ERROR,
    INTERRUPTED,
    OK,
    outcome,
    replay_policy,
)
from sessaudit.warehouse.drafts import (
    FAILED,
    SUCCEEDED,
    UNKNOWN,
    CallDraft,
    Extraction,
    SessionDetails,
    arguments_json,
    call_row,
)
from sessaudit.warehouse.rows import FactRow, LedgerRow, micros_from_text, raw_json_bytes, text, to_json


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """One transcript's verified lines (before its cut); `agent_id` from an `agent-<id>.jsonl` name."""

    path: str
    lines: Sequence[RawLine]
    agent_id: str | None = None


STATUS = {OK: SUCCEEDED, ERROR: FAILED, INTERRUPTED: UNKNOWN}


def transcript(loaded: LoadedFile) -> TranscriptFile:
    records = [(line.number, line.record) for line in loaded.lines if line.record is not None]
    return TranscriptFile(loaded.path, records, loaded.agent_id)


def provider(response: Response) -> str | None:
    """`bedrock` for Bedrock ids or models, `anthropic` for Anthropic ids with a requestId, else unknown."""
    model = response.model or ""
    if response.message_id.startswith("msg_bdrk_") or "anthropic." in model:
        return "bedrock"
    if response.anthropic_id and response.request_id is not None:
        return "anthropic"
    return None


def _payload(raw: bytes) -> str | bytes | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return to_json(raw.decode("utf-8", "replace"))
    return raw_json_bytes(raw)


def _type(record: Mapping[str, Any]) -> str | None:
    """A system line's subtype, else the first content block's type (text, tool_use, tool_result, …)."""
    subtype = text(record.get("subtype"))
    if subtype is not None:
        return subtype
    message = record.get("message")
    if isinstance(message, Mapping) and isinstance(message.get("content"), str):
        return "text"
    found = blocks(record)
    return text(found[0].get("type")) if found else None


def _role(record: Mapping[str, Any]) -> str | None:
    message = record.get("message")
    role = text(message.get("role")) if isinstance(message, Mapping) else None
    if role == "user" and any(block.get("type") == "tool_result" for block in blocks(record)):
        return "tool"
    return role


def extract_files(
    files: Sequence[LoadedFile],
    source_id: str,
    session_id: str | None,
    into: Extraction,
    before: Sequence[LoadedFile] = (),
) -> None:
    """Add the rows of `files` (one session and its sub-agents) to `into`; `before` are the verified files
    of sessions it was resumed from, read only to recognise copies."""
    details = into.sessions.setdefault(session_id, SessionDetails())
    seqs: dict[tuple[str, int], int] = {}
    turns: dict[tuple[str, int], str] = {}  # a line's turn: the run the report names (recover/turns.py)
    seq = 0
    for loaded in files:
        turn = None  # the records before a file's first prompt belong to no turn
        for line in loaded.lines:
            seq += 1
            seqs[(loaded.path, line.number)] = seq
            record = line.record or {}
            own = text(record.get("sessionId"))
            if is_prompt(record):
                turn = text(record.get("uuid")) or f"{loaded.path}:{line.number}"
            moment = micros_from_text(record.get("timestamp"))
            owner = session_id if session_id is not None else own
            if turn is not None:
                turns[(loaded.path, line.number)] = turn
                into.span(owner, turn).add(seq, moment)
            into.add_fact(
                FactRow(
                    source_id,
                    owner,
                    turn,
                    seq,
                    line.number,
                    line.offset,
                    None,
                    text(record.get("type")),
                    _type(record),
                    _role(record),
                    text(record.get("uuid")),
                    moment,
                    _payload(line.raw),
                )
            )
            if details.cwd is None:
                details.cwd = text(record.get("cwd"))
    ledger = build_ledger([transcript(item) for item in files], [transcript(item) for item in before])
    for response in ledger.responses:
        tokens = response.tokens
        details.model = details.model or response.model
        details.provider = details.provider or provider(response)
        into.add_usage(
            LedgerRow(
                source_id,
                response.session_id if response.session_id is not None else session_id,
                turns.get((response.file, response.line)),
                seqs.get((response.file, response.line)),
                response.line,
                None,
                response.message_id,
                micros_from_text(response.timestamp),
                "subagent" if response.sidechain else "model",
                provider(response),
                response.model,
                tokens.input_tokens,
                tokens.output_tokens,
                tokens.cache_read_input_tokens,
                tokens.cache_creation_input_tokens,
                tokens.input_tokens + tokens.cache_read_input_tokens + tokens.cache_creation_input_tokens,
                None,
                tokens.cache_5m,  # None, as the 1-hour count, where the line has no split (spec §6.1)
                tokens.cache_1h,
                response.placeholder,
            )
        )
    _tool_calls(files, before, seqs, turns, source_id, session_id, into)


def _tool_calls(
    files: Sequence[LoadedFile],
    before: Sequence[LoadedFile],
    seqs: dict[tuple[str, int], int],
    turns: dict[tuple[str, int], str],
    source_id: str,
    session_id: str | None,
    into: Extraction,
) -> None:
    """One call per `tool_use` id (first occurrence; ids already in `before` are not this session's),
    answered by the first later `tool_result` naming it."""
    elsewhere = {
        text(block.get("id"))
        for loaded in before
        for line in loaded.lines
        if line.record is not None
        for block in blocks(line.record)
        if block.get("type") == "tool_use"
    }
    drafts: dict[str, CallDraft] = {}
    for loaded in files:
        for line in loaded.lines:
            record = line.record
            if record is None:
                continue
            moment = micros_from_text(record.get("timestamp"))
            seq = seqs[(loaded.path, line.number)]
            for block in blocks(record):
                kind = block.get("type")
                if kind == "tool_use" and record.get("type") == "assistant":
                    call_id = text(block.get("id"))
                    if call_id is None or call_id in drafts or call_id in elsewhere:
                        continue
                    name = text(block.get("name"))
                    draft = drafts[call_id] = CallDraft(
                        text(record.get("sessionId")) or session_id,
                        turns.get((loaded.path, line.number)),
                        call_id,
                        name,
                        status=UNKNOWN,
                    )
                    draft.call_seq, draft.requested_at = seq, moment
                    draft.replay_policy = replay_policy(name)
                    draft.arguments = arguments_json(block.get("input"))
                elif kind == "tool_result" and record.get("type") == "user":
                    found = drafts.get(text(block.get("tool_use_id")) or "")
                    if found is None or found.result_seq is not None:
                        continue
                    said = outcome(record, block)
                    found.status, found.result_type = STATUS[said], said
                    found.result_seq, found.finished_at = seq, moment
    for draft in drafts.values():
        if draft.result_seq is None:
            into.calls.append(draft)  # open: the report may name it as a pending effect
        else:
            into.add_call(call_row(source_id, draft))
