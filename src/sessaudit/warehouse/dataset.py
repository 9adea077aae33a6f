"""The warehouse as a Parquet dataset the workers write (`load --parquet DIR` without `--db`), for fleets
too big for one DuckDB file or one writing process; `query --parquet DIR` reads it.

    DIR/.sessaudit-dataset            marker: the layout and the warehouse schema version
    DIR/_manifest.parquet             the committed state: one row per source, naming its file set
    DIR/<table>/<set>.parquet         a task's rows of one table (the seven tables of the warehouse)

A task (a big source alone, small ones batched by bytes: sessaudit.cluster.batches) verifies its sources
with the loader's own per-source function and streams their rows into one Parquet file per table, written
under a temporary name and renamed into place, so a file is whole or absent. The set is named by the
sha256 of its sources' ids and digests: a task retried on another worker writes the same names again. Only
the client writes the manifest, once every task is done, to a temporary file renamed over the old one: an
interrupted or crashed load leaves the previous manifest (or none), never half of one, and files no
manifest names are removed by the next load. Readers go through the manifest.

A re-run reads the manifest: a single-file source whose files (the source and the companions its format
names now) have the size and sha256 recorded is not verified again (the worker hashes it; its findings'
verdict on completeness, recorded at load, still counts); any other is verified and written again, its old
set rewritten without it (a set is never read partly superseded). Directory sources are always verified
again (a new file in the directory may change them).

One load writes a dataset at a time: the client holds an exclusive flock on DIR/.sessaudit-dataset."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Final

import pyarrow as pa  # type: ignore[import-untyped]  # no stubs ship with pyarrow
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from sessaudit.discovery import Candidate, discover
from sessaudit.engine import broken_plugins, discovery_outcome
from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.parallel import ordered_map
from sessaudit.plugin import VerifyOptions
from sessaudit.prices import Prices, PriceTable, load_price_table
from sessaudit.progress import estimated_bytes
from sessaudit.registry import ask, registry
from sessaudit.warehouse.assemble import Stamp, source_batch, source_id_of
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import EvidenceChanged, extract
from sessaudit.warehouse.loader import (
    NOT_LOADED,
    REPLACED,
    SPILL_BYTES,
    SPILL_ROWS,
    UNCHANGED,
    LoadOptions,
    Outcome,
    crashed_load,
    micros,
    outcome_incomplete,
    unique_sources,
    verify_and_extract,
)
from sessaudit.warehouse.parquet import sql_literal
from sessaudit.warehouse.rows import Batch, FactRow, LedgerRow, ToolCallRow
from sessaudit.warehouse.schema import SCHEMA_VERSION, SOURCE_TABLES, arrow_schema, table_columns
from sessaudit.warehouse.writer import FLUSH_ROWS, Pending

MARKER: Final = ".sessaudit-dataset"
MANIFEST: Final = "_manifest.parquet"
LAYOUT: Final = "sessaudit file sets 1"
TEMPORARY: Final = ".tmp"  # the suffix of a file being written (hidden: it starts with a dot too)
EXPORT_MARKER: Final = ".sessaudit-parquet"  # an export's marker (sessaudit.warehouse.parquet)

_MANIFEST_SCHEMA: Final = pa.schema(
    [
        ("real_path", pa.string()),
        ("source_id", pa.string()),
        ("path", pa.string()),
        ("format", pa.string()),
        ("sha256", pa.string()),
        ("bytes", pa.int64()),
        # JSON: {"read": [[real path, bytes, sha256], …] (what the verifier read), "present": [real path, …]
        # (the source and the companions its format names that existed)}
        ("files", pa.string()),
        ("file_set", pa.string()),
        ("tables", pa.list_(pa.string())),  # the tables the set has a file for
        ("loaded_at", pa.timestamp("us", tz="UTC")),
        ("incomplete", pa.list_(pa.string())),  # why it made its load incomplete, when it did
    ]
)


class DatasetError(Exception):
    """The dataset folder cannot be used (a usage error)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One manifest row: a source as it was loaded, and the file set that holds its rows."""

    real_path: str
    source_id: str
    path: str
    format: str | None
    sha256: str | None
    bytes: int
    files: str
    file_set: str
    tables: tuple[str, ...]
    loaded_at: int
    incomplete: tuple[str, ...]

    def recorded(self) -> tuple[list[tuple[str, int, str]], set[str]]:
        """(the files verified: real path, bytes, sha256), and the paths that existed (companions)."""
        found = json.loads(self.files)
        read = [(str(path), int(size), str(sha)) for path, size, sha in found["read"]]
        return read, {str(path) for path in found["present"]}


@dataclass(slots=True)
class Done:
    """One source after its task: verified (`outcome`) and written into `file_set`, or unchanged (None)."""

    real_path: str
    outcome: Outcome | None
    files: str = "{}"
    file_set: str | None = None
    tables: tuple[str, ...] = ()


@dataclass(slots=True)
class SetDone:
    """What one task wrote: its sources, and the rows per table of its set."""

    sources: list[Done]
    rows: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class DatasetResult:
    """What a load into a dataset did. No report: at fleet scale the client keeps no source's details
    (the dataset's own `sources` and `findings` tables hold them), only these counts and lines."""

    incomplete: list[str] = field(default_factory=list)  # why the load is incomplete, as `load` says
    new: int = 0
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (path, what changed)
    unchanged: int = 0  # found as they were loaded: their rows stay
    hashed: int = 0  # of them: found with the files' sizes and sha256 recorded, hashed and not verified again
    rows: dict[str, int] = field(default_factory=dict)  # rows written per table by this load


# --- the folder --------------------------------------------------------------------------------------------
def check_dataset_directory(directory: Path) -> None:
    """Refuse a target that is not a folder, an export, or a non-empty folder sessaudit did not write."""
    if directory.exists() and not directory.is_dir():
        raise DatasetError(f"--parquet {directory}: not a directory")
    if not directory.is_dir() or not any(directory.iterdir()):
        return
    if (directory / EXPORT_MARKER).is_file():
        raise DatasetError(
            f"--parquet {directory}: it holds an export of a DuckDB warehouse (load --db … --parquet); "
            "a dataset loaded without --db needs its own folder"
        )
    marker = directory / MARKER
    if not marker.is_file():
        raise DatasetError(
            f"--parquet {directory}: the folder is not empty and holds no sessaudit dataset ({MARKER}); "
            "name an empty or new folder"
        )
    try:
        found = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DatasetError(f"--parquet {directory}: its {MARKER} cannot be read: {error}") from None
    if not isinstance(found, dict) or found.get("layout") != LAYOUT:
        raise DatasetError(f"--parquet {directory}: {MARKER} names another layout ({found!r})")
    if found.get("schema_version") != SCHEMA_VERSION:
        raise DatasetError(
            f"--parquet {directory}: the dataset has warehouse schema version {found.get('schema_version')}, "
            f"this sessaudit writes version {SCHEMA_VERSION}; load into a new folder"
        )


def read_manifest(directory: Path) -> dict[str, Entry]:
    """The committed manifest by real path (empty for a new dataset)."""
    path = directory / MANIFEST
    if not path.exists():
        return {}
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise DatasetError(f"--parquet {directory}: {MANIFEST} cannot be read: {error}") from None
    entries = {}
    for row in table.to_pylist():
        moment = row["loaded_at"]
        entry = Entry(
            real_path=row["real_path"],
            source_id=row["source_id"],
            path=row["path"],
            format=row["format"],
            sha256=row["sha256"],
            bytes=row["bytes"],
            files=row["files"],
            file_set=row["file_set"],
            tables=tuple(row["tables"] or ()),
            loaded_at=micros(moment) if moment is not None else 0,
            incomplete=tuple(row["incomplete"] or ()),
        )
        entries[entry.real_path] = entry
    return entries


def set_files(directory: Path, entries: Sequence[Entry]) -> dict[str, list[Path]]:
    """Per table, the files the manifest's sets have for it (each set once, in manifest order)."""
    found: dict[str, list[Path]] = {table: [] for table in SOURCE_TABLES}
    seen: set[str] = set()
    for entry in entries:
        if entry.file_set in seen:
            continue
        seen.add(entry.file_set)
        for table in entry.tables:
            found[table].append(directory / table / f"{entry.file_set}.parquet")
    return found


def _write_manifest(directory: Path, entries: Sequence[Entry]) -> None:
    """The manifest, committed: written whole beside the old one, then renamed over it."""
    columns: dict[str, list[Any]] = {name: [] for name in _MANIFEST_SCHEMA.names}
    for entry in sorted(entries, key=lambda item: item.real_path):
        for name in _MANIFEST_SCHEMA.names:
            columns[name].append(getattr(entry, name) if name != "tables" else list(entry.tables))
    columns["incomplete"] = [list(item) for item in columns["incomplete"]]
    table = pa.Table.from_pydict(columns, schema=_MANIFEST_SCHEMA)
    temporary = directory / f".manifest-{uuid.uuid4().hex}{TEMPORARY}"
    try:
        pq.write_table(table, temporary, compression="zstd")
        _fsync(temporary)
        os.replace(temporary, directory / MANIFEST)
        _fsync(directory)
    finally:
        temporary.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sweep(directory: Path, entries: Sequence[Entry]) -> None:
    """Remove what no committed manifest names: files of superseded or uncommitted sets, and temporary
    files of writes that never finished (a dead worker's, an interrupted load's)."""
    live = {path for files in set_files(directory, entries).values() for path in files}
    for table in SOURCE_TABLES:
        folder = directory / table
        if not folder.is_dir():
            continue
        for item in folder.iterdir():
            if (
                item.is_file()
                and item not in live
                and (item.suffix == ".parquet" or item.name.endswith(TEMPORARY))
            ):
                item.unlink(missing_ok=True)
    for item in directory.iterdir():
        if item.name.startswith(".manifest-") and item.name.endswith(TEMPORARY):
            item.unlink(missing_ok=True)


def _lock(directory: Path) -> int:
    """The dataset's writer lock (the marker, flocked); DatasetError when another load holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / MARKER
    if not marker.exists():
        body = {"layout": LAYOUT, "schema_version": SCHEMA_VERSION, "manifest": MANIFEST}
        marker.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    descriptor = os.open(marker, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        raise DatasetError(f"--parquet {directory}: another load is writing this dataset") from None
    return descriptor


# --- on a worker -------------------------------------------------------------------------------------------
_PRICES: dict[tuple[int, PriceTable | None], Prices] = {}  # per worker process: built once per load


def _prices(loaded_at: int, table: PriceTable | None) -> Prices:
    key = (loaded_at, table)
    if key not in _PRICES:
        _PRICES.clear()
        _PRICES[key] = Prices(loaded_at, table)
    return _PRICES[key]


class SetWriter:
    """One task's file set: rows of every table streamed into one Parquet file each (a temporary name
    until `finish`), in row groups of about FLUSH_ROWS rows."""

    def __init__(self, directory: Path, prices: Prices) -> None:
        self.directory = directory
        self.token = uuid.uuid4().hex
        self.pending = Pending(prices)
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.dropped: set[str] = set()
        self.patches: dict[tuple[str, int, str], str] = {}

    def add(self, batch: Batch) -> None:
        if self.pending.add(batch):
            self.flush()

    def spill(self, facts: list[FactRow], usage: list[LedgerRow], calls: list[ToolCallRow], _: int) -> None:
        self.add(Batch(facts=facts, usage=usage, tool_calls=calls))

    def flush(self) -> None:
        batch = self.pending.take()
        for table in SOURCE_TABLES:
            if batch.rows(table):
                self._writer(table).write_table(batch.arrow(table))

    def _temporary(self, table: str, step: str = "") -> Path:
        return self.directory / table / f".{self.token}{step}{TEMPORARY}"

    def _writer(self, table: str) -> pq.ParquetWriter:
        if table not in self.writers:
            (self.directory / table).mkdir(parents=True, exist_ok=True)
            self.writers[table] = pq.ParquetWriter(
                self._temporary(table), arrow_schema(table), compression="zstd"
            )
        return self.writers[table]

    def finish(self, name: str | None) -> tuple[tuple[str, ...], dict[str, int]]:
        """Close the files and give them the set's name (None: nothing of the set is kept); returns the
        tables written and their rows."""
        self.flush()
        for writer in self.writers.values():
            writer.close()
        tables, rows = [], {}
        try:
            for table in list(self.writers):
                written = self._temporary(table)
                if name is None:
                    continue
                if self.dropped or (table == "facts" and self.patches):
                    written = self._rewrite(table, written)
                count = pq.ParquetFile(written).metadata.num_rows
                if count:
                    os.replace(written, self.directory / table / f"{name}.parquet")
                    tables.append(table)
                    rows[table] = count
        finally:
            for table in self.writers:
                self._temporary(table).unlink(missing_ok=True)
                self._temporary(table, "-rewritten").unlink(missing_ok=True)
        return tuple(tables), rows

    def abort(self) -> None:
        """The task failed: close what is open, keep nothing (a half-written file is never renamed)."""
        for table, writer in self.writers.items():
            with contextlib.suppress(Exception):
                writer.close()
            self._temporary(table).unlink(missing_ok=True)
            self._temporary(table, "-rewritten").unlink(missing_ok=True)

    def _rewrite(self, table: str, written: Path) -> Path:
        """The table's file without the rows of dropped sources, facts with the run ids learnt late."""
        target = self._temporary(table, "-rewritten")
        dropped = pa.array(sorted(self.dropped), pa.string())

        def change(part: pa.RecordBatch) -> pa.RecordBatch:
            if self.dropped:
                part = part.filter(pc.invert(pc.is_in(part.column("source_id"), value_set=dropped)))
            return _patched(part, self.patches) if table == "facts" and self.patches else part

        _copy_rows(written, target, table, change)
        return target


def _copy_rows(
    source: Path, target: Path, table: str, change: Callable[[pa.RecordBatch], pa.RecordBatch]
) -> int:
    """A set file's rows, each batch passed through `change`, written to `target`; the rows written."""
    count = 0
    with pq.ParquetWriter(target, arrow_schema(table), compression="zstd") as writer:
        for part in pq.ParquetFile(source).iter_batches(batch_size=FLUSH_ROWS):
            part = change(part)
            count += part.num_rows
            writer.write_batch(part)
    return count


def _patched(part: pa.RecordBatch, patches: dict[tuple[str, int, str], str]) -> pa.RecordBatch:
    """Facts given the run ids learnt after they were spilled (only where they have none)."""
    names = part.schema.names
    sources, lines, ids, runs = (
        part.column(name).to_pylist() for name in ("source_id", "line", "id", "run_id")
    )
    patched = [
        run if run is not None else patches.get((source, line, fact_id))
        for source, line, fact_id, run in zip(sources, lines, ids, runs, strict=True)
    ]
    columns = [part.column(name) for name in names]
    columns[names.index("run_id")] = pa.array(patched, pa.string())
    return pa.RecordBatch.from_arrays(columns, schema=part.schema)


def file_sha256(real_path: str) -> tuple[int, str]:
    """A file's size and sha256, read as evidence is (read-only, no lock)."""
    stream, size = open_evidence(real_path)
    digest = hashlib.sha256()
    with stream:
        for chunk in read_chunks(stream, size):
            digest.update(chunk)
    return size, digest.hexdigest()


def unchanged(candidate: Candidate, entry: Entry | None, present: set[str]) -> bool:
    """Whether a source may be left as loaded: one file (a directory source is always verified again),
    the same files as recorded (`present`: the source and the companions its format names that exist
    now), each with the size and sha256 recorded."""
    if entry is None or candidate.problem is not None:
        return False
    plugin = registry().get(candidate.format)
    if plugin is None or ask(plugin, "is_directory_source", candidate.real_path):
        return False
    read, recorded = entry.recorded()
    if present != recorded:
        return False
    try:
        return all(file_sha256(path) == (size, sha) for path, size, sha in read)
    except OSError:
        return False  # verification says why it cannot be read


def present_files(candidate: Candidate) -> set[str]:
    """The source's path and those of the companions its format names that exist."""
    plugin = registry().get(candidate.format)
    real_path = os.path.realpath(candidate.real_path)
    owned = (ask(plugin, "owned", real_path) or ()) if plugin is not None else ()
    return {real_path, *(os.path.realpath(item) for item in owned if os.path.lexists(item))}


def set_name(members: Sequence[tuple[str, str]]) -> str:
    """A file set's name: the sha256 of its sources' ids and digests (the same sources, the same name)."""
    text = "\n".join(f"{source_id} {sha256}" for source_id, sha256 in sorted(members))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_set(
    jobs: list[tuple[Candidate, Entry | None]],
    directory: str,
    stamp: Stamp,
    options: VerifyOptions,
    price_table: PriceTable | None,
) -> SetDone:
    """One task: each source left as it is when unchanged, else verified (`verify_and_extract`, as `load`
    does) and its rows streamed into the task's file set."""
    sink = SetWriter(Path(directory), _prices(stamp.loaded_at, price_table))
    done: list[Done] = []
    members: list[tuple[str, str]] = []
    try:
        for candidate, entry in jobs:
            real_path = os.path.realpath(candidate.real_path)
            present = present_files(candidate)
            if unchanged(candidate, entry, present):
                done.append(Done(real_path, None))
                continue
            # loaded before with the same sha256 (verified again, as a directory source always is): kept
            loaded = {real_path: entry.sha256} if entry is not None else {}
            verified = verify_and_extract(
                candidate, loaded, stamp, options, extract_up_to=-1, single_pass=False
            )
            assert isinstance(verified, Outcome)  # one_pass is off: a candidate never comes back
            if verified.status == UNCHANGED:
                done.append(Done(real_path, verified))
                continue
            outcome = _written(verified, sink, stamp, options.limits.max_line_bytes)
            read = [[os.path.realpath(item.path), item.bytes, item.sha256] for item in outcome.source.files]
            done.append(Done(real_path, outcome, json.dumps({"read": read, "present": sorted(present)})))
            if outcome.status != NOT_LOADED:
                members.append((source_id_of(real_path), str(outcome.source.sha256)))
        name = set_name(members) if members else None
        tables, rows = sink.finish(name)
    except BaseException:
        sink.abort()
        raise
    for item in done:
        if item.outcome is not None and item.outcome.status not in (NOT_LOADED, UNCHANGED):
            item.file_set, item.tables = name, tables
    return SetDone(done, rows)


def _written(outcome: Outcome, sink: SetWriter, stamp: Stamp, max_line_bytes: int) -> Outcome:
    """A verified source's rows, added to the set; a source whose bytes are no longer the verified ones
    is dropped from it, not loaded."""
    source_id = source_id_of(outcome.real_path)
    into = Extraction(spill=sink.spill, spill_rows=SPILL_ROWS, spill_bytes=SPILL_BYTES)
    try:
        extract(outcome.source, outcome.real_path, outcome.findings, source_id, into, max_line_bytes)
    except (EvidenceChanged, OSError) as error:
        sink.dropped.add(source_id)
        detail = str(error) if isinstance(error, EvidenceChanged) else f"cannot be read again: {error}"
        return replace(outcome, status=NOT_LOADED, detail=detail, streamed=False)
    sink.add(source_batch(outcome.source, outcome.real_path, outcome.findings, into, stamp))
    for line, fact_id, run_id in into.patches:
        sink.patches[(source_id, line, fact_id)] = run_id
    return replace(outcome, streamed=False)


def rewrite_set(
    directory: Path, old: str, tables: tuple[str, ...], keep: list[tuple[str, str]]
) -> tuple[str, tuple[str, ...]]:
    """A set some of whose sources were loaded again elsewhere, written again with the rows of `keep`
    (source id, sha256) only: the name those make, and the tables it has files for."""
    kept = pa.array(sorted(source_id for source_id, _ in keep), pa.string())
    name = set_name(keep)
    written = []
    for table in tables:
        temporary = directory / table / f".{uuid.uuid4().hex}{TEMPORARY}"
        try:
            count = _copy_rows(
                directory / table / f"{old}.parquet",
                temporary,
                table,
                lambda part: part.filter(pc.is_in(part.column("source_id"), value_set=kept)),
            )
            if count:
                os.replace(temporary, directory / table / f"{name}.parquet")
                written.append(table)
        finally:
            temporary.unlink(missing_ok=True)
    return name, tuple(written)


# --- on the client -----------------------------------------------------------------------------------------
def load_dataset(paths: list[str], directory: Path, options: LoadOptions | None = None) -> DatasetResult:
    """Verify `paths` and write what changed into the Parquet dataset `directory` (created when missing)."""
    options = options if options is not None else LoadOptions()
    check_dataset_directory(directory)
    price_table = load_price_table(options.prices) if options.prices is not None else None
    discovery = discover(paths, max_files=options.verify.limits.max_files)
    directory = directory.absolute()
    lock = _lock(directory)
    try:
        entries = read_manifest(directory)
        _sweep(directory, list(entries.values()))  # what an interrupted load left
        stamp = Stamp(options.version, micros(options.clock()))
        candidates = unique_sources(discovery.candidates)
        jobs = [(item, entries.get(os.path.realpath(item.real_path))) for item in candidates]
        task = partial(
            write_set, directory=str(directory), stamp=stamp, options=options.verify, price_table=price_table
        )
        sizes = [estimated_bytes(item.real_path) for item in candidates]
        result = DatasetResult()
        updated = dict(entries)
        superseded: set[str] = set()  # the sets some of whose sources were loaded again
        for job, item, rows in _run(task, jobs, sizes, options):
            for table, count in rows.items():
                result.rows[table] = result.rows.get(table, 0) + count
            _, entry = job
            if item.outcome is None:
                assert entry is not None
                result.unchanged += 1
                result.hashed += 1
                result.incomplete.extend(entry.incomplete)
                continue
            outcome = item.outcome
            result.incomplete.extend(outcome_incomplete(outcome))
            if outcome.status == UNCHANGED:
                result.unchanged += 1
                continue
            if outcome.status == NOT_LOADED:
                continue  # a source loaded before keeps its old rows
            if entry is not None:
                outcome.status = REPLACED
                outcome.detail = f"sha256 {entry.sha256} → {outcome.source.sha256}"
                result.replaced.append((outcome.source.path, outcome.detail))
                superseded.add(entry.file_set)
            else:
                result.new += 1
            updated[item.real_path] = _entry(item, outcome, stamp)
        walked = discovery_outcome(discovery, allow_empty=options.verify.allow_empty)[1]
        result.incomplete[:0] = broken_plugins(registry())
        result.incomplete.extend(walked)
        _rewrite_superseded(directory, updated, superseded)
        _write_manifest(directory, list(updated.values()))
        _sweep(directory, list(updated.values()))
    finally:
        os.close(lock)
    return result


def _entry(item: Done, outcome: Outcome, stamp: Stamp) -> Entry:
    source = outcome.source
    assert item.file_set is not None
    return Entry(
        real_path=item.real_path,
        source_id=source_id_of(item.real_path),
        path=source.path,
        format=source.format,
        sha256=source.sha256,
        bytes=sum(file.bytes for file in source.files),
        files=item.files,
        file_set=item.file_set,
        tables=item.tables,
        loaded_at=stamp.loaded_at,
        incomplete=tuple(outcome_incomplete(outcome)),
    )


def _run(
    task: Callable[[list[tuple[Candidate, Entry | None]]], SetDone],
    jobs: list[tuple[Candidate, Entry | None]],
    sizes: list[int],
    options: LoadOptions,
) -> Iterator[tuple[tuple[Candidate, Entry | None], Done, dict[str, int]]]:
    """Each job with what its task made of it (and the rows its set got, with its task's first source),
    in input order: on the cluster, or in `jobs` processes."""
    from sessaudit.cluster import batches

    groups = batches(sizes)
    grouped = [[jobs[index] for index in group] for group in groups]
    if options.cluster is not None:
        from sessaudit.cluster import cluster_map

        finished: Iterator[SetDone] = cluster_map(
            task,
            grouped,
            address=options.cluster,
            sizes=[sum(sizes[index] for index in group) for group in groups],
            paths=[tuple(job[0].real_path for job in group if job[0].problem is None) for group in grouped],
            crashed=_crashed_set,
            task=partial(_each_set, task),
            alone=True,
        )
    else:
        finished = ordered_map(
            task,
            grouped,
            jobs=options.jobs,
            sizes=[sum(sizes[index] for index in group) for group in groups],
            start_method="spawn",
            window=2 * options.jobs,
        )
    for group, made in zip(grouped, finished, strict=True):
        for index, (job, item) in enumerate(zip(group, made.sources, strict=True)):
            yield job, item, made.rows if index == 0 else {}


def _each_set(task: Callable[[Any], SetDone], groups: list[Any]) -> list[SetDone]:
    return [task(group) for group in groups]


def _crashed_set(group: list[tuple[Candidate, Entry | None]], reason: str) -> SetDone:
    """A task that ended two workers: its sources not verified and not loaded (tried again next time).
    A batch is retried source by source first (sessaudit.cluster), so this is one source."""
    return SetDone(
        [
            Done(os.path.realpath(candidate.real_path), crashed_load(candidate, reason))
            for candidate, _ in group
        ]
    )


def _rewrite_superseded(
    directory: Path,
    updated: dict[str, Entry],
    superseded: set[str],
) -> None:
    """Write again, without the sources that left them, the sets whose other sources stay as they were
    (here: a set holds at most a batch's bytes, and a rewrite only copies rows)."""
    staying_in: dict[str, list[Entry]] = {old: [] for old in superseded}
    for entry in updated.values():  # one pass over the manifest, not one per superseded set
        if entry.file_set in staying_in:
            staying_in[entry.file_set].append(entry)
    for old, staying in staying_in.items():
        if not staying:
            continue  # every source of the set was loaded again: the set goes
        keep = [(entry.source_id, str(entry.sha256)) for entry in staying]
        name, tables = rewrite_set(directory, old, staying[0].tables, keep)
        for entry in staying:
            updated[entry.real_path] = replace(entry, file_set=name, tables=tables)


def dataset_views(directory: Path) -> tuple[list[str], list[Path]]:
    """SQL that makes a DuckDB connection see the dataset's committed rows as the warehouse's tables,
    with the warehouse's own column types (see `query --parquet`), and every file those views read."""
    check_dataset_directory(directory)
    if not (directory / MARKER).is_file():
        raise DatasetError(f"--parquet {directory}: no sessaudit dataset there ({MARKER})")
    entries = read_manifest(directory)
    files = set_files(directory, list(entries.values()))
    statements = []
    for table, columns in table_columns().items():
        if table not in SOURCE_TABLES:
            continue
        if not files[table]:
            continue
        listed = ", ".join(sql_literal(path) for path in files[table])
        selected = ", ".join(f'CAST("{name}" AS {kind}) AS "{name}"' for name, kind in columns)
        statements.append(f"DROP TABLE {table}")
        statements.append(f"CREATE VIEW {table} AS SELECT {selected} FROM read_parquet([{listed}])")
    return statements, [path for table in SOURCE_TABLES for path in files[table]]
