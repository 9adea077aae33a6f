"""The one way tests reach `../shared` (the conformance suites): skipped with a reason when absent."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

_REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path | None:
    """`$SESSAUDIT_SHARED` or the `shared/` folder beside the checkout, when present."""
    configured = os.environ.get("SESSAUDIT_SHARED")
    candidate = Path(configured) if configured else _REPO.parent / "shared"
    return candidate if candidate.is_dir() else None


def conformance_dir(name: str) -> Path:
    """`shared/conformance/<name>`, or skip the calling test with a clear reason."""
    root = shared_dir()
    path = root / "conformance" / name if root else None
    if path is None or not path.is_dir():
        if os.environ.get("SESSAUDIT_REQUIRE_SHARED"):
            pytest.fail(f"conformance suite '{name}' required by SESSAUDIT_REQUIRE_SHARED but not found")
        pytest.skip(
            f"conformance suite '{name}' not found (needs ../shared/conformance/{name} beside the repo)"
        )
    return path


@cache
def conformance_manifest(suite: str, folder: str) -> list[dict[str, Any]]:
    """The `fixtures` list of `shared/conformance/<suite>/<folder>/manifest.json` (skips when absent)."""
    directory = conformance_dir(suite) / folder
    fixtures: list[dict[str, Any]] = json.loads((directory / "manifest.json").read_text())["fixtures"]
    return fixtures


def conformance_names(suite: str, folder: str) -> list[str]:
    """Fixture names for parametrisation; one placeholder (whose test then skips) when the suite is absent."""
    try:
        return [fixture["name"] for fixture in conformance_manifest(suite, folder)]
    except pytest.skip.Exception:
        return ["(conformance suite absent)"]
