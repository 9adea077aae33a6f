"""A Half-Pi store snapshot → facts (one per row of every table but the credential tables), the usage
ledger (context_summaries) and tool calls (assistant rows' calls, remote runs).

Rows are read by column name through the Half-Pi verifier's row reader, which refuses the credential tables
(`hand_tokens`, `hand_credentials`, `face_tokens`): their rows never reach the warehouse."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Final

from sessaudit.formats.half_pi.read.rows import SECRET_TABLES, Row, table_rows, tool_calls_of
from sessaudit.warehouse.drafts import (
    ANSWERED,
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
from sessaudit.warehouse.rows import FactRow, LedgerRow, integer, micros_from_ms, micros_from_text, to_json

# table → (session column, id column, type column); tables not listed are read with the generic guess
TABLES: Final[dict[str, tuple[str | None, str | None, str | None]]] = {
    "session_groups": (None, "id", None),
    "sessions": ("id", "id", "mode"),
    "messages": ("session_id", "id", "role"),
    "session_runtime": ("session_id", "session_id", None),
    "context_summaries": ("session_id", "id", "generation_mode"),
    "remote_runs": ("session_id", "id", "status"),
    "remote_run_events": (None, "id", "type"),
    "remote_tasks": ("session_id", "task_id", "status"),
    "approval_audits": ("conversation_id", "approval_id", "status"),
    "tool_display_projections": ("conversation_id", None, "tool"),
    "management_audits": (None, "id", "operation"),
    "security_decisions": ("conversation_id", "id", "action_kind"),
    "lifecycle_outbox": (None, "id", "event_type"),
}
RUN_STATUS: Final = {
    "succeeded": SUCCEEDED,
    "failed": FAILED,
    "rejected": NOT_EXECUTED,
    "timed_out": FAILED,
    "cancelled": FAILED,
    "lost": UNKNOWN,
}
REASON_STATUS: Final = {"denied": NOT_EXECUTED}  # a compact projection's reason_category; others are failures


def store_tables(connection: sqlite3.Connection) -> list[str]:
    """The store's tables in name order, without SQLite's own and the credential tables."""
    names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return [
        str(name)
        for (name,) in names
        if not str(name).startswith("sqlite_") and str(name) not in SECRET_TABLES
    ]


def extract_store(
    connection: sqlite3.Connection,
    source_id: str,
    excluded: set[tuple[str, int]],
    into: Extraction,
) -> None:
    """Every row not named by a corrupting finding (`excluded`: (table, rowid)) of every non-secret table."""
    tables = {name: table_rows(connection, name) for name in store_tables(connection)}
    for name, rows in tables.items():
        kept = [row for row in rows if (name, row["_rowid"]) not in excluded]
        into.complete = into.complete and len(kept) == len(rows)
        tables[name] = kept
    run_sessions = {str(row.get("id")): _session(row, "session_id") for row in tables.get("remote_runs", [])}
    request_runs = _request_runs(tables.get("messages", []))
    groups = {str(row.get("id")): row for row in tables.get("session_groups", [])}
    for row in tables.get("sessions", []):
        group = groups.get(str(row.get("group_id")))
        cwd = group.get("work_dir") if group is not None else None
        into.sessions[str(row.get("id"))] = SessionDetails(cwd=cwd if isinstance(cwd, str) else None)
    for name, rows in tables.items():
        session_column, id_column, type_column = TABLES.get(name, _guess(rows))
        for row in rows:
            rowid = row["_rowid"]
            if name == "remote_run_events":
                session_id = run_sessions.get(str(row.get("run_id")))
            else:
                session_id = _session(row, session_column)
            run_id = _run_id(name, row, request_runs)
            seq = integer(row.get("seq")) if name in ("messages", "remote_run_events") else None
            moment = _moment(row.get("created_at"))
            if run_id is not None:
                into.span(session_id, run_id).add(seq if name == "messages" else None, moment)
            identifier = row.get(id_column) if id_column else f"{row.get('request_id')}:{row.get('ordinal')}"
            into.add_fact(
                FactRow(
                    source_id,
                    session_id,
                    run_id,
                    seq,
                    None,
                    None,
                    rowid,
                    name,
                    _text(row.get(type_column)) if type_column else None,
                    _text(row.get("role")) if name == "messages" else None,
                    None if identifier is None else str(identifier),
                    moment,
                    _payload(row),
                )
            )
    _ledger(tables.get("context_summaries", []), source_id, into)
    _message_calls(tables.get("messages", []), request_runs, into)
    _remote_calls(tables.get("remote_runs", []), into)


def _guess(rows: list[Row]) -> tuple[str | None, str | None, str | None]:
    columns = set(rows[0]) if rows else set()
    session = next((name for name in ("session_id", "conversation_id") if name in columns), None)
    return session, "id" if "id" in columns else None, "type" if "type" in columns else None


def _session(row: Row, column: str | None) -> str | None:
    value = row.get(column) if column else None
    return str(value) if value not in (None, "") else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _moment(value: Any) -> int | None:
    return micros_from_ms(value) if type(value) is int else micros_from_text(value)


def _payload(row: Row) -> str | None:
    values = {key: (value.hex() if isinstance(value, bytes) else value) for key, value in row.items()}
    values.pop("_rowid", None)
    return to_json(values, sort_keys=False)


def _request_runs(messages: list[Row]) -> dict[int, str]:
    """Message rowid → its request's run id (`request:<request_id of the user row>`, as the verifier names
    it): a user row and the rows after it in the session, up to the next user row."""
    runs: dict[int, str] = {}
    current: dict[str, str] = {}
    for row in sorted(messages, key=lambda item: (str(item.get("session_id")), item.get("seq") or 0)):
        session = str(row.get("session_id"))
        if row.get("role") == "user":
            current[session] = "request:" + (str(row.get("request_id") or "") or f"seq-{row.get('seq')}")
        if session in current:
            runs[row["_rowid"]] = current[session]
    return runs


def _run_id(table: str, row: Row, request_runs: dict[int, str]) -> str | None:
    if table == "messages":
        return request_runs.get(row["_rowid"])
    if table == "remote_runs":
        return _text(row.get("id"))
    if table == "remote_run_events":
        return _text(row.get("run_id"))
    if table == "approval_audits":
        return f"approval:{row.get('approval_id')}"
    if table == "remote_tasks":
        return f"task:{row.get('task_id')}"
    return None


def _ledger(summaries: list[Row], source_id: str, into: Extraction) -> None:
    for row in summaries:
        input_, output = int(row.get("input_tokens") or 0), int(row.get("output_tokens") or 0)
        into.add_usage(
            LedgerRow(
                source_id,
                _session(row, "session_id"),
                None,
                None,
                None,
                row["_rowid"],
                _text(row.get("id")),
                _moment(row.get("created_at")),
                "summary",
                _text(row.get("provider_id")),
                _text(row.get("model_id")),
                input_,
                output,
                0,
                0,
                input_,
                None,
            )
        )


def _message_calls(messages: list[Row], request_runs: dict[int, str], into: Extraction) -> None:
    open_calls: dict[str, dict[str, CallDraft]] = {}  # session → unanswered calls of its last assistant row
    for row in sorted(messages, key=lambda item: (str(item.get("session_id")), item.get("seq") or 0)):
        session = _session(row, "session_id")
        pending = open_calls.setdefault(str(session), {})
        seq, moment = integer(row.get("seq")), _moment(row.get("created_at"))
        if row.get("role") == "assistant":
            pending.clear()
            for call in tool_calls_of(row):
                draft = CallDraft(
                    session,
                    request_runs.get(row["_rowid"]),
                    _text(call.get("ID")),
                    _text(call.get("Name")),
                    status=NOT_STARTED,
                    call_seq=seq,
                    requested_at=moment,
                    arguments=arguments_json(call.get("Args")),
                )
                into.calls.append(draft)
                if draft.tool_call_id is not None:
                    pending[draft.tool_call_id] = draft
        elif row.get("role") == "tool":
            answered = pending.pop(str(row.get("tool_id")), None)
            if answered is not None:
                answered.result_seq, answered.finished_at = seq, moment
                answered.status, answered.result_type = _outcome(row.get("compact_projection"))


def _outcome(projection: Any) -> tuple[str, str | None]:
    """A tool row's status from its compact projection (spec §6.5); without one, only that it answered."""
    try:
        value = json.loads(projection) if isinstance(projection, str) and projection else None
    except ValueError:
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("success"), bool):
        return ANSWERED, None
    if value["success"]:
        return SUCCEEDED, "success"
    reason = str(value.get("reason_category") or "failed")
    return REASON_STATUS.get(reason, FAILED), reason


def _remote_calls(runs: list[Row], into: Extraction) -> None:
    for row in runs:
        status = str(row.get("status"))
        finished = integer(row.get("finished_at"))
        into.calls.append(
            CallDraft(
                _session(row, "session_id"),
                _text(row.get("id")),
                _text(row.get("id")),
                _text(row.get("tool")),
                status=RUN_STATUS.get(status, UNKNOWN),
                result_type=status,
                replay_policy="never",
                target=_text(row.get("hand_id")),
                requested_at=_moment(row.get("created_at")),
                finished_at=micros_from_ms(finished) if finished else None,
            )
        )
