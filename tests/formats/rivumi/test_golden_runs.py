"""Golden JSON reports for built and mutated Rivumi runs; nothing in a run changes when it is verified."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sessaudit.engine import audit
from sessaudit.reporters.json import render_json
from sessaudit.resources import load_schema
from tests.formats.rivumi.cases import CASES
from tests.formats.rivumi.runs import snapshot
from tests.golden import check_golden

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "rivumi"
REPORT_SCHEMA = Draft202012Validator(load_schema("report.v1.schema.json"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    run_dir = CASES[name](tmp_path / "runs")
    before = snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    document = json.loads(render_json(audit([str(run_dir.relative_to(tmp_path))]).report))
    assert snapshot(tmp_path) == before, "verifying changed the run directory"
    REPORT_SCHEMA.validate(document)
    check_golden(
        GOLDEN / f"{name}.json", json.dumps(document, indent=2, sort_keys=True) + "\n", update_golden
    )


def test_goldens_have_no_strays() -> None:
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == sorted(CASES)


def test_a_live_writer_is_reported_and_its_lock_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = CASES["pending-approval"](tmp_path / "runs")
    descriptor = os.open(run_dir / ".writer.lock", os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the test plays the live Rivumi writer
        before = snapshot(tmp_path)
        monkeypatch.chdir(tmp_path)
        report = audit([str(run_dir.relative_to(tmp_path))]).report
        assert snapshot(tmp_path) == before
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
