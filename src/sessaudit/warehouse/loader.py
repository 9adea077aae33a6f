"""load(paths) → LoadResult: verify every source as `verify` does, then load what changed into DuckDB.

Each source is verified by the engine's own per-source step (`verify_candidate`, what `audit` runs for each
source), so its findings stay attributed to it and `--jobs N` can verify in N processes; the assembled
report equals `audit(paths)`'s (a test proves it). A source already loaded with the same sha256 is left
as it is; a changed one (same real path, another sha256) has its rows replaced; all in one transaction,
written in Arrow batches by writer.py while later sources are verified.

Memory is bounded by the batch size, not by the size of a source: a source is extracted here, streamed
from its verified bytes in chunks (hashed as they are read), its rows handed to the writer in bounded
batches. In one process (one job, or one source), a source new to the warehouse whose format extracts
in one pass (WarehousePart.one_pass) is read once: its rows are extracted from the verifier's own decoded
lines as they are checked,
and only when that cannot be the verified history exactly is it read a second time. With `--jobs`, a
worker process verifies; it also extracts a source of at most `EXTRACT_IN_WORKER_BYTES` (the rows
pickled back are small then; a new one in the same single pass), and at most 2 × jobs
results wait."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from multiprocessing import get_context
from pathlib import Path

import duckdb

from sessaudit import __version__
from sessaudit.discovery import Candidate, Discovery, discover
from sessaudit.engine import (
    broken_plugins,
    crashed_outcome,
    discovery_outcome,
    source_incomplete,
    summarise,
    verify_candidate,
)
from sessaudit.model import Finding, Report, Settings, Source, Tool
from sessaudit.parallel import ordered_map
from sessaudit.plugin import DEFAULT_OPTIONS, VerifyOptions
from sessaudit.prices import Prices, load_price_table
from sessaudit.progress import estimated_bytes
from sessaudit.registry import registry
from sessaudit.warehouse.assemble import Stamp, source_batch, source_id_of
from sessaudit.warehouse.dbfile import damaged_message, foreign_reason, open_failure
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import EvidenceChanged, extract, warehouse_part
from sessaudit.warehouse.parquet import check_directory, export_parquet
from sessaudit.warehouse.rows import Batch
from sessaudit.warehouse.schema import create_schema
from sessaudit.warehouse.writer import Writer

LOADED, UNCHANGED, REPLACED, NOT_LOADED = "loaded", "unchanged", "replaced", "not-loaded"
EXTRACT_IN_WORKER_BYTES = 4 << 20  # with --jobs, a worker extracts a source this small; others stream
# with more than one job, a new source this big (of a format with WarehousePart.beside) is verified by a
# worker process while this one
# extracts it (WholeFile); a smaller one in one pass here (a spawned worker costs about a second)
BESIDE_BYTES = 48 << 20
SPILL_ROWS = 50_000  # a streamed source hands its facts and ledger rows to the writer in batches this big
SPILL_BYTES = 2 << 20  # … or with this many payload characters
ROW_GROUP_SIZE = 2048  # rows per DuckDB row group of the warehouse file (see open_database)
DUCKDB_MEMORY = 64 << 20  # DuckDB's memory limit while loading (raised for a batch with a huge line)


class WarehouseError(Exception):
    """The database cannot be used (a usage error): it is some other file."""


@dataclass(frozen=True, slots=True)
class LoadOptions:
    jobs: int = 1
    parquet: Path | None = None  # also write the warehouse as a Parquet dataset there
    verify: VerifyOptions = DEFAULT_OPTIONS
    version: str = __version__
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    # in one process, a new source (of a format with WarehousePart.one_pass) is extracted in the verifier's
    # own pass;
    # False: verified, then read again to be extracted (the reference the single pass is tested against)
    single_pass: bool = True
    # a user price table (schemas/prices.v1.schema.json) overriding genai-prices' bundled snapshot
    prices: Path | None = None
    # verify and extract on the Dask cluster at this address (sessaudit.cluster) instead of `jobs` processes
    cluster: str | None = None


@dataclass(slots=True)
class Outcome:
    """One source after verification: its report entry and findings, and what loading does with it."""

    source: Source
    findings: list[Finding]
    real_path: str
    named: bool
    status: str
    batch: Batch | None = None
    detail: str | None = None
    streamed: bool = False  # verified only: its rows are extracted by the loading process, streaming


@dataclass(slots=True)
class LoadResult:
    report: Report
    incomplete: list[str] = field(default_factory=list)  # why the load is incomplete (exit 3), one line each
    outcomes: list[Outcome] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)  # rows inserted per table
    exported: dict[str, int] | None = None  # rows written to the Parquet dataset per table

    def paths(self, status: str) -> list[str]:
        return [item.source.path for item in self.outcomes if item.status == status]


def load_warehouse(paths: list[str], database: Path, options: LoadOptions = LoadOptions()) -> LoadResult:
    """Verify `paths` and load them into the DuckDB file `database` (created when missing)."""
    if options.parquet is not None:
        check_directory(options.parquet)
    table = load_price_table(options.prices) if options.prices is not None else None  # PricesFileError
    refuse_foreign(database)
    discovery = discover(paths, max_files=options.verify.limits.max_files)
    connection = open_database(database)
    try:
        try:  # the existing warehouse is read before anything is written to it
            create_schema(connection)
            known = connection.execute("SELECT real_path, sha256, bytes FROM sources").fetchall()
        except duckdb.Error as error:  # a block it cannot read or whose checksum fails: damaged
            raise WarehouseError(f"{damaged_message(database, error)}; it is left untouched") from None
        loaded = {real_path: sha256 for real_path, sha256, _ in known}
        sizes = {real_path: size for real_path, _, size in known}
        stamp = Stamp(options.version, micros(options.clock()))
        with Writer(connection, DUCKDB_MEMORY, Prices(stamp.loaded_at, table)) as writer:
            outcomes = []
            candidates = unique_sources(discovery.candidates)
            # in one process, a new one-pass source is verified here and extracted in the same pass, or
            # (more than one job, a large source) verified by a worker while this process extracts it
            one_pass = (
                options.single_pass
                and options.cluster is None
                and (options.jobs <= 1 or len(candidates) <= 1)
            )
            for item in _verified(candidates, loaded, sizes, stamp, options, one_pass):
                if not isinstance(item, Candidate):
                    outcome = item
                elif (
                    options.jobs > 1
                    and options.cluster is None
                    and _beside(item)
                    and estimated_bytes(item.real_path) >= BESIDE_BYTES
                ):
                    outcome = _verify_beside_extraction(item, loaded, writer, stamp, options)
                else:
                    outcome = _verify_in_one_pass(item, loaded, writer, stamp, options)
                outcomes.append(outcome)
                if outcome.streamed:
                    _stream(outcome, writer, stamp, options.verify.limits.max_line_bytes)
                elif outcome.batch is not None:
                    if outcome.status == REPLACED:
                        writer.replace(source_id_of(outcome.real_path))
                    writer.add(outcome.batch)
                    outcome.batch = None  # written: the rows need not stay in memory
            rows = writer.commit()
        result = assembled(outcomes, discovery, options)
        result.rows = rows
        if options.parquet is not None:
            # the load's settings were for appending beside extraction; an export needs DuckDB's own
            connection.execute("RESET threads")
            connection.execute("RESET memory_limit")
            result.exported = export_parquet(connection, options.parquet)
    finally:
        connection.close()
    return result


def open_database(database: Path) -> duckdb.DuckDBPyConnection:
    """A connection whose default database is the file `database` (created when missing), attached so
    that bulk appends reach the file as they come instead of waiting in memory for the commit: DuckDB
    writes a transaction's appended rows before commit only in whole row groups, so row groups are
    `ROW_GROUP_SIZE` rows (not DuckDB's 122,880: with facts of kilobytes each that is a gigabyte held in
    memory), one buffered at a time; DuckDB's buffer pool is capped at `DUCKDB_MEMORY`, and it works on one
    thread (the loading process extracts on the other core meanwhile)."""
    literal = os.path.abspath(database).replace("'", "''")  # absolute: never a `md:` or `s3://` prefix
    connection = duckdb.connect()
    try:
        connection.execute("SET write_buffer_row_group_count = 1")
        connection.execute("SET threads = 1")
        # blocks written to the file stay cached up to the limit: without one they grow with the input
        connection.execute(f"SET memory_limit = '{DUCKDB_MEMORY}B'")
        connection.execute(f"ATTACH '{literal}' AS warehouse (TYPE duckdb, ROW_GROUP_SIZE {ROW_GROUP_SIZE})")
        connection.execute("USE warehouse")
    except duckdb.Error as error:  # locked by another process, unreadable, not a database
        connection.close()
        raise WarehouseError(f"{open_failure(database, error)}; it is left untouched") from None
    return connection


def refuse_foreign(database: Path) -> None:
    """An existing --db must be a whole DuckDB database: DuckDB is never let near any other file
    (evidence!), nor near a truncated one it would fail on halfway."""
    if not os.path.lexists(database):
        return
    reason = "not a regular file" if database.is_symlink() else foreign_reason(database)
    if reason is not None:
        raise WarehouseError(f"--db {database}: {reason}; it is left untouched")


def unique_sources(candidates: list[Candidate]) -> list[Candidate]:
    """Each source once, by real path (a path named twice, or named and walked, is loaded once)."""
    seen: set[str] = set()
    unique = []
    for candidate in candidates:
        real = os.path.realpath(candidate.real_path)
        if real not in seen:
            seen.add(real)
            unique.append(candidate)
    return unique


def _verified(
    candidates: list[Candidate],
    loaded: dict[str, str | None],
    sizes: dict[str, int | None],
    stamp: Stamp,
    options: LoadOptions,
    one_pass: bool,
) -> Iterator[Outcome | Candidate]:
    # spawned, not forked: the parent holds an open DuckDB connection and its threads. With one job every
    # source is streamed by this process; with more (or on a cluster), a small one is extracted where it is
    # verified, a big one streamed here (this process must see the inputs too: it discovered them).
    function = partial(
        verify_and_extract,
        loaded=loaded,
        sizes=sizes,
        stamp=stamp,
        options=options.verify,
        extract_up_to=EXTRACT_IN_WORKER_BYTES if options.jobs > 1 or options.cluster else -1,
        one_pass=one_pass,
        single_pass=options.single_pass,
    )
    estimated = [estimated_bytes(item.real_path) for item in candidates]
    if options.cluster is not None:
        from sessaudit.cluster import cluster_map

        return cluster_map(
            function,
            candidates,
            address=options.cluster,
            sizes=estimated,
            paths=[(item.real_path,) if item.problem is None else () for item in candidates],
            crashed=crashed_load,
        )
    return ordered_map(
        function,
        candidates,
        jobs=options.jobs,
        sizes=estimated,
        start_method="spawn",
        window=2 * options.jobs,
    )


def crashed_load(candidate: Candidate, reason: str) -> Outcome:
    """A source whose task ended two cluster workers: not verified (unreadable, with the reason) and not
    loaded; a source loaded before keeps its old rows, and a later load tries it again."""
    source, findings, _ = crashed_outcome(candidate, reason)
    real_path = os.path.realpath(candidate.real_path)
    return Outcome(source, findings, real_path, candidate.named, NOT_LOADED, detail=f"not verified: {reason}")


def verify_and_extract(
    candidate: Candidate,
    loaded: dict[str, str | None],
    stamp: Stamp,
    options: VerifyOptions,
    extract_up_to: int = -1,
    one_pass: bool = False,
    sizes: dict[str, int | None] | None = None,
    single_pass: bool = True,
) -> Outcome | Candidate:
    """Verify one source; unless it is loaded already with the same sha256, extract its rows here when its
    files hold at most `extract_up_to` bytes, else leave them to be streamed (`Outcome.streamed`). A
    source whose format extracts in one pass (WarehousePart.one_pass) that is new, or loaded before at
    another size (`sizes`: the loaded sources' bytes; a log that grew), is fresh: with `one_pass` it comes
    back as it is, to be verified and extracted in one pass by the process that writes
    (`_verify_in_one_pass`); otherwise, when it is small enough, its rows are extracted here as it is
    verified (SinglePass), and read a second time only when that is not the verified history exactly. One
    loaded at its current size is most likely unchanged: it is verified first, and read again only if its
    sha256 differs. Without `single_pass`, every source is read twice."""
    real_path = os.path.realpath(candidate.real_path)
    part = warehouse_part(candidate.format) if candidate.problem is None else None
    one_pass_of = part.one_pass if part is not None else None
    fresh = one_pass_of is not None and (
        real_path not in loaded or _resized(real_path, (sizes or {}).get(real_path))
    )
    if one_pass and fresh:
        return candidate
    # a fresh such source small enough to be extracted here is extracted as it is verified
    tap = (
        one_pass_of(candidate.path, source_id_of(real_path), Extraction())
        if one_pass_of is not None
        and single_pass
        and fresh
        and estimated_bytes(candidate.real_path) <= extract_up_to
        else None
    )
    source, findings, _ = verify_candidate(candidate, options, tap)
    outcome = _verified_outcome(source, findings, real_path, candidate.named, loaded)
    if outcome.status == UNCHANGED:
        return outcome
    if tap is not None and tap.complete(source, findings):
        outcome.batch = source_batch(source, real_path, findings, tap.into, stamp)
        return outcome
    if sum(item.bytes for item in source.files) > extract_up_to:
        outcome.streamed = True
        return outcome
    try:
        extraction = extract(
            source, real_path, findings, source_id_of(real_path), max_line_bytes=options.limits.max_line_bytes
        )
    except (EvidenceChanged, OSError) as error:
        return Outcome(source, findings, real_path, candidate.named, NOT_LOADED, detail=_reason(error))
    outcome.batch = source_batch(source, real_path, findings, extraction, stamp)
    return outcome


def _beside(candidate: Candidate) -> bool:
    """Whether the source's format can extract it in this process while a worker verifies it."""
    part = warehouse_part(candidate.format)
    return part is not None and part.beside is not None


def _resized(real_path: str, loaded_bytes: int | None) -> bool:
    try:
        return os.path.getsize(real_path) != loaded_bytes
    except OSError:
        return False  # verification reports it


def _verify_in_one_pass(
    candidate: Candidate, loaded: dict[str, str | None], writer: Writer, stamp: Stamp, options: LoadOptions
) -> Outcome:
    """Verify a one-pass source here, its rows extracted from the verifier's own reading as each line is
    checked and written in bounded batches (SinglePass); when that is not the verified history exactly,
    the rows are discarded and the source is extracted in a second pass (`_stream`)."""
    real_path = os.path.realpath(candidate.real_path)
    source_id = source_id_of(real_path)
    part = warehouse_part(candidate.format)
    assert part is not None and part.one_pass is not None  # only such a source is returned fresh
    into = _early_extraction(writer, source_id, replacing=real_path in loaded)
    tap = part.one_pass(candidate.path, source_id, into)
    source, findings, _ = verify_candidate(candidate, options.verify, tap)
    outcome = _verified_outcome(source, findings, real_path, candidate.named, loaded)
    kept = tap.complete(source, findings)
    return _settle(outcome, into, kept, writer, stamp, options.verify.limits.max_line_bytes)


def _verify_beside_extraction(
    candidate: Candidate, loaded: dict[str, str | None], writer: Writer, stamp: Stamp, options: LoadOptions
) -> Outcome:
    """Verify a source in a worker process while this one extracts every line of it and writes
    its rows (WholeFile): the two cores work at once, each reading the file. When the source turns out to
    have a cut, other bytes, or no v2 header, the rows are discarded and it is extracted again from the
    verified bytes (`_stream`)."""
    real_path = os.path.realpath(candidate.real_path)
    source_id = source_id_of(real_path)
    max_line_bytes = options.verify.limits.max_line_bytes
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        verified = pool.submit(verify_candidate, candidate, options.verify)
        into = _early_extraction(writer, source_id, replacing=real_path in loaded)
        part = warehouse_part(candidate.format)
        assert part is not None and part.beside is not None  # only such a source goes beside
        whole = part.beside()
        whole.extract(candidate.real_path, source_id, into, max_line_bytes)
        source, findings, _ = verified.result()
    outcome = _verified_outcome(source, findings, real_path, candidate.named, loaded)
    return _settle(outcome, into, whole.matches(source, findings), writer, stamp, max_line_bytes)


def _early_extraction(writer: Writer, source_id: str, *, replacing: bool) -> Extraction:
    """Where a source's rows go when they are extracted before its verification is known: streamed to the
    writer in bounded batches, to be kept or discarded by `_settle` (a loaded source's old rows are set
    aside meanwhile)."""
    writer.start_source(source_id, replacing=replacing)
    return Extraction(spill=writer.add_streamed, spill_rows=SPILL_ROWS, spill_bytes=SPILL_BYTES)


def _verified_outcome(
    source: Source, findings: list[Finding], real_path: str, named: bool, loaded: dict[str, str | None]
) -> Outcome:
    """What a verified source is to the warehouse: new, a replacement (another sha256), or unchanged."""
    if real_path not in loaded:
        return Outcome(source, findings, real_path, named, LOADED)
    if loaded[real_path] == source.sha256:
        return Outcome(source, findings, real_path, named, UNCHANGED)
    return Outcome(
        source, findings, real_path, named, REPLACED, detail=f"sha256 {loaded[real_path]} → {source.sha256}"
    )


def _settle(
    outcome: Outcome, into: Extraction, kept: bool, writer: Writer, stamp: Stamp, max_line_bytes: int
) -> Outcome:
    """An early extraction's end: its rows stay, with the source's other rows, when `kept` (they are the
    verified history's); else they are discarded and the source is extracted from its verified bytes.
    An unchanged source keeps its old rows."""
    source_id = source_id_of(outcome.real_path)
    replacing = outcome.status != LOADED
    if outcome.status == UNCHANGED:
        writer.discard_source(source_id, replacing=True)
    elif kept:
        rest = source_batch(outcome.source, outcome.real_path, outcome.findings, into, stamp)
        writer.end_source(source_id, rest, into.patches, replacing=replacing)
    else:
        writer.discard_source(source_id, replacing=replacing)
        _stream(outcome, writer, stamp, max_line_bytes)
    return outcome


def _stream(outcome: Outcome, writer: Writer, stamp: Stamp, max_line_bytes: int) -> None:
    """Extract a verified source here, its rows written in bounded batches as they are read; when its
    bytes turn out not to be the verified ones, what was written of it is deleted (old rows stay)."""
    source_id = source_id_of(outcome.real_path)
    replacing = outcome.status == REPLACED
    writer.start_source(source_id, replacing=replacing)
    into = Extraction(spill=writer.add_streamed, spill_rows=SPILL_ROWS, spill_bytes=SPILL_BYTES)
    try:
        extract(outcome.source, outcome.real_path, outcome.findings, source_id, into, max_line_bytes)
    except (EvidenceChanged, OSError) as error:
        writer.discard_source(source_id, replacing=replacing)
        outcome.status, outcome.detail = NOT_LOADED, _reason(error)
        return
    rest = source_batch(outcome.source, outcome.real_path, outcome.findings, into, stamp)
    writer.end_source(source_id, rest, into.patches, replacing=replacing)


def _reason(error: Exception) -> str:
    return str(error) if isinstance(error, EvidenceChanged) else f"cannot be read again: {error}"


def assembled(outcomes: list[Outcome], discovery: Discovery, options: LoadOptions) -> LoadResult:
    """The report (as `audit` assembles it) and why the load is incomplete (as `audit` decides it)."""
    allow_empty = options.verify.allow_empty
    walked_findings, walked_incomplete = discovery_outcome(discovery, allow_empty=allow_empty)
    sources = [item.source for item in outcomes]
    findings = [finding for item in outcomes for finding in item.findings] + walked_findings
    findings.sort(key=Finding.sort_key)
    report = Report(
        tool=Tool(version=options.version),
        sources=sources,
        skipped=discovery.skipped,
        findings=findings,
        summary=summarise(sources, findings),
        settings=Settings(allow_empty=allow_empty),
    )
    result = LoadResult(report=report, outcomes=outcomes)
    result.incomplete = [line for item in outcomes for line in outcome_incomplete(item)]
    result.incomplete.extend(walked_incomplete)
    result.incomplete[:0] = broken_plugins(registry())
    return result


def outcome_incomplete(item: Outcome) -> list[str]:
    """Why one source makes the load incomplete, one line each (none: it is loaded whole)."""
    source = item.source
    if item.status != NOT_LOADED:
        return source_incomplete(source, item.findings, named=item.named)
    lines = [f"{source.path}: not loaded: {item.detail}"]
    if not source.evidence_unchanged:
        lines.append(f"{source.path}: evidence changed while it was read")
    return lines


def micros(moment: datetime) -> int:
    delta = moment.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
