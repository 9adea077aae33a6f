"""A symbolic link or an unreadable file in place of a run's record: one finding, no guess, no seed; and a
named `events.jsonl` (regular or a link) stands for its run directory."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from sessaudit import evidence
from sessaudit.discovery import discover
from sessaudit.engine import audit
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, build_run
from sessaudit.verdicts import Verdict
from tests.formats.names import Format


def linked_run(tmp_path: Path) -> Path:
    """An open run whose events.jsonl is a symbolic link to the real log one folder up."""
    run_dir = build_run(tmp_path / "runs", crash=KILLED_AFTER_TOOL_STARTED).run_dir
    shutil.move(run_dir / "events.jsonl", tmp_path / "events.real")
    (run_dir / "events.jsonl").symlink_to(tmp_path / "events.real")
    return run_dir


def test_a_symlinked_events_log_is_one_finding_without_a_seed(tmp_path: Path) -> None:
    run_dir = linked_run(tmp_path)
    result = audit([str(tmp_path / "runs")])
    (source,) = result.report.sources
    assert (source.path, source.format, source.verdict) == (str(run_dir), "rivumi", Verdict.UNREADABLE)
    assert [(item.rule, item.location.path) for item in result.report.findings] == [
        ("SA543", str(run_dir / "events.jsonl"))
    ]
    assert "is a symbolic link" in result.report.findings[0].message
    assert source.sessions == []  # no session, hence no open run and no seed
    assert result.incomplete == [f"{run_dir}: unreadable"]  # walked, and still not a pass


def test_a_named_events_log_stands_for_its_run_directory_link_or_not(tmp_path: Path) -> None:
    run_dir = linked_run(tmp_path)
    found = discover([str(run_dir / "events.jsonl")])
    assert [(c.path, c.real_path, c.format) for c in found.candidates] == [
        (str(run_dir), str(run_dir), Format.RIVUMI)
    ]
    linked = audit([str(run_dir / "events.jsonl")])
    assert [item.rule for item in linked.report.findings] == ["SA543"]
    assert linked.report.sources[0].verdict is Verdict.UNREADABLE and linked.incomplete
    os.unlink(run_dir / "events.jsonl")
    shutil.move(tmp_path / "events.real", run_dir / "events.jsonl")
    regular = audit([str(run_dir / "events.jsonl")])
    (source,) = regular.report.sources
    assert (source.path, source.format) == (str(run_dir), "rivumi")
    assert sorted(item.path for item in source.files) == [
        str(run_dir / name) for name in (".writer.lock", "events.jsonl", "request.json", "session.json")
    ]  # not `…/events.jsonl/events.jsonl`
    assert all("events.jsonl/" not in (item.location.path or "") for item in regular.report.findings)


def test_an_events_log_that_cannot_be_opened_is_one_finding_without_a_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = build_run(tmp_path, crash=KILLED_AFTER_TOOL_STARTED).run_dir
    real_open = evidence.open_descriptor

    def open_descriptor(real_path: str, flags: int = evidence.READ_ONLY) -> int:
        if real_path.endswith("events.jsonl"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), real_path)
        return real_open(real_path, flags)

    monkeypatch.setattr(evidence, "open_descriptor", open_descriptor)
    result = audit([str(run_dir)])
    assert [(item.rule, item.message) for item in result.report.findings] == [
        (
            "SA543",
            f"{run_dir / 'events.jsonl'} cannot be opened: Permission denied; the run was not verified "
            "(nothing is known of its events or open state)",
        )
    ]
    assert result.report.sources[0].sessions == [] and result.incomplete
