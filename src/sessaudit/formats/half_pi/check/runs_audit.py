"""Half-Pi security decisions and their outbox rows in Python: the payload rebuilt byte for byte (§6.7,
invariant 17), payloads that are JSON objects (18), details_redacted and risk_labels shapes (19).

The two shapes of invariant 19 are stated by `schemas/half-pi-details-redacted.v1.schema.json` and
`schemas/half-pi-risk-labels.v1.schema.json`; the checks validate each column against them and add what JSON
Schema cannot say: an integer is judged by its literal (`1.0` is not one), a label's bound is in UTF-8 bytes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import cache
from typing import Any, Final

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.spec.gojson import GoJSONError, Number, decode
from sessaudit.formats.half_pi.spec.outbox_payloads import security_decision_payload
from sessaudit.resources import load_schema

DETAILS_SCHEMA: Final = "half-pi-details-redacted.v1.schema.json"
RISK_LABELS_SCHEMA: Final = "half-pi-risk-labels.v1.schema.json"
MAX_RISK_LABELS: Final = 64  # the risk-labels schema's maxItems, named in messages
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
    """Why details_redacted is not what its schema allows (an object of the seven keys with string, integer
    or boolean values), or None. The first problem is named: not an object, the extra keys, then the first
    key in sorted order holding another value."""
    parsed, problem = _parse(value)
    if problem is not None:
        return problem
    errors = schema_errors(DETAILS_SCHEMA, parsed)
    if not errors:
        return None
    if any(not error.path for error in errors if error.validator == "type"):
        return f"is {_kind(parsed)}, not a JSON object"
    extra = [error for error in errors if error.validator == "additionalProperties"]
    if extra:
        allowed = extra[0].schema["properties"]
        return f"has keys outside the seven allowed: {', '.join(sorted(set(parsed) - set(allowed)))}"
    key = min(str(error.path[0]) for error in errors if error.path)
    return f"key {key} holds {_kind(parsed[key])}, not a string, integer or boolean"


def risk_labels_problem_of(value: Any) -> str | None:
    """Why risk_labels is not what its schema allows (an array of at most 64 non-empty strings) with labels
    of at most 128 UTF-8 bytes, or None. The first problem is named: not an array, too many labels, then the
    first label that is not a string or has the wrong size."""
    parsed, problem = _parse(value)
    if problem is not None:
        return problem
    errors = schema_errors(RISK_LABELS_SCHEMA, parsed)
    at_root = {error.validator for error in errors if not error.path}
    if "type" in at_root:
        return f"is {_kind(parsed)}, not a JSON array"
    if "maxItems" in at_root:
        return f"holds {len(parsed)} labels, over the limit of {MAX_RISK_LABELS}"
    flawed = {int(error.path[0]): str(error.validator) for error in errors if error.path}
    # JSON Schema's maxLength counts characters: the byte bound is checked here
    oversized = (
        index
        for index, label in enumerate(parsed)
        if isinstance(label, str) and len(utf8_bytes(label)) > MAX_RISK_LABEL_BYTES
    )
    first = min((*flawed, next(oversized, len(parsed))))
    if first == len(parsed):
        return None
    label = parsed[first]
    if flawed.get(first) == "type":
        return f"item {first} is {_kind(label)}, not a string"
    return f"item {first} is {len(utf8_bytes(label))} bytes, not 1..{MAX_RISK_LABEL_BYTES}"


def schema_errors(schema: str, parsed: Any) -> list[ValidationError]:
    """Every error of a UseNumber parse against a row schema in `schemas/`, integers read by their literal."""
    return list(_validator(schema).iter_errors(plain_json(parsed)))


def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


# Draft 2020-12 over `plain_json` values: JSON Schema's `integer` admits 1.0, but Go writes an integer as bare
# digits, which `plain_json` alone turns into an int.
RowValidator: Final = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@cache
def _validator(schema: str) -> Any:
    return RowValidator(load_schema(schema))


def plain_json(value: Any) -> Any:
    """A UseNumber parse as plain JSON values: an integer literal as an int, any other number as a float."""
    if isinstance(value, Number):
        literal = value.literal or "0"
        if any(mark in literal for mark in ".eE"):
            return float(literal)
        return int(Decimal(literal))  # no digit limit, unlike int(str)
    if isinstance(value, dict):
        return {key: plain_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_json(item) for item in value]
    return value


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
