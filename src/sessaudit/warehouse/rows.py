"""One row type per warehouse table (fields in DDL order, checked by a test), batches of them, and helpers.

Timestamps travel as integer microseconds since the Unix epoch (UTC), JSON columns as text: both are what
the Arrow batch is built from, and DuckDB casts the text to JSON (validating it) on insert."""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from itertools import accumulate
from typing import Any, Final, NamedTuple

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs ship with pyarrow

from sessaudit.warehouse.schema import arrow_schema

# DuckDB's JSON type refuses lone surrogates, escaped or raw; Python's json module lets both through.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_CHARACTER = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE_START = re.compile(rb"\\u[dD]")  # in bytes: where `raw_json` has anything to look at
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Epoch-millisecond instants beyond these bounds are not times a writer produced (and overflow Arrow).
_MIN_MS, _MAX_MS = 0, 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


class SourceRow(NamedTuple):
    source_id: str
    path: str
    real_path: str
    format: str | None
    format_version: str | None
    sha256: str | None
    bytes: int | None
    files: str | None
    evidence_unchanged: bool | None
    verdict: str
    sessions: int
    facts_loaded: int
    complete: bool
    first_at: int | None
    last_at: int | None
    native: str | None
    sessaudit_version: str
    loaded_at: int


class SessionRow(NamedTuple):
    source_id: str
    session_id: str | None
    format: str | None
    format_version: str | None
    verdict: str
    facts: int
    facts_loaded: int
    complete: bool
    last_seq: int | None
    repaired_length: int | None
    torn_tail_bytes: int
    usage_input: int
    usage_output: int
    usage_cache_read: int
    usage_cache_write: int
    usage_input_total: int
    runs: int
    open_runs: int
    started_at: int | None
    last_at: int | None
    provider: str | None
    model: str | None
    cwd: str | None
    header: str | None
    native: str | None


class FactRow(NamedTuple):
    source_id: str
    session_id: str | None
    run_id: str | None
    seq: int | None
    line: int | None
    byte_offset: int | None
    rowid: int | None
    kind: str | None
    type: str | None
    role: str | None
    id: str | None
    timestamp: int | None
    payload: str | bytes | None  # JSON text; bytes are UTF-8 (a line as read: Arrow takes it as is)


class RunRow(NamedTuple):
    source_id: str
    session_id: str | None
    run_id: str
    kind: str
    state: str
    condition: str | None
    conditions: list[str] | None
    seed_kind: str | None
    pending_effects: int
    assumes: list[str] | None
    first_seq: int | None
    last_seq: int | None
    started_at: int | None
    last_at: int | None
    recovery: str | None
    seed: str | None


class ToolCallRow(NamedTuple):
    source_id: str
    session_id: str | None
    run_id: str | None
    tool_call_id: str | None
    tool_name: str | None
    call_seq: int | None
    intent_seq: int | None
    result_seq: int | None
    intent_id: str | None
    status: str
    result_type: str | None
    replay_policy: str | None
    replay_key: str | None
    effect: str | None
    target: str | None
    recovery_condition: str | None
    requested_at: int | None
    finished_at: int | None
    arguments: str | None


class LedgerRow(NamedTuple):
    source_id: str
    session_id: str | None
    run_id: str | None
    seq: int | None
    line: int | None
    rowid: int | None
    record_id: str | None
    timestamp: int | None
    scope: str
    provider: str | None
    model: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    input_total: int
    reasoning: int | None
    # the cache writes' 5-minute/1-hour split where the log records one; whether the output count is a
    # placeholder the log never finalised (None: the format does not say)
    cache_write_5m: int | None = None
    cache_write_1h: int | None = None
    placeholder: bool | None = None
    # filled as the row is loaded (sessaudit.prices), never by a format
    cost_usd: Decimal | None = None
    price_source: str | None = None
    price_since: date | None = None
    price_note: str | None = None


class FindingRow(NamedTuple):
    source_id: str
    rule: str
    name: str
    severity: str
    verdict_effect: str | None
    message: str
    path: str | None
    session_id: str | None
    line: int | None
    byte_offset: int | None
    seq: int | None
    pointer: str | None
    table_name: str | None
    rowid: int | None
    native_code: str | None
    evidence: str | None


ROW_TYPES: dict[str, type[tuple[Any, ...]]] = {
    "sources": SourceRow,
    "sessions": SessionRow,
    "facts": FactRow,
    "runs": RunRow,
    "tool_calls": ToolCallRow,
    "usage": LedgerRow,
    "findings": FindingRow,
}


@dataclass(slots=True)
class Batch:
    """Rows of every table for one or more sources, turned into Arrow tables for one bulk insert each."""

    sources: list[SourceRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    facts: list[FactRow] = field(default_factory=list)
    runs: list[RunRow] = field(default_factory=list)
    tool_calls: list[ToolCallRow] = field(default_factory=list)
    usage: list[LedgerRow] = field(default_factory=list)
    findings: list[FindingRow] = field(default_factory=list)

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = getattr(self, table)
        return found

    def extend(self, other: Batch) -> None:
        for table in ROW_TYPES:
            self.rows(table).extend(other.rows(table))

    def arrow(self, table: str) -> pa.Table:
        schema = arrow_schema(table)
        rows = self.rows(table)
        if not rows:
            return schema.empty_table()
        columns = zip(*rows, strict=True)
        arrays = [
            _text_array(column) if item.type == pa.string() else pa.array(column, type=item.type)
            for column, item in zip(columns, schema, strict=True)
        ]
        return pa.Table.from_arrays(arrays, schema=schema)


_MAX_STRING_BYTES: Final = (1 << 31) - 1  # what the 32-bit offsets of an Arrow string array reach


def _text_array(values: tuple[Any, ...]) -> pa.Array:
    """A string column. When every value is bytes (a log's verified lines, kept as they were read), the
    array is made from the values joined into one buffer and their offsets, its UTF-8 checked by Arrow
    as a whole: about 4 times faster than pyarrow converting value by value (measured on the bench
    session's facts), and it runs on the writer thread holding Python's lock."""
    if not values or any(type(value) is not bytes for value in values):
        return pa.array(values, type=pa.string())
    data = b"".join(values)
    if len(data) > _MAX_STRING_BYTES:
        return pa.array(values, type=pa.string())
    offsets = array("i", accumulate(map(len, values), initial=0))
    built = pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    built.validate(full=True)  # UTF-8 and offsets, as pyarrow checks each value it converts
    return built


def clean(value: str) -> str:
    """The string with every surrogate code point (never valid in UTF-8 text) replaced by U+FFFD."""
    return _SURROGATE_CHARACTER.sub("\ufffd", value) if _SURROGATE_CHARACTER.search(value) else value


def to_json(value: Any, *, sort_keys: bool = True) -> str | None:
    """Compact JSON text (non-ASCII kept, lone surrogates replaced), or None for None."""
    if value is None:
        return None
    return clean(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys))


def raw_json(value: str) -> str:
    """JSON text decoded from UTF-8 bytes (so it holds no raw surrogate) as it was written, unless it escapes
    a surrogate: then re-encoded with lone ones replaced, which DuckDB would refuse."""
    if ("\\ud" not in value and "\\uD" not in value) or _SURROGATE_ESCAPE.search(value) is None:
        return value
    return clean(json.dumps(json.loads(value), ensure_ascii=False, separators=(",", ":")))


def raw_json_bytes(value: bytes) -> str | bytes:
    """`raw_json` of verified UTF-8 bytes, kept as bytes unless they escape a surrogate."""
    if _SURROGATE_ESCAPE_START.search(value) is None:  # one scan (three `in` tests measured slower)
        return value
    return raw_json(value.decode("utf-8"))


def micros_from_ms(value: Any) -> int | None:
    """Epoch milliseconds (an int, not a bool) → epoch microseconds; None for other values or out of range."""
    if type(value) is not int or not _MIN_MS <= value <= _MAX_MS:
        return None
    return value * 1000


def micros_from_text(value: Any) -> int | None:
    """An ISO-8601 instant ('…Z', an offset, or SQLite's 'YYYY-MM-DD HH:MM:SS' read as UTC) → epoch µs."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def text(value: Any) -> str | None:
    """A string value, or None for anything else."""
    return value if isinstance(value, str) else None


def integer(value: Any) -> int | None:
    """An int value that is not a bool, or None."""
    return value if type(value) is int else None
