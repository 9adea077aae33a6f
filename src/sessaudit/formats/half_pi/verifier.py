"""verify_half_pi: one Half-Pi Mind store → the engine's SourceOutcome (CONTRACT §4, §6).

The store is never opened by SQLite in place: read/snapshot.py copies the database with its -wal and -shm into
a private folder and opens the copy. On it: the schema generation (format_version), the invariants of
spec §10 (SQL files and Python checks), runs and their open conditions, `native.startup_recovery`, seeds,
the usage of compaction summaries, and `--claims`. Credential tables are only counted, never read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Final

from sessaudit.formats.half_pi.check.history import check_history
from sessaudit.formats.half_pi.check.history_base import printable
from sessaudit.formats.half_pi.check.runs import check_runs
from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.claims.store_check import check_claims, claimed_arguments
from sessaudit.formats.half_pi.read.rows import SECRET_TABLES, StoreRows, count_rows, read_store
from sessaudit.formats.half_pi.read.snapshot import (
    SQLITE_READ_ERRORS,
    ProblemKind,
    Snapshot,
    SnapshotFailure,
    SnapshotOptions,
    take_snapshot,
)
from sessaudit.formats.half_pi.runs.last_written import stamp_times
from sessaudit.formats.half_pi.runs.recovery import OpenRun, recover
from sessaudit.formats.half_pi.runs.seeds import half_pi_seed
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration, detect_generation
from sessaudit.limits import FILE_TOO_LARGE, size_text
from sessaudit.model import Finding, SeedSource, Session, Usage
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome, VerifyOptions, source_sha256
from sessaudit.rules import finding, verdict_of
from sessaudit.verdicts import Verdict, worst
from sessaudit.withheld import first_corrupting, withheld_reason

FORMAT: Final = "half-pi"
FATAL_RULES: Final = {
    ProblemKind.LIVE: "SA680",
    ProblemKind.MISSING: "SA681",
    ProblemKind.ORPHAN_COMPANION: "SA681",
    ProblemKind.NOT_REGULAR: "SA681",
    ProblemKind.UNREADABLE: "SA681",
    ProblemKind.EMPTY: "SA681",
    ProblemKind.NOT_SQLITE: "SA682",
    ProblemKind.TRUNCATED: "SA682",
    ProblemKind.CORRUPT: "SA682",
}
PROBLEM_RULES: Final = {
    ProblemKind.TRUNCATED: "SA682",
    ProblemKind.WAL_IGNORED: "SA683",
    ProblemKind.JOURNAL: "SA684",
    ProblemKind.NOT_WAL_MODE: "SA685",
    ProblemKind.PERMISSIONS: "SA686",
    ProblemKind.MIND_RUNNING: "SA687",
}  # integrity and foreign-key problems are invariant 1, reported by the history checks

StoreCheck = Callable[[sqlite3.Connection, SchemaGeneration, Snapshot], list[Violation]]


def _history(
    connection: sqlite3.Connection, generation: SchemaGeneration, snapshot: Snapshot
) -> list[Violation]:
    return check_history(connection, generation, snapshot.integrity, snapshot.foreign_keys)


def _runs(
    connection: sqlite3.Connection, generation: SchemaGeneration, snapshot: Snapshot
) -> list[Violation]:
    return check_runs(connection, generation)


# the invariant checks of spec §10, each over the snapshot
STORE_CHECKS: tuple[StoreCheck, ...] = (_history, _runs)


def verify_half_pi(
    path: str,
    real_path: str,
    options: VerifyOptions = DEFAULT_OPTIONS,
    snapshot_options: SnapshotOptions | None = None,
) -> SourceOutcome:
    """Verify the store at `real_path` (reported as `path`); nothing beside it is written or locked."""
    limit = options.limits.max_file_bytes
    sizes = [(path + suffix, _size(real_path + suffix)) for suffix in ("", "-wal")]
    if any(size > limit for _, size in sizes):  # its tables are read whole: refused before the copy
        return SourceOutcome(FORMAT, None, [], findings=_too_large(sizes, limit))
    taken = take_snapshot(real_path, snapshot_options or SnapshotOptions())
    if isinstance(taken, SnapshotFailure):
        rule = FATAL_RULES.get(taken.kind, "SA681")
        problem = finding(rule, f"{path}: {taken.message}", path=path, evidence={"attempts": taken.attempts})
        return SourceOutcome(FORMAT, None, taken.file_reads(path), findings=[problem])
    with taken as snapshot:
        copied = snapshot.file_reads(path)
        if any(item.bytes > limit for item in copied):  # grew past the limit after the check above
            sizes = [(item.path, item.bytes) for item in copied]
            return SourceOutcome(FORMAT, None, copied, findings=_too_large(sizes, limit))
        try:
            return _verify_open(path, snapshot, options)
        except SQLITE_READ_ERRORS as error:
            # a page SQLite cannot read (past what integrity_check reported) stops every later query
            return _unreadable_pages(path, snapshot, error)


def _size(real_path: str) -> int:
    try:
        return os.lstat(real_path).st_size
    except OSError:  # absent or unreadable: the snapshot reports it
        return 0


def _too_large(sizes: list[tuple[str, int]], limit: int) -> list[Finding]:
    """SA012 for each store file over `--max-file-bytes` (every table of a store is read into memory)."""
    return [
        finding(
            FILE_TOO_LARGE,
            f"{shown} is {size} bytes, over the --max-file-bytes limit of {size_text(limit)} for a Half-Pi "
            "store (its tables are read whole); the store was not verified",
            path=shown,
            evidence={"bytes": size, "max_file_bytes": limit},
        )
        for shown, size in sizes
        if size > limit
    ]


def _unreadable_pages(path: str, snapshot: Snapshot, error: Exception) -> SourceOutcome:
    """SA682 for a store whose pages SQLite could not read while it was verified; nothing else is trusted."""
    checked = [line for line in snapshot.integrity if line != "ok"][:3]
    told = f" (integrity_check: {'; '.join(checked)})" if checked else ""
    message = f"{path}: SQLite could not read the store while verifying it: {error}{told}"
    problem = finding("SA682", printable(message), path=path, evidence={"sqlite_error": str(error)})
    return SourceOutcome(FORMAT, None, snapshot.file_reads(path), findings=[problem])


def _verify_open(path: str, snapshot: Snapshot, options: VerifyOptions) -> SourceOutcome:
    connection = snapshot.connection
    generation = detect_generation(connection)
    files = snapshot.file_reads(path)
    findings = [
        finding(
            PROBLEM_RULES[item.kind],
            item.message,
            path=_shown(item.real_path, snapshot.real_path, path),
            evidence=item.evidence,
        )
        for item in snapshot.problems
        if item.kind in PROBLEM_RULES
    ]
    findings += [finding("SA688", note, path=path) for note in generation.notes]
    findings += _credentials(connection, path)
    for check in STORE_CHECKS:
        findings += [_finding(item, path) for item in check(connection, generation, snapshot)]
    rows = read_store(connection)
    recovered = recover(rows)
    stamp_times(recovered, rows)
    findings += [_finding(note, path) for note in recovered.notes]
    answered: list[int] = []
    claims = options.extra("claims", ())
    if claims:
        claim_findings, answered = check_claims(connection, generation, rows, claims, path)
        findings += claim_findings
        claimed_arguments(recovered, rows, claims)
    corrupt = verdict_of(findings) is Verdict.CORRUPT
    for items in recovered.runs.values():
        findings += [_open_finding(item, path, corrupt) for item in items if item.run.recovery is not None]
    findings.sort(key=Finding.sort_key)
    source = SeedSource(
        path=path, format=FORMAT, format_version=generation.format_version, sha256=source_sha256(files)
    )
    withheld = _withheld(findings) if corrupt else None
    sessions = _sessions(rows, recovered.runs, findings, source, options, withheld=withheld)
    return SourceOutcome(
        format=FORMAT,
        format_version=generation.format_version,
        files=files,
        sessions=sessions,
        findings=findings,
        native={"startup_recovery": recovered.startup_recovery},
        carry={"answered": answered},
    )


def _shown(real: str | None, store: str, path: str) -> str:
    """A store file's path as the user named the store (`path` + its suffix), else the file's own path."""
    if real is None or real == store:
        return path
    if real.startswith(store):
        return path + real[len(store) :]
    return real


def _finding(item: Violation, path: str) -> Finding:
    return finding(
        item.rule,
        item.message,
        path=path,
        table=item.table,
        rowid=item.rowid,
        session_id=item.session_id,
        evidence=item.evidence,
    )


def _credentials(connection: sqlite3.Connection, path: str) -> list[Finding]:
    counts = {table: count_rows(connection, table) for table in sorted(SECRET_TABLES)}
    present = {table: count for table, count in counts.items() if count}
    if not present:
        return []
    listed = ", ".join(f"{table}: {count}" for table, count in present.items())
    return [
        finding(
            "SA689",
            f"the store holds plaintext credentials ({listed} rows); their values are never shown",
            path=path,
            evidence={"rows": present},
        )
    ]


def _withheld(findings: list[Finding]) -> str:
    """Why the open runs of a corrupt store get no seed."""
    native = (
        "Half-Pi's startup does not verify the store: its startup recovery (native.startup_recovery) would "
        "still run on it"
    )
    known = "the open state shown is read from rows that fail verification"
    return withheld_reason(first_corrupting(findings), native=native, known=known)


def _open_finding(item: OpenRun, path: str, corrupt: bool) -> Finding:
    recovery = item.run.recovery
    assert recovery is not None
    code = "SA302" if recovery.condition in ("effect-unknown", "remote-run-in-flight") else "SA301"
    effects = ", ".join(f"{effect.tool_name} ({effect.tool_call_id})" for effect in recovery.pending_effects)
    detail = f"; effects of unknown outcome: {effects}" if effects else ""
    kind = "no seed (the store is corrupt)" if corrupt else f"seed kind {recovery.seed_kind}"
    return finding(
        code,
        f"{item.run.kind} {item.run.run_id} is open: condition {recovery.condition}, {kind}{detail}",
        path=path,
        session_id=item.session_id,
        table=item.table,
        rowid=item.rowid,
        evidence={"run_id": item.run.run_id, "condition": recovery.condition},
    )


def _sessions(
    rows: StoreRows,
    runs: dict[str | None, list[OpenRun]],
    findings: list[Finding],
    source: SeedSource,
    options: VerifyOptions,
    *,
    withheld: str | None,
) -> list[Session]:
    """One session per `sessions` row, plus one per session id that runs name but no row holds."""
    known = [str(row.get("id")) for row in rows.sessions]
    extra = sorted(key for key in runs if key is not None and key not in set(known))
    sessions: list[Session] = []
    for session_id in [*known, *extra]:
        items = runs.get(session_id, [])
        messages = rows.messages.get(session_id, [])
        completed = []
        for item in items:
            run = item.run
            if withheld is not None and run.recovery is not None:
                run = run.model_copy(update={"recovery": run.recovery.withheld(withheld)})
            elif run.recovery is not None:
                moved = options.fork_sequence if options.fork_run in (None, run.run_id) else None
                seed = half_pi_seed(item, rows, source=source, fork_sequence=moved)
                run = run.model_copy(update={"recovery": run.recovery.model_copy(update={"seed": seed})})
            completed.append(run)
        own = [item for item in findings if item.location.session_id == session_id]
        verdict = worst(
            verdict_of(own), Verdict.NEEDS_RECOVERY if any(r.recovery for r in completed) else None
        )
        summaries = rows.summaries.get(session_id, [])
        sessions.append(
            Session(
                session_id=session_id,
                verdict=verdict,
                facts=len(messages),
                last_seq=max((int(row.get("seq") or 0) for row in messages), default=None),
                usage=Usage.of(
                    input=sum(int(row.get("input_tokens") or 0) for row in summaries),
                    output=sum(int(row.get("output_tokens") or 0) for row in summaries),
                    cache_read=0,
                    cache_write=0,
                ),
                runs=completed,
            )
        )
    return sessions
