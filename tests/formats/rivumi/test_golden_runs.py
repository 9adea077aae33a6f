"""Golden JSON reports for built and mutated Rivumi runs; nothing in a run changes when it is verified."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from sessaudit.engine import audit
from tests.formats.rivumi.cases import CASES
from tests.golden import check_golden, tree_state, untouched_report

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "rivumi"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    run_dir = CASES[name](tmp_path / "runs")
    check_golden(GOLDEN / f"{name}.json", untouched_report(run_dir, tmp_path, monkeypatch), update_golden)


def test_goldens_have_no_strays() -> None:
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == sorted(CASES)


def test_a_live_writer_is_reported_and_its_lock_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = CASES["pending-approval"](tmp_path / "runs")
    descriptor = os.open(run_dir / ".writer.lock", os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the test plays the live Rivumi writer
        before = tree_state(tmp_path)
        monkeypatch.chdir(tmp_path)
        report = audit([str(run_dir.relative_to(tmp_path))]).report
        assert tree_state(tmp_path) == before
    finally:
        os.close(descriptor)
    source = report.sources[0]
    assert source.native["resume"] == {
        "ok": False,
        "message": "session already has an active writer",
        "repaired_to": None,
    }
    (live,) = [item for item in report.findings if item.rule == "SA559"]
    assert "being written right now" in live.message and live.location.path.endswith(".writer.lock")
    # the records are still judged: the pending approval is open work with a seed
    run = source.sessions[0].runs[0]
    assert run.recovery is not None and run.recovery.condition == "approval-pending"
    assert run.recovery.seed is not None and run.recovery.seed.next_facts
