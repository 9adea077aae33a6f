"""Golden-file comparison: compare with the committed file, or rewrite it under `--update-golden`."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sessaudit.engine import audit
from sessaudit.reporters.json import render_json
from sessaudit.resources import load_schema

_REPORT_SCHEMA = Draft202012Validator(load_schema("report.v1.schema.json"))


def check_golden(path: Path, actual: str, update: bool) -> None:
    if update or not path.exists():
        if not update:
            raise AssertionError(
                f"golden file {path} is missing; run pytest with --update-golden to create it"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path} is stale; rerun with --update-golden if the change is intended"


def untouched_report(target: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The JSON report (indented, keys sorted) of `target`, verified from `root` with its path relative to
    it; asserts nothing under `root` changed or appeared, and that the report matches its schema."""
    before = tree_state(root)
    monkeypatch.chdir(root)
    document = json.loads(render_json(audit([str(target.relative_to(root))]).report))
    assert tree_state(root) == before, "verifying changed or created a file beside the evidence"
    _REPORT_SCHEMA.validate(document)
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def tree_state(directory: Path) -> dict[str, tuple[str, int, float]]:
    """Every entry under `directory` (links not followed): sha256 (files), mode and mtime."""
    found: dict[str, tuple[str, int, float]] = {}
    for folder, directories, files in os.walk(directory):
        for name in sorted(directories + files):
            path = Path(folder) / name
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            found[str(path.relative_to(directory))] = (digest, info.st_mode, info.st_mtime)
    return found
