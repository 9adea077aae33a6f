"""Rows of a Half-Pi snapshot by column name (never by position: column order depends on history, §3).

Credential tables are never read here: their rows hold live secrets (spec §4.7)."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Final

Row = dict[str, Any]
SECRET_TABLES: Final = frozenset({"hand_tokens", "hand_credentials", "face_tokens"})


def _lenient_text(data: bytes) -> str:
    """TEXT as UTF-8, invalid bytes as U+FFFD: a row with bad bytes is still read (the history checks
    report the bytes themselves)."""
    return data.decode("utf-8", "replace")


def table_rows(connection: sqlite3.Connection, table: str, order: str = "rowid") -> list[Row]:
    """Every row of `table` with its rowid as `_rowid` ([] when the table does not exist)."""
    if table in SECRET_TABLES:
        raise ValueError(f"{table} holds secrets and is never read")
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if exists is None:
        return []
    previous = connection.text_factory
    connection.text_factory = _lenient_text
    try:
        cursor = connection.execute(f'SELECT rowid AS _rowid, * FROM "{table}" ORDER BY {order}')
        names = [description[0] for description in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in cursor]
    finally:
        connection.text_factory = previous


def count_rows(connection: sqlite3.Connection, table: str) -> int | None:
    """How many rows a table has (None when it does not exist); safe for the secret tables."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    if exists is None:
        return None
    (count,) = connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()
    return int(count)


def tool_calls_of(row: Row) -> list[dict[str, Any]]:
    """An assistant row's tool calls (`[{ID, Name, Args}]`); [] for '', `null` or anything unparsable."""
    text = row.get("tool_calls") or ""
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


@dataclass(slots=True)
class Request:
    """The messages of one chat request: a user row and what followed it until the next user row."""

    request_id: str  # the user row's request_id, or `seq-<n>` when the store has none
    rows: list[Row] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        """A request ends with an assistant row without tool calls (spec §4.3's save discipline)."""
        last = self.rows[-1]
        return last.get("role") == "assistant" and not tool_calls_of(last)


@dataclass(slots=True)
class StoreRows:
    """The rows recovery and seeds need, read once from the snapshot."""

    sessions: list[Row]
    messages: dict[str, list[Row]]  # by session id, in seq order
    runs: list[Row]
    run_events: dict[str, list[Row]]  # by run id, in seq order
    tasks: list[Row]
    approvals: list[Row]
    decisions: list[Row]
    summaries: dict[str, list[Row]]  # by session id
    has_decisions_table: bool

    def requests(self, session_id: str) -> list[Request]:
        """The session's requests in order (rows before the first user row form no request)."""
        found: list[Request] = []
        for row in self.messages.get(session_id, []):
            if row.get("role") == "user":
                request_id = str(row.get("request_id") or "") or f"seq-{row.get('seq')}"
                found.append(Request(request_id))
            if found:
                found[-1].rows.append(row)
        return found


def read_store(connection: sqlite3.Connection) -> StoreRows:
    messages: dict[str, list[Row]] = defaultdict(list)
    for row in table_rows(connection, "messages", "session_id, seq, id"):
        messages[str(row.get("session_id"))].append(row)
    events: dict[str, list[Row]] = defaultdict(list)
    for row in table_rows(connection, "remote_run_events", "run_id, seq, id"):
        events[str(row.get("run_id"))].append(row)
    summaries: dict[str, list[Row]] = defaultdict(list)
    for row in table_rows(connection, "context_summaries", "session_id, created_at, rowid"):
        summaries[str(row.get("session_id"))].append(row)
    decisions_exist = count_rows(connection, "security_decisions") is not None
    return StoreRows(
        sessions=table_rows(connection, "sessions", "created_at, rowid"),
        messages=dict(messages),
        runs=table_rows(connection, "remote_runs", "created_at, rowid"),
        run_events=dict(events),
        tasks=table_rows(connection, "remote_tasks", "created_at, rowid"),
        approvals=table_rows(connection, "approval_audits", "created_at, rowid"),
        decisions=table_rows(connection, "security_decisions", "created_at, rowid")
        if decisions_exist
        else [],
        summaries=dict(summaries),
        has_decisions_table=decisions_exist,
    )
