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


@cache
def schema_validator(file_name: str) -> Any:
    """A Draft 2020-12 validator (jsonschema's) of a schema in `schemas/`. jsonschema is imported on first
    use: it is a fifth of the start-up, and verifying sessions with no user file never needs it."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    return Draft202012Validator(load_schema(file_name))


def best_schema_error(errors: list[Any]) -> Any:
    """jsonschema's `best_match` of validation errors (the most relevant one), or None."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    return best_match(errors)
