"""Evidence integrity (issue 9 item 4): `verify`, `seed` and `load --db <elsewhere>` leave every input file
(-wal, -shm and lock files included), every directory listing and every mtime exactly as they were, and
read-only evidence verifies exactly as writable evidence does."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, build_run
from sessaudit.formats.tiny_agent.build.session import SessionBuilder
from tests.formats.half_pi.cases import crash_image
from tests.golden import tree_state
from tests.sessions import clean_session, killed_during_deploy

runner = CliRunner()


def _tiny_agent(root: Path) -> str:
    folder = root / "project" / ".tiny-agent" / "sessions"
    folder.mkdir(parents=True)
    (folder / "2026-11-29T20-00-00-000Z_0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl").write_bytes(
        clean_session()
    )
    (folder / "2026-11-29T21-00-00-000Z_0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c.jsonl").write_bytes(
        killed_during_deploy()
    )
    torn = SessionBuilder(seed=9).data() + b'{"kind":"fact","se'
    (folder / "torn.jsonl").write_bytes(torn)
    return "project"


def _rivumi(root: Path) -> str:
    run_dir = build_run(root / "runs", crash=KILLED_AFTER_TOOL_STARTED).run_dir
    (run_dir / ".session.json.k2j4h1").write_bytes(b'{"schema_version": 1')  # a killed writer's temp file
    assert (run_dir / ".writer.lock").is_file()
    return str(run_dir.relative_to(root))


def _half_pi(root: Path) -> str:
    database = crash_image(root)
    for companion in ("-wal", "-shm"):
        assert Path(f"{database}{companion}").is_file()
    lock = database.parent.parent / "run" / "mind.lock"
    lock.parent.mkdir(parents=True)
    lock.write_bytes(b"4242\n")
    return str(database.relative_to(root))


FORMATS: dict[str, Callable[[Path], str]] = {
    "tiny-agent": _tiny_agent,
    "rivumi": _rivumi,
    "half-pi": _half_pi,
}
COMMANDS: dict[str, Callable[[str, Path], list[str]]] = {
    "verify": lambda target, elsewhere: ["verify", target, "--format", "json"],
    "verify-seeds-elsewhere": lambda target, elsewhere: [
        "verify",
        target,
        "--seeds-dir",
        str(elsewhere / "s"),
    ],
    "seed": lambda target, elsewhere: ["seed", target],
    "load": lambda target, elsewhere: ["load", target, "--db", str(elsewhere / "audit.duckdb")],
}


def _evidence(tmp_path: Path, format_id: str) -> tuple[Path, str]:
    root = tmp_path / "evidence"
    root.mkdir()
    target = FORMATS[format_id](root)
    # mtimes in the past, so a write within the same clock tick could not hide behind an equal mtime
    for folder, directories, files in os.walk(root):
        for name in [*directories, *files]:
            os.utime(Path(folder) / name, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
    os.utime(root, (1_000_000_000, 1_000_000_000))
    return root, target


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("format_id", sorted(FORMATS))
def test_commands_leave_the_evidence_byte_for_byte_and_create_nothing_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, format_id: str, command: str
) -> None:
    root, target = _evidence(tmp_path, format_id)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = tree_state(root)
    root_mtime = root.stat().st_mtime
    assert any(name.endswith(("-wal", ".writer.lock", "mind.lock", ".jsonl")) for name in before)
    monkeypatch.chdir(root)
    result = runner.invoke(app, COMMANDS[command](target, elsewhere))
    assert result.exit_code in (0, 1), result.output
    assert tree_state(root) == before, f"`{command}` changed, created or removed something in the evidence"
    assert root.stat().st_mtime == root_mtime


def _read_only(root: Path) -> None:
    for folder, directories, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        for name in directories:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    root.chmod(0o555)


def _writable(root: Path) -> None:
    root.chmod(0o755)
    for folder, directories, files in os.walk(root):
        for name in [*directories, *files]:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _verify_command(target: str) -> list[str]:
    return [sys.executable, "-m", "sessaudit", "verify", target, "--format", "json"]


def _run_read_only(root: Path, target: str) -> subprocess.CompletedProcess[str]:
    """`sessaudit verify` on read-only evidence. As root, permissions are not enforced, so the evidence is
    also bind-mounted read-only in a private mount namespace (or the test is skipped, saying why)."""
    if os.geteuid() != 0:
        return subprocess.run(_verify_command(target), cwd=root, capture_output=True, text=True, check=False)
    if shutil.which("unshare") is None:
        pytest.skip("running as root ignores chmod a-w, and unshare(1) is absent for a read-only mount")
    mount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0"'
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", mount + ' && touch "$0/probe"', str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode == 0 or "Read-only file system" not in probe.stderr:
        pytest.skip(
            f"running as root ignores chmod a-w, and no read-only mount could be made: {probe.stderr}"
        )
    return subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            mount + ' && cd "$0" && exec "$@"',
            str(root),
            *_verify_command(target),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("format_id", sorted(FORMATS))
def test_read_only_evidence_verifies_exactly_as_writable_evidence(tmp_path: Path, format_id: str) -> None:
    root, target = _evidence(tmp_path, format_id)
    writable = subprocess.run(_verify_command(target), cwd=root, capture_output=True, text=True, check=False)
    assert writable.returncode in (0, 1), writable.stderr
    _read_only(root)
    try:
        before = tree_state(root)
        read_only = _run_read_only(root, target)
        assert tree_state(root) == before
    finally:
        _writable(root)
    assert read_only.returncode == writable.returncode, read_only.stderr
    assert json.loads(read_only.stdout) == json.loads(writable.stdout)
