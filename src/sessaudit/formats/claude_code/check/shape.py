"""Each record on its own (spec §3, §4): its `type` (SA705, SA706), the shapes the spec marks seen
(SA707, schemas/claude-code-record-seen.v1.schema.json) and inferred (SA708, the -inferred schema), and
top-level fields the spec does not list (SA714)."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.claude_code.read.lines import Record
from sessaudit.formats.claude_code.spec.records import known_type, unknown_fields
from sessaudit.model import Finding
from sessaudit.resources import schema_accepts, schema_validator
from sessaudit.rules import finding

SEEN_SCHEMA: Final = "claude-code-record-seen.v1.schema.json"
INFERRED_SCHEMA: Final = "claude-code-record-inferred.v1.schema.json"


def version_of(record: Record) -> str:
    version = record.value.get("version")
    return f"version {version}" if isinstance(version, str) else "no version given"


def check_shape(record: Record) -> list[Finding]:
    value = record.value
    kind = value.get("type")
    if not isinstance(kind, str) or not kind:
        shown = "no `type`" if "type" not in value else f"a `type` that is not a string ({_short(kind)})"
        return [finding("SA705", f"line {record.line} has {shown}", **record.where("/type"))]
    if not known_type(kind):
        return [
            finding(
                "SA706",
                f"line {record.line}: record type {kind!r} is not in the spec ({version_of(record)})",
                **record.where("/type"),
                evidence={"type": kind, "version": value.get("version")},
            )
        ]
    found = _schema_findings(record, SEEN_SCHEMA, "SA707")
    if not found:
        found = _schema_findings(record, INFERRED_SCHEMA, "SA708")
    for name in unknown_fields(value):
        found.append(
            finding(
                "SA714",
                f"line {record.line}: {kind} record has field {name!r}, "
                f"not in the spec ({version_of(record)})",
                **record.where("/" + name.replace("~", "~0").replace("/", "~1")),
                evidence={"field": name, "type": kind, "version": value.get("version")},
            )
        )
    return found


def _schema_findings(record: Record, schema: str, code: str) -> list[Finding]:
    if schema_accepts(schema, record.value):  # the fast proof; only a record it cannot prove is explained
        return []
    errors = sorted(schema_validator(schema).iter_errors(record.value), key=lambda error: list(error.path))
    found: list[Finding] = []
    seen: set[str] = set()
    for error in errors:
        pointer = "".join(f"/{part}" for part in error.absolute_path)
        message = f"line {record.line}: {record.value.get('type')} record {pointer or '/'}: {error.message}"
        if message in seen:
            continue
        seen.add(message)
        found.append(finding(code, message, **record.where(pointer or None)))
    return found


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
