"""`--parquet DIR`: every table as a Hive-partitioned dataset (format, day) that DuckDB reads as it is."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from sessaudit.warehouse.loader import LoadOptions, load_warehouse
from sessaudit.warehouse.parquet import MARKER, ExportError
from sessaudit.warehouse.schema import SOURCE_TABLES
from tests.warehouse.conftest import inside, query
from tests.warehouse.corpus import build_examples


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parquet")
    build_examples(root)
    with inside(root):
        load_warehouse(["examples"], Path("w.duckdb"), LoadOptions(parquet=Path("dataset")))
    return root


def test_every_table_is_a_hive_dataset_with_the_same_rows(exported: Path) -> None:
    connection = duckdb.connect()
    try:
        for table in SOURCE_TABLES:
            pattern = str(exported / "dataset" / table / "**" / "*.parquet")
            read = connection.execute(
                "SELECT count(*), count(DISTINCT format) "
                "FROM read_parquet($pattern, hive_partitioning = true)",
                {"pattern": pattern},
            ).fetchone()
            assert read is not None
            expected = query(
                exported / "w.duckdb",
                f"SELECT count(*), count(DISTINCT s.format) FROM {table} JOIN sources AS s USING (source_id)",
            )
            assert [read] == expected and read[0] > 0, table
    finally:
        connection.close()
    folders = sorted(
        path.relative_to(exported / "dataset").as_posix() for path in (exported / "dataset").glob("*/*/*")
    )
    assert "facts/format=tiny-agent/day=2026-11-30" in folders
    assert "usage/format=rivumi/day=2026-11-29" in folders
    assert (exported / "dataset" / MARKER).is_file()


def test_the_dataset_keeps_types_and_values(exported: Path) -> None:
    connection = duckdb.connect()
    try:
        pattern = str(exported / "dataset" / "usage" / "**" / "*.parquet")
        found = connection.execute(
            "SELECT format, sum(input_total), typeof(any_value(timestamp)) FROM read_parquet($pattern, "
            "hive_partitioning = true) GROUP BY format ORDER BY format",
            {"pattern": pattern},
        ).fetchall()
    finally:
        connection.close()
    expected = query(
        exported / "w.duckdb",
        "SELECT s.format, sum(u.input_total), 'TIMESTAMP' FROM usage AS u "
        "JOIN sources AS s USING (source_id) GROUP BY s.format ORDER BY s.format",
    )
    assert found == expected


def test_exporting_again_replaces_the_dataset(exported: Path) -> None:
    with inside(exported):
        result = load_warehouse(["examples"], Path("w.duckdb"), LoadOptions(parquet=Path("dataset")))
    assert result.exported is not None and result.exported["facts"] > 0
    files = list((exported / "dataset" / "facts").rglob("*.parquet"))
    assert len(files) == len({path.parent for path in files})  # one file per partition, no leftovers
    assert not list((exported / "dataset").glob(".export-*"))


def test_a_folder_sessaudit_did_not_write_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not empty"):
        load_warehouse([], tmp_path / "w.duckdb", LoadOptions(parquet=tmp_path / "dataset"))
    assert (tmp_path / "dataset" / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "w.duckdb").exists()
