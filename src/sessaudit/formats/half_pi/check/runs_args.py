"""Half-Pi raw tool-call arguments against the audit tables: approval digests recomputed from the calls in
`messages.tool_calls` (spec §6.2, §6.3, invariant 20) and raw argument values leaked into audit tables (21).

Raw values: every string inside a call's parsed Args (at any depth, values not keys) of at least
`MIN_RAW_VALUE_CHARS` characters. Shorter strings (`main.go`, `hand-1`, `-q`) would match by chance in
ids, digests and JSON; a value that is, whole, a name the audit tables record by design (a tool, a Hand
label, an id, a status — any value of their name columns) is not counted either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from sessaudit.formats.half_pi.check.runs_audit import fetch_rows
from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.spec.approval_digests import (
    local_approval_digest_from_raw,
    remote_approval_digest_from_use_hand,
)
from sessaudit.formats.half_pi.spec.gojson import GoJSONError, decode, quote
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration

USE_HAND: Final = "use_hand"


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


MIN_RAW_VALUE_CHARS: Final = 8
# The audit tables of invariant 21: table -> (the column naming a row, its name columns). Name columns hold
# ids, labels, statuses and other vocabulary; every other text column is free text, digests or JSON.
AUDIT_TABLES: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    "approval_audits": (
        "approval_id",
        _names(
            "approval_id conversation_id request_id run_id trace_id span_id parent_span_id group_id"
            " principal_id lifecycle_source node_id tool status decision actor_id actor_label source"
        ),
    ),
    "remote_runs": (
        "id",
        _names(
            "id session_id request_id trace_id span_id parent_span_id group_id principal_id lifecycle_source"
            " node_id hand_id tool approval_source approval_mode status reject_code"
        ),
    ),
    "remote_tasks": ("task_id", _names("task_id session_id hand_id tool detail_mode status")),
    "security_decisions": (
        "id",
        _names(
            "id trace_id span_id request_id conversation_id group_id principal_id node_id action_kind"
            " resource_name target_node decision reason_code rule_id policy_version approval_id run_id"
        ),
    ),
    "lifecycle_outbox": ("id", _names("id event_type trace_id span_id subject_id")),
    "management_audits": (
        "id",
        _names("request_id source actor operation target_type target_id target_label status code"),
    ),
}


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One call of an assistant row's tool_calls: where it is, its name and its raw Args text."""

    message_rowid: int
    seq: int
    created_at: str  # the message's `YYYY-MM-DD HH:MM:SS` (UTC)
    session_id: str
    request_id: str
    call_id: str
    name: str
    args: str


@dataclass(frozen=True, slots=True)
class RawValue:
    """A raw parameter value to look for, and where it came from (described without the value itself)."""

    text: str
    origin: str
    evidence: Mapping[str, Any] = field(default_factory=dict)


def tool_calls(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[ToolCallRecord]:
    """Every call recorded in an assistant row's tool_calls (rows that are not Go JSON arrays are skipped)."""
    request = "request_id" if generation.has_column("messages", "request_id") else "''"
    rows = fetch_rows(
        connection,
        f"SELECT rowid AS row_id, session_id, {request} AS request_id, seq, created_at, tool_calls"
        " FROM messages WHERE role = 'assistant' AND tool_calls NOT IN ('', 'null') ORDER BY rowid",
    )
    calls: list[ToolCallRecord] = []
    for row in rows:
        try:
            parsed = decode(row["tool_calls"])
        except (GoJSONError, TypeError):
            continue
        if not isinstance(parsed, list):
            continue
        for item in parsed:
            if not isinstance(item, dict) or not isinstance(item.get("Args", ""), str):
                continue
            calls.append(
                ToolCallRecord(
                    message_rowid=int(row["row_id"]),
                    seq=int(row["seq"]) if isinstance(row["seq"], int) else 0,
                    created_at=str(row["created_at"]),
                    session_id=str(row["session_id"]),
                    request_id=str(row["request_id"]),
                    call_id=str(item.get("ID", "")),
                    name=str(item.get("Name", "")),
                    args=item.get("Args", ""),
                )
            )
    return calls


# --- invariant 20 ---------------------------------------------------------------------------------------


def check_message_args(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """Invariant 20 in the store: a call of the approved tool in the approval's request has its digest."""
    by_request: dict[tuple[str, str], list[ToolCallRecord]] = {}
    for call in tool_calls(connection, generation):
        if call.request_id:
            by_request.setdefault((call.session_id, call.request_id), []).append(call)
    run_hands = _pairs(connection, generation, "remote_runs", "id", "hand_id")
    active_hands = _pairs(connection, generation, "sessions", "id", "active_hand")
    found: list[Violation] = []
    approvals = fetch_rows(
        connection,
        "SELECT rowid AS row_id, approval_id, conversation_id, request_id, run_id, tool, args_digest,"
        " created_at FROM approval_audits WHERE request_id <> '' ORDER BY rowid",
    )
    for approval in approvals:
        # a batch is saved after its last tool, so the approved call is in a row saved at or after the
        # approval's second; rows of earlier steps of the same request are not candidates
        since = _text_time(approval["created_at"])
        calls = [
            call
            for call in by_request.get((str(approval["conversation_id"]), str(approval["request_id"])), [])
            if since is None or call.created_at >= since
        ]
        run_id, tool = str(approval["run_id"]), str(approval["tool"])
        if run_id:
            hand = run_hands.get(run_id) or active_hands.get(str(approval["conversation_id"]), "")
            candidates = [call for call in calls if call.name == USE_HAND and _inner_tool(call.args) == tool]
            digests = [remote_approval_digest_from_use_hand(call.args, run_id, hand) for call in candidates]
        else:
            candidates = [call for call in calls if call.name == tool]
            digests = [local_approval_digest_from_raw(tool, call.args) for call in candidates]
        if not candidates or approval["args_digest"] in digests:
            continue
        found.append(_args_violation(approval, candidates, digests))
    return found


def _args_violation(
    approval: Mapping[str, Any], candidates: Sequence[ToolCallRecord], digests: Sequence[str | None]
) -> Violation:
    kind = "remote" if approval["run_id"] else "local"
    seqs = sorted({call.seq for call in candidates})
    where = "assistant message seq " + ", ".join(str(seq) for seq in seqs)
    named = (
        f"use_hand call(s) of {approval['tool']}" if kind == "remote" else f"call(s) of {approval['tool']}"
    )
    return Violation(
        rule="SA666",
        message=(
            f"approval {approval['approval_id']} ({kind}, request {approval['request_id']}): none of the"
            f" {len(candidates)} {named} in {where} ({', '.join(call.call_id for call in candidates)})"
            f" hashes to its args_digest {approval['args_digest']}"
        ),
        table="approval_audits",
        rowid=int(approval["row_id"]),
        session_id=str(approval["conversation_id"]) or None,
        evidence={
            "approval_id": approval["approval_id"],
            "run_id": approval["run_id"],
            "request_id": approval["request_id"],
            "stored_digest": approval["args_digest"],
            "calls": [
                {
                    "message_rowid": call.message_rowid,
                    "seq": call.seq,
                    "call_id": call.call_id,
                    "digest": digest,
                }
                for call, digest in zip(candidates, digests, strict=True)
            ],
        },
    )


def _text_time(milliseconds: Any) -> str | None:
    """Unix milliseconds as the messages' `YYYY-MM-DD HH:MM:SS` UTC text (whole seconds), or None."""
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool):
        return None
    try:
        moment = datetime.fromtimestamp(milliseconds // 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _inner_tool(raw: str) -> str | None:
    try:
        parsed = decode(raw)
    except GoJSONError:
        return None
    tool = parsed.get("tool") if isinstance(parsed, dict) else None
    return tool if isinstance(tool, str) else None


# --- invariant 21 ---------------------------------------------------------------------------------------


def raw_values(calls: Iterable[ToolCallRecord]) -> list[RawValue]:
    """The raw string values of at least `MIN_RAW_VALUE_CHARS` characters inside these calls' Args."""
    values: list[RawValue] = []
    for call in calls:
        try:
            parsed = decode(call.args)
        except GoJSONError:
            continue
        for pointer, text in _strings(parsed, ""):
            if len(text) < MIN_RAW_VALUE_CHARS:
                continue
            evidence = {"message_rowid": call.message_rowid, "seq": call.seq, "call_id": call.call_id}
            evidence.update(tool=call.name, pointer=pointer, length=len(text))
            origin = f"argument {pointer or '/'} of {call.name} call {call.call_id} (message seq {call.seq})"
            values.append(RawValue(text, origin, evidence))
    return values


def check_raw_values(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """Invariant 21: no raw argument value from messages.tool_calls inside an audit table's text."""
    return find_raw_values(connection, generation, raw_values(tool_calls(connection, generation)))


def find_raw_values(
    connection: sqlite3.Connection, generation: SchemaGeneration, values: Iterable[RawValue]
) -> list[Violation]:
    """SA667 for these values (from messages, or claimed): one violation per audit row and column holding
    one, naming the first value's origin; values that are whole names of the audit tables are skipped."""
    names = _audit_names(connection, generation)
    index: dict[str, list[RawValue]] = {}
    for value in values:
        if len(value.text) < MIN_RAW_VALUE_CHARS or value.text in names:
            continue
        # as written, and as Go's JSON writes it inside a JSON column (payloads, details): `&` is \u0026
        for form in dict.fromkeys((value.text, quote(value.text)[1:-1])):
            evidence = {"length": len(value.text), **value.evidence}
            index.setdefault(form[:MIN_RAW_VALUE_CHARS], []).append(RawValue(form, value.origin, evidence))
    if not index:
        return []
    found: list[Violation] = []
    for table, (label, _) in AUDIT_TABLES.items():
        columns = generation.columns.get(table, ())
        if label not in columns:
            continue
        quoted = ", ".join(f'"{column}"' for column in columns)
        for row in fetch_rows(connection, f"SELECT rowid AS row_id, {quoted} FROM {table} ORDER BY rowid"):
            for column in columns:
                cell = row[column]
                if not isinstance(cell, str) or len(cell) < MIN_RAW_VALUE_CHARS:
                    continue
                hits = _hits(cell, index)
                if hits:
                    found.append(_raw_violation(table, label, column, row, hits))
    return found


def _hits(cell: str, index: Mapping[str, Sequence[RawValue]]) -> list[RawValue]:
    """The indexed values occurring in `cell`, each once, in order of first occurrence."""
    seen: dict[str, RawValue] = {}
    for start in range(len(cell) - MIN_RAW_VALUE_CHARS + 1):
        bucket = index.get(cell[start : start + MIN_RAW_VALUE_CHARS])
        if bucket is None:
            continue
        for value in bucket:
            if value.origin not in seen and cell.startswith(value.text, start):
                seen[value.origin] = value
    return list(seen.values())


def _raw_violation(
    table: str, label: str, column: str, row: Mapping[str, Any], hits: Sequence[RawValue]
) -> Violation:
    first = hits[0]
    more = f" and {len(hits) - 1} more raw value(s)" if len(hits) > 1 else ""
    session = _session_of(table, row)
    return Violation(
        rule="SA667",
        message=(
            f"{table} {label} {row[label]}: column {column} holds the raw {first.origin}"
            f" ({first.evidence['length']} characters){more}"
        ),
        table=table,
        rowid=int(row["row_id"]),
        session_id=session or None,
        evidence={label: row[label], "column": column, "values": [dict(hit.evidence) for hit in hits]},
    )


def _session_of(table: str, row: Mapping[str, Any]) -> str:
    for column in ("conversation_id", "session_id", "subject_id"):
        value = row.get(column)
        if isinstance(value, str) and value:
            return value
    return ""


def _audit_names(connection: sqlite3.Connection, generation: SchemaGeneration) -> frozenset[str]:
    """Every value of the audit tables' name columns (plus session ids): names recorded by design."""
    names: set[str] = set()
    sources = [(table, columns) for table, (_, columns) in AUDIT_TABLES.items()] + [("sessions", ["id"])]
    for table, columns in sources:
        present = [column for column in columns if generation.has_column(table, column)]
        for column in present:
            for (value,) in connection.execute(f'SELECT DISTINCT "{column}" FROM {table}'):
                if isinstance(value, str):
                    names.add(value)
    return frozenset(names)


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(JSON pointer, string) for every string value inside a parsed JSON value."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            token = key.replace("~", "~0").replace("/", "~1")
            yield from _strings(item, f"{pointer}/{token}")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _strings(item, f"{pointer}/{position}")


def _pairs(
    connection: sqlite3.Connection, generation: SchemaGeneration, table: str, key: str, value: str
) -> dict[str, str]:
    if not (generation.has_column(table, key) and generation.has_column(table, value)):
        return {}
    rows = connection.execute(f'SELECT "{key}", "{value}" FROM {table}').fetchall()
    return {str(row[0]): str(row[1]) for row in rows}
