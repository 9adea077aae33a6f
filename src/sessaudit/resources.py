"""Locate the top-level `schemas/` and `queries/` folders, in a checkout or inside the installed wheel."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`schemas` or `queries`: the wheel's `sessaudit/_data/<name>`, else the checkout's top-level folder."""
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    checkout = _PACKAGE.parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"sessaudit data folder {name!r} not found (looked in {installed} and {checkout})"
    )


@cache
def load_schema(file_name: str) -> dict[str, Any]:
    """A JSON Schema shipped in `schemas/`, by file name."""
    document: dict[str, Any] = json.loads((data_dir("schemas") / file_name).read_text(encoding="utf-8"))
    return document
