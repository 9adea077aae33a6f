"""A query's answer as a plain text table, CSV or JSON: deterministic; tables escape control characters."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from sessaudit.outputsafety import json_safe, safe
from sessaudit.warehouse import QueryFormat
from sessaudit.warehouse.queries import Answer

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UBIGINT", "DOUBLE", "FLOAT", "DECIMAL")


def _plain(value: Any, kind: str) -> Any:
    """A JSON-ready value: JSON columns parsed, times as ISO text, decimals as numbers."""
    if value is None:
        return None
    if kind == "JSON" and isinstance(value, str):
        return json.loads(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list | tuple):
        return [_plain(item, kind.removesuffix("[]")) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item, "") for key, item in value.items()}
    return value


def _text(value: Any, kind: str) -> str:
    """One cell as text: NULL for null, JSON for lists, ISO-8601 for times."""
    if value is None:
        return "NULL"
    if isinstance(value, datetime | date | time):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, list | tuple | dict):
        return json.dumps(_plain(value, kind), ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def render_table(answer: Answer) -> str:
    header = [safe(name) for name in answer.columns]
    body = [
        [safe(_text(value, kind)) for value, kind in zip(row, answer.types, strict=True)]
        for row in answer.rows
    ]
    widths = [max([len(cell) for cell in column], default=0) for column in zip(header, *body, strict=True)]
    numeric = [kind.startswith(_NUMERIC) for kind in answer.types]

    def line(cells: list[str]) -> str:
        parts = [
            cell.rjust(width) if right else cell.ljust(width)
            for cell, width, right in zip(cells, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    lines = [line(header), "  ".join("-" * width for width in widths)]
    lines += [line(cells) for cells in body]
    count = len(answer.rows)
    lines.append(f"({count} row{'s' if count != 1 else ''})")
    return "\n".join(lines) + "\n"


def render_csv(answer: Answer) -> str:
    output = io.StringIO()
    writer = csv.writer(output, lineterminator="\n")
    writer.writerow(answer.columns)
    for row in answer.rows:
        writer.writerow(
            "" if value is None else _text(value, kind) for value, kind in zip(row, answer.types, strict=True)
        )
    return output.getvalue()


def render_json(answer: Answer) -> str:
    records = [
        {
            name: _plain(value, kind)
            for name, value, kind in zip(answer.columns, row, answer.types, strict=True)
        }
        for row in answer.rows
    ]
    return json_safe(json.dumps(records, indent=2, ensure_ascii=False)) + "\n"


RENDERERS: dict[QueryFormat, Callable[[Answer], str]] = {
    QueryFormat.TABLE: render_table,
    QueryFormat.CSV: render_csv,
    QueryFormat.JSON: render_json,
}
