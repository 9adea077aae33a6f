"""The one writer of a load: one transaction, fed batches of rows while later sources are still verified.

DuckDB works without holding Python's lock, so inserting on a writer thread overlaps the database's work
with verification; and rows leave memory as they are written, so a fleet of any size loads in bounded
memory. Each flush inserts one Arrow table per table (never row by row); a replaced source's old rows are
deleted just before its new ones arrive. The first failure rolls everything back."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Final

import duckdb

from sessaudit.warehouse.rows import Batch
from sessaudit.warehouse.schema import SOURCE_TABLES

FLUSH_ROWS: Final = 25_000  # rows (all tables) gathered before they are handed to the writer


class Writer:
    """Use as a context manager: `add()` batches, then `commit()`; leaving without commit rolls back.

    Only the writer thread touches the connection between construction and `commit()`."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self.connection = connection
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessaudit-writer")
        self.futures: list[Future[None]] = []
        self.pending = Batch()
        self.pending_rows = 0
        self.counts = dict.fromkeys(SOURCE_TABLES, 0)
        self.committed = False
        self._submit(self._begin, None)

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.committed:  # an error, here or on the writer thread: undo whatever was written
            wait(self.futures)
            with contextlib.suppress(duckdb.Error):
                self.connection.execute("ROLLBACK")
        self.executor.shutdown(wait=True)

    def replace(self, source_id: str) -> None:
        """Delete every row of a source (before any batch added after this call is written)."""
        self.flush()
        self._submit(self._delete, source_id)

    def add(self, batch: Batch) -> None:
        self.pending.extend(batch)
        self.pending_rows += sum(len(batch.rows(table)) for table in SOURCE_TABLES)
        if self.pending_rows >= FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.pending_rows:
            batch, self.pending, self.pending_rows = self.pending, Batch(), 0
            for table in SOURCE_TABLES:
                self.counts[table] += len(batch.rows(table))
            self._submit(self._insert, batch)

    def commit(self) -> dict[str, int]:
        """Write what is pending, wait for every write (re-raising the first failure), commit."""
        self.flush()
        for future in self.futures:
            future.result()
        self.connection.execute("COMMIT")
        self.committed = True
        return dict(self.counts)

    def _submit(self, function: Callable[[Any], None], argument: Any) -> None:
        self.futures.append(self.executor.submit(function, argument))

    # --- on the writer thread ------------------------------------------------------------------------
    def _begin(self, _: None) -> None:
        self.connection.execute("BEGIN TRANSACTION")

    def _delete(self, source_id: str) -> None:
        for table in SOURCE_TABLES:  # table names are constants, never input
            self.connection.execute(
                f"DELETE FROM {table} WHERE source_id = $source_id", {"source_id": source_id}
            )

    def _insert(self, batch: Batch) -> None:
        for table in SOURCE_TABLES:
            if batch.rows(table):
                self.connection.register("incoming", batch.arrow(table))
                self.connection.execute(f"INSERT INTO {table} SELECT * FROM incoming")
                self.connection.unregister("incoming")
