"""Warehouses loaded once per test session from the project-built corpus (see corpus.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sessaudit.engine import AuditResult, audit
from sessaudit.warehouse.loader import LoadOptions, LoadResult, load_warehouse
from tests.warehouse.corpus import build_examples, build_wide

FIXED_CLOCK = LoadOptions(clock=lambda: datetime(2026, 12, 1, 8, 0, tzinfo=UTC))


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    """Run with `folder` as the working directory, so reported paths are relative and stable."""
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


@dataclass(frozen=True)
class Loaded:
    root: Path
    name: str  # the corpus folder, as named on the command line inside root
    db: Path
    result: LoadResult
    audited: AuditResult


def query(db: Path, sql: str, parameters: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Rows of one statement on a warehouse opened read-only (and closed again)."""
    connection = duckdb.connect(str(db), read_only=True)
    try:
        return connection.execute(sql, parameters or {}).fetchall()
    finally:
        connection.close()


def table_contents(connection: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every source table, sorted (a warehouse's or a dataset's connection, closed after)."""
    from sessaudit.warehouse.schema import SOURCE_TABLES

    try:
        return {
            table: sorted(connection.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in SOURCE_TABLES
        }
    finally:
        connection.close()


def _loaded(root: Path, name: str) -> Loaded:
    with inside(root):
        audited = audit([name])
        result = load_warehouse([name], Path("warehouse.duckdb"), FIXED_CLOCK)
    return Loaded(root, name, root / "warehouse.duckdb", result, audited)


@pytest.fixture(scope="session")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Loaded:
    root = tmp_path_factory.mktemp("examples-corpus")
    build_examples(root)
    return _loaded(root, "examples")


@pytest.fixture(scope="session")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Loaded:
    root = tmp_path_factory.mktemp("wide-corpus")
    build_wide(root)
    return _loaded(root, "wide")
