"""An audit never passes by accident: what could not be read is said, with the OS error, and exits 3.

Permission errors are injected through the evidence seams (sessaudit.evidence.open_descriptor and
scan_directory), since CI runs as root; the real-modes tests drop privileges (tests/unprivileged.py)."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sessaudit import evidence
from sessaudit.cli import app
from sessaudit.discovery import Problem, discover
from sessaudit.engine import audit
from tests.formats.names import Format
from tests.unprivileged import restore_modes, run_unprivileged, world_readable_folder

V2_HEADER = b'{"kind":"header","version":2,"id":"018f0000-0000-7000-8000-000000000001"}\n'
runner = CliRunner()


def deny_open(monkeypatch: pytest.MonkeyPatch, denied: Callable[[str], bool]) -> None:
    """Every evidence open of a path `denied` accepts fails as it does for an unprivileged user."""
    real_open = evidence.open_descriptor

    def open_descriptor(real_path: str, flags: int = evidence.READ_ONLY) -> int:
        if denied(real_path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), real_path)
        return real_open(real_path, flags)

    monkeypatch.setattr(evidence, "open_descriptor", open_descriptor)


def deny_listing(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    real_scan = evidence.scan_directory

    def scan_directory(real_path: str) -> AbstractContextManager[Iterator[os.DirEntry[str]]]:
        if real_path == str(denied):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), real_path)
        return real_scan(real_path)

    monkeypatch.setattr(evidence, "scan_directory", scan_directory)


def wal_only_store(folder: Path) -> str:
    """A Half-Pi store whose schema is only in its -wal (never checkpointed)."""
    from sessaudit.formats.half_pi.build.store_builder import StoreBuilder

    builder = StoreBuilder(folder / "half-pi.db", seed=5)
    builder.session().user("hello")
    built = builder.finish(keep_wal=True)
    assert b"CREATE TABLE" not in Path(built.path).read_bytes()
    return built.path


# --- injected permission errors ---------------------------------------------------------------


def test_a_walked_file_that_cannot_be_opened_is_skipped_with_the_error_and_the_audit_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_bytes(V2_HEADER)
    (tmp_path / "b.jsonl").write_bytes(V2_HEADER)
    deny_open(monkeypatch, lambda path: path.endswith("b.jsonl"))
    result = audit([str(tmp_path)])
    assert [source.path for source in result.report.sources] == [str(tmp_path / "a.jsonl")]
    assert [(item.path, item.reason) for item in result.report.skipped] == [
        (str(tmp_path / "b.jsonl"), "could not be read: Permission denied")
    ]
    assert result.incomplete == [f"{tmp_path / 'b.jsonl'}: could not be read: Permission denied"]


def test_a_walked_folder_that_cannot_be_listed_is_skipped_with_the_error_and_the_audit_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_bytes(V2_HEADER)
    (tmp_path / "locked").mkdir()
    deny_listing(monkeypatch, tmp_path / "locked")
    result = audit([str(tmp_path)])
    assert [(item.path, item.reason) for item in result.report.skipped] == [
        (str(tmp_path / "locked"), "directory could not be read: Permission denied")
    ]
    assert result.incomplete == [f"{tmp_path / 'locked'}: directory could not be read: Permission denied"]


def test_a_named_folder_that_cannot_be_listed_is_an_unreadable_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deny_listing(monkeypatch, tmp_path)
    found = discover([str(tmp_path)])
    assert [(c.path, c.problem, c.detail) for c in found.candidates] == [
        (str(tmp_path), Problem.UNREADABLE, "directory could not be read: Permission denied")
    ]
    result = runner.invoke(app, ["verify", str(tmp_path), "--format", "json"])
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    assert [(source["path"], source["verdict"]) for source in report["sources"]] == [
        (str(tmp_path), "unreadable")
    ]
    assert [item["rule"] for item in report["findings"]] == ["SA001"]


def test_a_half_pi_store_whose_wal_cannot_be_read_is_unreadable_not_unrecognised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = wal_only_store(tmp_path)
    deny_open(monkeypatch, lambda path: path.endswith("-wal"))
    named = discover([store])
    assert [(c.problem, c.detail) for c in named.candidates] == [
        (Problem.UNREADABLE, "its -wal could not be read: Permission denied")
    ]
    walked = audit([str(tmp_path)])
    reasons = {item.path: item.reason for item in walked.report.skipped}
    assert reasons[store] == "could not be read: its -wal could not be read: Permission denied"
    assert reasons[store + "-wal"] == "could not be read: Permission denied"
    assert f"{store}: could not be read: its -wal could not be read: Permission denied" in walked.incomplete


def test_a_named_wal_whose_store_cannot_be_read_is_unreadable_not_unrecognised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = wal_only_store(tmp_path)
    deny_open(monkeypatch, lambda path: path.endswith(".db"))
    found = discover([store + "-wal"])
    assert [(c.problem, c.detail) for c in found.candidates] == [
        (Problem.UNREADABLE, "its store half-pi.db could not be read: Permission denied")
    ]


def test_a_store_whose_own_pages_hold_the_schema_is_recognised_without_its_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    store = tmp_path / "mind.db"
    connection = sqlite3.connect(store)
    connection.executescript("CREATE TABLE sessions (id TEXT); CREATE TABLE messages (id TEXT);")
    connection.close()
    (tmp_path / "mind.db-wal").write_bytes(b"")
    deny_open(monkeypatch, lambda path: path.endswith("-wal"))
    assert [c.format for c in discover([str(store)]).candidates] == [Format.HALF_PI]


def test_a_walked_store_recognised_by_its_pages_whose_wal_cannot_be_copied_makes_the_audit_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessaudit.formats.half_pi.build.store_builder import StoreBuilder

    builder = StoreBuilder(tmp_path / "half-pi.db", seed=5)
    builder.session().user("hello")
    store = builder.finish().path  # checkpointed: the schema is in the database's own pages
    Path(store + "-wal").write_bytes(b"\0" * 100)
    deny_open(monkeypatch, lambda path: path.endswith("-wal"))
    result = audit([str(tmp_path)])  # walked, not named: an unreadable source is still not a pass
    assert [(source.path, source.verdict.value) for source in result.report.sources] == [
        (store, "unreadable")
    ]
    assert result.incomplete == [f"{store}: unreadable"]


# --- real file modes, without the privilege to ignore them ---------------------------------------


def test_real_modes_a_walked_file_of_mode_000_makes_the_audit_incomplete() -> None:
    folder = world_readable_folder()
    try:
        (folder / "a.jsonl").write_bytes(V2_HEADER)
        (folder / "b.jsonl").write_bytes(V2_HEADER)
        (folder / "a.jsonl").chmod(0o644)
        (folder / "b.jsonl").chmod(0)
        completed = run_unprivileged("verify", str(folder), "--format", "json")
        assert completed.returncode == 3, completed.stderr
        report = json.loads(completed.stdout)
        assert [source["path"] for source in report["sources"]] == [str(folder / "a.jsonl")]
        assert report["skipped"] == [
            {"path": str(folder / "b.jsonl"), "reason": "could not be read: Permission denied"}
        ]
        assert "audit incomplete" in completed.stderr and "Permission denied" in completed.stderr
    finally:
        restore_modes(folder)


def test_real_modes_a_named_folder_of_mode_000_is_unreadable() -> None:
    folder = world_readable_folder()
    try:
        locked = folder / "locked"
        locked.mkdir()
        (locked / "a.jsonl").write_bytes(V2_HEADER)
        locked.chmod(0)
        completed = run_unprivileged("verify", str(locked), "--format", "json")
        assert completed.returncode == 3, completed.stderr
        report = json.loads(completed.stdout)
        assert [(source["path"], source["verdict"]) for source in report["sources"]] == [
            (str(locked), "unreadable")
        ]
    finally:
        restore_modes(folder)


def test_real_modes_a_half_pi_wal_of_mode_000_is_unreadable() -> None:
    folder = world_readable_folder()
    try:
        store = wal_only_store(folder)
        for path in (store, store + "-shm"):
            os.chmod(path, 0o644)
        os.chmod(folder, 0o755)
        os.chmod(store + "-wal", 0)
        named = run_unprivileged("verify", store, "--format", "json")
        assert named.returncode == 3, named.stderr
        report = json.loads(named.stdout)
        assert [item["message"] for item in report["findings"]] == [
            f"{store}: its -wal could not be read: Permission denied"
        ]
        walked = run_unprivileged("verify", str(folder), "--format", "json")
        assert walked.returncode == 3, walked.stderr
        assert "its -wal could not be read: Permission denied" in walked.stderr
    finally:
        restore_modes(folder)


def test_the_console_says_first_what_could_not_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_bytes(V2_HEADER)
    (tmp_path / "b.jsonl").write_bytes(V2_HEADER)
    deny_open(monkeypatch, lambda path: path.endswith("b.jsonl"))
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    assert lines[lines.index("") + 1].startswith("INCOMPLETE — 1 path could not be read; ")
    # listed whole even without --show-skipped: it is why the audit is incomplete
    assert "Could not be read (1): the audit is incomplete" in result.stdout
    assert f"{tmp_path / 'b.jsonl'}: could not be read: Permission denied" in result.stdout.replace(
        "\n    ", " "
    )
    deny_open(monkeypatch, lambda path: path.endswith(".jsonl"))
    nothing = runner.invoke(app, ["verify", str(tmp_path)])
    assert nothing.exit_code == 3
    assert "INCOMPLETE — 2 paths could not be read; no session log was verified" in nothing.stdout
