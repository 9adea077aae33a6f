"""Golden JSON reports for the builder's Claude Code scenarios and the hand-written damaged transcripts;
verifying leaves every file beside them unchanged.

A resumed session's report names the files it was resumed from with their absolute `real_path` (the
source's `native["resumed_from"]`, read by the warehouse): the golden shows a placeholder there, after
checking that it is the real path of the entry's `path`, and no other part of a report may name the run's
temporary folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.formats.claude_code.cases import CASES
from tests.golden import check_golden, untouched_report

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "claude-code"
REAL_PATH = "<the real path of path>"


def _without_real_paths(report: str, root: Path) -> str:
    document = json.loads(report)
    for source in document["sources"]:
        for item in source["native"].get("resumed_from", []):
            assert item["real_path"] == os.path.realpath(root / item["path"])
            item["real_path"] = REAL_PATH
    shown = json.dumps(document, indent=2, sort_keys=True) + "\n"
    assert str(root) not in shown and os.path.realpath(root) not in shown
    return shown


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    target = CASES[name](tmp_path / "transcripts")
    report = _without_real_paths(untouched_report(target, tmp_path, monkeypatch), tmp_path)
    check_golden(GOLDEN / f"{name}.json", report, update_golden)


def test_goldens_have_no_strays() -> None:
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == sorted(CASES)
