"""The JSON report of CONTRACT §4: keys sorted, deterministic, validated by schemas/report.v1.schema.json."""

from __future__ import annotations

from typing import Any

from sessaudit.jsonout import pretty_json
from sessaudit.model import Report, Seed


def report_document(report: Report) -> dict[str, Any]:
    """The report as plain JSON data (aliases applied: `schema`)."""
    document: dict[str, Any] = report.model_dump(mode="json", by_alias=True)
    return document


def render_json(report: Report) -> str:
    return pretty_json(report_document(report))


REPORT_SCHEMA_FILE = "report.v1.schema.json"


def report_json_schema() -> dict[str, Any]:
    """The report's JSON Schema, derived from the model (a test keeps schemas/report.v1 fresh)."""
    schema: dict[str, Any] = Report.model_json_schema(by_alias=True, mode="serialization")
    schema["properties"]["schema"] = {"const": "sessaudit/report/v1", "type": "string"}
    schema["required"] = sorted(set(schema.get("required", [])) | {"schema"})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://sessaudit.dev/schemas/report.v1.schema.json",
        **schema,
        "title": "sessaudit report v1",
    }


SEED_SCHEMA_FILE = "seed.v1.schema.json"


def seed_json_schema() -> dict[str, Any]:
    """The seed's JSON Schema, derived from the model (a test keeps schemas/seed.v1 fresh)."""
    schema: dict[str, Any] = Seed.model_json_schema(by_alias=True, mode="serialization")
    schema["properties"]["schema"] = {"const": "sessaudit/seed/v1", "type": "string"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://sessaudit.dev/schemas/seed.v1.schema.json",
        **schema,
        "title": "sessaudit seed v1",
    }
