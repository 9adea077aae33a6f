"""Each line on its own (spec §3): the shape Codex reads (SA805, schemas/codex-line.v1.schema.json) and
types the spec does not list (SA815, a note naming the CLI version)."""

from __future__ import annotations

from typing import Final

from sessaudit.formats.codex.read.lines import Record
from sessaudit.formats.codex.spec.records import EVENTS, RESPONSE_ITEMS
from sessaudit.model import Finding
from sessaudit.resources import schema_accepts, schema_validator
from sessaudit.rules import finding

SCHEMA: Final = "codex-line.v1.schema.json"


def check_shape(record: Record, cli_version: str | None) -> list[Finding]:
    found = _schema_findings(record)
    if found:
        return found
    version = f"cli_version {cli_version}" if cli_version else "no cli_version known"
    kind, item = record.kind, record.item
    unknown = None  # an unknown line type is SA805: Codex skips the line (spec §2)
    if kind == "response_item" and item not in RESPONSE_ITEMS:
        unknown = f"response item type {item!r}"
    elif kind == "event_msg" and item not in EVENTS:
        unknown = f"event type {item!r}"
    if unknown is None:
        return []
    return [
        finding(
            "SA815",
            f"line {record.line}: {unknown} is not in the spec ({version}); kept, checked as an envelope",
            **record.where("/payload/type"),
            evidence={"type": kind, "payload_type": item, "cli_version": cli_version},
        )
    ]


def _schema_findings(record: Record) -> list[Finding]:
    if schema_accepts(SCHEMA, record.value):  # the fast proof; only a line it cannot prove is explained
        return []
    errors = sorted(schema_validator(SCHEMA).iter_errors(record.value), key=lambda error: list(error.path))
    found: list[Finding] = []
    seen: set[str] = set()
    described = f"{record.kind}/{record.item}" if record.item else str(record.kind)
    for error in errors:
        pointer = "".join(f"/{part}" for part in error.absolute_path)
        message = f"line {record.line}: {described} line {pointer or '/'}: {error.message}"
        if message in seen:
            continue
        seen.add(message)
        found.append(finding("SA805", message, **record.where(pointer or None)))
    return found
