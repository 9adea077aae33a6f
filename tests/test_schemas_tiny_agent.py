"""The tiny-agent v2 header and fact schemas against tiny-agent's own fixtures and the project's builder.

How tiny-agent applies a fixture's `schemaValid` flag (`typescript/test/session-reducer.test.ts`,
`committedValues`), mirrored by `committed_values` below:

- only the committed bytes count: everything after the last LF (a torn tail) is ignored;
- they are decoded leniently (Node's `Buffer.toString`) and split on LF, and **empty lines are
  dropped**, so the blank-line fixture is schema-valid: a blank line is a framing fault, not a shape;
- each line goes through `JSON.parse`, which ignores a trailing CR (so the CRLF fixture is
  schema-valid), keeps the last of duplicate keys and accepts lone surrogate escapes, so those
  lexical faults never reach the schema: `schemaValid: false` fixtures are not validated at all.

We are stricter in one way and say so: the first committed line must be a header and every later
line a transaction (tiny-agent validates each line against "header or transaction"). For
`schemaValid: false`, the fixture must be rejected by the schemas or, for faults below JSON
Schema's reach (duplicate keys, surrogates), by the strict line parser `decode_line`.

Like tiny-agent's schema, ours leaves the fixed texts of synthetic tool results (spec §8.5) to the
verifier: the five `synthetic-*-wrong-content` fixtures are `schemaValid: true` and accepted by the
schemas, and the verifier rejects them with SA212 (checked below).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sessaudit.formats.tiny_agent.build.session import SessionBuilder
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.plugin import SourceOutcome
from sessaudit.resources import load_schema
from sessaudit.strictjson import LineProblem, decode_line
from tests.formats.tiny_agent.damaged import DAMAGED
from tests.formats.tiny_agent.scenarios import LEGAL
from tests.formats.tiny_agent.walk import random_session
from tests.shared import conformance_dir

HEADER_SCHEMA = load_schema("tiny-agent-header.v2.schema.json")
FACT_SCHEMA = load_schema("tiny-agent-fact.v2.schema.json")
HEADER = Draft202012Validator(HEADER_SCHEMA)
FACT = Draft202012Validator(FACT_SCHEMA)

WRONG_SYNTHETIC_TEXTS = frozenset(
    f"synthetic-{reason}-wrong-content"
    for reason in ("invalid-arguments", "unknown-tool", "truncated", "aborted", "interrupted")
)
# `schemaValid: false` fixtures whose fault JSON.parse hides from any schema: only the strict parser sees it.
BELOW_SCHEMA_REACH = frozenset({"duplicate-json-key", "escaped-lone-surrogate", "raw-lone-surrogate"})


def committed_values(data: bytes) -> list[Any]:
    """tiny-agent's `committedValues`: committed bytes, lenient decoding, blank lines dropped, JSON.parse."""
    end = data.rfind(b"\n")
    if end < 0:
        return []
    return [json.loads(line) for line in data[:end].decode("utf-8", errors="replace").split("\n") if line]


def schema_errors(values: list[Any], fact: Draft202012Validator = FACT) -> list[tuple[int, str]]:
    """(position, message) of every value the schemas reject: the header first, transactions after."""
    found: list[tuple[int, str]] = []
    for position, value in enumerate(values):
        validator = HEADER if position == 0 else fact
        found.extend((position, error.message) for error in validator.iter_errors(value))
    return found


def manifest() -> list[dict[str, Any]]:
    fixtures = conformance_dir("tiny-agent") / "fixtures"
    entries: list[dict[str, Any]] = json.loads((fixtures / "manifest.json").read_text(encoding="utf-8"))[
        "fixtures"
    ]
    return entries


def fixture_bytes(entry: dict[str, Any]) -> bytes:
    path: Path = conformance_dir("tiny-agent") / "fixtures" / str(entry["file"])
    return path.read_bytes()


def test_the_schemas_are_valid_draft_2020_12_with_our_ids() -> None:
    for name, schema in (("header", HEADER_SCHEMA), ("fact", FACT_SCHEMA)):
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"https://sessaudit.dev/schemas/tiny-agent-{name}.v2.schema.json"


def test_schema_valid_fixtures_are_accepted_line_by_line() -> None:
    checked = 0
    for entry in manifest():
        if not entry["schemaValid"]:
            continue
        values = committed_values(fixture_bytes(entry))
        assert schema_errors(values) == [], entry["name"]
        checked += 1
    assert checked >= 35


def test_wrong_synthetic_texts_pass_the_schemas_and_fail_the_verifier() -> None:
    names = {entry["name"]: entry for entry in manifest()}
    for name in sorted(WRONG_SYNTHETIC_TEXTS):
        assert names[name]["schemaValid"] is True
        data = fixture_bytes(names[name])
        assert schema_errors(committed_values(data)) == [], name
        outcome = verify_bytes(data)
        assert [item.rule for item in outcome.findings if item.severity == "error"] == ["SA212"], name


def verify_bytes(data: bytes) -> SourceOutcome:
    return verify_tiny_agent("fixture.jsonl", "fixture.jsonl", io.BytesIO(data), len(data))


def strict_parser_rejects(data: bytes) -> bool:
    end = data.rfind(b"\n")
    for number, line in enumerate(data[:end].split(b"\n"), start=1):
        try:
            decode_line(line, strip_bom=number == 1)
        except LineProblem:
            return True
    return False


def lenient_schema_rejects(data: bytes) -> bool:
    try:
        values = committed_values(data)
    except ValueError:
        return True  # JSON.parse would throw as well
    return bool(schema_errors(values))


def test_schema_invalid_fixtures_are_rejected_by_schema_or_strict_parser() -> None:
    rejected = [entry["name"] for entry in manifest() if not entry["schemaValid"]]
    assert set(BELOW_SCHEMA_REACH) <= set(rejected)
    for entry in manifest():
        if entry["schemaValid"]:
            continue
        data = fixture_bytes(entry)
        by_schema, by_parser = lenient_schema_rejects(data), strict_parser_rejects(data)
        assert by_schema or by_parser, entry["name"]
        if entry["name"] in BELOW_SCHEMA_REACH:
            assert not by_schema and by_parser, f"{entry['name']} should need the strict parser"


def test_a_raw_utf8_surrogate_is_caught_by_the_strict_parser_only() -> None:
    # The suite's raw-lone-surrogate.jsonl is a byte copy of the escaped case; this one has the raw bytes.
    header = SessionBuilder(seed=60).data()
    raw = header.replace(b'"cwd":"/home/dev/shop"', b'"cwd":"/home/dev/\xed\xa0\x80shop"')
    assert b"\xed\xa0\x80" in raw
    with pytest.raises(LineProblem) as problem:
        decode_line(raw.rstrip(b"\n"))
    assert problem.value.rule == "SA103"
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    # Decoded permissively, it is a well-formed header with a lone surrogate: no schema can object.
    value = json.loads(raw.decode("utf-8", errors="surrogatepass"))
    assert list(HEADER.iter_errors(value)) == []


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_builder_sessions_validate(name: str) -> None:
    data, _ = LEGAL[name]()
    assert schema_errors(committed_values(data.removeprefix(b"\xef\xbb\xbf"))) == []


def test_random_builder_sessions_validate() -> None:
    for seed in range(25):
        data, _ = random_session(seed)
        assert schema_errors(committed_values(data)) == [], seed


# Damage a schema sees (closed key sets, id patterns, bounds, fixed texts, lines that are no JSON
# value or an empty transaction) and damage it cannot see: across facts, digest values, the transcript,
# framing, and lexical faults that JSON.parse smooths over.
SCHEMA_VISIBLE_DAMAGE = frozenset(
    {
        "upper-case-id",
        "attempt-three",
        "extra-fact-key",
        "missing-timestamp",
        "negative-seq",
        "usage-with-both-owners",
        "header-version-1",
        "header-extra-key",
        "header-upper-case-id",
        "legacy-v1",
        "raw-malformed",
        "raw-empty-transaction",
    }
)
SCHEMA_BLIND_DAMAGE = frozenset(
    {
        "wrong-configuration-digest",
        "wrong-seq",
        "seq-gap-in-middle",
        "seq-gap-inside-array",
        "duplicate-fact-id",
        "wrong-source-digest",
        "retry-after-settle",
        "stop-with-calls",
        "wrong-synthetic-text",
        "crlf",
        "raw-blank",
        "lexical-invalid-utf8",
        "lexical-raw-surrogate",
        "lexical-escaped-surrogate",
        "lexical-duplicate-key",
        "header-without-line-feed",
    }
)


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_schemas_see_exactly_the_shape_damage(name: str) -> None:
    assert name in SCHEMA_VISIBLE_DAMAGE | SCHEMA_BLIND_DAMAGE, "classify the new damaged scenario"
    data, _ = DAMAGED[name]()
    assert lenient_schema_rejects(data) is (name in SCHEMA_VISIBLE_DAMAGE), name
    if name.startswith("lexical-"):
        assert strict_parser_rejects(data), name


def test_schema_files_end_with_a_newline() -> None:
    for name in ("tiny-agent-header.v2.schema.json", "tiny-agent-fact.v2.schema.json"):
        text = (Path(__file__).resolve().parent.parent / "schemas" / name).read_text(encoding="utf-8")
        assert text.endswith("}\n") and json.loads(text)["$schema"].endswith("2020-12/schema")
