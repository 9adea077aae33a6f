"""Golden JSON reports for project-built Half-Pi stores; verifying leaves every file beside them unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.formats.half_pi.cases import CASES
from tests.golden import check_golden, untouched_report

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "half-pi"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    store = CASES[name](tmp_path / "stores")
    check_golden(GOLDEN / f"{name}.json", untouched_report(store, tmp_path, monkeypatch), update_golden)


def test_goldens_have_no_strays() -> None:
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == sorted(CASES)
