"""check_run_directory reads every run file once, changes nothing, and gathers the per-file findings."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, TORN_LAST_LINE, build_run
from sessaudit.formats.rivumi.read.reader import check_run_directory
from tests.golden import tree_state


def rules(run_dir: Path) -> list[str]:
    return [item.rule for item in check_run_directory(str(run_dir), str(run_dir)).findings]


def test_clean_run_is_read_without_changes(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, crash=KILLED_AFTER_TOOL_STARTED).run_dir
    before = tree_state(run_dir)
    check = check_run_directory("runs/x", str(run_dir))
    assert tree_state(run_dir) == before  # lock file included
    assert check.findings == []
    assert sorted(item.path for item in check.files) == [
        "runs/x/.writer.lock",
        "runs/x/events.jsonl",
        "runs/x/request.json",
        "runs/x/session.json",
    ]
    events = next(item for item in check.files if item.path.endswith("events.jsonl"))
    assert events.sha256 == hashlib.sha256((run_dir / "events.jsonl").read_bytes()).hexdigest()
    assert check.log is not None and check.log.last_sequence == 14


def test_torn_run_and_temp_file(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, crash=TORN_LAST_LINE).run_dir
    (run_dir / ".session.json.k3j9x0qa").write_bytes(b"{")
    assert rules(run_dir) == ["SA542", "SA503"]  # sorted by path, then line


def test_events_only_directory(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path).run_dir
    (run_dir / "session.json").unlink()
    assert sorted(rules(run_dir)) == ["SA530"]


def test_symlinked_manifest_is_not_followed(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path).run_dir
    target = tmp_path / "elsewhere.json"
    (run_dir / "session.json").rename(target)
    (run_dir / "session.json").symlink_to(target)
    assert rules(run_dir) == ["SA543"]


def test_fork_run(tmp_path: Path) -> None:
    fork = build_fork_run(build_run(tmp_path).run_dir, 2)
    assert rules(fork) == ["SA534"]
