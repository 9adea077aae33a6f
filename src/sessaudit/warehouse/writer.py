"""The one writer of a load: one transaction, fed batches of rows while later sources are still verified.

DuckDB works without holding Python's lock, so inserting on a writer thread overlaps the database's work
with verification; and rows leave memory as they are written, so a fleet of any size loads in bounded
memory. Each flush inserts one Arrow table per table (never row by row); a replaced source's old rows are
deleted just before its new ones arrive. The first failure rolls everything back.

A source extracted here (`start_source` … `end_source` or `discard_source`) arrives in bounded batches: its
facts, ledger rows and finished tool calls first, as they are read, then its other rows once its bytes are
proven the verified ones. Until then a replaced source's old rows of those tables stay, set aside under
another source id, so evidence that changed after verification leaves the warehouse as it was. At most
`MAX_QUEUED` batches wait for the writer thread (backpressure). Ledger rows are priced as they are added
(`prices`), wherever they were extracted."""

from __future__ import annotations

import contextlib
import sys
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Final

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]  # no stubs ship with pyarrow

from sessaudit.prices import Counts, Prices
from sessaudit.warehouse.rows import Batch, FactRow, LedgerRow, ToolCallRow
from sessaudit.warehouse.schema import SOURCE_TABLES

FLUSH_ROWS: Final = 25_000  # rows (all tables) gathered before they are handed to the writer
FLUSH_BYTES: Final = 2 << 20  # or this many payload characters, whichever comes first
LARGE_VALUE_FACTOR: Final = 12  # DuckDB memory per byte of the largest JSON value inserted (see _insert)
MAX_QUEUED: Final = 2  # batches handed to the writer thread and not written yet
# How long the interpreter lets one thread run before handing the GIL to another that waits for it, while
# a writer is open. DuckDB's Python client takes the GIL many times while one INSERT scans an Arrow
# batch; at Python's default (5 ms) each take waits for the extracting thread's interval to run out, and
# a batch took 20 times as long as on an idle interpreter (measured: 0.08 s idle, 1.5 s beside a busy
# thread, 0.12 s at 0.1 ms). The extracting thread pays only when the writer is waiting.
SWITCH_INTERVAL: Final = 1e-4
# the tables a streamed source's rows reach before its end
STREAMED_TABLES: Final = ("facts", "usage", "tool_calls")
_PATCH_SCHEMA: Final = pa.schema([("line", pa.int64()), ("id", pa.string()), ("run_id", pa.string())])


class Writer:
    """Use as a context manager: `add()` batches, then `commit()`; leaving without commit rolls back.

    Only the writer thread touches the connection between construction and `commit()`."""

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        memory_limit: int | None = None,
        prices: Prices | None = None,
    ) -> None:
        self.connection = connection
        self.memory_limit = memory_limit  # DuckDB's memory_limit in bytes, when the caller set one
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessaudit-writer")
        self.futures: list[Future[None]] = []
        self.pending = Pending(prices)  # None: ledger rows keep the cost they have (none)
        self.inserts: deque[Future[None]] = deque()
        self.streamed_rows = dict.fromkeys(STREAMED_TABLES, 0)  # of the source being streamed
        self.counts = dict.fromkeys(SOURCE_TABLES, 0)
        self.committed = False
        self.switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self.switch_interval, SWITCH_INTERVAL))
        self._submit(self._begin, None)

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            if not self.committed:  # an error, here or on the writer thread: undo whatever was written
                wait(self.futures)
                with contextlib.suppress(duckdb.Error):
                    self.connection.execute("ROLLBACK")
            self.executor.shutdown(wait=True)
        finally:
            sys.setswitchinterval(self.switch_interval)

    def replace(self, source_id: str) -> None:
        """Delete every row of a source (before any batch added after this call is written)."""
        self.flush()
        self._submit(self._delete, source_id)

    def add(self, batch: Batch) -> None:
        if self.pending.add(batch):
            self.flush()

    def add_streamed(
        self, facts: list[FactRow], usage: list[LedgerRow], calls: list[ToolCallRow], _payload_bytes: int
    ) -> None:
        """Facts, ledger rows and finished tool calls of the source being streamed (an `Extraction`'s
        spill)."""
        self.streamed_rows["facts"] += len(facts)
        self.streamed_rows["usage"] += len(usage)
        self.streamed_rows["tool_calls"] += len(calls)
        self.add(Batch(facts=facts, usage=usage, tool_calls=calls))

    def flush(self) -> None:
        if self.pending.rows:
            batch = self.pending.take()
            for table in SOURCE_TABLES:
                self.counts[table] += len(batch.rows(table))
            while len(self.inserts) >= MAX_QUEUED:  # memory holds a bounded number of batches
                self.inserts.popleft().result()
            self.inserts.append(self._submit(self._insert, batch))

    def start_source(self, source_id: str, *, replacing: bool) -> None:
        """A source is about to be streamed; when `replacing`, its old rows stay until `end_source`."""
        self.streamed_rows = dict.fromkeys(STREAMED_TABLES, 0)
        if replacing:
            self.flush()
            self._submit(self._set_aside, source_id)

    def end_source(
        self, source_id: str, rest: Batch, patches: list[tuple[int, str, str]], *, replacing: bool
    ) -> None:
        """The streamed source proved whole: give spilled facts their late run ids, drop its old rows
        (when it replaces them), then add the rest of its rows."""
        if patches or replacing:
            self.flush()
        if patches:
            self._submit(self._patch, (source_id, patches))
        if replacing:
            self._submit(self._delete_old, source_id)
        self.add(rest)

    def discard_source(self, source_id: str, *, replacing: bool) -> None:
        """The streamed source is not loaded: delete what was written of it (its old rows stay)."""
        if not replacing and not any(self.streamed_rows.values()):
            return  # nothing of it was handed over: nothing to delete, nothing set aside
        self.flush()
        for table in STREAMED_TABLES:
            self.counts[table] -= self.streamed_rows[table]
        self._submit(self._delete_new, (source_id, replacing))

    def commit(self) -> dict[str, int]:
        """Write what is pending, wait for every write (re-raising the first failure), commit."""
        self.flush()
        for future in self.futures:
            future.result()
        self.connection.execute("COMMIT")
        self.committed = True
        return dict(self.counts)

    def _submit(self, function: Callable[[Any], None], argument: Any) -> Future[None]:
        future = self.executor.submit(function, argument)
        self.futures.append(future)
        return future

    # --- on the writer thread ------------------------------------------------------------------------
    def _begin(self, _: None) -> None:
        self.connection.execute("BEGIN TRANSACTION")

    def _delete(self, source_id: str) -> None:
        for table in SOURCE_TABLES:  # table names are constants, never input
            self.connection.execute(
                f"DELETE FROM {table} WHERE source_id = $source_id", {"source_id": source_id}
            )

    def _insert(self, batch: Batch) -> None:
        # DuckDB needs about ten times a JSON value's size to take it in (measured: a 24 MiB line fails at
        # 128 MB, passes at 256 MB); a failed insert would abort the whole transaction, so a batch holding
        # a huge line gets a larger limit for its insert only (memory bounded by the line, not the source)
        largest = max((_utf8_bound(row.payload) for row in batch.facts if row.payload), default=0)
        needed = LARGE_VALUE_FACTOR * largest + (32 << 20)
        if self.memory_limit is not None and needed > self.memory_limit:
            self.connection.execute(f"SET memory_limit = '{needed}B'")
            try:
                self._insert_tables(batch)
            finally:
                self.connection.execute(f"SET memory_limit = '{self.memory_limit}B'")
        else:
            self._insert_tables(batch)

    def _insert_tables(self, batch: Batch) -> None:
        for table in SOURCE_TABLES:
            if batch.rows(table):
                # through a reader: a registered Arrow table stays referenced (its buffers alive) until
                # the transaction ends, a consumed reader's batches do not
                arrow = batch.arrow(table)
                self.connection.register(
                    "incoming", pa.RecordBatchReader.from_batches(arrow.schema, arrow.to_batches())
                )
                del arrow
                self.connection.execute(f"INSERT INTO {table} SELECT * FROM incoming")
                self.connection.unregister("incoming")

    def _set_aside(self, source_id: str) -> None:
        """Give a replaced source's old rows of the streamed tables another source id until its end."""
        for table in STREAMED_TABLES:
            self.connection.execute(
                f"UPDATE {table} SET source_id = $aside WHERE source_id = $source_id",
                {"source_id": source_id, "aside": _aside(source_id)},
            )

    def _delete_old(self, source_id: str) -> None:
        """Every old row of a replaced source (those of the streamed tables were set aside)."""
        for table in SOURCE_TABLES:
            self.connection.execute(
                f"DELETE FROM {table} WHERE source_id = $source_id",
                {"source_id": _aside(source_id) if table in STREAMED_TABLES else source_id},
            )

    def _delete_new(self, argument: tuple[str, bool]) -> None:
        """The rows a streamed source got in this load; its old ones, set aside, come back."""
        source_id, replacing = argument
        for table in STREAMED_TABLES:
            self.connection.execute(
                f"DELETE FROM {table} WHERE source_id = $source_id", {"source_id": source_id}
            )
            if replacing:
                self.connection.execute(
                    f"UPDATE {table} SET source_id = $source_id WHERE source_id = $aside",
                    {"source_id": source_id, "aside": _aside(source_id)},
                )

    def _patch(self, argument: tuple[str, list[tuple[int, str, str]]]) -> None:
        """Run ids learnt after their facts were written (a user entry's run, from a later runStarted)."""
        source_id, patches = argument
        lines, ids, runs = zip(*patches, strict=True)
        table = pa.Table.from_arrays(
            [pa.array(lines, pa.int64()), pa.array(ids, pa.string()), pa.array(runs, pa.string())],
            schema=_PATCH_SCHEMA,
        )
        self.connection.register("patches", table)
        self.connection.execute(
            "UPDATE facts SET run_id = patches.run_id FROM patches WHERE facts.source_id = $source_id "
            "AND facts.line = patches.line AND facts.id = patches.id AND facts.run_id IS NULL",
            {"source_id": source_id},
        )
        self.connection.unregister("patches")


class Pending:
    """Rows gathered for one bulk write, ledger rows priced as they come (`prices`; None: as they are)."""

    def __init__(self, prices: Prices | None) -> None:
        self.prices = prices
        self.batch = Batch()
        self.rows = 0
        self.bytes = 0  # payload characters

    def add(self, batch: Batch) -> bool:
        """Gather `batch`; True when what is gathered makes a write (FLUSH_ROWS rows, or FLUSH_BYTES)."""
        if self.prices is not None and batch.usage:
            batch.usage = [price_row(self.prices, row) for row in batch.usage]
        self.batch.extend(batch)
        self.rows += sum(len(batch.rows(table)) for table in SOURCE_TABLES)
        self.bytes += sum(len(row.payload) for row in batch.facts if row.payload is not None)
        return self.rows >= FLUSH_ROWS or self.bytes >= FLUSH_BYTES

    def take(self) -> Batch:
        """What is gathered, leaving nothing."""
        batch, self.batch, self.rows, self.bytes = self.batch, Batch(), 0, 0
        return batch


def price_row(prices: Prices, row: LedgerRow) -> LedgerRow:
    """The ledger row with its cost, the cost's price source, or why it has none."""
    cost = prices.price(
        Counts(
            row.provider,
            row.model,
            row.input,
            row.output,
            row.cache_read,
            row.cache_write,
            row.cache_write_5m,
            row.cache_write_1h,
            row.timestamp,
        )
    )
    return row._replace(
        cost_usd=cost.usd, price_source=cost.source, price_since=cost.since, price_note=cost.note
    )


def _aside(source_id: str) -> str:
    """The source id a replaced source's old rows have while its new ones arrive (never a real one: those
    are 16 hex digits)."""
    return f"{source_id}:replaced"


def _utf8_bound(payload: str | bytes) -> int:
    """The payload's size in UTF-8 (at most, for text: 3 bytes a character)."""
    return len(payload) if isinstance(payload, bytes) else 3 * len(payload)
