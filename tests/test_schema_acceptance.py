"""`schema_accepts` (jsonschema-rs) never accepts what jsonschema rejects, and accepts what the builders
write — so the fast proof changes no finding, only how fast a valid record is passed.

Instances: every record of every Claude Code and Codex builder scenario, each of them damaged in the ways a
shape check must catch (a field removed or replaced by an odd value, at the top and in its payload), and
hypothesis mutations of them, up to three deep. (hypothesis-jsonschema cannot generate from these schemas
in reasonable time: their if/then chains defeat its canonicaliser.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessaudit.resources import schema_accepts, schema_validator

SCHEMAS = (
    "claude-code-record-seen.v1.schema.json",
    "claude-code-record-inferred.v1.schema.json",
    "codex-line.v1.schema.json",
)
ODD_VALUES: tuple[Any, ...] = (None, 0, -1, 1.5, "", "x", "\ud800", [], {}, True, 2**70)


def rejected(schema: str, instance: Any) -> bool:
    return any(True for _ in schema_validator(schema).iter_errors(instance))


def agree(schema: str, instance: Any) -> None:
    """The one direction that matters: a proof of validity is never wrong."""
    if schema_accepts(schema, instance):
        assert not rejected(schema, instance), json.dumps(instance, default=str)[:400]


def _records(folder: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    from sessaudit.formats.claude_code.build.scenarios import build_all as build_claude
    from sessaudit.formats.codex.build.scenarios import build_all as build_codex

    claude = tmp_path_factory.mktemp("claude")
    codex = tmp_path_factory.mktemp("codex")
    build_claude(claude)
    build_codex(codex)
    return {"claude": _records(claude), "codex": _records(codex)}


def _for(schema: str, built: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return built["codex" if schema.startswith("codex") else "claude"]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_every_built_record_is_proven_valid_fast(schema: str, built: dict[str, list[dict[str, Any]]]) -> None:
    records = _for(schema, built)
    assert len(records) > 100
    valid = [record for record in records if not rejected(schema, record)]
    assert valid, schema
    assert [record for record in valid if not schema_accepts(schema, record)] == []


def _damaged(record: dict[str, Any]) -> list[Any]:
    """Each top-level and payload field removed, or replaced by each odd value."""
    out: list[Any] = []
    for key in list(record):
        out.append({k: v for k, v in record.items() if k != key})
        out.extend({**record, key: odd} for odd in ODD_VALUES)
    payload = record.get("payload") if isinstance(record.get("payload"), dict) else record.get("message")
    holder = "payload" if isinstance(record.get("payload"), dict) else "message"
    if isinstance(payload, dict):
        for key in list(payload):
            out.append({**record, holder: {k: v for k, v in payload.items() if k != key}})
            out.extend({**record, holder: {**payload, key: odd}} for odd in ODD_VALUES)
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
def test_damaged_records_are_never_proven_valid_wrongly(
    schema: str, built: dict[str, list[dict[str, Any]]]
) -> None:
    records = _for(schema, built)
    seen: set[str] = set()
    checked = 0
    for record in records:
        payload = record.get("payload")
        shape = f"{record.get('type')}/{payload.get('type') if isinstance(payload, dict) else ''}"
        if shape in seen:
            continue
        seen.add(shape)
        for instance in _damaged(record):
            agree(schema, instance)
            checked += 1
    assert checked > 200


def _mutate(value: Any, data: st.DataObject) -> Any:
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["drop", "replace", "recurse"]))
        if action == "drop":
            return {k: v for k, v in value.items() if k != key}
        if action == "replace":
            return {**value, key: data.draw(st.sampled_from(ODD_VALUES))}
        return {**value, key: _mutate(value[key], data)}
    if isinstance(value, list) and value:
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutate(value[index], data), *value[index + 1 :]]
    return data.draw(st.sampled_from(ODD_VALUES))


@pytest.mark.parametrize("schema", SCHEMAS)
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutations_of_built_records(
    schema: str, data: st.DataObject, built: dict[str, list[dict[str, Any]]]
) -> None:
    records = _for(schema, built)
    record = records[data.draw(st.integers(0, len(records) - 1))]
    mutated = record
    for _ in range(data.draw(st.integers(1, 3))):
        mutated = _mutate(mutated, data)
    agree(schema, mutated)


def test_a_schema_that_cannot_be_had_proves_nothing() -> None:
    assert schema_accepts("no-such-schema.v1.schema.json", {}) is False
