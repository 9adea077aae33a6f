"""`--output` and `--report` onto something that is not a regular file (`/dev/null`, a FIFO) write into it:
the atomic rename would replace the device node or pipe with a regular file (as root: /dev/null itself)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.tiny_agent.build.session import SessionBuilder

runner = CliRunner()


def _session(folder: Path) -> Path:
    builder = SessionBuilder(seed=3)
    builder.exchange("Which test runner is this?", "node:test.")
    return builder.save(folder)


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with path.open("rb") as stream:
            into.append(stream.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_output_into_a_fifo_is_written_through_and_the_fifo_stays(tmp_path: Path) -> None:
    session = _session(tmp_path)
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = _read_fifo(fifo, received)
    result = runner.invoke(app, ["verify", str(session), "--format", "json", "--output", str(fifo)])
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert json.loads(received[0])["summary"]["verdicts"] == {"clean": 1}
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [session.name, fifo.name]
    )  # no temp left


def test_report_onto_a_null_device_keeps_it_a_device(tmp_path: Path) -> None:
    """A private copy of /dev/null's node (never the real one: a regression would replace it)."""
    session = _session(tmp_path)
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")
    result = runner.invoke(app, ["verify", str(session), "--quiet", "--report", f"sarif={null}"])
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(null.lstat().st_mode) and null.stat().st_rdev == os.makedev(1, 3)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([session.name, null.name])
