"""The command line on Rivumi runs: verify a run root, seeds with Rivumi's own seed, `seed --native` bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.rivumi.spec.encoding import dump_sorted
from tests.formats.rivumi.cases import CASES
from tests.golden import tree_state

runner = CliRunner()


def sessaudit(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The real process, so stdout and stderr are compared as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "sessaudit", *arguments], cwd=cwd, capture_output=True, check=False
    )


def small_run(root: Path) -> Path:
    """A hand-written two-event run: just enough for Rivumi's seed-only fork, which reads events.jsonl."""
    run = root / "r1"
    run.mkdir(parents=True)
    lines = [
        {"event_type": "run.created", "run_id": "r1", "sequence": 0, "data": {"model": "scripted"}},
        {"event_type": "model.requested", "run_id": "r1", "sequence": 1, "data": {"step": 1}},
    ]
    (run / "events.jsonl").write_bytes(b"".join(dump_sorted(item).encode() + b"\n" for item in lines))
    return run


def test_seed_native_prints_rivumis_bytes(tmp_path: Path) -> None:
    run = small_run(tmp_path)
    expected = (
        b'{"events_included":1,"fork_point_event_type":"run.created","fork_point_sequence":0,'
        b'"replay_state":{"completed_turn_ids":[],"event_count":1,"first_sequence":0,"last_sequence":0,'
        b'"run_id":"r1","schema_version":1,"timeline":[{"detail":"scripted","event_type":"run.created",'
        b'"run_id":"r1","sequence":0}]},"run_started":false,"schema_version":1,'
        b'"side_effects_replayed":false,"source_run_id":"r1"}\n'
    )
    before = tree_state(run)
    result = sessaudit("seed", "r1", "--native", "--sequence", "0", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, b"")
    assert tree_state(run) == before


def test_seed_native_default_is_the_last_event(tmp_path: Path) -> None:
    small_run(tmp_path)
    result = sessaudit("seed", "r1", "--native", cwd=tmp_path)
    assert result.returncode == 0
    seed = json.loads(result.stdout)
    assert (seed["fork_point_sequence"], seed["fork_point_event_type"], seed["events_included"]) == (
        1,
        "model.requested",
        2,
    )


@pytest.mark.parametrize(
    ("sequence", "stderr"),
    [("7", b"error: fork sequence 7 was not found\n")],
)
def test_seed_native_refusal_is_rivumis_text(tmp_path: Path, sequence: str, stderr: bytes) -> None:
    small_run(tmp_path)
    result = sessaudit("seed", "r1", "--native", "--sequence", sequence, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, b"", stderr)


def test_seed_native_of_a_torn_log_is_rivumis_refusal(tmp_path: Path) -> None:
    run = CASES["torn-last-line"](tmp_path / "runs")
    result = sessaudit("seed", str(run), "--native", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr == b"error: event JSONL has a partial final line\n"


def test_seed_native_needs_a_source_with_a_native_seed(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_bytes(b'{"kind":"header","version":2}\n')
    result = runner.invoke(app, ["seed", str(tmp_path / "notes.jsonl"), "--native"])
    assert result.exit_code == 2
    assert "is no source of a format that takes seed --native (rivumi, claude-code, codex)" in result.output


def test_seed_native_picks_a_run_of_a_root_like_rivumi(tmp_path: Path) -> None:
    for name in ("pending-approval", "fork-run"):
        CASES[name](tmp_path / name)
    both = runner.invoke(app, ["seed", str(tmp_path), "--native"])
    assert both.exit_code == 2 and "holds 3 Rivumi runs; name one with --run" in both.output
    forked = runner.invoke(app, ["seed", str(tmp_path / "fork-run"), "--native", "--run", "fork-"])
    assert forked.exit_code == 0 and json.loads(forked.output)["source_run_id"].startswith("fork-")
    unclear = runner.invoke(app, ["seed", str(tmp_path / "fork-run"), "--native", "--run", "zz"])
    assert unclear.exit_code == 2 and "no unique run matching 'zz'" in unclear.output


def test_seed_of_a_rivumi_run_carries_rivumis_seed_at_a_chosen_sequence(tmp_path: Path) -> None:
    run = CASES["pending-approval"](tmp_path / "runs")
    result = runner.invoke(app, ["seed", str(run), "--sequence", "3"])
    assert result.exit_code == 0, result.output
    (seed,) = json.loads(result.output)
    native = sessaudit("seed", str(run), "--native", "--sequence", "3", cwd=tmp_path)
    assert seed["native_text"].encode() == native.stdout and seed["fork_point"]["seq"] == 3
    assert seed["condition"] == "approval-pending" and seed["next_facts"] == []
    assert any("not recorded" in warning for warning in seed["warnings"])
    missing = runner.invoke(app, ["seed", str(run), "--sequence", "99"])
    assert missing.exit_code == 2 and "not a verified fact" in missing.output


def test_verify_a_run_root_and_write_seeds(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    for name in ("clean", "killed-after-tool-started", "pending-approval"):
        CASES[name](root / name)
    seeds = tmp_path / "seeds"
    before = tree_state(root)
    result = runner.invoke(app, ["verify", str(root), "--format", "json", "--seeds-dir", str(seeds)])
    assert tree_state(root) == before
    assert result.exit_code == 0, result.output  # warnings only
    report = json.loads(result.output)
    assert [source["verdict"] for source in report["sources"]] == [
        "clean",
        "needs-recovery",
        "needs-recovery",
    ]
    written = sorted(path.name for path in seeds.iterdir())
    assert len(written) == 2 and all(name.endswith(".seed.json") for name in written)
    console = runner.invoke(app, ["verify", str(root)])
    assert "Rivumi's own resume: refuses (session stopped during a side effect" in console.output
    assert "UNKNOWN: tool replace_text" in console.output
