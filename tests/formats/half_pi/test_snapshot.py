"""Opening a Half-Pi store never changes it, sees WAL-only rows and types every failure (spec §1, §11)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from sessaudit.formats.half_pi.build.parts import ToolCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.read.snapshot import (
    ProblemKind,
    Snapshot,
    SnapshotFailure,
    SnapshotOptions,
    SnapshotUnavailable,
    open_snapshot,
    take_snapshot,
)
from sessaudit.formats.half_pi.read.store_files import wal_info


def build_wal_store(path: Path, *, seed: int = 1) -> Path:
    """Two user turns checkpointed, then a third turn and an open remote run only in the -wal."""
    builder = StoreBuilder(path, seed=seed)
    chat = builder.session("/home/dev/calc").user("fix add() in calc.py")
    chat.assistant("", calls=[ToolCall("call_1", "bash", '{"command":"pytest -q"}')], results=["1 failed"])
    chat.assistant("Fixed.")
    builder.checkpoint()
    chat.user("now deploy it")
    builder.remote_run(chat, args={"command": "./deploy.sh"}).through("approved", "sent", "accepted")
    builder.finish(keep_wal=True)
    return path


def state(folder: Path) -> dict[str, tuple[str, int, int]]:
    """name -> (sha256, size, mtime_ns) of every entry in `folder`."""
    entries = {}
    for entry in sorted(folder.iterdir()):
        data = entry.read_bytes() if entry.is_file() else b""
        entries[entry.name] = (hashlib.sha256(data).hexdigest(), len(data), entry.stat().st_mtime_ns)
    return entries


def private_options(tmp_path: Path, after_copy: Callable[[int], None] | None = None) -> SnapshotOptions:
    root = tmp_path / "private"
    root.mkdir(exist_ok=True)
    return SnapshotOptions(temp_root=str(root), sleep=lambda _: None, after_copy=after_copy)


def test_opening_leaves_db_wal_and_shm_byte_identical_and_adds_no_file(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    before = state(store.parent)
    assert set(before) == {"half-pi.db", "half-pi.db-wal", "half-pi.db-shm"}
    options = private_options(tmp_path)
    with open_snapshot(str(store), options) as snap:
        assert snap.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 5
        assert state(store.parent) == before
        assert len(os.listdir(snap.directory)) >= 1
        assert oct(os.stat(snap.directory).st_mode & 0o777) == oct(0o700)
    assert state(store.parent) == before
    assert os.listdir(tmp_path / "private") == []  # the private copy is gone
    recheck = snap.recheck()
    assert recheck.unchanged
    assert [item.suffix for item in recheck.files] == ["", "-wal", "-shm"]


def test_wal_only_rows_are_seen_through_the_snapshot(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    alone = tmp_path / "alone" / "half-pi.db"
    alone.parent.mkdir()
    shutil.copyfile(store, alone)  # the main file without its -wal: what immutable=1 would see
    with sqlite3.connect(alone) as connection:
        assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 4
        assert connection.execute("SELECT count(*) FROM sqlite_master WHERE name = 'remote_runs'").fetchone()
        assert connection.execute("SELECT count(*) FROM remote_runs").fetchone()[0] == 0
    with open_snapshot(str(store), private_options(tmp_path)) as snap:
        assert snap.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 5
        run = snap.connection.execute("SELECT status FROM remote_runs").fetchone()
        assert run["status"] == "accepted"
        assert snap.wal is not None and snap.wal.committed_frames > 0 and snap.wal.ignored_bytes == 0
        assert snap.integrity == ("ok",) and snap.foreign_keys == () and snap.problems == ()


def test_store_written_during_every_copy_is_retried_then_reported_live(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    attempts: list[int] = []
    sleeps: list[float] = []

    def writer(attempt: int) -> None:
        attempts.append(attempt)
        with open(str(store) + "-wal", "ab") as stream:
            stream.write(b"\0" * 8)

    options = SnapshotOptions(
        attempts=3, delay_seconds=0.25, sleep=sleeps.append, after_copy=writer, temp_root=str(tmp_path)
    )
    outcome = take_snapshot(str(store), options)
    assert isinstance(outcome, SnapshotFailure)
    assert outcome.kind is ProblemKind.LIVE and "store is being written" in outcome.message
    assert outcome.attempts == 3 and attempts == [1, 2, 3] and sleeps == [0.25, 0.25]
    assert outcome.file_reads("logs/half-pi.db")[0].path == "logs/half-pi.db"
    assert sorted(os.listdir(tmp_path)) == ["db"]  # no private directory left behind


def test_store_written_once_is_copied_again(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")

    def writer(attempt: int) -> None:
        if attempt == 1:
            Path(str(store) + "-journal").write_bytes(b"")  # a companion appears during the first copy

    outcome = take_snapshot(str(store), private_options(tmp_path, after_copy=writer))
    assert isinstance(outcome, Snapshot)
    with outcome:
        assert outcome.attempts == 2
        assert [item.suffix for item in outcome.files] == ["", "-wal", "-shm", "-journal"]
        assert ProblemKind.JOURNAL in {problem.kind for problem in outcome.problems}


def test_a_companion_removed_during_the_copy_is_a_change(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")

    def checkpointer(attempt: int) -> None:
        if attempt == 1:
            os.unlink(str(store) + "-shm")

    outcome = take_snapshot(str(store), private_options(tmp_path, after_copy=checkpointer))
    assert isinstance(outcome, Snapshot)
    with outcome:
        assert outcome.attempts == 2 and [item.suffix for item in outcome.files] == ["", "-wal"]
        assert outcome.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 5


def test_file_reads_name_the_db_first_and_recheck_sees_later_changes(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    with open_snapshot(str(store), private_options(tmp_path)) as snap:
        reads = snap.file_reads("input/half-pi.db")
    assert [read.path for read in reads] == [
        "input/half-pi.db",
        "input/half-pi.db-wal",
        "input/half-pi.db-shm",
    ]
    assert [read.real_path for read in reads] == [str(store) + suffix for suffix in ("", "-wal", "-shm")]
    assert reads[1].sha256 == hashlib.sha256(Path(str(store) + "-wal").read_bytes()).hexdigest()
    with open(str(store) + "-wal", "ab") as stream:
        stream.write(b"x")
    recheck = snap.recheck()
    assert not recheck.unchanged
    assert [item.suffix for item in recheck.files if not item.unchanged] == ["-wal"]


def test_mind_lock_is_hashed_and_read_but_never_locked(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "home" / "db" / "half-pi.db")
    lock = tmp_path / "home" / "run" / "mind.lock"
    lock.parent.mkdir()
    lock.write_bytes(b"pid=4242\nmode=serve\nstarted_at=2026-07-30T12:00:00Z\n")
    with open_snapshot(str(store), private_options(tmp_path)) as snap:
        assert snap.lock is not None
        assert snap.lock.sha256 == hashlib.sha256(lock.read_bytes()).hexdigest()
        assert dict(snap.lock.diagnostics) == {
            "pid": "4242",
            "mode": "serve",
            "started_at": "2026-07-30T12:00:00Z",
        }
        assert snap.lock.held in (False, None)
    if snap.lock.held is None:
        pytest.skip("/proc/locks is not readable here")
    with open(lock, "rb") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a running Mind
        with open_snapshot(str(store), private_options(tmp_path)) as snap:
            assert snap.lock is not None and snap.lock.held is True
            assert ProblemKind.MIND_RUNNING in {problem.kind for problem in snap.problems}
    assert lock.read_bytes().startswith(b"pid=4242")


def test_a_store_outside_a_half_pi_home_has_no_lock(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "copies" / "half-pi.db")
    with open_snapshot(str(store), private_options(tmp_path)) as snap:
        assert snap.lock is None


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda folder: folder / "absent.db", ProblemKind.MISSING),
        (lambda folder: _write(folder / "empty.db", b""), ProblemKind.EMPTY),
        (lambda folder: _write(folder / "notes.db", b"just some text\n" * 10), ProblemKind.NOT_SQLITE),
        (lambda folder: _write(folder / "cut.db", b"SQLite for"), ProblemKind.TRUNCATED),
        (
            lambda folder: _write(folder / "header.db", b"SQLite format 3\x00" + b"\x10" * 40),
            ProblemKind.TRUNCATED,
        ),
        (
            lambda folder: (_write(folder / "gone.db-wal", b"\x37\x7f\x06\x82"), folder / "gone.db")[1],
            ProblemKind.ORPHAN_COMPANION,
        ),
    ],
    ids=["missing", "empty", "not-sqlite", "cut-magic", "cut-header", "wal-without-db"],
)
def test_unusable_inputs_are_typed_failures(
    tmp_path: Path, make: Callable[[Path], Path], kind: ProblemKind
) -> None:
    path = make(tmp_path / "in")
    outcome = take_snapshot(str(path), private_options(tmp_path))
    assert isinstance(outcome, SnapshotFailure)
    assert outcome.kind is kind
    with pytest.raises(SnapshotUnavailable) as raised, open_snapshot(str(path), private_options(tmp_path)):
        pass  # pragma: no cover
    assert raised.value.failure.kind is kind
    assert os.listdir(tmp_path / "private") == []


def test_symlinks_fifos_and_folders_are_refused_without_reading(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    link = tmp_path / "link.db"
    link.symlink_to(store)
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    wal_link = tmp_path / "other" / "half-pi.db"
    wal_link.parent.mkdir()
    shutil.copyfile(store, wal_link)
    Path(str(wal_link) + "-wal").symlink_to(str(store) + "-wal")
    for path in (link, fifo, folder, wal_link):
        outcome = take_snapshot(str(path), private_options(tmp_path))
        assert isinstance(outcome, SnapshotFailure), path
        assert outcome.kind is ProblemKind.NOT_REGULAR, path


def test_a_truncated_database_is_typed(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    data = store.read_bytes()
    cut = _write(tmp_path / "cut" / "half-pi.db", data[: len(data) // 2 + 100])
    outcome = take_snapshot(str(cut), private_options(tmp_path))
    assert isinstance(outcome, SnapshotFailure)
    assert outcome.kind is ProblemKind.TRUNCATED
    assert "not a whole number" in outcome.message and "shorter than the" in outcome.message


def test_a_damaged_page_is_an_integrity_problem(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=2)
    chat = builder.session()
    for turn in range(60):
        chat.user(f"turn {turn} " + "x" * 400)
    built = builder.finish()
    data = bytearray(Path(built.path).read_bytes())
    for offset in range(5 * 4096 + 8, 6 * 4096, 13):
        data[offset] = 0xA5
    damaged = _write(tmp_path / "damaged" / "half-pi.db", bytes(data))
    outcome = take_snapshot(str(damaged), private_options(tmp_path))
    assert isinstance(outcome, Snapshot)  # the schema still reads; a table page does not
    with outcome:
        assert outcome.integrity[0].startswith("integrity_check failed")
        assert ProblemKind.INTEGRITY in {problem.kind for problem in outcome.problems}


def test_foreign_key_violations_are_data(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=3)
    builder.session().user("hello")
    builder.execute("DELETE FROM sessions", foreign_keys=False)
    built = builder.finish()
    with open_snapshot(built.path, private_options(tmp_path)) as snap:
        tables = sorted({(violation.table, violation.parent) for violation in snap.foreign_keys})
        assert tables == [("messages", "sessions"), ("session_runtime", "sessions")]
        assert all(violation.fkid == 0 for violation in snap.foreign_keys)
        assert ProblemKind.FOREIGN_KEY in {problem.kind for problem in snap.problems}


def test_header_and_wal_oddities_are_problems(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    Path(str(store) + "-wal").write_bytes(b"\0" * 64)  # a -wal SQLite ignores
    os.chmod(store, 0o644)
    with open_snapshot(str(store), private_options(tmp_path)) as snap:
        kinds = {problem.kind for problem in snap.problems}
        assert {ProblemKind.WAL_IGNORED, ProblemKind.PERMISSIONS} <= kinds
        assert snap.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 4
    legacy = tmp_path / "legacy.db"
    with sqlite3.connect(legacy) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT)")
    os.chmod(legacy, 0o600)
    with open_snapshot(str(legacy), private_options(tmp_path)) as snap:
        assert [problem.kind for problem in snap.problems] == [ProblemKind.NOT_WAL_MODE]


def test_wal_info_stops_at_a_torn_frame(tmp_path: Path) -> None:
    store = build_wal_store(tmp_path / "db" / "half-pi.db")
    wal = Path(str(store) + "-wal").read_bytes()
    whole = wal_info(wal)
    assert whole.header_valid and whole.frames == whole.committed_frames and whole.transactions >= 2
    torn = wal_info(wal[:-100])
    assert torn.frames == whole.frames - 1
    assert torn.committed_frames < whole.committed_frames and torn.ignored_bytes > 0
    assert not wal_info(wal[:20]).header_valid
