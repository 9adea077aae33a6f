"""Half-Pi security decisions and their outbox rows in Python: the payload rebuilt byte for byte (§6.7,
invariant 17), payloads that are JSON objects (18), details_redacted and risk_labels shapes (19)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final

from sessaudit.formats.half_pi.digests import security_decision_payload
from sessaudit.formats.half_pi.gojson import GoJSONError, Number, decode
from sessaudit.formats.half_pi.sqlchecks import Violation

# sanitizeAuditDetails keeps these keys, with string, integer or boolean values only (spec §4.14).
DETAIL_KEYS: Final = frozenset(
    {
        "provider_id",
        "model_id",
        "profile",
        "duration_ms",
        "failure_code",
        "execution_outcome",
        "delivery_outcome",
    }
)
MAX_RISK_LABELS: Final = 64
MAX_RISK_LABEL_BYTES: Final = 128
MAX_PAYLOAD_BYTES: Final = 64 << 10


def fetch_rows(
    connection: sqlite3.Connection, sql: str, parameters: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """The rows of one query as dicts keyed by column name, whatever the connection's row factory."""
    cursor = connection.execute(sql, tuple(parameters))
    names = [description[0] for description in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def check_decisions(connection: sqlite3.Connection) -> list[Violation]:
    """Invariants 17 (payload rebuilt byte for byte) and 19 (details, risk labels) for every decision."""
    found: list[Violation] = []
    rows = fetch_rows(
        connection,
        "SELECT decision.rowid AS row_id, decision.*, outbox.rowid AS outbox_row_id,"
        " outbox.payload_redacted AS outbox_payload FROM security_decisions AS decision"
        " LEFT JOIN lifecycle_outbox AS outbox ON outbox.id = decision.id"
        " WHERE decision.trace_id <> '' ORDER BY decision.rowid",
    )
    for row in rows:
        details_problem = details_problem_of(row["details_redacted"])
        if details_problem is not None:
            found.append(_decision_violation("SA664", row, f"details_redacted {details_problem}"))
        labels_problem = risk_labels_problem_of(row["risk_labels"])
        if labels_problem is not None:
            found.append(_decision_violation("SA665", row, f"risk_labels {labels_problem}"))
        if row["outbox_row_id"] is not None and details_problem is None and labels_problem is None:
            mismatch = _payload_mismatch(row)
            if mismatch is not None:
                found.append(mismatch)
    return found


def check_outbox_objects(connection: sqlite3.Connection) -> list[Violation]:
    """Invariant 18 (H): every outbox payload is a JSON object of at most 64 KiB, starting with `{`."""
    found: list[Violation] = []
    rows = fetch_rows(
        connection,
        "SELECT rowid AS row_id, id, event_type, subject_id, payload_redacted FROM lifecycle_outbox"
        " ORDER BY rowid",
    )
    for row in rows:
        problem = payload_problem_of(row["payload_redacted"])
        if problem is None:
            continue
        found.append(
            Violation(
                rule="SA661",
                message=f"outbox row {row['id']} ({row['event_type']}): payload_redacted {problem}",
                table="lifecycle_outbox",
                rowid=int(row["row_id"]),
                session_id=_text(row["subject_id"]) or None,
                evidence={"id": row["id"], "event_type": row["event_type"]},
            )
        )
    return found


def payload_problem_of(value: Any) -> str | None:
    """Why an outbox payload is not what the store accepts (a bounded JSON object), or None."""
    if not isinstance(value, str | bytes):
        return f"is {_kind(value)}, not JSON text"
    data = utf8_bytes(value)
    if not data:
        return "is empty"
    if len(data) > MAX_PAYLOAD_BYTES:
        return f"is {len(data)} bytes, over the 64 KiB limit"
    if not data.startswith(b"{"):
        return "does not start with `{`"
    try:
        parsed = decode(data, use_number=True)
    except GoJSONError as error:
        return f"is not JSON ({error.message})"
    if not isinstance(parsed, dict):
        return "is not a JSON object"
    return None


def details_problem_of(value: Any) -> str | None:
    """Why details_redacted is not an object of the allowed keys with scalar values, or None."""
    parsed, problem = _parse(value)
    if problem is not None:
        return problem
    if not isinstance(parsed, dict):
        return f"is {_kind(parsed)}, not a JSON object"
    extra = sorted(set(parsed) - DETAIL_KEYS)
    if extra:
        return f"has keys outside the seven allowed: {', '.join(extra)}"
    for key in sorted(parsed):
        item = parsed[key]
        if isinstance(item, str | bool):
            continue
        if isinstance(item, Number) and not any(mark in item.literal for mark in ".eE"):
            continue
        return f"key {key} holds {_kind(item)}, not a string, integer or boolean"
    return None


def risk_labels_problem_of(value: Any) -> str | None:
    """Why risk_labels is not an array of at most 64 strings of 1..128 bytes, or None."""
    parsed, problem = _parse(value)
    if problem is not None:
        return problem
    if not isinstance(parsed, list):
        return f"is {_kind(parsed)}, not a JSON array"
    if len(parsed) > MAX_RISK_LABELS:
        return f"holds {len(parsed)} labels, over the limit of {MAX_RISK_LABELS}"
    for index, label in enumerate(parsed):
        if not isinstance(label, str):
            return f"item {index} is {_kind(label)}, not a string"
        size = len(utf8_bytes(label))
        if not 1 <= size <= MAX_RISK_LABEL_BYTES:
            return f"item {index} is {size} bytes, not 1..{MAX_RISK_LABEL_BYTES}"
    return None


def _payload_mismatch(row: Mapping[str, Any]) -> Violation | None:
    stored = row["outbox_payload"]
    if payload_problem_of(stored) is not None:
        return None  # SA661's finding: not an object at all
    try:
        rebuilt = security_decision_payload(row)
    except (GoJSONError, ValueError, TypeError):
        return None  # a column the rebuild cannot read is SA664/SA665's finding
    expected, found = utf8_bytes(rebuilt), utf8_bytes(stored)
    if expected == found:
        return None
    differing = _differing_keys(rebuilt, stored)
    what = f"differs in {', '.join(differing)}" if differing else "has the same values written differently"
    return Violation(
        rule="SA659",
        message=(
            f"outbox payload of security decision {row['id']} ({row['action_kind']} {row['resource_name']}:"
            f" {row['decision']}) is not the payload rebuilt from the decision row: it {what}"
        ),
        table="lifecycle_outbox",
        rowid=int(row["outbox_row_id"]),
        session_id=_text(row["conversation_id"]) or None,
        evidence={
            "id": row["id"],
            "differing_keys": differing,
            "expected_sha256": hashlib.sha256(expected).hexdigest(),
            "found_sha256": hashlib.sha256(found).hexdigest(),
            "expected_bytes": len(expected),
            "found_bytes": len(found),
        },
    )


def _differing_keys(rebuilt: str, stored: Any) -> list[str]:
    """The top-level payload keys whose values differ, are missing or are extra (names only)."""
    expected = decode(rebuilt, use_number=True)
    found = decode(utf8_bytes(stored), use_number=True)
    keys = set(expected) | set(found)
    return sorted(
        key for key in keys if key not in expected or key not in found or expected[key] != found[key]
    )


def _decision_violation(rule: str, row: Mapping[str, Any], problem: str) -> Violation:
    return Violation(
        rule=rule,
        message=(
            f"security decision {row['id']} ({row['action_kind']} {row['resource_name']}: {row['decision']}):"
            f" {problem}"
        ),
        table="security_decisions",
        rowid=int(row["row_id"]),
        session_id=_text(row["conversation_id"]) or None,
        evidence={"id": row["id"], "action_kind": row["action_kind"]},
    )


def _parse(value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, str | bytes):
        return None, f"is {_kind(value)}, not JSON text"
    try:
        return decode(value, use_number=True), None
    except GoJSONError as error:
        return None, f"is not JSON ({error.message})"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Number | int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes):
        return "a blob"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def utf8_bytes(value: str | bytes) -> bytes:
    """UTF-8 bytes; a lone surrogate from `surrogateescape` stands for its original byte."""
    if isinstance(value, bytes):
        return value
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
