"""Message and summary checks needing Python: tool calls, compact projections (§6.5), summary digests (§6.6).

One pass over every session's messages in seq order: row shape (SA618), compact projections (SA612, SA613),
tool results without a call (SA615) and calls never answered (SA617). Then each context summary's three
framed digests are recomputed from its text and the messages it covers (SA609). A row's parsed `tool_calls`
is validated against `schemas/half-pi-tool-calls.v1.schema.json`; its exact Go form is checked here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Final

from sessaudit.formats.half_pi.check.history_base import (
    MESSAGE_SHAPE,
    PROJECTION_INVALID,
    PROJECTION_OUTPUT,
    SUMMARY_DIGEST,
    TOOL_CALL_UNANSWERED,
    TOOL_RESULT_UNCALLED,
    as_text,
    shown,
)
from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.spec import compaction_digests
from sessaudit.formats.half_pi.spec.gojson import GoJSONError, Number, Struct, decode, marshal
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration
from sessaudit.resources import schema_validator

ROLES: Final = frozenset({"system", "user", "assistant", "tool"})
NO_CALLS: Final = frozenset({"", "null"})
TOOL_CALLS_SCHEMA: Final = "half-pi-tool-calls.v1.schema.json"
_MESSAGES: Final = (
    "SELECT rowid, id, session_id, seq, role, content, tool_id, tool_calls, {projection} FROM messages"
    " ORDER BY session_id, seq, id"
)
_SUMMARIES: Final = (
    "SELECT rowid, id, session_id, to_seq, summary, summary_digest, source_digest, contract_digest,"
    " projection_version, policy_version, profile, generation_mode, parent_summary_id, generation_key"
    " FROM context_summaries ORDER BY rowid"
)
_SOURCE: Final = (
    "SELECT seq, role, content, request_id, tool_id, tool_calls, compact_projection FROM messages"
    " WHERE session_id = ? AND seq >= 1 AND seq <= ? ORDER BY seq, id"
)


@dataclass(slots=True)
class _Row:
    rowid: int
    id: Any
    session_id: str
    seq: Any
    role: Any
    content: Any
    tool_id: Any
    tool_calls: Any
    projection: Any

    @property
    def where(self) -> str:
        return f"session {self.session_id}: message seq {self.seq} (id {self.id}, {shown(self.role)})"


@dataclass(slots=True)
class _Session:
    called: set[str] = field(default_factory=set)
    awaiting: dict[int, tuple[_Row, list[str]]] = field(default_factory=dict)


def parse_tool_calls(text: str) -> tuple[list[tuple[str, str, str]], str | None]:
    """The (ID, Name, Args) of a non-empty, non-null `tool_calls` and why it is not what the agent writes
    (None when it is). Calls are still returned when only the form differs (spacing, key order)."""
    try:
        value = decode(text)
    except GoJSONError:
        return [], "tool_calls is not JSON"
    if value is None:  # the schema's null is the literal text `null` only, which never comes here
        return [], "tool_calls is neither null nor a JSON array"
    problem = _tool_calls_problem(value)
    if problem is not None:
        return [], problem
    calls = [(item["ID"], item["Name"], item["Args"]) for item in value]
    canonical = marshal([Struct((("ID", i), ("Name", n), ("Args", a))) for i, n, a in calls])
    if canonical != text:
        return (
            calls,
            "tool_calls is not in the form Half-Pi's agent writes (Go JSON, keys ID, Name, Args in order)",
        )
    return calls, None


def _tool_calls_problem(value: Any) -> str | None:
    """The schema's verdict on parsed tool calls, in words: the first call that breaks it, by position."""
    errors = list(schema_validator(TOOL_CALLS_SCHEMA).iter_errors(value))
    if not errors:
        return None
    if any(not error.path for error in errors):
        return "tool_calls is neither null nor a JSON array"
    first = min(int(error.path[0]) for error in errors)
    # an error on the call itself (not an object, a key missing or extra) before one on a value
    if any(len(error.path) == 1 for error in errors if error.path[0] == first):
        return "a tool call is not an object with exactly the keys ID, Name and Args"
    return "a tool call's ID, Name or Args is not a string"


def message_violations(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """SA612, SA613, SA615, SA617 and SA618 over every session's messages."""
    has_projection = generation.has_column("messages", "compact_projection")
    sql = _MESSAGES.format(projection="compact_projection" if has_projection else "''")
    found: list[Violation] = []
    rows = (_Row(*values) for values in connection.execute(sql))
    for _session_id, session_rows in groupby(rows, key=lambda row: row.session_id):
        found.extend(_session_violations(session_rows, has_projection))
    return found


def _session_violations(rows: Iterator[_Row], has_projection: bool) -> Iterator[Violation]:
    state = _Session()
    for row in rows:
        yield from _shape(row, state)
        if has_projection:
            yield from _projection(row)
        if row.role == "tool":
            yield from _answer(row, state)
    for row, unanswered in state.awaiting.values():
        if unanswered:
            names = ", ".join(shown(call) for call in unanswered)
            yield _violation(
                TOOL_CALL_UNANSWERED,
                row,
                f"{row.where}: tool call(s) {names} are never answered by a later tool row",
                {"unanswered_call_ids": unanswered},
            )


def _shape(row: _Row, state: _Session) -> Iterator[Violation]:
    problems: list[str] = []
    if row.role not in ROLES:
        problems.append(f"role {shown(row.role)} is not system, user, assistant or tool")
    calls_text = as_text(row.tool_calls)
    if calls_text is None:
        problems.append("tool_calls is not text")
    elif calls_text not in NO_CALLS:
        calls, problem = parse_tool_calls(calls_text)
        if problem is not None:
            problems.append(problem)
        if row.role != "assistant":
            problems.append("tool calls on a row that is not an assistant row")
        elif calls:
            ids = [call_id for call_id, _, _ in calls]
            state.called.update(ids)
            state.awaiting[row.rowid] = (row, ids)
    tool_id = as_text(row.tool_id)
    if row.role != "tool" and tool_id != "":
        problems.append("tool_id is set on a row that is not a tool row")
    if problems:
        yield _violation(MESSAGE_SHAPE, row, f"{row.where}: " + "; ".join(problems), {"problems": problems})


def _answer(row: _Row, state: _Session) -> Iterator[Violation]:
    tool_id = as_text(row.tool_id) or ""
    if tool_id not in state.called:
        detail = "has no tool_id" if not tool_id else f"answers tool call {shown(tool_id)}"
        yield _violation(
            TOOL_RESULT_UNCALLED,
            row,
            f"{row.where}: the tool row {detail}, which no earlier assistant row of the session called",
            {"tool_id": tool_id},
        )
        return
    for _, waiting in state.awaiting.values():
        while tool_id in waiting:
            waiting.remove(tool_id)


def _projection(row: _Row) -> Iterator[Violation]:
    text = as_text(row.projection)
    if text == "":
        return
    if text is None:
        yield _violation(PROJECTION_INVALID, row, f"{row.where}: compact_projection is not text", {})
        return
    if row.role != "tool":
        message = f"{row.where}: a compact_projection is stored on a row that is not a tool row"
        yield _violation(PROJECTION_INVALID, row, message, {"bytes": len(text.encode("utf-8", "replace"))})
        return
    problem = compaction_digests.tool_projection_problem(text)
    if problem is not None:
        yield _violation(PROJECTION_INVALID, row, f"{row.where}: compact_projection: {problem}", {})
        return
    projection = decode(text, use_number=True)
    content = as_text(row.content)
    expected_bytes, expected_digest = compaction_digests.output_fields(content if content is not None else "")
    stored_bytes = projection.get("output_bytes")
    stored_digest = projection.get("output_digest")
    differs: list[str] = []
    if not (isinstance(stored_bytes, Number) and stored_bytes.literal == str(expected_bytes)):
        differs.append("output_bytes")
    if stored_digest != expected_digest:
        differs.append("output_digest")
    if differs:
        evidence = {
            "expected": {"output_bytes": expected_bytes, "output_digest": expected_digest},
            "stored": {
                "output_bytes": stored_bytes.literal if isinstance(stored_bytes, Number) else stored_bytes,
                "output_digest": stored_digest,
            },
        }
        message = (
            f"{row.where}: the compact projection's {' and '.join(differs)} do not match the tool output"
            f" in content ({expected_bytes} bytes)"
        )
        yield _violation(PROJECTION_OUTPUT, row, message, evidence)


def _violation(rule: str, row: _Row, message: str, evidence: dict[str, Any]) -> Violation:
    evidence = {"message_id": row.id, "seq": row.seq, **evidence}
    return Violation(rule, message, "messages", row.rowid, row.session_id, evidence)


# §6.6 summary digests ------------------------------------------------------------------------------


def summary_violations(connection: sqlite3.Connection) -> list[Violation]:
    """SA609: every context summary's summary, source and contract digests, recomputed."""
    found: list[Violation] = []
    for values in connection.execute(_SUMMARIES).fetchall():
        (rowid, summary_id, session_id, to_seq, summary, summary_digest, source_digest, contract_digest) = (
            values[:8]
        )
        contract_fields = [as_text(value) for value in values[8:]]
        stored = {
            "summary_digest": summary_digest,
            "source_digest": source_digest,
            "contract_digest": contract_digest,
        }
        expected: dict[str, str | None] = {}
        problems: list[str] = []
        text = summary if isinstance(summary, str | bytes) else None
        expected["summary_digest"] = compaction_digests.summary_digest(text) if text is not None else None
        if expected["summary_digest"] != summary_digest:
            problems.append("summary_digest does not match the summary text")
        source, reason = _source_digest(connection, session_id, to_seq)
        expected["source_digest"] = source
        if reason is not None:
            problems.append(f"source_digest cannot be recomputed: {reason}")
        elif source != source_digest:
            problems.append(
                f"source_digest does not match messages 1..{to_seq} (a covered message was changed,"
                " added or removed after compaction)"
            )
        expected["contract_digest"] = _contract(as_text(source_digest), contract_fields)
        if expected["contract_digest"] != contract_digest:
            problems.append("contract_digest does not match its source digest, versions, mode and parent")
        if not problems:
            continue
        evidence = {
            "summary_id": summary_id,
            "to_seq": to_seq,
            "digests": {
                name: {"stored": _cut(stored[name]), "expected": expected[name]}
                for name in stored
                if expected[name] != stored[name]
            },
        }
        message = f"context summary {summary_id} of session {session_id}: " + "; ".join(problems)
        found.append(Violation(SUMMARY_DIGEST, message, "context_summaries", rowid, session_id, evidence))
    return found


def _source_digest(
    connection: sqlite3.Connection, session_id: Any, to_seq: Any
) -> tuple[str | None, str | None]:
    """(the recomputed source digest, None) or (None, why it cannot be recomputed)."""
    if not isinstance(to_seq, int) or isinstance(to_seq, bool) or to_seq < 1:
        return None, f"to_seq {shown(to_seq)} is not a positive integer"
    if not isinstance(session_id, str) or not session_id:
        return None, "the summary has no session id"
    names = ("seq", *compaction_digests.SOURCE_MESSAGE_FIELDS)
    messages = [
        dict(zip(names, row, strict=True)) for row in connection.execute(_SOURCE, (session_id, to_seq))
    ]
    if len(messages) != to_seq:
        return None, f"the session holds {len(messages)} messages with seq 1..{to_seq}, not {to_seq}"
    if any(not isinstance(message[name], str | bytes) for message in messages for name in names[1:]):
        return None, "a covered message has a text column that is NULL or not text"
    try:
        return compaction_digests.source_digest(session_id, to_seq, messages), None
    except ValueError as error:
        return None, str(error)


def _contract(source: str | None, fields: Sequence[str | None]) -> str | None:
    if source is None or any(value is None for value in fields):
        return None
    projection, policy, profile, mode, parent, key = (value or "" for value in fields)
    return compaction_digests.contract_digest(source, projection, policy, profile, mode, parent, key)


def _cut(value: Any) -> Any:
    text = as_text(value)
    return text[:100] if text is not None else value
