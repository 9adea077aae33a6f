"""A Rivumi events.jsonl → facts, the usage ledger and tool calls (spec §2, CONTRACT §4).

The events and the ledger come from the Rivumi verifier's own event reader (`verify_events`), the same
that gives the report its usage, so a model.completed or role_lane.completed counts here exactly when it
counts there. The manifest's running totals (`model_usage`) are never read."""

from __future__ import annotations

import io
from typing import Any

from sessaudit.formats.rivumi.read.envelope import text_or_none
from sessaudit.formats.rivumi.read.eventlog import Event
from sessaudit.formats.rivumi.read.events import verify_events
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
from sessaudit.warehouse.rows import FactRow, LedgerRow, micros_from_text, raw_json, text, to_json

DENIED_TOOL = "action denied by user"
DENIED_VERIFICATION = "approval denied"


def extract_events(
    data: bytes, path: str, cut: int | None, source_id: str, session_id: str | None, into: Extraction
) -> None:
    """The events of lines before `cut` (all when None); `session_id` is the run id of the report."""
    log = verify_events(path, io.BytesIO(data), len(data))
    run_id = session_id
    details = into.sessions.setdefault(session_id, SessionDetails())
    calls: dict[str, CallDraft] = {}  # the latest call of each id
    drafts: list[CallDraft] = []
    for event in log.events:
        if cut is not None and event.line >= cut:
            break
        moment = micros_from_text(event.record.get("created_at"))
        _provider_and_model(event, details)
        _calls(event, moment, session_id, run_id, calls, drafts)
        if run_id is not None:
            into.span(session_id, run_id).add(event.sequence, moment)
        end = data.find(b"\n", event.byte_offset)
        raw = data[event.byte_offset : end if end >= 0 else len(data)]
        into.add_fact(
            FactRow(
                source_id,
                session_id,
                run_id,
                event.sequence,
                event.line,
                event.byte_offset,
                None,
                "event",
                event.event_type,
                _role(event),
                text(event.record.get("event_id")),
                moment,
                _payload(raw),
            )
        )
    into.calls.extend(drafts)
    event_ids = {event.line: text(event.record.get("event_id")) for event in log.events}
    for row in log.usage_rows:
        if cut is not None and row.line >= cut:
            continue
        into.add_usage(
            LedgerRow(
                source_id,
                session_id,
                run_id,
                row.sequence,
                row.line,
                None,
                event_ids.get(row.line),
                micros_from_text(row.created_at),
                "model" if row.lane == "primary" else row.lane,
                row.provider,
                row.model,
                row.input,
                row.output,
                row.cache_read,
                row.cache_write,
                row.input_total,
                row.reasoning,
            )
        )


def _payload(raw: bytes) -> str | None:
    line = raw[:-1] if raw.endswith(b"\r") else raw
    try:
        return raw_json(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return to_json(line.decode("utf-8", "replace"))


def _role(event: Event) -> str | None:
    kind = event.event_type or ""
    if kind.startswith("model."):
        return "assistant" if kind == "model.completed" else None
    if kind.startswith(("tool.", "verification.")):
        return "tool"
    return None


def _provider_and_model(event: Event, details: SessionDetails) -> None:
    data = event.data
    if event.event_type in ("run.created", "session.resumed"):
        details.provider = text_or_none(data.get("provider")) or details.provider
        details.model = text_or_none(data.get("model")) or details.model
    elif event.event_type == "model.fallback":
        details.provider = text_or_none(data.get("to_provider")) or details.provider
        details.model = text_or_none(data.get("to_model")) or details.model


def _calls(
    event: Event,
    moment: int | None,
    session_id: str | None,
    run_id: str | None,
    calls: dict[str, CallDraft],
    drafts: list[CallDraft],
) -> None:
    kind, data = event.event_type, event.data
    if kind is None or not kind.startswith(("tool.", "verification.")) or "batch" in kind:
        return
    verification = kind.startswith("verification.")
    name = text(data.get("name"))
    call_id = f"verification:{name}" if verification else text(data.get("tool_call_id"))
    if call_id is None:
        return
    draft = calls.get(call_id)
    if draft is None or (kind in ("tool.requested", "verification.started") and draft.result_seq is not None):
        draft = calls[call_id] = CallDraft(session_id, run_id, call_id, name, status=NOT_STARTED)
        drafts.append(draft)
        draft.call_seq, draft.requested_at = event.sequence, moment
        if verification:
            draft.effect, draft.arguments = "execute", to_json({"argv": data.get("argv")})
    effect = text(data.get("effect"))
    if effect is not None:
        draft.effect = effect
    if draft.effect is not None:
        draft.replay_policy = "safe" if draft.effect == "read" else "never"  # CONTRACT §4.1
    if kind == "tool.requested":
        draft.arguments = arguments_json(data.get("arguments"))
    elif kind in ("tool.started", "verification.started"):
        draft.status, draft.intent_seq, draft.intent_id = (
            UNKNOWN,
            event.sequence,
            text(event.record.get("event_id")),
        )
    elif kind in ("tool.completed", "verification.completed"):
        _completed(draft, data, event.sequence, moment)


def _completed(draft: CallDraft, data: dict[str, Any], sequence: int | None, moment: int | None) -> None:
    draft.result_seq, draft.finished_at = sequence, moment
    error = data.get("error")
    if draft.intent_seq is None or error in (DENIED_TOOL, DENIED_VERIFICATION):
        draft.status, draft.result_type = NOT_EXECUTED, "denied" if error else "not-started"
    elif data.get("ok") is True:
        draft.status, draft.result_type = SUCCEEDED, "ok"
    else:
        draft.status, draft.result_type = FAILED, "error"
