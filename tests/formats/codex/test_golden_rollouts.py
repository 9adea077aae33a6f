"""Golden JSON reports for the builder's Codex scenarios (each verified as the Codex home it writes) and
the hand-written damaged rollouts (each verified as its one file); verifying leaves every file beside them
unchanged, and no report names the run's temporary folder (a fork's parent is reported relative to the
fork, like every path of a report)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.formats.codex.cases import CASES
from tests.golden import check_golden, untouched_report

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "codex"


def _no_absolute_paths(report: str, root: Path) -> str:
    assert str(root) not in report and os.path.realpath(root) not in report
    return report


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    target = CASES[name](tmp_path / "rollouts")
    report = _no_absolute_paths(untouched_report(target, tmp_path, monkeypatch), tmp_path)
    check_golden(GOLDEN / f"{name}.json", report, update_golden)


def test_goldens_have_no_strays() -> None:
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == sorted(CASES)
