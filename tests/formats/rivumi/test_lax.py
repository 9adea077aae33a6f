"""Lax coercion as Rivumi's pydantic models apply it: native resume accepts what Rivumi accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.lax import LaxCoercer, lax_integer, lax_value
from sessaudit.formats.rivumi.resume import native_resume
from sessaudit.formats.rivumi.scenarios import PENDING_APPROVAL, build_run
from sessaudit.resources import load_schema
from tests.formats.rivumi.runs import set_manifest


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("integer", "3", 3),
        ("integer", " 3 ", 3),
        ("integer", "3.0", 3),
        ("integer", 3.0, 3),
        ("integer", True, 1),
        ("integer", "3.5", None),
        ("integer", "three", None),
        ("integer", None, None),
        ("number", "2.5", 2.5),
        ("number", True, 1.0),
        ("boolean", "yes", True),
        ("boolean", "OFF", False),
        ("boolean", 1, True),
        ("boolean", " true ", None),
        ("boolean", 2, None),
    ],
)
def test_scalars_follow_pydantic(kind: str, value: Any, expected: Any) -> None:
    assert lax_value(kind, value) == expected


def test_lax_integer_keeps_ints_and_refuses_non_numbers() -> None:
    assert lax_integer(7) == 7 and lax_integer("-0") == 0 and lax_integer([1]) is None


def test_schema_guided_coercion_reaches_nested_and_union_values() -> None:
    coercer = LaxCoercer(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "step": {"type": "integer", "minimum": 0},
                "flags": {"type": "array", "items": {"type": "boolean"}},
                "limit": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
                "label": {"type": "string"},
                "inner": {"$ref": "#/$defs/Inner"},
            },
            "$defs": {"Inner": {"type": "object", "properties": {"count": {"type": "integer"}}}},
        }
    )
    document = {"step": "4", "flags": ["yes", 0], "limit": "9", "label": 5, "inner": {"count": "2"}}
    assert coercer.coerce(document) == {
        "step": 4,
        "flags": [True, False],
        "limit": 9,
        "label": 5,  # pydantic v2 never makes a string of a number
        "inner": {"count": 2},
    }
    assert not coercer.is_valid(document)  # the label stays invalid
    assert coercer.is_valid({**document, "label": "x"})
    assert not coercer.is_valid({"step": "-1"})  # constraints hold after coercion
    assert not coercer.is_valid({"surprise": 1})  # unknown keys stay refused


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"step": "3"}, None),
        ({"last_event_sequence": "18"}, None),
        ({"terminal": "false"}, None),
        ({"step": "three"}, "session.json does not match the supported schema"),
        ({"terminal": "yes"}, "session.json does not match the supported schema"),  # phase is not terminal
        ({"surprise": 1}, "session.json does not match the supported schema"),
    ],
)
def test_native_resume_reads_the_manifest_laxly(
    tmp_path: Path, fields: dict[str, Any], message: str | None
) -> None:
    run_dir = build_run(tmp_path, crash=PENDING_APPROVAL).run_dir
    set_manifest(run_dir, **fields)
    contents = {
        name: (run_dir / name).read_bytes() for name in ("session.json", "request.json", "events.jsonl")
    }
    answer = native_resume(str(run_dir), contents)
    assert (answer.ok, answer.message) == (message is None, message)


def test_the_session_schema_coerces_nested_usage_counts() -> None:
    coercer = LaxCoercer(load_schema("rivumi-session.v1.schema.json"))
    document = {"usage": {"input_tokens": "5", "output_tokens": 2.0, "provider_total_tokens": "7"}}
    assert coercer.coerce(document)["usage"] == {
        "input_tokens": 5,
        "output_tokens": 2.0,
        "provider_total_tokens": 7,
    }
