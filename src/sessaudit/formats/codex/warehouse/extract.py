"""A Codex rollout's verified lines → facts (one per line), the exact ledger, the session's own tool calls.

One file, one session: `seq` is the line number. Every verified line is a fact of the session, the lines
copied from a parent (a fork's or a sub-agent's copy, check/copies.py) too; but their token_counts and
calls belong to the parent and are not loaded here. The usage rows are the ledger the report's usage is
summed from (usage/ledger.py over the same records and segments), so the two agree. The session's own
lines carry the id of their turn (recover/turns.py), the runs of the report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sessaudit.formats.codex.check.copies import Segments
from sessaudit.formats.codex.read.lines import Record
from sessaudit.formats.codex.read.turns import run_id_of, turns_of
from sessaudit.formats.codex.spec.records import CALLS, OUTPUTS
from sessaudit.formats.codex.spec.tools import replay_policy, tool_name
from sessaudit.formats.codex.usage.ledger import build_ledger, provider_of
from sessaudit.formats.codex.warehouse.lines import RawLine
from sessaudit.formats.codex.warehouse.tools import STATUS, from_event, outcome
from sessaudit.warehouse.drafts import (
    UNKNOWN,
    CallDraft,
    Extraction,
    SessionDetails,
    arguments_json,
    call_row,
)
from sessaudit.warehouse.rows import FactRow, LedgerRow, micros_from_text, raw_json_bytes, text, to_json

ASSISTANT_ITEMS = frozenset({*CALLS, "reasoning", "web_search_call", "image_generation_call"})
END_EVENTS = frozenset({"exec_command_end", "patch_apply_end", "mcp_tool_call_end"})


@dataclass(frozen=True, slots=True)
class LoadedRollout:
    """A rollout's verified lines (before its cut) and its segments (its own session_meta, its copy)."""

    path: str
    lines: list[RawLine]
    segments: Segments

    @property
    def records(self) -> list[Record]:
        return [line.record for line in self.lines if line.record is not None]


def _payload(raw: bytes) -> str | bytes | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return to_json(raw.decode("utf-8", "replace"))
    return raw_json_bytes(raw)


def _role(record: Record) -> str | None:
    """A message's role; `tool` for a call's output; `assistant` for the model's calls and reasoning."""
    if record.kind != "response_item":
        return None
    item = record.item
    if item == "message":
        return text(record.payload.get("role"))
    if item in OUTPUTS:
        return "tool"
    return "assistant" if item in ASSISTANT_ITEMS else None


def _turns(records: list[Record], segments: Segments) -> dict[int, str]:
    """The run id of each own line's turn, by line number (as recover/turns.py numbers the runs)."""
    found: dict[int, str] = {}
    for turn in turns_of([record for _, record in segments.own(records)]):
        run_id = run_id_of(turn)
        for record in turn.records:
            found[record.line] = run_id
    return found


def _model(records: list[Record], segments: Segments) -> str | None:
    for _, record in segments.own(records):
        model = record.payload.get("model") if record.kind == "turn_context" else None
        if isinstance(model, str) and model:
            return model
    return None


def extract_rollout(loaded: LoadedRollout, source_id: str, session_id: str | None, into: Extraction) -> None:
    """Add the rows of the rollout `loaded` (the session `session_id`) to `into`."""
    records = loaded.records
    segments = loaded.segments
    turns = _turns(records, segments)
    details = into.sessions.setdefault(session_id, SessionDetails())
    if segments.meta is not None:
        meta = records[segments.meta]
        details.cwd = details.cwd or text(meta.payload.get("cwd"))
        details.header = details.header or to_json(meta.value, sort_keys=False)
    details.provider = details.provider or provider_of(records, segments)
    for line in loaded.lines:
        record = line.record
        moment = micros_from_text(record.timestamp) if record is not None else None
        run_id = turns.get(line.number)
        into.add_fact(
            FactRow(
                source_id,
                session_id,
                run_id,
                line.number,
                line.number,
                line.offset,
                None,
                record.kind if record is not None else None,
                record.item if record is not None else None,
                _role(record) if record is not None else None,
                text(record.payload.get("id")) if record is not None else None,
                moment,
                _payload(line.raw),
            )
        )
        if run_id is not None:
            into.span(session_id, run_id).add(line.number, moment)
    ledger = build_ledger(records, segments)
    for entry in ledger.entries:
        details.model = details.model or entry.model
        into.add_usage(
            LedgerRow(
                source_id,
                session_id,
                entry.turn,
                entry.line,
                entry.line,
                None,
                None,
                micros_from_text(entry.timestamp),
                "model",
                entry.provider,
                entry.model,
                entry.input,
                entry.output,
                entry.cache_read,
                0,  # Codex records no cache writes (spec §5)
                entry.input + entry.cache_read,
                entry.reasoning,
                None,
                None,
                None,
            )
        )
    details.model = details.model or _model(records, segments)
    _tool_calls(records, segments, turns, source_id, session_id, into)


def _tool_calls(
    records: list[Record],
    segments: Segments,
    turns: Mapping[int, str],
    source_id: str,
    session_id: str | None,
    into: Extraction,
) -> None:
    """One call per call_id of the session's own lines (the first call with it, SA808), answered by the
    first later output naming it; an end event of the call says how it ended where the CLI writes one."""
    drafts: dict[str, CallDraft] = {}
    names: dict[str, str] = {}
    events: dict[str, str] = {}
    for _, record in segments.own(records):
        call_id = record.call_id
        if call_id is None:
            continue
        seq, moment = record.line, micros_from_text(record.timestamp)
        if record.is_item(*CALLS):
            if call_id in drafts:
                continue
            name = names[call_id] = tool_name(record.payload)
            draft = drafts[call_id] = CallDraft(
                session_id, turns.get(record.line), call_id, name, status=UNKNOWN
            )
            draft.call_seq, draft.requested_at = seq, moment
            draft.replay_policy = replay_policy(name)
            draft.arguments = _arguments(record.payload)
        elif record.is_event(*END_EVENTS) and call_id in drafts:
            said = from_event(record.payload)
            if said is not None:
                events.setdefault(call_id, said)
        elif record.is_item(*OUTPUTS):
            found = drafts.get(call_id)
            if found is None or found.result_seq is not None:
                continue
            said = outcome(names[call_id], record.payload, events.get(call_id))
            found.status, found.result_type = STATUS[said], said
            found.result_seq, found.finished_at = seq, moment
    for draft in drafts.values():
        if draft.result_seq is None:
            into.calls.append(draft)  # open: the report may name it as a pending effect
        else:
            into.add_call(call_row(source_id, draft))


def _arguments(payload: Mapping[str, Any]) -> str | None:
    """As the model gave them (recover/turns.py): a function call's arguments string (JSON when it is),
    a custom call's input text, a local shell call's action."""
    kind = payload.get("type")
    if kind == "custom_tool_call":
        return arguments_json(payload.get("input"))
    if kind == "local_shell_call":
        return arguments_json(payload.get("action"))
    return arguments_json(payload.get("arguments"))
