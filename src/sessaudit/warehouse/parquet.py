"""The warehouse as a Hive-partitioned Parquet dataset: `DIR/<table>/format=<f>/day=<YYYY-MM-DD>/*.parquet`.

Each table is written by DuckDB (`COPY … PARTITION_BY (format, day)`) from its export query in
`queries/export/`, into a fresh folder beside the old one, which then replaces it; a row without a format
or a day lands in `__HIVE_DEFAULT_PARTITION__`, as Hive, Spark and Trino expect. DIR must be empty or a
dataset sessaudit wrote (it holds the marker file), so an export never deletes anything else."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

import duckdb

from sessaudit.resources import data_dir
from sessaudit.warehouse.schema import SCHEMA_VERSION, SOURCE_TABLES

MARKER: Final = ".sessaudit-parquet"


class ExportError(Exception):
    """The dataset folder cannot be used (a usage error)."""


def check_directory(directory: Path) -> None:
    """Refuse a target that is not a folder, or a non-empty one sessaudit did not write."""
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"--parquet {directory}: not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not (directory / MARKER).is_file():
        raise ExportError(
            f"--parquet {directory}: the folder is not empty and holds no sessaudit dataset ({MARKER}); "
            "name an empty or new folder"
        )


def sql_literal(path: Path) -> str:
    """A path as a SQL string literal (COPY, and a view's read_parquet, take no parameter for it)."""
    return "'" + str(path).replace("'", "''") + "'"


def export_parquet(connection: duckdb.DuckDBPyConnection, directory: Path) -> dict[str, int]:
    """Write every table of the warehouse under `directory`; returns the rows written per table."""
    check_directory(directory)
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=directory))
    written: dict[str, int] = {}
    try:
        for table in SOURCE_TABLES:
            select = (data_dir("queries") / "export" / f"{table}.sql").read_text(encoding="utf-8")
            target = staging / table
            (count,) = connection.execute(f"SELECT count(*) FROM {table}").fetchone() or (0,)
            written[table] = int(count)
            if count:
                connection.execute(
                    f"COPY ({select}) TO {sql_literal(target)} "
                    "(FORMAT parquet, PARTITION_BY (format, day), COMPRESSION zstd)"
                )
            else:
                target.mkdir()
        for table in SOURCE_TABLES:
            final = directory / table
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging / table, final)
        marker = {"schema_version": SCHEMA_VERSION, "tables": written, "partitioning": ["format", "day"]}
        (directory / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written
