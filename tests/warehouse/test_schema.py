"""The tables: created from queries/schema/, one row type per table in DDL order, every column documented."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from sessaudit.resources import data_dir
from sessaudit.warehouse.rows import ROW_TYPES
from sessaudit.warehouse.schema import (
    SOURCE_TABLES,
    SchemaMismatch,
    column_names,
    create_schema,
    schema_files,
    table_columns,
)

DOCS = Path(__file__).resolve().parent.parent.parent / "docs" / "warehouse.md"


def test_every_source_table_has_a_row_type_in_ddl_order() -> None:
    assert set(ROW_TYPES) == set(SOURCE_TABLES)
    for table, row_type in ROW_TYPES.items():
        assert row_type._fields == column_names(table), table  # type: ignore[attr-defined]


def test_contract_tables_and_columns_exist() -> None:
    columns = table_columns()
    assert set(SOURCE_TABLES) | {"warehouse_meta"} == set(columns)
    facts = column_names("facts")
    for name in ("source_id", "session_id", "seq", "line", "byte_offset", "kind", "type", "id", "timestamp"):
        assert name in facts
    assert dict(columns["facts"])["payload"] == "JSON"
    for name in ("intent_seq", "result_seq", "status", "replay_policy", "recovery_condition"):
        assert name in column_names("tool_calls")
    for name in ("session_id", "run_id", "seq", "timestamp", "provider", "model", "input", "output"):
        assert name in column_names("usage")
    for name in ("cache_read", "cache_write", "input_total"):
        assert name in column_names("usage")


def test_every_table_and_column_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    sections = re.split(r"^### ", text, flags=re.MULTILINE)
    documented = {section.split("`")[1]: section for section in sections[1:] if section.startswith("`")}
    assert set(documented) == set(table_columns())
    for table, columns in table_columns().items():
        for column, _ in columns:
            assert re.search(rf"^\| `{column}` \|", documented[table], re.MULTILINE), f"{table}.{column}"


def test_every_sql_file_starts_with_a_header_comment() -> None:
    queries = data_dir("queries")
    files = [*schema_files(), *sorted((queries / "export").glob("*.sql")), *sorted(queries.glob("*.sql"))]
    assert len(files) >= len(SOURCE_TABLES) * 2 + 6
    for path in files:
        assert path.read_text(encoding="utf-8").startswith("-- "), path


def test_creating_the_schema_twice_changes_nothing(tmp_path: Path) -> None:
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        create_schema(connection)
        create_schema(connection)
        assert connection.execute("SELECT count(*) FROM warehouse_meta").fetchone() == (2,)
    finally:
        connection.close()


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        create_schema(connection)
        connection.execute("UPDATE warehouse_meta SET value = '0' WHERE key = 'schema_version'")
        with pytest.raises(SchemaMismatch, match="schema version 0"):
            create_schema(connection)
    finally:
        connection.close()
