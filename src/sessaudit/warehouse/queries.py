"""The bundled queries (`queries/*.sql`, one statement each, a header naming purpose, parameters and columns)
and the runner that answers them, or ad-hoc SQL, on a warehouse opened read-only."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

import duckdb

from sessaudit.resources import data_dir
from sessaudit.warehouse.dbfile import damaged_message, foreign_reason, open_failure
from sessaudit.warehouse.schema import SCHEMA_VERSION

_PARAMETER = re.compile(r"^--\s+\$([a-z_][a-z0-9_]*)\s+([A-Z][A-Z0-9_\[\]]*)\s+(.*)$")
# a column's type as DuckDB names it: VARCHAR, VARCHAR[], DECIMAL(38,9)
_COLUMN = re.compile(r"^--\s+([a-z_][a-z0-9_]*)\s+([A-Z][A-Z0-9_\[\]]*(?:\([0-9]+,[0-9]+\))?)\s+(.*)$")
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class QueryError(Exception):
    """A usage error: an unknown query, a bad parameter, a database that is not a warehouse, bad SQL."""


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    type: str
    description: str


@dataclass(frozen=True, slots=True)
class Query:
    """One bundled query: its name (the file stem), purpose, parameters, output columns and SQL."""

    name: str
    purpose: str
    parameters: tuple[Parameter, ...]
    columns: tuple[tuple[str, str, str], ...]  # (name, type, description)
    sql: str


@dataclass(frozen=True, slots=True)
class Answer:
    columns: list[str]
    types: list[str]  # DuckDB type names, e.g. VARCHAR, BIGINT, JSON, TIMESTAMP, VARCHAR[]
    rows: list[tuple[Any, ...]]


def parse_query(path: Path) -> Query:
    """A query file's header: the purpose (comment lines up to an empty `--`), then the `-- Parameters:` and
    `-- Columns:` sections."""
    text = path.read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("--")]
    lines = [line.lstrip("- ").strip() for line in header]
    end = lines.index("") if "" in lines else 1
    purpose = " ".join(lines[:end])
    parameters: list[Parameter] = []
    columns: list[tuple[str, str, str]] = []
    section = None
    for line in header[end:]:
        label = line.lstrip("- ").strip().lower()
        if label in ("parameters:", "columns:"):
            section = label
            continue
        if section == "parameters:" and (match := _PARAMETER.match(line)):
            parameters.append(Parameter(match[1], match[2], match[3].strip()))
        elif section == "columns:" and (match := _COLUMN.match(line)):
            columns.append((match[1], match[2], match[3].strip()))
    return Query(path.stem, purpose, tuple(parameters), tuple(columns), text)


@cache
def bundled_queries() -> dict[str, Query]:
    """The named queries: the `.sql` files at the top of `queries/` (its subfolders are not queries)."""
    found = {}
    for path in sorted(data_dir("queries").glob("*.sql")):
        if _NAME.match(path.stem):
            found[path.stem] = parse_query(path)
    return found


def find_query(name: str) -> Query:
    queries = bundled_queries()
    if name not in queries:
        raise QueryError(f"no bundled query {name!r} (see `sessaudit query --list`)")
    return queries[name]


def bind(query: Query, given: dict[str, str]) -> dict[str, str | None]:
    """Every declared parameter bound (None when not given); an undeclared one is a usage error."""
    declared = {parameter.name for parameter in query.parameters}
    unknown = sorted(set(given) - declared)
    if unknown:
        names = ", ".join(sorted(declared)) or "none"
        raise QueryError(f"query {query.name} has no parameter {unknown[0]!r} (its parameters: {names})")
    return {name: given.get(name) for name in sorted(declared)}


def open_read_only(database: Path) -> duckdb.DuckDBPyConnection:
    """The warehouse, read-only and without access to other files (a query cannot read or write any)."""
    if not os.path.lexists(database):
        raise QueryError(f"{database}: no such database (create it with `sessaudit load`)")
    reason = foreign_reason(database)  # DuckDB never opens a SQLite store or a truncated file
    if reason is not None:
        raise QueryError(f"--db {database}: {reason}")
    try:
        connection = duckdb.connect(str(database), read_only=True, config={"enable_external_access": False})
    except duckdb.Error as error:
        raise QueryError(open_failure(database, error)) from None
    try:
        found = connection.execute("SELECT value FROM warehouse_meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        found = None
    except duckdb.Error as error:  # a block it cannot read
        connection.close()
        raise QueryError(damaged_message(database, error)) from None
    if found is None or found[0] != SCHEMA_VERSION:
        connection.close()
        raise QueryError(f"{database}: not a sessaudit warehouse of schema version {SCHEMA_VERSION}")
    return connection


def open_dataset(directory: Path) -> duckdb.DuckDBPyConnection:
    """A Parquet dataset (`load --parquet DIR` without `--db`) as the warehouse's tables: views over the
    files its manifest names, and no access to any other file."""
    from sessaudit.warehouse.dataset import DatasetError, dataset_views
    from sessaudit.warehouse.parquet import sql_literal
    from sessaudit.warehouse.schema import create_schema

    try:
        statements, readable = dataset_views(directory)
    except DatasetError as error:
        raise QueryError(str(error)) from None
    connection = duckdb.connect()
    try:
        create_schema(connection)
        for statement in statements:
            connection.execute(statement)
        listed = ", ".join(sql_literal(path) for path in readable)
        connection.execute(f"SET allowed_paths = [{listed}]")
        connection.execute("SET enable_external_access = false")
        connection.execute("SET lock_configuration = true")
    except duckdb.Error as error:
        connection.close()
        raise QueryError(
            f"--parquet {directory}: its files cannot be read: {str(error).splitlines()[0]}"
        ) from None
    return connection


def run_sql(database: Path, sql: str, parameters: dict[str, str | None], *, dataset: bool = False) -> Answer:
    """Run one statement read-only (on a DuckDB file, or on a Parquet dataset when `dataset`: then only a
    query, never a statement that writes); SQL and parameter problems are usage errors."""
    connection = open_dataset(database) if dataset else open_read_only(database)
    try:
        if dataset:
            kinds = {item.type for item in connection.extract_statements(sql)}
            if kinds - {duckdb.StatementType.SELECT}:
                raise QueryError("--parquet: only a query (SELECT) runs on a dataset")
        cursor = connection.execute(sql, parameters) if parameters else connection.execute(sql)
        description = cursor.description or []
        rows = cursor.fetchall()
    except duckdb.IOException as error:  # the file, not the SQL: a block it cannot read
        raise QueryError(damaged_message(database, error)) from None
    except duckdb.Error as error:
        raise QueryError(f"the query failed: {str(error).splitlines()[0]}") from None
    finally:
        connection.close()
    return Answer([item[0] for item in description], [str(item[1]) for item in description], rows)
