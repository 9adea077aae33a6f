"""load(paths) → LoadResult: verify every source as `verify` does, then load what changed into DuckDB.

Each source is verified by the engine's own per-source step (`verify_candidate`, what `audit` runs for each
source), so its findings stay attributed to it and `--jobs N` can verify in N processes; the assembled
report equals `audit(paths)`'s (a test proves it). A source already loaded with the same sha256 is left
as it is; a changed one (same real path, another sha256) has its rows replaced; all in one transaction,
written in Arrow batches by writer.py while later sources are verified."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path

import duckdb

from sessaudit import __version__
from sessaudit.discovery import Candidate, discover
from sessaudit.engine import summarise, verify_candidate
from sessaudit.formats.interface import DEFAULT_OPTIONS, VerifyOptions
from sessaudit.model import Finding, Report, Skipped, Source, Tool
from sessaudit.verdicts import Verdict
from sessaudit.warehouse.assemble import Stamp, source_batch, source_id_of
from sessaudit.warehouse.extract import EvidenceChanged, extract
from sessaudit.warehouse.parquet import check_directory, export_parquet
from sessaudit.warehouse.rows import Batch
from sessaudit.warehouse.schema import create_schema
from sessaudit.warehouse.writer import Writer

LOADED, UNCHANGED, REPLACED, NOT_LOADED = "loaded", "unchanged", "replaced", "not-loaded"
DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file


class WarehouseError(Exception):
    """The database cannot be used (a usage error): it is some other file."""


@dataclass(frozen=True, slots=True)
class LoadOptions:
    jobs: int = 1
    parquet: Path | None = None  # also write the warehouse as a Parquet dataset there
    verify: VerifyOptions = DEFAULT_OPTIONS
    version: str = __version__
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)


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
    refuse_foreign(database)
    discovery = discover(paths)
    try:
        connection = duckdb.connect(str(database))
    except duckdb.Error as error:  # locked by another process, unreadable, not a database
        raise WarehouseError(f"--db {database}: cannot open it: {str(error).splitlines()[0]}") from None
    try:
        create_schema(connection)
        loaded = dict(connection.execute("SELECT real_path, sha256 FROM sources").fetchall())
        stamp = Stamp(options.version, _micros(options.clock()))
        with Writer(connection) as writer:
            outcomes = []
            for outcome in _verified(_unique(discovery.candidates), loaded, stamp, options):
                outcomes.append(outcome)
                if outcome.batch is not None:
                    if outcome.status == REPLACED:
                        writer.replace(source_id_of(outcome.real_path))
                    writer.add(outcome.batch)
                    outcome.batch = None  # written: the rows need not stay in memory
            rows = writer.commit()
        result = _result(outcomes, discovery.skipped, options.version)
        result.rows = rows
        if options.parquet is not None:
            result.exported = export_parquet(connection, options.parquet)
    finally:
        connection.close()
    return result


def refuse_foreign(database: Path) -> None:
    """An existing --db must be a DuckDB database: DuckDB is never let near any other file (evidence!)."""
    if not os.path.lexists(database):
        return
    if database.is_symlink() or not database.is_file():
        raise WarehouseError(f"--db {database}: not a regular file")
    with open(database, "rb") as stream:
        head = stream.read(12)
    if head[8:12] != DUCKDB_MAGIC:
        raise WarehouseError(f"--db {database}: exists and is not a DuckDB database; it is left untouched")


def _unique(candidates: list[Candidate]) -> list[Candidate]:
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
    candidates: list[Candidate], loaded: dict[str, str | None], stamp: Stamp, options: LoadOptions
) -> Iterator[Outcome]:
    if options.jobs <= 1 or len(candidates) <= 1:
        try:
            for candidate in candidates:
                yield verify_and_extract(candidate, loaded, stamp, options.verify)
                # The rows collected so far live until the insert: keep the cyclic collector from scanning
                # them again and again while later sources are verified (they hold no reference cycles).
                gc.freeze()
        finally:
            gc.unfreeze()
        return
    # spawned, not forked: the parent holds an open DuckDB connection and its threads
    with ProcessPoolExecutor(max_workers=options.jobs, mp_context=get_context("spawn")) as pool:
        yield from pool.map(
            verify_and_extract,
            candidates,
            [loaded] * len(candidates),
            [stamp] * len(candidates),
            [options.verify] * len(candidates),
            chunksize=max(1, len(candidates) // (options.jobs * 4)),
        )


def verify_and_extract(
    candidate: Candidate, loaded: dict[str, str | None], stamp: Stamp, options: VerifyOptions
) -> Outcome:
    """Verify one source; unless it is loaded already with the same sha256, extract its rows."""
    source, findings, _ = verify_candidate(candidate, options)
    real_path = os.path.realpath(candidate.real_path)
    if real_path in loaded and loaded[real_path] == source.sha256:
        return Outcome(source, findings, real_path, candidate.named, UNCHANGED)
    status = REPLACED if real_path in loaded else LOADED
    detail = f"sha256 {loaded[real_path]} → {source.sha256}" if status == REPLACED else None
    try:
        extraction = extract(source, real_path, findings, source_id_of(real_path))
    except (EvidenceChanged, OSError) as error:
        reason = error if isinstance(error, EvidenceChanged) else f"cannot be read again: {error}"
        return Outcome(source, findings, real_path, candidate.named, NOT_LOADED, detail=str(reason))
    batch = source_batch(source, real_path, findings, extraction, stamp)
    return Outcome(source, findings, real_path, candidate.named, status, batch, detail)


def _result(outcomes: list[Outcome], skipped: list[Skipped], version: str) -> LoadResult:
    """The report (as `audit` assembles it) and why the load is incomplete."""
    sources = [item.source for item in outcomes]
    findings = sorted((finding for item in outcomes for finding in item.findings), key=Finding.sort_key)
    report = Report(
        tool=Tool(version=version),
        sources=sources,
        skipped=skipped,
        findings=findings,
        summary=summarise(sources, findings),
    )
    result = LoadResult(report=report, outcomes=outcomes)
    for item in outcomes:
        source = item.source
        if item.status == NOT_LOADED:
            result.incomplete.append(f"{source.path}: not loaded: {item.detail}")
        elif item.named and source.verdict in (Verdict.UNREADABLE, Verdict.UNSUPPORTED):
            result.incomplete.append(f"{source.path}: {source.verdict.value}")
        if not source.evidence_unchanged:
            result.incomplete.append(f"{source.path}: evidence changed while it was read")
    return result


def _micros(moment: datetime) -> int:
    delta = moment.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
