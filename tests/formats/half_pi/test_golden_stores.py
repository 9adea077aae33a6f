"""Golden JSON reports for project-built Half-Pi stores; verifying leaves every file beside them unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sessaudit.engine import audit
from sessaudit.reporters.json import render_json
from sessaudit.resources import load_schema
from tests.formats.half_pi.cases import CASES
from tests.formats.rivumi.runs import snapshot
from tests.golden import check_golden

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "half-pi"
REPORT_SCHEMA = Draft202012Validator(load_schema("report.v1.schema.json"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    store = CASES[name](tmp_path / "stores")
    before = snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    document = json.loads(render_json(audit([str(store.relative_to(tmp_path))]).report))
    assert snapshot(tmp_path) == before, "verifying changed or created a file beside the store"
    REPORT_SCHEMA.validate(document)
    check_golden(
        GOLDEN / f"{name}.json", json.dumps(document, indent=2, sort_keys=True) + "\n", update_golden
    )


def test_goldens_have_no_strays() -> None:
    assert sorted(path.stem for path in GOLDEN.glob("*.json")) == sorted(CASES)
