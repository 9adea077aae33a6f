"""Resource limits (issue 9 item 2): hostile inputs get a finding naming the limit, exit 3, bounded memory."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import FailOn, app, exit_code
from sessaudit.discovery import discover
from sessaudit.engine import AuditResult, audit
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.framing import LineReader
from sessaudit.limits import DEFAULT_MAX_LINE_BYTES, Limits
from sessaudit.plugin import VerifyOptions
from sessaudit.rules import rule
from sessaudit.strictjson import MAX_DEPTH
from sessaudit.verdicts import Verdict
from tests.sessions import clean_session

REPO = Path(__file__).resolve().parent.parent
RIVUMI_RUN = REPO / "examples" / "rivumi" / "runs" / "6b9bb2f6535a7e07b6dffce8112d9d11"
runner = CliRunner()
HEADER = clean_session().split(b"\n", 1)[0] + b"\n"


def _audit(paths: list[Path | str], **limits: int) -> AuditResult:
    return audit([str(path) for path in paths], options=VerifyOptions(limits=Limits(**limits)))


def _rules(result: AuditResult) -> list[str]:
    return [item.rule for item in result.report.findings]


def _only(result: AuditResult, code: str) -> Any:
    (item,) = [item for item in result.report.findings if item.rule == code]
    return item


def _sparse_line(path: Path, length: int) -> int:
    """A tiny-agent header, then one line of `length` NUL bytes (a hole: no disk, no writing time) and LF."""
    path.write_bytes(HEADER)
    with path.open("r+b") as handle:
        handle.truncate(len(HEADER) + length)
        handle.seek(0, os.SEEK_END)
        handle.write(b"\n")
    return len(HEADER)


# --- the framing: an over-long line is counted and hashed, never held --------------------------------------
@pytest.mark.parametrize("chunk_size", [1, 3, 7, 64, 1 << 20])
def test_line_reader_drops_long_lines_but_keeps_numbers_offsets_and_hash(chunk_size: int) -> None:
    data = b"short\n" + b"x" * 50 + b"\n" + b"y" * 10 + b"\n\n" + b"z" * 11 + b"\n" + b"torn tail over"
    reader = LineReader(io.BytesIO(data), len(data), chunk_size=chunk_size, max_line_bytes=10)
    lines = [(line.number, line.offset, line.data, line.over_limit, line.end) for line in reader]
    assert lines == [
        (1, 0, b"short", 0, 6),
        (2, 6, b"", 50, 57),
        (3, 57, b"y" * 10, 0, 68),  # exactly the limit is kept
        (4, 68, b"", 0, 69),
        (5, 69, b"", 11, 81),
    ]
    assert reader.sha256 == hashlib.sha256(data).hexdigest()
    assert (reader.bytes_read, reader.repaired_length, reader.torn_tail_bytes) == (len(data), 81, 14)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_line_bytes"):
        Limits(max_line_bytes=0)
    with pytest.raises(ValueError, match="max_line_bytes"):
        LineReader(io.BytesIO(b""), 0, max_line_bytes=0)
    result = runner.invoke(app, ["verify", "x.jsonl", "--max-line-bytes", "0"])
    assert result.exit_code == 2


# --- over-long lines ---------------------------------------------------------------------------------------
def test_a_long_line_is_sa010_naming_the_limit_and_the_audit_is_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    offset = _sparse_line(path, 10_000_000)
    result = _audit([path], max_line_bytes=1000)
    item = _only(result, "SA010")
    assert (item.location.line, item.location.byte_offset) == (2, offset)
    assert "10000000 bytes" in item.message and "--max-line-bytes" in item.message and "1000" in item.message
    assert item.evidence == {"line_bytes": 10_000_000, "max_line_bytes": 1000}
    source = result.report.sources[0]
    assert source.verdict is Verdict.UNREADABLE and source.sessions[0].verdict is Verdict.UNREADABLE
    assert source.files[0].bytes == path.stat().st_size  # hashed to the end all the same
    assert result.incomplete and exit_code(result, FailOn.ERROR) == 3
    assert rule("SA010").verdict is Verdict.UNREADABLE and "--max-line-bytes" in rule("SA010").fix


def test_the_lines_after_a_long_line_are_still_checked(tmp_path: Path) -> None:
    lines = clean_session().split(b"\n")
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join([lines[0], b'"' + b"a" * 5000 + b'"', *lines[1:]]) + b"not json\n")
    result = _audit([path], max_line_bytes=4096)
    assert _only(result, "SA010").location.line == 2
    assert "SA106" in _rules(result)  # framing and JSON checks continue past the long line
    assert "SA215" in _rules(result)  # and the report says semantic reduction stopped


def test_a_long_header_line_and_a_v1_session_get_sa010(tmp_path: Path) -> None:
    header = tmp_path / "header.jsonl"
    header.write_bytes(b'{"kind":"header",' + b" " * 5000 + b"}\n")
    assert _only(_audit([header], max_line_bytes=100), "SA010").location.line == 1
    legacy = tmp_path / "v1.jsonl"
    legacy.write_bytes(
        b'{"type":"session","version":1,"id":"01a228fb-99a2-7b5e-b9ab-bf0ffa6bb9c4","createdAt":'
        b'"2026-11-29T20:25:07.234Z","cwd":"/","provider":"p","model":"m","timestamp":"2026-11-29T20:25:07.235Z"}\n'
        b'{"type":"message","message":{"role":"user","content":"' + b"a" * 3000 + b'"}}\n'
    )
    result = _audit([legacy], max_line_bytes=1000)
    assert result.report.sources[0].format_version == "1"
    assert _only(result, "SA010").location.line == 2 and exit_code(result, FailOn.ERROR) == 3


def test_a_walked_source_over_a_limit_makes_the_audit_incomplete(tmp_path: Path) -> None:
    folder = tmp_path / ".tiny-agent" / "sessions"
    folder.mkdir(parents=True)
    name = "2026-11-29T20-25-07-234Z_01a228fb-99a2-7b5e-b9ab-bf0ffa6bb9c4.jsonl"
    _sparse_line(folder / name, 5000)
    result = _audit([tmp_path], max_line_bytes=1000)
    assert not result.report.sources[0].path.endswith(str(tmp_path))  # a walked, not a named, source
    assert "SA010" in _rules(result) and exit_code(result, FailOn.ERROR) == 3


def test_rivumi_event_line_over_the_limit_is_sa010(tmp_path: Path) -> None:
    run = tmp_path / RIVUMI_RUN.name
    shutil.copytree(RIVUMI_RUN, run)
    result = _audit([run], max_line_bytes=200)
    found = [item for item in result.report.findings if item.rule == "SA010"]
    assert found and all(item.location.path and item.location.path.endswith("events.jsonl") for item in found)
    assert result.report.sources[0].verdict is Verdict.UNREADABLE and exit_code(result, FailOn.ERROR) == 3
    assert _rules(_audit([run])).count("SA010") == 0


def test_rivumi_deep_event_or_manifest_is_sa011_not_a_json_error(tmp_path: Path) -> None:
    run = tmp_path / RIVUMI_RUN.name
    shutil.copytree(RIVUMI_RUN, run)
    with (run / "events.jsonl").open("ab") as handle:
        handle.write(b'{"data":{"z":' + b"[" * 600 + b"]" * 600 + b"}}\n")
    result = _audit([run])
    item = _only(result, "SA011")
    assert item.location.path == str(run / "events.jsonl") and item.location.line == 16
    assert "SA501" not in _rules(result) and exit_code(result, FailOn.ERROR) == 3
    shutil.copy(RIVUMI_RUN / "events.jsonl", run / "events.jsonl")
    manifest = (run / "session.json").read_bytes().rstrip()
    (run / "session.json").write_bytes(manifest[:-1] + b', "z": ' + b"[" * 600 + b"]" * 600 + b"}")
    item = _only(_audit([run]), "SA011")
    assert item.location.path == str(run / "session.json") and item.location.pointer.startswith("/z/0/0")


def test_rivumi_file_over_max_file_bytes_is_sa012_and_not_read(tmp_path: Path) -> None:
    run = tmp_path / RIVUMI_RUN.name
    shutil.copytree(RIVUMI_RUN, run)
    size = (run / "events.jsonl").stat().st_size
    result = _audit([run], max_file_bytes=size - 1)
    item = _only(result, "SA012")
    assert item.location.path == str(run / "events.jsonl")
    assert f"{size} bytes" in item.message and "--max-file-bytes" in item.message
    source = result.report.sources[0]
    assert source.verdict is Verdict.UNREADABLE and source.sessions == []
    assert "events.jsonl" not in {Path(item.path).name for item in source.files}
    assert exit_code(result, FailOn.ERROR) == 3


def test_half_pi_store_over_max_file_bytes_is_sa012_and_never_copied(tmp_path: Path) -> None:
    store = tmp_path / "db" / "half-pi.db"
    with StoreBuilder(store, seed=1) as builder:
        builder.session("/home/dev/calc").user("x" * 100_000).assistant("ok")
    result = _audit([store], max_file_bytes=50_000)
    item = _only(result, "SA012")
    assert item.location.path == str(store) and "--max-file-bytes" in item.message
    assert result.report.sources[0].files == [] and exit_code(result, FailOn.ERROR) == 3
    assert _audit([store]).report.sources[0].verdict is not Verdict.UNREADABLE


# --- JSON: nesting, long numbers, many keys ----------------------------------------------------------------
def test_nesting_10000_deep_is_sa011_unreadable_not_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(HEADER + b"[" * 10_000 + b"]" * 10_000 + b"\n")
    started = time.monotonic()
    result = _audit([path])
    assert time.monotonic() - started < 5
    item = _only(result, "SA011")
    assert (item.location.line, item.location.byte_offset) == (2, len(HEADER) + MAX_DEPTH)
    assert "10000 deep" in item.message and str(MAX_DEPTH) in item.message
    assert item.native_code is None  # not tiny-agent's answer: JavaScript parses this nesting
    assert result.report.sources[0].verdict is Verdict.UNREADABLE and exit_code(result, FailOn.ERROR) == 3


def test_a_million_digit_number_is_read_as_javascript_does_in_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "number.jsonl"
    path.write_bytes(HEADER + b'[{"kind":"record","seq":' + b"9" * 1_000_000 + b"}]\n")
    started = time.monotonic()
    result = _audit([path])
    assert time.monotonic() - started < 5
    # JSON.parse reads it as Infinity, which is no safe integer: corrupt, fully verified (no limit involved)
    assert any(item.rule == "SA204" and "Infinity" in item.message for item in result.report.findings)
    assert result.report.sources[0].verdict is Verdict.CORRUPT and not result.incomplete


def test_an_object_of_200000_keys_is_verified_in_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "keys.jsonl"
    keys = b",".join(b'"k%d":0' % index for index in range(200_000))
    path.write_bytes(HEADER + b"{" + keys + b"}\n")
    started = time.monotonic()
    result = _audit([path])
    assert time.monotonic() - started < 8
    assert result.report.sources[0].verdict is Verdict.CORRUPT and not result.incomplete


def test_a_transaction_of_many_tiny_facts_stops_at_max_findings(tmp_path: Path) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_bytes(HEADER + b"[" + b",".join([b"0"] * 50_000) + b"]\n" + b"0\n" * 10)
    result = _audit([path], max_findings=100)
    assert _rules(result).count("SA204") == 100
    item = _only(result, "SA014")
    assert item.location.line == 2 and "--max-findings" in item.message
    assert result.report.sources[0].files[0].bytes == path.stat().st_size
    assert exit_code(result, FailOn.ERROR) == 3


def test_rivumi_events_stop_at_max_findings(tmp_path: Path) -> None:
    run = tmp_path / RIVUMI_RUN.name
    shutil.copytree(RIVUMI_RUN, run)
    with (run / "events.jsonl").open("ab") as handle:
        handle.write(b"0\n" * 500)
    result = _audit([run], max_findings=20)
    assert _only(result, "SA014").location.path == str(run / "events.jsonl")
    assert exit_code(result, FailOn.ERROR) == 3


# --- files that are not regular, links, walks ------------------------------------------------------------
def _peak_of(arguments: list[str], timeout: float) -> tuple[int, bytes, int]:
    """Run the CLI with `arguments` in a fresh process: (exit code, stdout, peak resident memory in KiB).

    The peak is the process's own `VmHWM`: `ru_maxrss` survives `execve` on Linux, so a child forked
    from this (large) test process would report the parent's size."""
    script = (
        "import sys\n"
        "from sessaudit.cli import main\n"
        "sys.argv = ['sessaudit', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    code = stop.code\n"
        "with open('/proc/self/status') as status:\n"
        "    peak = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
        "print(peak, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments], capture_output=True, timeout=timeout, check=False
    )
    peak = int(done.stderr.decode().strip().splitlines()[-1])
    return done.returncode, done.stdout, peak


def _cli(*arguments: str, timeout: float = 30) -> tuple[int, dict[str, Any], int]:
    """`verify --format json` in a fresh process: (exit code, JSON report, peak resident memory in KiB)."""
    code, output, peak = _peak_of(["verify", "--format", "json", "--jobs", "1", *arguments], timeout)
    return code, json.loads(output), peak


def _within(seconds: float, call: Callable[[], AuditResult]) -> AuditResult:
    """`call()` on a daemon thread: a read that blocks (a FIFO opened for reading) fails the test in
    `seconds` instead of hanging the suite."""
    answer: list[AuditResult] = []
    worker = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert answer, f"still running after {seconds} s: something blocked"
    return answer[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_named_or_walked_is_never_opened(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    os.mkfifo(folder / "pipe.jsonl")  # nobody ever writes to it: opening it for reading would block
    (folder / "clean.jsonl").write_bytes(clean_session())
    result = _within(10, lambda: _audit([folder / "pipe.jsonl"]))
    assert _only(result, "SA001").message.endswith("not a regular file (a FIFO)")
    assert exit_code(result, FailOn.ERROR) == 3
    walked = _within(10, lambda: _audit([folder]))
    assert [(item.path, item.reason) for item in walked.report.skipped] == [
        (str(folder / "pipe.jsonl"), "not a regular file")
    ]
    assert exit_code(walked, FailOn.ERROR) == 0


def test_devices_are_refused_at_once() -> None:
    for device in ("/dev/zero", "/dev/null"):
        if not os.path.exists(device):
            continue
        result = _within(10, partial(_audit, [device]))
        assert _only(result, "SA001").message == f"{device}: not a regular file (a device)"
        assert exit_code(result, FailOn.ERROR) == 3


def test_symlink_loops_named_and_walked(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    folder = tmp_path / "logs" / "sub"
    folder.mkdir(parents=True)
    (folder / "up").symlink_to("..")  # a directory link to its parent
    (folder / "loop").symlink_to(tmp_path / "a")
    (folder / "s.jsonl").write_bytes(clean_session())
    named = _audit([tmp_path / "a"])
    assert "symbolic links" in _only(named, "SA001").message and exit_code(named, FailOn.ERROR) == 3
    for given in (tmp_path / "logs", folder / "up"):  # the named link to a parent is followed once
        walked = _audit([given])
        assert len(walked.report.sources) == 1 and walked.report.sources[0].verdict is Verdict.CLEAN
        assert {item.reason for item in walked.report.skipped} == {"symbolic link (not followed)"}
        assert exit_code(walked, FailOn.ERROR) == 0


def test_twenty_thousand_files_walk_in_bounded_time_and_max_files_stops_a_walk(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    original = tmp_path / "original.txt"
    original.write_bytes(b"x\n")
    for index in range(20_000):  # hard links: 20,000 regular files, made faster than by writing each
        os.link(original, folder / f"f{index:05d}.txt")
    started = time.monotonic()
    found = discover([str(folder)])
    assert time.monotonic() - started < 6
    assert len(found.skipped) == 20_000 and found.candidates == []
    limited = _audit([folder], max_files=1000)
    item = _only(limited, "SA013")
    assert item.location.path == str(folder) and "--max-files" in item.message and "1000" in item.message
    assert len(limited.report.skipped) == 0  # the walk stopped while the folder was being scanned
    assert limited.report.sources[0].verdict is Verdict.UNREADABLE and exit_code(limited, FailOn.ERROR) == 3


def test_max_files_counts_every_entry_at_every_depth(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for index in range(4):
        (tmp_path / "sub" / f"{index}.txt").write_bytes(b"x\n")
    (tmp_path / "s.jsonl").write_bytes(clean_session())
    assert _audit([tmp_path], max_files=6).incomplete == []  # exactly the limit: sub, its 4 files, s.jsonl
    over = _audit([tmp_path], max_files=5)
    assert _rules(over) == ["SA013"] and over.incomplete


# --- memory, measured in a fresh process -------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak memory is read from /proc")
def test_peak_memory_stays_bounded_for_a_line_over_the_default_limit(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(clean_session())
    code, _, baseline = _cli(str(clean))
    assert code == 0
    default = tmp_path / "default.jsonl"
    _sparse_line(default, 2 * DEFAULT_MAX_LINE_BYTES)
    code, report, peak = _cli(str(default))
    assert code == 3 and [item["rule"] for item in report["findings"]] == ["SA010"]
    assert str(DEFAULT_MAX_LINE_BYTES) in report["findings"][0]["message"]
    # pending bytes are kept up to the limit, then dropped: below the 64 MiB the line holds (128 joined)
    assert peak - baseline < DEFAULT_MAX_LINE_BYTES // 1024 + 12 * 1024, (baseline, peak)


def test_load_takes_the_limits_and_an_input_over_one_makes_it_incomplete(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    _sparse_line(path, 5000)
    database = tmp_path / "w.duckdb"
    result = runner.invoke(
        app, ["load", str(path), "--db", str(database), "--jobs", "1", "--max-line-bytes", "1000"]
    )
    assert result.exit_code == 3, result.output
    assert "over a limit (SA010)" in result.output


def test_load_never_holds_a_line_over_the_limit(tmp_path: Path) -> None:
    """`load` re-reads a source with verification's own line limit: the over-long line cut the extraction
    (SA010), so its bytes are hashed, never held."""
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(clean_session())
    code, _, baseline = _peak_of(["load", str(clean), "--db", str(tmp_path / "a.duckdb"), "--jobs", "1"], 60)
    assert code == 0
    long = tmp_path / "long.jsonl"
    _sparse_line(long, 48 << 20)
    arguments = [
        "load",
        str(long),
        "--db",
        str(tmp_path / "b.duckdb"),
        "--jobs",
        "1",
        "--max-line-bytes",
        "1000",
    ]
    code, _, peak = _peak_of(arguments, 60)
    assert code == 3
    assert peak - baseline < 16 * 1024, (baseline, peak)  # the line alone is 48 MiB
