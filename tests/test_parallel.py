"""`--jobs`: sources verified in worker processes give the report one process gives, in input order; the
progress display learns every byte read, in workers too, and prints nothing off a terminal."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from concurrent.futures import BrokenExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit import parallel, progress
from sessaudit.cli import app
from sessaudit.engine import audit

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


class Recorder:
    """A tracker that remembers what it was told."""

    def __init__(self) -> None:
        self.total_bytes: int | None = None
        self.total_sources: int | None = None
        self.done = 0
        self.counter: Any = None
        self.polls = 0

    def start(self, total_bytes: int, total_sources: int) -> None:
        self.total_bytes, self.total_sources = total_bytes, total_sources

    def source_done(self) -> None:
        self.done += 1

    def attach(self, counter: Any) -> None:
        self.counter = counter

    def poll(self) -> None:
        self.polls += 1


@pytest.fixture
def pool_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use the pool even for the small example corpus (its threshold exists for speed only)."""
    monkeypatch.setattr(parallel, "POOL_THRESHOLD_BYTES", {"fork": 0, "spawn": 0})


def test_two_processes_give_the_report_of_one(pool_always: None) -> None:
    paths = [str(EXAMPLES)]
    alone = audit(paths, jobs=1)
    pooled = audit(paths, jobs=2)
    assert len(alone.report.sources) >= 5
    assert pooled.report.model_dump_json() == alone.report.model_dump_json()
    assert pooled.incomplete == alone.incomplete


def test_results_come_back_in_input_order_whatever_finishes_first(pool_always: None) -> None:
    # the first item is the slowest: a pool that yielded in completion order would put it last
    delays = [0.6, 0.0, 0.2, 0.0, 0.1]
    results = list(parallel.ordered_map(_sleep_and_echo, list(enumerate(delays)), jobs=2, sizes=[1] * 5))
    assert results == [0, 1, 2, 3, 4]


def _sleep_and_echo(item: tuple[int, float]) -> int:
    time.sleep(item[1])
    return item[0]


def _die(item: int) -> int:
    if item == 1:
        os._exit(9)  # as a worker the system kills (out of memory) ends: no exception, no result
    return item


def test_a_worker_that_dies_is_named_as_such_not_as_a_bug(
    pool_always: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(BrokenExecutor) as raised:
        list(parallel.ordered_map(_die, [0, 1, 2, 3], jobs=2, sizes=[1] * 4))
    message = parallel.worker_failure(raised.value)
    assert message is not None and "--jobs 1" in message
    assert parallel.worker_failure(RuntimeError("boom")) is None

    def broken_pool(paths: list[str], **options: object) -> None:
        raise raised.value

    monkeypatch.setattr("sessaudit.cli.audit", broken_pool)
    result = CliRunner().invoke(app, ["verify", str(tmp_path), "--output", str(tmp_path / "r.json")])
    assert result.exit_code == 4
    assert result.stderr.strip().splitlines() == [f"sessaudit: {message}"]
    assert not (tmp_path / "r.json").exists()  # nothing was written


def test_the_tracker_sees_every_byte_and_source_read_by_workers(pool_always: None) -> None:
    recorder = Recorder()
    result = audit([str(EXAMPLES)], jobs=2, tracker=recorder)
    sources = len(result.report.sources)
    assert recorder.total_sources == sources and recorder.done == sources
    assert recorder.counter is not None
    read = recorder.counter.value
    verified = sum(item.bytes for source in result.report.sources for item in source.files)
    # every verified byte was read once by a reader; Half-Pi lock files and the like are hashed, not read
    assert read >= 0.9 * verified
    assert recorder.total_bytes is not None and recorder.total_bytes >= verified * 0.9


def test_one_process_reports_bytes_through_the_sink() -> None:
    seen: list[int] = []
    previous = progress.set_sink(seen.append)
    try:
        recorder = Recorder()
        result = audit([str(EXAMPLES / "tiny-agent")], jobs=1, tracker=recorder)
    finally:
        progress.set_sink(previous)
    verified = sum(item.bytes for source in result.report.sources for item in source.files)
    assert sum(seen) == verified
    assert recorder.done == len(result.report.sources) and recorder.counter is None


def test_a_small_input_is_not_worth_a_pool() -> None:
    recorder = Recorder()
    audit([str(EXAMPLES / "tiny-agent")], jobs=2, tracker=recorder)
    assert recorder.counter is None  # the examples are far below the threshold: verified in process


def test_jobs_flag_is_validated_and_accepted() -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["verify", "--jobs", "0", str(EXAMPLES / "tiny-agent")])
    assert bad.exit_code == 2
    good = runner.invoke(app, ["verify", "--jobs", "2", "--format", "json", str(EXAMPLES / "tiny-agent")])
    assert good.exit_code in (0, 1), good.output


def test_no_progress_output_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "sessaudit", "verify", "--format", "json", str(EXAMPLES)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1
    assert "verifying" not in completed.stderr and "\x1b" not in completed.stderr


def _run_on_a_terminal(arguments: list[str]) -> tuple[int, bytes]:
    """Run sessaudit with stderr on a pseudo-terminal; return its exit code and what it showed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sessaudit", *arguments],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"},
    )
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            shown += data
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=120), shown


def test_a_terminal_shows_bytes_sources_rate_and_time_left(tmp_path: Path) -> None:
    # a session large enough for the bar to be drawn at least once (rich refreshes ten times a second)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 8 + b"\n" + b"1" * (40 << 20))
    code, shown = _run_on_a_terminal(["verify", "--format", "json", str(big)])
    assert code in (1, 3)
    text = shown.decode("utf-8", "replace")
    assert "verifying" in text and "sources" in text
    assert "MB" in text  # bytes done / total


def test_quiet_shows_no_progress_even_on_a_terminal(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 8 + b"\n" + b"1" * (40 << 20))
    code, shown = _run_on_a_terminal(["verify", "--quiet", str(big)])
    assert code in (1, 3)
    assert b"verifying" not in shown


def test_ctrl_c_ends_the_pool_workers_without_their_tracebacks(tmp_path: Path) -> None:
    """SIGINT reaches the whole foreground group, as a terminal's Ctrl-C does: the workers leave it to
    the parent, which ends them at once; only the parent's one line is printed."""
    script = (
        "import sys, time\n"
        "from sessaudit.parallel import ordered_map\n"
        "def slow(item):\n"
        "    time.sleep(60)\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    list(ordered_map(slow, [1, 2, 3, 4], jobs=2, sizes=[1 << 30] * 4))\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', file=sys.stderr)\n"
        "    sys.exit(130)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "started\n"
    time.sleep(1.5)  # the workers are forked and sleeping
    started = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr) == (130, "interrupted\n")
    assert time.monotonic() - started < 20  # the sleeping workers were not waited for
