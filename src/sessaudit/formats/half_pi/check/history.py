"""Half-Pi history invariants (spec §10 invariants 1–6, 22, 23): the file, messages, runtime, summaries, ids.

`check_history` runs the SQL checks SA601–SA629 of `queries/checks/half-pi/` (those whose tables and columns
the store has), turns the snapshot's integrity_check and foreign_key_check into findings (invariant 1),
and does in Python what SQL cannot: Go JSON, SHA-256 digests, UUIDv7 and credential shapes. Every
violation names its table and rowid; credential secrets never appear in any of them.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Final

from sessaudit.formats.half_pi.check.history_base import (
    CREDENTIAL_TABLES,
    FOREIGN_KEY,
    STORE_INTEGRITY,
    lenient_text,
    printable,
    printable_value,
    shown,
)
from sessaudit.formats.half_pi.check.history_ids import (
    credential_violations,
    group_violations,
    uuid7_violations,
)
from sessaudit.formats.half_pi.check.history_messages import message_violations, summary_violations
from sessaudit.formats.half_pi.check.sql_checks import SqlCheck, Violation, load_checks, run_checks
from sessaudit.formats.half_pi.read.snapshot import ForeignKeyViolation
from sessaudit.formats.half_pi.rules.history import HISTORY_RULES
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration

HISTORY_CODES: Final = frozenset(rule.code for rule in HISTORY_RULES)
_ROW_IN_INDEX: Final = re.compile(r"row (\d+) missing from index (\S+)")
_INDEX: Final = re.compile(r"(?:wrong # of entries in|non-unique entry in) index (\S+)")
_COLUMN: Final = re.compile(r"NULL value in (\w+)\.\w+")


def history_checks() -> tuple[SqlCheck, ...]:
    """The shipped SQL checks of this family (SA601–SA629), in file-name order."""
    return tuple(check for check in load_checks() if check.rule in HISTORY_CODES)


def check_history(
    connection: sqlite3.Connection,
    generation: SchemaGeneration,
    snapshot_integrity: Sequence[str],
    foreign_keys: Sequence[ForeignKeyViolation],
) -> list[Violation]:
    """Every violation of invariants 1–6, 22 and 23 in the store behind `connection` (a private snapshot),
    sorted by rule, table and rowid. Checks needing tables or columns the store lacks are skipped."""
    previous: Callable[[bytes], Any] = connection.text_factory
    # invalid UTF-8 in a TEXT column must not stop the audit, and digests must see the original bytes
    connection.text_factory = lenient_text
    try:
        found = integrity_violations(connection, snapshot_integrity)
        found += [foreign_key_violation(connection, item) for item in foreign_keys]
        columns = {table: frozenset(names) for table, names in generation.columns.items()}
        sql_found, _skipped = run_checks(connection, history_checks(), columns)
        found += sql_found
        found += _python_checks(connection, generation)
    finally:
        connection.text_factory = previous
    cleaned = [
        replace(item, message=printable(item.message), evidence=printable_value(item.evidence))
        for item in found
    ]
    return sorted(cleaned, key=lambda item: (item.rule, item.table or "", item.rowid or 0, item.message))


def _python_checks(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    found: list[Violation] = []
    if generation.has_column("messages", "tool_calls"):
        found += message_violations(connection, generation)
    summary_columns = ("compact_projection", "request_id")
    if "context_summaries" in generation.columns and all(
        generation.has_column("messages", name) for name in summary_columns
    ):
        found += summary_violations(connection)
    if generation.has_column("session_groups", "work_dir"):
        found += group_violations(connection)
    found += uuid7_violations(connection, generation)
    found += credential_violations(connection, generation)
    return found


# invariant 1 --------------------------------------------------------------------------------------------


def integrity_violations(connection: sqlite3.Connection, lines: Sequence[str]) -> list[Violation]:
    """SA601: one violation per line of `PRAGMA integrity_check` other than "ok", located where it names a
    row or an index."""
    if not lines or tuple(lines) == ("ok",):
        return []
    found = []
    for line in lines:
        table, rowid = _integrity_location(connection, line)
        where = f" ({table} row {rowid})" if table is not None and rowid is not None else ""
        message = f"PRAGMA integrity_check reports: {line}{where}"
        found.append(Violation(STORE_INTEGRITY, message, table, rowid, None, {"integrity_check": line}))
    return found


def _integrity_location(connection: sqlite3.Connection, line: str) -> tuple[str | None, int | None]:
    match = _ROW_IN_INDEX.search(line)
    if match is not None:
        return _index_table(connection, match.group(2)), int(match.group(1))
    match = _INDEX.search(line)
    if match is not None:
        return _index_table(connection, match.group(1)), None
    match = _COLUMN.search(line)
    if match is not None:
        return match.group(1), None
    return None, None


def _index_table(connection: sqlite3.Connection, index: str) -> str | None:
    try:
        row = connection.execute(
            "SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ?", (index,)
        ).fetchone()
    except sqlite3.DatabaseError:
        return None
    return str(row[0]) if row is not None else None


def foreign_key_violation(connection: sqlite3.Connection, item: ForeignKeyViolation) -> Violation:
    """SA602: one `PRAGMA foreign_key_check` row, with the child's key value(s) when they can be read."""
    columns = _foreign_key_columns(connection, item)
    values = _child_values(connection, item, [child for child, _ in columns])
    if values is not None and columns:
        keys = ", ".join(f"{child} {shown(value)}" for (child, _), value in zip(columns, values, strict=True))
        parent_keys = ", ".join(parent or "rowid" for _, parent in columns)
        what = f"its {keys} names no {item.parent} row ({item.parent}.{parent_keys})"
    else:
        what = f"it refers to a {item.parent} row that does not exist"
    rowid = f"row {item.rowid}" if item.rowid is not None else "a row"
    message = f"{item.table} {rowid}: {what} (foreign key {item.fkid})"
    session_id = None
    if item.parent == "sessions" and values is not None and len(values) == 1 and isinstance(values[0], str):
        session_id = values[0]
    evidence: dict[str, Any] = {"parent": item.parent, "foreign_key": item.fkid}
    if values is not None:
        evidence["key"] = {child: value for (child, _), value in zip(columns, values, strict=True)}
    return Violation(FOREIGN_KEY, message, item.table, item.rowid, session_id, evidence)


def _foreign_key_columns(connection: sqlite3.Connection, item: ForeignKeyViolation) -> list[tuple[str, str]]:
    try:
        rows = connection.execute(
            'SELECT "from", "to" FROM pragma_foreign_key_list(?) WHERE id = ? ORDER BY seq',
            (item.table, item.fkid),
        ).fetchall()
    except sqlite3.DatabaseError:
        return []
    return [(str(row[0]), str(row[1]) if row[1] is not None else "") for row in rows]


def _child_values(
    connection: sqlite3.Connection, item: ForeignKeyViolation, children: list[str]
) -> list[Any] | None:
    if item.rowid is None or not children or item.table in CREDENTIAL_TABLES:
        return None
    names = ", ".join(_identifier(name) for name in children)
    try:
        row = connection.execute(
            f"SELECT {names} FROM {_identifier(item.table)} WHERE rowid = ?", (item.rowid,)
        ).fetchone()
    except sqlite3.DatabaseError:
        return None
    if row is None:
        return None
    return [lenient_text(value) if isinstance(value, bytes) else value for value in row]


def _identifier(name: str) -> str:
    """A schema name (from SQLite's own catalogue) quoted as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
