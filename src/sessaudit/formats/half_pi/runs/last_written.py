"""When each Half-Pi run last wrote (`Run.last_written_at`), from its own rows (spec §2 timestamps).

Epoch-millisecond columns (0: not set) and, for a request, its messages' `created_at` text (SQLite
`datetime('now')`, UTC to the second) and its security decisions. Hand-clock columns (accepted_at,
started_at, finished_at of tasks) count as written: they are what the rows say."""

from __future__ import annotations

import re
from typing import Final

from sessaudit.formats.half_pi.read.rows import Row, StoreRows
from sessaudit.formats.half_pi.runs.recovery import OpenRun, Recovered
from sessaudit.times import iso_from_epoch_ms, iso_from_text, latest

RUN_COLUMNS: Final = ("created_at", "sent_at", "accepted_at", "finished_at")
TASK_COLUMNS: Final = ("created_at", "started_at", "finished_at", "updated_at")
APPROVAL_COLUMNS: Final = ("created_at", "resolved_at")
_SQLITE_UTC: Final = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def stamp_times(recovered: Recovered, rows: StoreRows) -> None:
    """Give every run of `recovered` its last_written_at (None where its rows hold no time)."""
    remote = {str(row.get("id")): row for row in rows.runs}
    tasks = {f"task:{row.get('task_id')}": row for row in rows.tasks}
    approvals = {f"approval:{row.get('approval_id')}": row for row in rows.approvals}
    for session_id, items in recovered.runs.items():
        requests = {f"request:{item.request_id}": item.rows for item in rows.requests(session_id or "")}
        for item in items:
            run = item.run
            if run.kind == "remote-run" and run.run_id in remote:
                events = rows.run_events.get(run.run_id, [])
                moment = latest(
                    _epoch(remote[run.run_id], RUN_COLUMNS), *(_epoch(e, ("created_at",)) for e in events)
                )
            elif run.kind == "task" and run.run_id in tasks:
                moment = _epoch(tasks[run.run_id], TASK_COLUMNS)
            elif run.kind == "approval" and run.run_id in approvals:
                moment = _epoch(approvals[run.run_id], APPROVAL_COLUMNS)
            elif run.kind == "request" and run.run_id in requests:
                moment = _request(run.run_id.removeprefix("request:"), requests[run.run_id], rows)
            else:
                moment = None
            _set(item, moment)


def _set(item: OpenRun, moment: str | None) -> None:
    item.run = item.run.model_copy(update={"last_written_at": moment})


def _epoch(row: Row, columns: tuple[str, ...]) -> str | None:
    """The latest of the row's epoch-ms columns that are set (> 0)."""
    return latest(*(iso_from_epoch_ms(row.get(column)) for column in columns if _set_ms(row.get(column))))


def _set_ms(value: object) -> bool:
    return type(value) is int and value > 0


def _request(request_id: str, messages: list[Row], rows: StoreRows) -> str | None:
    texts = [_sqlite_utc(row.get("created_at")) for row in messages]
    decisions = [
        _epoch(row, ("created_at",)) for row in rows.decisions if row.get("request_id") == request_id
    ]
    return latest(*texts, *decisions)


def _sqlite_utc(value: object) -> str | None:
    """`2026-07-30 12:00:00` (UTC, SQLite's datetime('now')) as ISO-8601 UTC with ms."""
    if not isinstance(value, str) or _SQLITE_UTC.fullmatch(value) is None:
        return None
    return iso_from_text(value.replace(" ", "T") + "Z")
