"""Golden-file comparison: compare with the committed file, or rewrite it under `--update-golden`."""

from __future__ import annotations

from pathlib import Path


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
