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


@cache
def _compiled(file_name: str) -> Any:
    """jsonschema-rs's compiled validator of a schema in `schemas/`, or None when it cannot be had."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    try:
        return jsonschema_rs.validator_for(load_schema(file_name))
    except Exception:  # a schema it cannot compile: every instance goes the exact way
        return None


def schema_accepts(file_name: str, instance: Any) -> bool:
    """True only when jsonschema-rs proves `instance` valid against the schema (about 100 times faster
    than jsonschema). False means "not proven": the caller runs jsonschema's `iter_errors`, which alone
    words the findings. tests/test_schema_acceptance.py holds the two to agree on acceptance."""
    validator = _compiled(file_name)
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(instance))
    except Exception:  # e.g. a value it cannot convert: prove nothing
        return False


def best_schema_error(errors: list[Any]) -> Any:
    """jsonschema's `best_match` of validation errors (the most relevant one), or None."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    return best_match(errors)
