"""Id and credential shape checks that need Python (spec §4.1, §4.7, §5, §10 invariant 22).

Group ids are SHA-256 prefixes of the work_dir (SA619); session, summary, pending-compaction and compaction
event ids are UUIDv7 (SA620); credentials have a valid label, two distinct 32-hex secrets, canonical scopes
and a parsable creation time (SA624). Credential secrets are read only to judge their shape: no value of a
token or application key ever reaches a message or evidence, not even a part of one. Face scopes are validated
against `schemas/half-pi-face-scopes.v1.schema.json`; their order and exact Go form are checked here.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Final

from sessaudit.formats.half_pi.check.history_base import (
    CREDENTIAL_SHAPE,
    GROUP_ID,
    UUID7,
    UUID7_ID,
    as_text,
    shown,
)
from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.spec.gojson import GoJSONError, decode, marshal
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration
from sessaudit.resources import schema_validator

LABEL: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
SECRET: Final = re.compile(r"[0-9a-f]{32}")
TEXT_TIME: Final = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
SCOPES_SCHEMA: Final = "half-pi-face-scopes.v1.schema.json"
# (table, columns that must be UUIDv7, columns that may instead be '', a filter, how a row is named)
_UUID7_COLUMNS: Final = (
    ("sessions", ("id",), (), "", "session"),
    ("context_summaries", ("id",), ("parent_summary_id", "supersedes_summary_id"), "", "context summary"),
    ("session_runtime", (), ("pending_compact_id",), "", "runtime of session"),
    (
        "lifecycle_outbox",
        ("id", "trace_id", "span_id"),
        (),
        "event_type LIKE 'compact.%'",
        "compaction event",
    ),
)
_OWNER: Final = {
    "sessions": "id",
    "context_summaries": "id",
    "session_runtime": "session_id",
    "lifecycle_outbox": "id",
}
_SESSION: Final = {
    "sessions": "id",
    "context_summaries": "session_id",
    "session_runtime": "session_id",
    "lifecycle_outbox": "subject_id",
}


def group_violations(connection: sqlite3.Connection) -> list[Violation]:
    """SA619: session_groups.id = the first 8 bytes of SHA-256(work_dir) as lowercase hex."""
    found = []
    for rowid, group_id, work_dir in connection.execute(
        "SELECT rowid, id, work_dir FROM session_groups ORDER BY rowid"
    ):
        text = as_text(work_dir)
        if text is None:
            expected = None
        else:
            expected = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        if expected == group_id:
            continue
        message = (
            f"session group {shown(group_id)}: its id is not the first 8 bytes of SHA-256 of its work_dir"
            f" {shown(work_dir, 200)} (that would be {expected})"
        )
        evidence = {"group_id": group_id, "work_dir": text, "expected_id": expected}
        found.append(Violation(GROUP_ID, message, "session_groups", rowid, None, evidence))
    return found


def uuid7_violations(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """SA620: the UUIDv7 ids of spec §5, per row, for the tables and columns this store has."""
    found: list[Violation] = []
    for table, required, optional, condition, noun in _UUID7_COLUMNS:
        columns = [name for name in (*required, *optional) if generation.has_column(table, name)]
        if not columns:
            continue
        owner, session = _OWNER[table], _SESSION[table]
        where = f" WHERE {condition}" if condition else ""
        # names come from the constant table above, never from the store
        sql = f"SELECT rowid, {owner}, {session}, {', '.join(columns)} FROM {table}{where} ORDER BY rowid"
        for values in connection.execute(sql):
            rowid, identifier, session_id = values[:3]
            bad = [
                name
                for name, value in zip(columns, values[3:], strict=True)
                if not (name in optional and value == "") and not _is_uuid7(value)
            ]
            if not bad:
                continue
            listed = ", ".join(
                f"{name} {shown(value)}"
                for name, value in zip(columns, values[3:], strict=True)
                if name in bad
            )
            message = f"{noun} {shown(identifier)}: {listed} {'is' if len(bad) == 1 else 'are'} not canonical"
            message += " lowercase UUIDv7"
            evidence = {"columns": bad, "id": as_text(identifier)}
            found.append(Violation(UUID7_ID, message, table, rowid, as_text(session_id) or None, evidence))
    return found


def _is_uuid7(value: Any) -> bool:
    return isinstance(value, str) and UUID7.fullmatch(value) is not None


def credential_violations(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """SA624: hand_credentials and face_tokens rows whose shape Half-Pi would refuse (§4.7)."""
    found: list[Violation] = []
    for table, noun in (("hand_credentials", "Hand credential"), ("face_tokens", "Face token")):
        needed = ("label", "token", "application_key", "created_at")
        if not all(generation.has_column(table, name) for name in needed):
            continue
        with_scopes = table == "face_tokens" and generation.has_column(table, "scopes")
        scopes = "scopes" if with_scopes else "NULL"
        selected = f"rowid, id, label, token, application_key, created_at, {scopes}"
        sql = f"SELECT {selected} FROM {table} ORDER BY rowid"
        for rowid, identifier, label, token, key, created_at, scope_text in connection.execute(sql):
            problems = list(_credential_problems(identifier, label, token, key, created_at))
            if with_scopes:
                problems.extend(_scope_problems(scope_text))
            if not problems:
                continue
            label_text = as_text(label)
            named = label_text if label_text is not None and LABEL.fullmatch(label_text) else None
            who = f"{noun} {identifier}" + (f" ({named!r})" if named is not None else "")
            message = f"{who}: " + "; ".join(problems)
            evidence = {"credential_id": identifier, "label": named, "problems": problems}
            found.append(Violation(CREDENTIAL_SHAPE, message, table, rowid, None, evidence))
    return found


def _credential_problems(identifier: Any, label: Any, token: Any, key: Any, created_at: Any) -> Iterator[str]:
    """What is wrong with the row, in words that never contain a secret's value."""
    if not isinstance(identifier, int) or identifier <= 0:
        yield "its id is not a positive integer"
    label_text = as_text(label)
    if label_text is None or LABEL.fullmatch(label_text) is None:
        yield "its label does not match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (not shown)"
    token_ok = isinstance(token, str) and SECRET.fullmatch(token) is not None
    key_ok = isinstance(key, str) and SECRET.fullmatch(key) is not None
    if not token_ok:
        yield "its token is not 32 lowercase hex characters"
    if not key_ok:
        yield "its application_key is not 32 lowercase hex characters"
    if token is not None and token == key:
        yield "its token and application_key are the same"
    created = as_text(created_at)
    if created is None or not _is_text_time(created):
        yield "its created_at is not a YYYY-MM-DD HH:MM:SS time"


def _is_text_time(text: str) -> bool:
    if TEXT_TIME.fullmatch(text) is None:
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return False
    return True


def _scope_problems(text: Any) -> Iterator[str]:
    """Face scopes: Go's JSON of a non-empty, deduplicated, sorted list of known scopes. Values are never
    named: a scopes column holding something else could hold anything."""
    scopes_text = as_text(text)
    try:
        scopes = decode(scopes_text) if scopes_text is not None else None
    except GoJSONError:
        scopes = None  # not an array: the schema says so below
    errors = list(schema_validator(SCOPES_SCHEMA).iter_errors(scopes))
    failed = {str(error.validator) for error in errors}
    if "type" in failed or not isinstance(scopes, list):  # the second for mypy: the schema decided
        yield "its scopes are not a JSON array of scope names"
        return
    if "minItems" in failed:
        yield "its scopes are empty"
        return
    unknown = sum(1 for error in errors if error.validator == "enum")
    if unknown:
        yield f"its scopes include {unknown} value(s) that are not one of the 10 face:* scopes"
        return
    # the schema's uniqueItems, and what no schema can say (sorted, Go's bytes): the canonical text
    if marshal(sorted(set(scopes))) != scopes_text:
        yield "its scopes are not Go's sorted, deduplicated JSON array"
