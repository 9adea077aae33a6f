"""Our fact schema and the verifier's fast path agree on shape, on instances generated from the schema.

The verifier reduces facts in tiny-agent's order, where reference and state checks come before some
shape checks, so a fact is judged in a context where its references resolve: at a *site*, the place
of a fact of the same variant in a legal session built by the builder. A generated payload is grafted
onto the site (ids, indexes, names and digests that tie it to the session are kept from the original;
`configurationDigest` is recomputed), and the file is cut after that line. Then:

- schema-valid ⇒ the verifier reports no shape finding on the line (`invalid-fact`, `invalid-id`);
  it may still refuse the fact for a reason no single-fact schema can know (a reference, a state
  transition, the transcript, a digest value, a running usage total);
- schema-invalid (a mutation of a valid fact) ⇒ the verifier rejects the line, whatever the code.

Tool-name uniqueness in a configuration snapshot is the one per-fact rule JSON Schema cannot state;
grafted snapshots are made unique. Generated examples per variant: $SESSAUDIT_SCHEMA_EXAMPLES (default
6; mutations: ten times as many, they are cheap).
"""

from __future__ import annotations

import copy
import io
import json
import os
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as strategy
from jsonschema import Draft202012Validator

from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.resources import load_schema
from tests.formats.tiny_agent.scenarios import LEGAL

schema_strategies = pytest.importorskip("hypothesis_jsonschema", reason="needs hypothesis-jsonschema")
verifier = pytest.importorskip("sessaudit.formats.tiny_agent.verifier", reason="needs the v2 verifier")

FACT_SCHEMA = load_schema("tiny-agent-fact.v2.schema.json")
FACT = Draft202012Validator(FACT_SCHEMA)
EXAMPLES = int(os.environ.get("SESSAUDIT_SCHEMA_EXAMPLES", "6"))
SHAPE_RULES = frozenset({"SA204", "SA214"})
SITE_SCENARIOS = (
    "tools-completed",
    "pre-execution-synthetics",
    "interrupted-then-finished",
    "abort-tools",
    "step-failed-run",
    "compaction-cycle",
)
# Keys whose value ties a fact to its session: kept from the site when grafting.
PINNED = frozenset(
    {
        "operationId",
        "stepId",
        "attemptId",
        "inputEntryId",
        "inputThroughEntryId",
        "resultEntryId",
        "assistantEntryId",
        "toolStartedId",
        "finalEntryId",
        "contextThroughEntryId",
        "compactedThroughEntryId",
        "compactedEntryIds",
        "retainedEntryIds",
        "retainedTail",
        "sourceDigest",
        "toolIndex",
        "toolCallId",
        "toolName",
        "operationKind",
        "stepKind",
        "attempt",
    }
)
ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    -1,
    1.5,
    2**53,
    "",
    "X",
    [],
    {},
    "01A029FC-5D8A-7101-8002-00005EED0002",
)


def variant(fact: dict[str, Any]) -> str:
    """The schema definition a fact's payload belongs to."""
    if fact["kind"] == "usage":
        return "usageFact"
    if fact["kind"] == "record":
        return str(fact["record"]["type"])
    entry = fact["entry"]
    if entry["type"] == "compaction":
        return "compactionEntry"
    role = entry["message"]["role"]
    if role == "tool":
        return "startedResultEntry" if "toolStartedId" in entry else "preExecutionEntry"
    return "userEntry" if role == "user" else "assistantEntry"


@cache
def sites() -> dict[str, tuple[bytes, list[Any], int]]:
    """variant → (the bytes before its line, the line's facts, the fact's index in them)."""
    found: dict[str, tuple[bytes, list[Any], int]] = {}
    for name in SITE_SCENARIOS:
        data, _ = LEGAL[name]()
        offset = data.index(b"\n") + 1
        for raw in data[offset:].split(b"\n")[:-1]:
            value = json.loads(raw)
            facts = value if isinstance(value, list) else [value]
            for index, fact in enumerate(facts):
                found.setdefault(variant(fact), (data[:offset], facts, index))
            offset += len(raw) + 1
    return found


@cache
def generator(name: str) -> strategy.SearchStrategy[Any]:
    generated: strategy.SearchStrategy[Any] = schema_strategies.from_schema(
        {"$defs": FACT_SCHEMA["$defs"], "$ref": f"#/$defs/{name}"}
    )
    return generated


def graft(name: str, generated: dict[str, Any]) -> dict[str, Any]:
    """The site's fact of this variant with the generated payload in place of its own."""
    _, facts, index = sites()[name]
    fact: dict[str, Any] = copy.deepcopy(facts[index])
    if name == "usageFact":
        fact["usage"] = generated["usage"]
        return fact
    key = "entry" if fact["kind"] == "entry" else "record"
    original, payload = fact[key], copy.deepcopy(generated)
    # Pin only what both carry; `abortRequested.toolCallId` and `operationFinished.operationKind`
    # tie to nothing the reducer looks up, so the generated value stays.
    unpinned = {"abortRequested": {"toolCallId"}, "operationFinished": {"operationKind"}}.get(name, set())
    for pinned in (PINNED & set(original) & set(payload)) - unpinned:
        payload[pinned] = original[pinned]
    if payload.get("message", {}).get("role") == "tool":
        payload["message"]["tool_call_id"] = original["message"]["tool_call_id"]
    snapshot = payload.get("configurationSnapshot")
    if snapshot is not None:
        names = [tool["name"] for tool in snapshot["tools"]]
        snapshot["tools"] = [
            tool for position, tool in enumerate(snapshot["tools"]) if tool["name"] not in names[:position]
        ]
        payload["configurationDigest"] = sha256_digest(snapshot)
    fact[key] = payload
    return fact


def answer(name: str, fact: dict[str, Any]) -> tuple[dict[str, Any], set[str], int]:
    """The verifier's native answer, the rules it reports on the fact's line, and that line's number."""
    prefix, facts, index = sites()[name]
    line = [*facts[:index], fact, *facts[index + 1 :]]
    value = line if len(line) > 1 else line[0]
    data = prefix + json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    outcome = verifier.verify_tiny_agent("agreement.jsonl", "/agreement.jsonl", io.BytesIO(data), len(data))
    number = prefix.count(b"\n") + 1
    rules = {item.rule for item in outcome.findings if item.location.line == number}
    return outcome.native["reducer"], rules, number


def mutate(fact: dict[str, Any], choice: int, odd: Any, operation: str) -> dict[str, Any]:
    """Delete a key, add an unknown key, or replace a value, at the `choice`-th place in the fact."""
    mutated = copy.deepcopy(fact)
    places: list[tuple[Any, Any]] = []

    def walk(holder: Any) -> None:
        items = holder.items() if isinstance(holder, dict) else enumerate(holder)
        for key, item in list(items):
            places.append((holder, key))
            if isinstance(item, dict | list):
                walk(item)

    walk(mutated)
    holder, key = places[choice % len(places)]
    if operation == "delete" and isinstance(holder, dict):
        del holder[key]
    elif operation == "extend" and isinstance(holder[key], dict):
        holder[key]["unexpected"] = odd
    else:
        holder[key] = odd
    return mutated


GENERATED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
MUTATED = settings(GENERATED, max_examples=EXAMPLES * 10)


@pytest.mark.parametrize("name", sorted(sites()))
def test_every_site_is_valid_for_both(name: str) -> None:
    _, facts, index = sites()[name]
    assert FACT.is_valid(facts[index])
    native, rules, _ = answer(name, facts[index])
    assert native["ok"] and not rules & SHAPE_RULES


def test_the_sites_cover_every_variant() -> None:
    payloads = {ref["$ref"].rsplit("/", 1)[1] for ref in FACT_SCHEMA["$defs"]["entry"]["oneOf"]}
    payloads |= {ref["$ref"].rsplit("/", 1)[1] for ref in FACT_SCHEMA["$defs"]["record"]["oneOf"]}
    assert set(sites()) == payloads | {"usageFact"}


@pytest.mark.parametrize("name", sorted(sites()))
def test_schema_valid_generated_facts_have_no_shape_finding(name: str) -> None:
    @GENERATED
    @given(generator(name))
    def check(generated: dict[str, Any]) -> None:
        fact = graft(name, generated)
        assume(FACT.is_valid(fact))  # a pinned key can contradict the generated variant
        _, rules, _ = answer(name, fact)
        assert not rules & SHAPE_RULES, (fact, rules)

    check()


@pytest.mark.parametrize("name", sorted(sites()))
def test_mutated_facts_are_judged_alike(name: str) -> None:
    @MUTATED
    @given(
        strategy.integers(min_value=0, max_value=10_000),
        strategy.sampled_from(ODD_VALUES),
        strategy.sampled_from(("delete", "extend", "replace")),
    )
    def check(choice: int, odd: Any, operation: str) -> None:
        _, facts, index = sites()[name]
        fact = mutate(facts[index], choice, odd, operation)
        native, rules, number = answer(name, fact)
        if FACT.is_valid(fact):
            assert not rules & SHAPE_RULES, (fact, rules)
        else:
            assert native["ok"] is False and native["line"] == number, (fact, native)

    check()
