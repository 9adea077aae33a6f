"""The builder's core: a private working store, transactions, and inserts addressed by column name.

Rows are written with explicit column names; values for columns the store's generation does not have
yet are dropped (such rows then carry nothing, as legacy rows did), while a name no generation ever had
is refused. The working store lives in a private folder; `export` copies it out, either checkpointed or
as a crash leaves it (db + uncheckpointed -wal + -shm, copied while the writer holds them).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sessaudit.formats.half_pi.build.parts import DEFAULT_START_MS, Digests, Ids
from sessaudit.formats.half_pi.build.schema_sql import schema_sql, upgrade_sql
from sessaudit.formats.half_pi.build.spec_digests import SpecDigests
from sessaudit.formats.half_pi.build.wal_salts import normalize_wal_files
from sessaudit.formats.half_pi.spec.schema_generations import BY_FEATURE, CATALOGUE, HEAD, Feature, Generation

WORK_NAME = "half-pi.db"
FILE_MODE = 0o600


class StoreCore:
    """Holds the working connection, the seeded clock and ids, and the schema generation."""

    def __init__(
        self,
        *,
        seed: int = 0,
        generation: Generation = HEAD,
        start_ms: int = DEFAULT_START_MS,
        digests: Digests | None = None,
        sql: str | None = None,
        work_root: str | None = None,
    ) -> None:
        self.ids = Ids(seed, start_ms)
        self.seed = seed
        self.generation = generation
        self.digests: Digests = digests if digests is not None else SpecDigests()
        self.work_dir = tempfile.mkdtemp(prefix=".half-pi-build-", dir=work_root)
        self.work_path = os.path.join(self.work_dir, WORK_NAME)
        self.connection = sqlite3.connect(self.work_path, isolation_level=None)
        # as Half-Pi opens it (spec §1), and never checkpoint on our own: rows stay in the WAL until asked
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("PRAGMA foreign_keys=ON")
        self.connection.execute("PRAGMA wal_autocheckpoint=0")
        self.connection.executescript(schema_sql(generation) if sql is None else sql)
        self._columns: dict[str, tuple[str, ...]] = {}
        self._exports = 0

    # --- schema --------------------------------------------------------------------------------------
    def columns(self, table: str) -> tuple[str, ...]:
        if table not in self._columns:
            rows = self.connection.execute("SELECT name FROM pragma_table_info(?)", (table,)).fetchall()
            self._columns[table] = tuple(str(row[0]) for row in rows)
        return self._columns[table]

    def has(self, feature: Feature) -> bool:
        """Whether the store's generation has `feature` (the builder writes what its generation has)."""
        return BY_FEATURE[feature].index <= self.generation.index

    def upgrade(self, generation: Generation) -> None:
        """Open the store with a later Mind: its migration adds tables and columns and backfills (spec §3)."""
        present = {table: self.columns(table) for table in CATALOGUE if self.columns(table)}
        self.connection.executescript(upgrade_sql(present, generation, self.ids.tick()))
        self.generation = generation
        self._columns.clear()

    # --- writing -------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One SQLite transaction, as Half-Pi groups its writes."""
        if self.connection.in_transaction:
            yield
            return
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def insert(self, table: str, values: Mapping[str, Any]) -> int:
        """INSERT by column name; returns the rowid. Columns the generation lacks are dropped."""
        known = {name for name, _ in CATALOGUE.get(table, ())}
        unknown = [name for name in values if known and name not in known]
        if unknown:
            raise KeyError(f"{table} never had column(s) {', '.join(unknown)}")
        present = self.columns(table)
        if not present:
            raise LookupError(f"table {table} does not exist in generation {self.generation.date}")
        kept = {name: value for name, value in values.items() if name in present}
        names = ", ".join(kept)
        marks = ", ".join("?" for _ in kept)
        cursor = self.connection.execute(
            f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(kept.values())
        )
        return int(cursor.lastrowid or 0)

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        """UPDATE by column name; returns the number of rows changed. Columns the store lacks are dropped."""
        present = self.columns(table)
        kept = {name: value for name, value in values.items() if name in present}
        if not kept:
            return 0
        assignments = ", ".join(f"{name} = ?" for name in kept)
        condition = " AND ".join(f"{name} = ?" for name in where)
        cursor = self.connection.execute(
            f"UPDATE {table} SET {assignments} WHERE {condition}", (*kept.values(), *where.values())
        )
        return cursor.rowcount

    def row(self, table: str, where: Mapping[str, Any]) -> dict[str, Any]:
        condition = " AND ".join(f"{name} = ?" for name in where)
        cursor = self.connection.execute(f"SELECT * FROM {table} WHERE {condition}", tuple(where.values()))
        found = cursor.fetchone()
        if found is None:
            raise LookupError(f"no {table} row where {dict(where)}")
        return {description[0]: value for description, value in zip(cursor.description, found, strict=True)}

    def execute(self, sql: str, parameters: tuple[Any, ...] = (), *, foreign_keys: bool = True) -> None:
        """Raw SQL, e.g. to damage a fixture on purpose; `foreign_keys=False` lets it break references."""
        if not foreign_keys:
            self.connection.execute("PRAGMA foreign_keys=OFF")
        try:
            self.connection.execute(sql, parameters)
        finally:
            if not foreign_keys:
                self.connection.execute("PRAGMA foreign_keys=ON")

    def checkpoint(self) -> None:
        """Move everything committed so far into the database file and empty the -wal."""
        self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # --- leaving files -------------------------------------------------------------------------------
    def export(self, path: str | os.PathLike[str], *, keep_wal: bool = False) -> tuple[str, ...]:
        """Copy the store to `path` (0600 files). `keep_wal`: as a crash leaves it, the rows written since
        the last `checkpoint()` only in `path`-wal (copied while the writer holds the files, so SQLite never
        checkpoints them); otherwise checkpointed first, with no -wal or -shm."""
        target = os.fspath(path)
        os.makedirs(os.path.dirname(os.path.abspath(target)), mode=0o700, exist_ok=True)
        if not keep_wal:
            self.checkpoint()
        written = []
        for suffix in ("", "-wal", "-shm"):
            source = self.work_path + suffix
            if not (keep_wal or suffix == "") or not os.path.exists(source):
                if os.path.exists(target + suffix):
                    os.unlink(target + suffix)  # a companion left by an earlier export is not this store's
                continue
            with open(source, "rb") as stream:
                data = stream.read()
            descriptor = os.open(target + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            with os.fdopen(descriptor, "wb") as output:
                output.write(data)
            written.append(target + suffix)
        if keep_wal:
            self._exports += 1
            normalize_wal_files(target, (self.seed * 7919 + self._exports) & 0xFFFFFFFF)
        return tuple(written)

    def discard(self) -> None:
        """Close the working store and delete its private folder."""
        self.connection.close()
        shutil.rmtree(self.work_dir, ignore_errors=True)
