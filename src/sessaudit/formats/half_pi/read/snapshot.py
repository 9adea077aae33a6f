"""Evidence-safe opening of a Half-Pi store: hash and copy the db with its -wal/-shm, re-hash, open the copy.

A plain `sqlite3.connect()` on a WAL store checkpoints the WAL into the file and deletes -wal/-shm on close;
`mode=ro` still rewrites -shm; `immutable=1` ignores transactions that live only in the WAL. So the files are
copied together into a private 0700 directory and SQLite opens the copy (spec §1, §11). If the originals
change while they are copied the store is live: the copy is retried, then given up as `live`. Every failure
is a typed `SnapshotFailure`, never a bare exception; `run/mind.lock` is hashed when present, never locked.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from sessaudit import progress
from sessaudit.evidence import CHUNK, NotRegularFile, open_evidence
from sessaudit.formats.half_pi.read.store_files import (
    LockInfo,
    WalInfo,
    database_header_problems,
    read_lock,
    wal_info,
    wide_modes,
)
from sessaudit.plugin import FileRead

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
HEADER_BYTES: Final = 100
COMPANIONS: Final = ("-wal", "-shm", "-journal")  # after the database itself (suffix "")
COPY_NAME: Final = "store.db"
# what reading a damaged store can raise: SQLite's own errors, and a malformed schema whose error message or
# names are not UTF-8 (the sqlite3 module then fails to decode them)
SQLITE_READ_ERRORS: Final = (sqlite3.DatabaseError, UnicodeDecodeError)


class ProblemKind(StrEnum):
    """What went wrong; the first group is fatal (a `SnapshotFailure`), the rest are `Snapshot.problems`."""

    MISSING = "missing"
    ORPHAN_COMPANION = "orphan-companion"  # a -wal/-shm/-journal without its database
    NOT_REGULAR = "not-regular"  # a symlink, FIFO, device or directory: never opened for reading
    UNREADABLE = "unreadable"
    EMPTY = "empty"
    NOT_SQLITE = "not-sqlite"
    TRUNCATED = "truncated"  # fatal below the 100-byte header; otherwise a problem
    CORRUPT = "corrupt"  # SQLite cannot read the schema of the copy
    LIVE = "live"  # the store is being written: it changed during every copy attempt
    INTEGRITY = "integrity"  # PRAGMA integrity_check is not "ok"
    FOREIGN_KEY = "foreign-key"  # PRAGMA foreign_key_check returned rows
    WAL_IGNORED = "wal-ignored"  # a non-empty -wal whose header is invalid: SQLite ignores it
    JOURNAL = "journal"  # a rollback journal beside the store (copied; SQLite may roll it back)
    NOT_WAL_MODE = "not-wal-mode"  # header bytes 18/19 are not 2 (Half-Pi always sets WAL)
    PERMISSIONS = "permissions"  # wider than 0600 (spec §1: warn only)
    MIND_RUNNING = "mind-running"  # run/mind.lock is flocked now: a Mind process is running


@dataclass(frozen=True, slots=True)
class SnapshotProblem:
    kind: ProblemKind
    message: str
    real_path: str | None = None
    evidence: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ForeignKeyViolation:
    """One row of `PRAGMA foreign_key_check`."""

    table: str
    rowid: int | None
    parent: str
    fkid: int


@dataclass(frozen=True, slots=True)
class StoreFile:
    """One file of the store as copied: `suffix` is "" for the database, else "-wal", "-shm", "-journal"."""

    suffix: str
    real_path: str
    bytes: int
    sha256: str
    mode: int  # permission bits

    @property
    def name(self) -> str:
        return os.path.basename(self.real_path)


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    """Retry policy and test hooks. `after_copy(attempt)` runs between the copy and the re-hash."""

    attempts: int = 3
    delay_seconds: float = 0.05
    sleep: Callable[[float], None] = time.sleep
    after_copy: Callable[[int], None] | None = None
    temp_root: str | None = None  # where the private directory is made (default: the system temp dir)
    integrity_check: bool = True


DEFAULT_OPTIONS: Final = SnapshotOptions()


def _file_reads(files: tuple[StoreFile, ...], report_path: str | None) -> list[FileRead]:
    reads = []
    for item in files:
        path = (report_path + item.suffix) if report_path is not None else item.real_path
        reads.append(FileRead(path=path, real_path=item.real_path, bytes=item.bytes, sha256=item.sha256))
    return reads


@dataclass(frozen=True, slots=True)
class SnapshotFailure:
    """No usable snapshot: why, and whatever could be hashed (for the report's `files`)."""

    kind: ProblemKind
    message: str
    real_path: str
    files: tuple[StoreFile, ...] = ()
    attempts: int = 0
    lock: LockInfo | None = None
    problems: tuple[SnapshotProblem, ...] = ()  # non-fatal findings made before giving up

    def file_reads(self, report_path: str | None = None) -> list[FileRead]:
        return _file_reads(self.files, report_path)


class SnapshotUnavailable(Exception):
    """Raised by `open_snapshot` when `take_snapshot` answers with a `SnapshotFailure`."""

    def __init__(self, failure: SnapshotFailure) -> None:
        super().__init__(f"{failure.kind}: {failure.message}")
        self.failure = failure


@dataclass(frozen=True, slots=True)
class FileRecheck:
    suffix: str
    real_path: str
    unchanged: bool
    detail: str | None


@dataclass(frozen=True, slots=True)
class StoreRecheck:
    """The originals compared byte for byte with what was copied; a companion that appeared is a change."""

    unchanged: bool
    files: tuple[FileRecheck, ...]


@dataclass(slots=True)
class Snapshot:
    """An open copy of the store. Use as a context manager; `close()` deletes the private directory."""

    real_path: str
    connection: sqlite3.Connection
    files: tuple[StoreFile, ...]
    directory: str
    attempts: int
    wal: WalInfo | None
    lock: LockInfo | None
    integrity: tuple[str, ...]
    foreign_keys: tuple[ForeignKeyViolation, ...]
    problems: tuple[SnapshotProblem, ...] = field(default=())

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.connection.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def file_reads(self, report_path: str | None = None) -> list[FileRead]:
        """The db, -wal, -shm (and -journal) as the engine's `FileRead`s; `report_path` names the db."""
        return _file_reads(self.files, report_path)

    def recheck(self) -> StoreRecheck:
        """Hash the originals again (whole files) and compare with what was copied."""
        results = []
        copied = {item.suffix: item for item in self.files}
        for suffix in ("", *COMPANIONS):
            path = self.real_path + suffix
            now = _hash_now(path)
            item = copied.get(suffix)
            if item is None:
                if now is not None:
                    results.append(FileRecheck(suffix, path, False, "the file appeared during the audit"))
                continue
            if now is None:
                results.append(FileRecheck(suffix, path, False, "the file is gone or unreadable"))
            elif now != (item.bytes, item.sha256):
                results.append(FileRecheck(suffix, path, False, f"the file changed ({now[0]} bytes now)"))
            else:
                results.append(FileRecheck(suffix, path, True, None))
        return StoreRecheck(all(result.unchanged for result in results), tuple(results))


def _hash_now(path: str) -> tuple[int, str] | None:
    """(size, sha256) of a regular file read to its end, or None when absent or unreadable."""
    try:
        stream, _ = open_evidence(path)
    except OSError:
        return None
    digest, size = hashlib.sha256(), 0
    with stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _copy_hashed(source: str, suffix: str, target: str) -> StoreFile:
    stream, _ = open_evidence(source)
    digest, size = hashlib.sha256(), 0
    with stream:
        mode = os.fstat(stream.fileno()).st_mode
        flags = (
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        )
        with os.fdopen(os.open(target, flags, 0o600), "wb") as output:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
                output.write(chunk)
                progress.advance(len(chunk))
                size += len(chunk)
    return StoreFile(suffix, source, size, digest.hexdigest(), stat.S_IMODE(mode))


def _present(real_path: str) -> dict[str, os.stat_result]:
    """The store's files that exist now (not followed), by suffix."""
    found = {}
    for suffix in ("", *COMPANIONS):
        try:
            found[suffix] = os.lstat(real_path + suffix)
        except FileNotFoundError:
            continue
    return found


def _precheck(real_path: str, present: dict[str, os.stat_result]) -> tuple[ProblemKind, str] | None:
    if "" not in present:
        if present:
            names = ", ".join(os.path.basename(real_path + suffix) for suffix in present)
            return ProblemKind.ORPHAN_COMPANION, f"{names} without the database file"
        return ProblemKind.MISSING, "the database file does not exist"
    for suffix, info in present.items():
        if not stat.S_ISREG(info.st_mode):
            return ProblemKind.NOT_REGULAR, f"{os.path.basename(real_path + suffix)} is not a regular file"
    size = present[""].st_size
    if size == 0:
        return ProblemKind.EMPTY, "the database file is empty"
    stream, _ = open_evidence(real_path)
    with stream:
        head = stream.read(HEADER_BYTES)
    if not head.startswith(SQLITE_MAGIC):
        if len(head) < len(SQLITE_MAGIC) and SQLITE_MAGIC.startswith(head):
            return ProblemKind.TRUNCATED, f"only {len(head)} bytes, a cut SQLite header"
        return ProblemKind.NOT_SQLITE, "the file does not start with the SQLite header"
    if len(head) < HEADER_BYTES:
        return ProblemKind.TRUNCATED, f"only {len(head)} bytes, shorter than the 100-byte SQLite header"
    return None


def _copy_consistent(
    real_path: str, directory: str, options: SnapshotOptions
) -> tuple[tuple[StoreFile, ...], int, bool]:
    """Copy until a copy matches the originals re-hashed afterwards: (files, attempts used, consistent)."""
    files: tuple[StoreFile, ...] = ()
    attempts = max(1, options.attempts)
    for attempt in range(1, attempts + 1):
        for name in os.listdir(directory):
            os.unlink(os.path.join(directory, name))
        present = _present(real_path)
        try:
            files = tuple(
                _copy_hashed(real_path + suffix, suffix, os.path.join(directory, COPY_NAME + suffix))
                for suffix in ("", *COMPANIONS)
                if suffix in present
            )
        except FileNotFoundError:  # a companion removed meanwhile (a checkpoint on close): a change
            files = ()
        if options.after_copy is not None:
            options.after_copy(attempt)
        same_set = files != () and set(_present(real_path)) == {item.suffix for item in files}
        if same_set and all(_hash_now(item.real_path) == (item.bytes, item.sha256) for item in files):
            return files, attempt, True
        if attempt < attempts:
            options.sleep(options.delay_seconds)
    return files, attempts, False


def take_snapshot(real_path: str, options: SnapshotOptions = DEFAULT_OPTIONS) -> Snapshot | SnapshotFailure:
    """Copy the store consistently and open the copy; a `SnapshotFailure` says why it could not be."""
    lock = read_lock(real_path)
    try:
        refused = _precheck(real_path, _present(real_path))
    except NotRegularFile:
        refused = ProblemKind.NOT_REGULAR, "the database file is not a regular file"
    except OSError as error:
        refused = ProblemKind.UNREADABLE, f"cannot read the database file: {error.strerror or error}"
    if refused is not None:
        return SnapshotFailure(refused[0], refused[1], real_path, lock=lock)
    directory = tempfile.mkdtemp(prefix="sessaudit-half-pi-", dir=options.temp_root)
    os.chmod(directory, 0o700)
    try:
        files, attempts, consistent = _copy_consistent(real_path, directory, options)
    except OSError as error:
        shutil.rmtree(directory, ignore_errors=True)
        message = f"cannot copy the store: {error.strerror or error}"
        kind = ProblemKind.NOT_REGULAR if isinstance(error, NotRegularFile) else ProblemKind.UNREADABLE
        return SnapshotFailure(kind, message, real_path, lock=lock)
    if not consistent:
        shutil.rmtree(directory, ignore_errors=True)
        message = f"store is being written: its files changed during each of {attempts} copies"
        return SnapshotFailure(ProblemKind.LIVE, message, real_path, files, attempts, lock)
    return _open_copy(real_path, directory, files, attempts, lock, options)


def _open_copy(
    real_path: str,
    directory: str,
    files: tuple[StoreFile, ...],
    attempts: int,
    lock: LockInfo | None,
    options: SnapshotOptions,
) -> Snapshot | SnapshotFailure:
    copy = os.path.join(directory, COPY_NAME)
    problems = _file_problems(copy, files, lock)
    wal = None
    if any(item.suffix == "-wal" for item in files):
        with open(copy + "-wal", "rb") as stream:
            wal = wal_info(stream.read())
        if wal.bytes > 0 and not wal.header_valid:
            problems.append(
                SnapshotProblem(ProblemKind.WAL_IGNORED, "the -wal header is invalid", real_path + "-wal")
            )
    connection = sqlite3.connect(copy)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except SQLITE_READ_ERRORS as error:
        connection.close()
        shutil.rmtree(directory, ignore_errors=True)
        cut = [problem.message for problem in problems if problem.kind is ProblemKind.TRUNCATED]
        kind = ProblemKind.TRUNCATED if cut else ProblemKind.CORRUPT
        told = "its schema or error message is not UTF-8" if isinstance(error, UnicodeDecodeError) else error
        message = "; ".join([f"SQLite cannot read it: {told}", *cut])
        return SnapshotFailure(kind, message, real_path, files, attempts, lock, tuple(problems))
    integrity: tuple[str, ...] = ()
    if options.integrity_check:
        try:
            integrity = tuple(str(row[0]) for row in connection.execute("PRAGMA integrity_check"))
        except SQLITE_READ_ERRORS as error:
            integrity = (f"integrity_check failed: {error}",)
        if integrity != ("ok",):
            problems.append(SnapshotProblem(ProblemKind.INTEGRITY, "; ".join(integrity[:5]), real_path))
    try:
        rows = connection.execute("PRAGMA foreign_key_check").fetchall()
        violations = tuple(ForeignKeyViolation(str(row[0]), row[1], str(row[2]), int(row[3])) for row in rows)
    except SQLITE_READ_ERRORS as error:
        violations = ()
        problems.append(
            SnapshotProblem(ProblemKind.INTEGRITY, f"foreign_key_check failed: {error}", real_path)
        )
    if violations:
        message = f"{len(violations)} row(s) violate a foreign key, first in {violations[0].table}"
        problems.append(SnapshotProblem(ProblemKind.FOREIGN_KEY, message, real_path))
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA query_only = ON")  # the copy is ours, but a verifier never writes
    return Snapshot(
        real_path, connection, files, directory, attempts, wal, lock, integrity, violations, tuple(problems)
    )


def _file_problems(copy: str, files: tuple[StoreFile, ...], lock: LockInfo | None) -> list[SnapshotProblem]:
    database = files[0]
    with open(copy, "rb") as stream:
        head = stream.read(HEADER_BYTES)
    problems = [
        SnapshotProblem(ProblemKind(kind), message, database.real_path)
        for kind, message in database_header_problems(head, database.bytes)
    ]
    wide = wide_modes([(os.path.basename(item.real_path), item.mode) for item in files])
    if wide is not None:  # one problem for the store, at the database
        problems.append(SnapshotProblem(ProblemKind.PERMISSIONS, wide[0], database.real_path, wide[1]))
    for item in files:
        if item.suffix == "-journal":
            message = "a rollback journal lies beside a WAL store; it was copied with the store"
            problems.append(SnapshotProblem(ProblemKind.JOURNAL, message, item.real_path))
    if lock is not None and lock.held:
        message = "run/mind.lock is locked: a Mind process is running on this store"
        problems.append(SnapshotProblem(ProblemKind.MIND_RUNNING, message, lock.real_path))
    return problems


@contextmanager
def open_snapshot(real_path: str, options: SnapshotOptions = DEFAULT_OPTIONS) -> Iterator[Snapshot]:
    """`with open_snapshot(path) as snap:` — raises `SnapshotUnavailable` (carrying the failure) instead."""
    outcome = take_snapshot(real_path, options)
    if isinstance(outcome, SnapshotFailure):
        raise SnapshotUnavailable(outcome)
    with outcome:
        yield outcome
