"""The warehouse's tables: created from the DDL files in `queries/schema/`, their columns as Arrow types."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Final

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]  # no stubs ship with pyarrow

from sessaudit import __version__
from sessaudit.resources import data_dir

# 2: usage gained cache_write_5m/1h, placeholder, cost_usd, price_source/since/note
SCHEMA_VERSION: Final = "2"
# Every table that holds rows of a source, in the order they are loaded (sources first).
SOURCE_TABLES: Final = ("sources", "sessions", "facts", "runs", "tool_calls", "usage", "findings")

_ARROW_TYPES: Final[dict[str, pa.DataType]] = {
    "VARCHAR": pa.string(),
    "JSON": pa.string(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "BOOLEAN": pa.bool_(),
    "DECIMAL(18,9)": pa.decimal128(18, 9),
    "TIMESTAMP": pa.timestamp("us"),
    "DATE": pa.date32(),
    "VARCHAR[]": pa.list_(pa.string()),
}


class SchemaMismatch(Exception):
    """The database was made by another version of the warehouse schema (a usage error, not a bug)."""


def schema_files() -> list[Path]:
    """The DDL files, one CREATE TABLE each, in name order."""
    return sorted((data_dir("queries") / "schema").glob("*.sql"))


def create_schema(connection: duckdb.DuckDBPyConnection) -> None:
    """Create the tables that do not exist yet; refuse a database of another schema version."""
    for path in schema_files():
        connection.execute(path.read_text(encoding="utf-8"))
    found = connection.execute("SELECT value FROM warehouse_meta WHERE key = 'schema_version'").fetchone()
    if found is None:
        connection.execute(
            "INSERT INTO warehouse_meta VALUES ('schema_version', $version), ('created_by', $created_by)",
            {"version": SCHEMA_VERSION, "created_by": f"sessaudit {__version__}"},
        )
    elif found[0] != SCHEMA_VERSION:
        raise SchemaMismatch(
            f"the database has warehouse schema version {found[0]}, this sessaudit writes version "
            f"{SCHEMA_VERSION}; load into a new database"
        )


@cache
def table_columns() -> dict[str, tuple[tuple[str, str], ...]]:
    """(column, DuckDB type) per table, in DDL order, read from the DDL files through an in-memory DuckDB."""
    connection = duckdb.connect()
    try:
        for path in schema_files():
            connection.execute(path.read_text(encoding="utf-8"))
        rows = connection.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main' "
            "ORDER BY table_name, column_index"
        ).fetchall()
    finally:
        connection.close()
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        columns.setdefault(str(table), []).append((str(column), str(data_type)))
    return {table: tuple(items) for table, items in columns.items()}


def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema a batch of `table` rows is built with (JSON travels as text and is cast by DuckDB)."""
    return pa.schema([pa.field(name, _ARROW_TYPES[kind]) for name, kind in table_columns()[table]])


def column_names(table: str) -> tuple[str, ...]:
    return tuple(name for name, _ in table_columns()[table])
