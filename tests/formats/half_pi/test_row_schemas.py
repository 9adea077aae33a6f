"""The Half-Pi row schemas (`schemas/half-pi-*.v1.schema.json`) against built stores, hand-written examples
and the Python checks that use them.

Every value of a described column in a store built by the project's own builder validates. One invalid
example per constraint fails that constraint alone. For damaged stores whose damage is a shape problem, the
schemas fail exactly at the rows the Python check reports; for damages beyond a schema's reach (order, Go's
bytes, a row's role, a byte bound) every schema passes and only the Python check reports. The checks keep
their messages: a table of values written before the checks used the schemas pins them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.check.history_ids import SCOPES_SCHEMA, _scope_problems
from sessaudit.formats.half_pi.check.history_messages import TOOL_CALLS_SCHEMA, parse_tool_calls
from sessaudit.formats.half_pi.check.runs_audit import (
    DETAILS_SCHEMA,
    MAX_RISK_LABEL_BYTES,
    MAX_RISK_LABELS,
    RISK_LABELS_SCHEMA,
    RowValidator,
    details_problem_of,
    plain_json,
    risk_labels_problem_of,
)
from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.read.snapshot import SnapshotOptions, open_snapshot
from sessaudit.formats.half_pi.spec.gojson import GoJSONError, Number, decode
from sessaudit.resources import load_schema
from tests.formats.half_pi.cases import CASES
from tests.formats.half_pi.test_checks_history import (
    CHAT,
    Statement,
    build_store,
    chat_message,
    opened_violations,
)
from tests.formats.half_pi.test_checks_runs import Scenario, built_store, rowid, violations_of

PROJECTION_SCHEMA = "half-pi-compact-projection.v1.schema.json"
SECURITY_PAYLOAD_SCHEMA = "half-pi-security-payload.v1.schema.json"
COMPACT_PAYLOADS_SCHEMA = "half-pi-compact-payloads.v1.schema.json"
SCHEMAS = (
    TOOL_CALLS_SCHEMA,
    PROJECTION_SCHEMA,
    SECURITY_PAYLOAD_SCHEMA,
    COMPACT_PAYLOADS_SCHEMA,
    DETAILS_SCHEMA,
    RISK_LABELS_SCHEMA,
    SCOPES_SCHEMA,
)
COMPACT_EVENTS = ("requested", "started", "completed", "failed")
# (table, column) -> the rule whose check reports that column's shape
COLUMN_RULES = {
    ("messages", "tool_calls"): "SA618",
    ("messages", "compact_projection"): "SA612",
    ("face_tokens", "scopes"): "SA624",
    ("security_decisions", "details_redacted"): "SA664",
    ("security_decisions", "risk_labels"): "SA665",
    ("lifecycle_outbox", "payload_redacted"): "SA661",
}
Failure = tuple[str, str, int]  # (table, column, rowid)
DIGEST = "sha256:" + "ab" * 32
UUID7 = "01900000-0000-7000-8000-000000000001"


@cache
def validator(name: str, definition: str | None = None) -> Any:
    """The checks' validator (integers by their literal) for a schema, or for one of its `$defs`."""
    schema = load_schema(name)
    if definition is None:
        return RowValidator(schema)
    registry: Registry[Any] = Registry().with_resources(
        (load_schema(item)["$id"], Resource.from_contents(load_schema(item))) for item in SCHEMAS
    )
    return RowValidator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=registry)


def failing_keywords(name: str, instance: Any, definition: str | None = None) -> set[str]:
    return {str(error.validator) for error in validator(name, definition).iter_errors(plain_json(instance))}


# --- the schemas themselves ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_schema_is_valid_draft_2020_12_with_our_id(name: str) -> None:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://sessaudit.dev/schemas/{name}"
    assert schema["title"].startswith("Half-Pi ") and "§" in schema["description"]


def test_the_security_payload_copies_the_details_and_risk_labels_schemas() -> None:
    definitions = load_schema(SECURITY_PAYLOAD_SCHEMA)["$defs"]
    for name, copy in (
        (DETAILS_SCHEMA, definitions["details"]),
        (RISK_LABELS_SCHEMA, definitions["riskLabels"]),
    ):
        own = {key: value for key, value in load_schema(name).items() if not key.startswith("$")}
        body = {key: value for key, value in own.items() if key not in ("title", "description")}
        assert {key: value for key, value in copy.items() if key != "description"} == body
        assert copy["description"] == f"= {name}"


def test_the_checks_constants_agree_with_the_schemas() -> None:
    labels = load_schema(RISK_LABELS_SCHEMA)
    assert labels["maxItems"] == MAX_RISK_LABELS and labels["items"]["maxLength"] == MAX_RISK_LABEL_BYTES
    scopes = load_schema(SCOPES_SCHEMA)["items"]["enum"]
    assert len(set(scopes)) == 10 and all(scope.startswith("face:") for scope in scopes)
    assert len(load_schema(DETAILS_SCHEMA)["properties"]) == 7


def test_the_compact_payload_root_accepts_exactly_one_definition() -> None:
    for event, example in VALID_COMPACT.items():
        assert failing_keywords(COMPACT_PAYLOADS_SCHEMA, example) == set(), event
        others = [other for other in COMPACT_EVENTS if other != event]
        assert all(failing_keywords(COMPACT_PAYLOADS_SCHEMA, example, other) for other in others), event
    assert failing_keywords(COMPACT_PAYLOADS_SCHEMA, {}) == {"oneOf"}


# --- values in stores the builder wrote ------------------------------------------------------------------


def described_values(connection: Any) -> Iterator[tuple[str, str, int, str, str, str | None]]:
    """(table, column, rowid, text, schema, definition) of every value a row schema describes."""
    columns = {
        table: {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for table, _ in COLUMN_RULES
    }
    wanted = [(table, column) for table, column in COLUMN_RULES if column in columns[table]]
    for table, column in wanted:
        kind = "event_type" if table == "lifecycle_outbox" else "''"
        # names come from COLUMN_RULES, never from the store
        for row_id, text, event_type in connection.execute(f"SELECT rowid, {column}, {kind} FROM {table}"):
            if column in ("tool_calls", "compact_projection") and text == "":
                continue  # '' is no calls, no projection: not JSON, outside the schemas
            if table != "lifecycle_outbox":
                schema = {
                    "tool_calls": TOOL_CALLS_SCHEMA,
                    "compact_projection": PROJECTION_SCHEMA,
                    "scopes": SCOPES_SCHEMA,
                    "details_redacted": DETAILS_SCHEMA,
                    "risk_labels": RISK_LABELS_SCHEMA,
                }[column]
                yield table, column, row_id, text, schema, None
            elif event_type == "security.decision":
                yield table, column, row_id, text, SECURITY_PAYLOAD_SCHEMA, None
            elif str(event_type).startswith("compact."):
                definition = str(event_type).removeprefix("compact.")
                yield table, column, row_id, text, COMPACT_PAYLOADS_SCHEMA, definition


def schema_failures(path: Path, tmp_path: Path, seen: dict[str, int] | None = None) -> set[Failure]:
    """Every (table, column, rowid) whose value is not JSON or fails its schema, read from a snapshot."""
    root = tmp_path / "schema-snapshot"
    root.mkdir(exist_ok=True)
    failures: set[Failure] = set()
    with open_snapshot(str(path), SnapshotOptions(temp_root=str(root))) as snap:
        for table, column, row_id, text, schema, definition in described_values(snap.connection):
            if seen is not None:
                key = schema if definition is None else f"{schema}#{definition}"
                seen[key] = seen.get(key, 0) + 1
            try:
                value = decode(text, use_number=True)
            except (GoJSONError, TypeError):
                failures.add((table, column, row_id))
                continue
            if not validator(schema, definition).is_valid(plain_json(value)):
                failures.add((table, column, row_id))
    return failures


CLEAN_CASES = sorted(name for name in CASES if not name.startswith("damaged-"))


def test_every_described_value_in_the_built_stores_validates(tmp_path: Path) -> None:
    seen: dict[str, int] = {}
    for name in CLEAN_CASES:
        path = CASES[name](tmp_path / name)
        assert schema_failures(path, tmp_path, seen) == set(), name
    for recovered in (False, True):
        path, _ = built_store(tmp_path / f"runs-{recovered}", recovered=recovered)
        assert schema_failures(path, tmp_path, seen) == set()
    history, _ = build_store(tmp_path / "history")
    assert schema_failures(Path(history), tmp_path, seen) == set()
    # every schema met real rows, but compact.failed, which no built store holds: its examples are by hand
    expected = {name for name in SCHEMAS if name != COMPACT_PAYLOADS_SCHEMA}
    expected |= {f"{COMPACT_PAYLOADS_SCHEMA}#{event}" for event in ("requested", "started", "completed")}
    assert set(seen) == expected, seen


# --- hand-written examples: valid, and one invalid example per constraint --------------------------------

VALID_COMPACT: dict[str, dict[str, Any]] = {
    "requested": {"trigger": "automatic"},
    "started": {
        "trigger": "manual",
        "from_seq": 1,
        "to_seq": 4,
        "generation_mode": "full",
        "source_digest": DIGEST,
        "attempt": 1,
    },
    "completed": {
        "trigger": "automatic",
        "summary_id": UUID7,
        "from_seq": 1,
        "to_seq": 8,
        "before_estimated_tokens": 9000,
        "after_estimated_tokens": 1200,
        "summary_bytes": 480,
        "source_digest": DIGEST,
        "duration_ms": 0,
        "context_version": 12,
        "reused": False,
    },
    "failed": {
        "trigger": "automatic",
        "reason": "compact_rate_limited",
        "duration_ms": 35,
        "retry_scheduled": True,
        "from_seq": 1,
        "to_seq": 8,
        "source_digest": DIGEST,
        "pending_attempt": 2,
        "retry_not_before": 1785412860000,
    },
}
CALL = {"ID": "call_1", "Name": "bash", "Args": '{"command":"ls"}'}
PROJECTION = {
    "facts": {"exit_code": 0},
    "output_bytes": 12,
    "output_digest": DIGEST,
    "reason_category": "",
    "success": True,
    "tool": "bash",
    "version": "compact-tool-v1",
}
FAILED_PROJECTION = {**PROJECTION, "success": False, "reason_category": "timed_out"}
DETAILS = {"execution_outcome": "succeeded", "duration_ms": 12, "provider_id": "openai", "profile": "default"}
PAYLOAD_STRINGS = (
    *("action_kind", "approval_id", "conversation_id", "decision", "event_id", "group_id", "input_digest"),
    *("node_id", "policy_version", "principal_id", "reason_code", "request_id", "resource_name", "rule_id"),
    *("run_id", "span_id", "target_node", "trace_id"),
)
PAYLOAD = {**{key: "" for key in PAYLOAD_STRINGS}, "details": DETAILS, "risk_labels": ["shell"]}


@dataclass(frozen=True)
class Example:
    name: str
    schema: str
    instance: Any
    fails: frozenset[str] = frozenset()  # the keywords it breaks; empty: it is valid
    definition: str | None = None


def bad(name: str, schema: str, instance: Any, *fails: str, definition: str | None = None) -> Example:
    return Example(name, schema, instance, frozenset(fails), definition)


def good(name: str, schema: str, instance: Any, definition: str | None = None) -> Example:
    return Example(name, schema, instance, definition=definition)


def compact(event: str, *fails: str, **changes: Any) -> Example:
    """compact.<event>'s valid example with fields changed (None removes one): valid when `fails` is empty."""
    instance = {key: value for key, value in {**VALID_COMPACT[event], **changes}.items() if value is not None}
    name = f"{event}-" + "-".join(sorted(changes)) if changes else event
    return Example(name, COMPACT_PAYLOADS_SCHEMA, instance, frozenset(fails), event)


EXAMPLES = (
    # tool calls: null or an array of {ID, Name, Args} strings
    good("no-calls", TOOL_CALLS_SCHEMA, None),
    good("empty-array", TOOL_CALLS_SCHEMA, []),
    good("two-calls", TOOL_CALLS_SCHEMA, [CALL, {**CALL, "ID": "call_2", "Args": "not json at all"}]),
    bad("calls-an-object", TOOL_CALLS_SCHEMA, CALL, "type"),
    bad("call-a-string", TOOL_CALLS_SCHEMA, ["call_1"], "type"),
    bad("call-without-args", TOOL_CALLS_SCHEMA, [{"ID": "call_1", "Name": "bash"}], "required"),
    bad("call-lowercase-key", TOOL_CALLS_SCHEMA, [{**CALL, "id": "call_1"}], "additionalProperties"),
    bad("call-id-number", TOOL_CALLS_SCHEMA, [{**CALL, "ID": 1}], "type"),
    bad("call-name-null", TOOL_CALLS_SCHEMA, [{**CALL, "Name": None}], "type"),
    bad("call-args-parsed", TOOL_CALLS_SCHEMA, [{**CALL, "Args": {"command": "ls"}}], "type"),
    # compact projection
    good("projection-success", PROJECTION_SCHEMA, PROJECTION),
    good("projection-failure", PROJECTION_SCHEMA, FAILED_PROJECTION),
    bad("projection-array", PROJECTION_SCHEMA, [PROJECTION], "type"),
    bad("projection-facts-null", PROJECTION_SCHEMA, {**PROJECTION, "facts": None}, "type"),
    bad(
        "projection-missing-key",
        PROJECTION_SCHEMA,
        {k: v for k, v in PROJECTION.items() if k != "tool"},
        "required",
    ),
    bad(
        "projection-extra-key",
        PROJECTION_SCHEMA,
        {**PROJECTION, "content": "all of it"},
        "additionalProperties",
    ),
    bad("projection-facts-array", PROJECTION_SCHEMA, {**PROJECTION, "facts": []}, "type"),
    bad("projection-bytes-text", PROJECTION_SCHEMA, {**PROJECTION, "output_bytes": "12"}, "type"),
    bad("projection-bytes-negative", PROJECTION_SCHEMA, {**PROJECTION, "output_bytes": -1}, "minimum"),
    bad(
        "projection-bytes-fraction", PROJECTION_SCHEMA, {**PROJECTION, "output_bytes": Number("12.0")}, "type"
    ),
    bad(
        "projection-digest-upper",
        PROJECTION_SCHEMA,
        {**PROJECTION, "output_digest": DIGEST.upper()},
        "pattern",
    ),
    bad(
        "projection-digest-newline",
        PROJECTION_SCHEMA,
        {**PROJECTION, "output_digest": DIGEST + "\n"},
        "maxLength",
    ),
    bad(
        "projection-digest-short",
        PROJECTION_SCHEMA,
        {**PROJECTION, "output_digest": DIGEST[:-1]},
        "minLength",
        "pattern",
    ),
    bad(
        "projection-reason-unknown",
        PROJECTION_SCHEMA,
        {**FAILED_PROJECTION, "reason_category": "oops"},
        "enum",
    ),
    bad("projection-success-text", PROJECTION_SCHEMA, {**FAILED_PROJECTION, "success": "false"}, "type"),
    bad("projection-tool-number", PROJECTION_SCHEMA, {**PROJECTION, "tool": 1}, "type"),
    bad("projection-version", PROJECTION_SCHEMA, {**PROJECTION, "version": "compact-tool-v2"}, "const"),
    bad(
        "projection-success-with-reason",
        PROJECTION_SCHEMA,
        {**PROJECTION, "reason_category": "failed"},
        "const",
    ),
    bad(
        "projection-failure-without-reason",
        PROJECTION_SCHEMA,
        {**FAILED_PROJECTION, "reason_category": ""},
        "enum",
    ),
    # details_redacted
    good("details-empty", DETAILS_SCHEMA, {}),
    good(
        "details-all-seven",
        DETAILS_SCHEMA,
        {**DETAILS, "model_id": "m", "failure_code": "", "delivery_outcome": True},
    ),
    good("details-big-integer", DETAILS_SCHEMA, {"duration_ms": Number("12345678901234567890")}),
    bad("details-array", DETAILS_SCHEMA, [DETAILS], "type"),
    bad("details-extra-key", DETAILS_SCHEMA, {**DETAILS, "command": "rm -rf /"}, "additionalProperties"),
    bad("details-null", DETAILS_SCHEMA, {"failure_code": None}, "type"),
    bad("details-object", DETAILS_SCHEMA, {"profile": {"name": "default"}}, "type"),
    bad("details-fraction", DETAILS_SCHEMA, {"duration_ms": Number("1.5")}, "type"),
    bad("details-integer-written-as-float", DETAILS_SCHEMA, {"duration_ms": Number("12.0")}, "type"),
    bad("details-integer-with-exponent", DETAILS_SCHEMA, {"duration_ms": Number("1e3")}, "type"),
    # risk_labels
    good("labels-empty", RISK_LABELS_SCHEMA, []),
    good("labels-at-the-limits", RISK_LABELS_SCHEMA, ["x" * 128] * 64),
    bad("labels-object", RISK_LABELS_SCHEMA, {}, "type"),
    bad("labels-too-many", RISK_LABELS_SCHEMA, ["shell"] * 65, "maxItems"),
    bad("label-number", RISK_LABELS_SCHEMA, ["shell", 1], "type"),
    bad("label-empty", RISK_LABELS_SCHEMA, [""], "minLength"),
    bad("label-too-long", RISK_LABELS_SCHEMA, ["x" * 129], "maxLength"),
    # face scopes
    good("scopes-one", SCOPES_SCHEMA, ["face:chat"]),
    good("scopes-all", SCOPES_SCHEMA, sorted(load_schema(SCOPES_SCHEMA)["items"]["enum"])),
    bad("scopes-text", SCOPES_SCHEMA, "face:chat", "type"),
    bad("scopes-empty", SCOPES_SCHEMA, [], "minItems"),
    bad("scopes-duplicate", SCOPES_SCHEMA, ["face:chat", "face:chat"], "uniqueItems"),
    bad("scopes-unknown", SCOPES_SCHEMA, ["face:admin"], "enum"),
    bad("scopes-number", SCOPES_SCHEMA, [1], "type", "enum"),
    # the security.decision payload
    good("payload", SECURITY_PAYLOAD_SCHEMA, PAYLOAD),
    bad("payload-array", SECURITY_PAYLOAD_SCHEMA, [PAYLOAD], "type"),
    bad("payload-event-id-null", SECURITY_PAYLOAD_SCHEMA, {**PAYLOAD, "event_id": None}, "type"),
    bad(
        "payload-missing-key",
        SECURITY_PAYLOAD_SCHEMA,
        {k: v for k, v in PAYLOAD.items() if k != "event_id"},
        "required",
    ),
    bad(
        "payload-parent-span",
        SECURITY_PAYLOAD_SCHEMA,
        {**PAYLOAD, "parent_span_id": ""},
        "additionalProperties",
    ),
    bad("payload-decision-number", SECURITY_PAYLOAD_SCHEMA, {**PAYLOAD, "decision": 1}, "type"),
    bad(
        "payload-details-key",
        SECURITY_PAYLOAD_SCHEMA,
        {**PAYLOAD, "details": {"command": "ls"}},
        "additionalProperties",
    ),
    bad("payload-label-empty", SECURITY_PAYLOAD_SCHEMA, {**PAYLOAD, "risk_labels": [""]}, "minLength"),
    # compact payloads, by event type
    *(compact(event) for event in COMPACT_EVENTS),
    compact("failed", retry_scheduled=False, pending_attempt=None, retry_not_before=None),
    compact(
        "failed",
        retry_scheduled=False,
        from_seq=None,
        to_seq=None,
        source_digest=None,
        pending_attempt=None,
        retry_not_before=None,
    ),
    compact("requested", "additionalProperties", reason="why"),
    compact("requested", "required", trigger=None),
    compact("requested", "enum", trigger="cron"),
    compact("started", "required", attempt=None),
    compact("started", "const", from_seq=2),
    compact("started", "minimum", to_seq=0),
    compact("started", "type", to_seq=Number("4.0")),
    compact("started", "enum", generation_mode="partial"),
    compact("started", "pattern", source_digest="sha256:" + "AB" * 32),
    compact("started", "minimum", attempt=-1),
    compact("completed", "pattern", summary_id="01900000-0000-4000-8000-000000000001"),
    compact("completed", "minimum", summary_bytes=0),
    compact("completed", "type", reused=1),
    compact("completed", "minimum", before_estimated_tokens=-5),
    compact("completed", "additionalProperties", generation_mode="full"),
    compact("failed", "minLength", reason=""),
    compact("failed", "type", duration_ms=Number("3.5")),
    compact("failed", "dependentRequired", to_seq=None),
    compact("failed", "dependentRequired", from_seq=None, to_seq=None),  # a source digest needs its range
    compact("failed", "const", retry_scheduled=False, retry_not_before=None),  # pending_attempt needs a retry
    compact("failed", "required", retry_not_before=None),  # a scheduled retry has a time
    compact("failed", "minimum", pending_attempt=0),
    compact("failed", "minimum", retry_not_before=0),
)


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[f"{item.schema.split('.')[0]}-{item.name}" for item in EXAMPLES]
)
def test_each_example_breaks_exactly_its_constraint(example: Example) -> None:
    assert failing_keywords(example.schema, example.instance, example.definition) == example.fails


def test_every_schema_has_valid_and_invalid_examples() -> None:
    for name in SCHEMAS:
        mine = [example for example in EXAMPLES if example.schema == name]
        assert any(not example.fails for example in mine) and any(example.fails for example in mine), name


# --- the checks that use the schemas keep their findings and words ----------------------------------------

# Each value with what the check said before it used the schema (taken from the hand-written version).
DETAILS_SAID = {
    "[]": "is an array, not a JSON object",
    "null": "is null, not a JSON object",
    '{"x": 0, "command": 0}': "has keys outside the seven allowed: command, x",
    '{"duration_ms": {}, "Args": false, "x": 0}': "has keys outside the seven allowed: Args, x",
    '{"model_id": false, "duration_ms": -3, "provider_id": 1.5}': (
        "key provider_id holds a number, not a string, integer or boolean"
    ),
    '{"failure_code": 1.5, "profile": {}}': (
        "key failure_code holds a number, not a string, integer or boolean"
    ),
    '{"duration_ms":1.0}': "key duration_ms holds a number, not a string, integer or boolean",
    '{"duration_ms":1e3}': "key duration_ms holds a number, not a string, integer or boolean",
    '{"delivery_outcome": null}': "key delivery_outcome holds null, not a string, integer or boolean",
    '{"duration_ms":12345678901234567890}': None,
    '{"duration_ms":-0}': None,
    '{"profile":"a","profile":1}': None,
    '{"execution_outcome":"succeeded","duration_ms":12}': None,
}
LABELS_SAID = {
    "{}": "is an object, not a JSON array",
    "[" + ",".join(["1"] + ['"a"'] * 64) + "]": "holds 65 labels, over the limit of 64",
    '["shell", ""]': "item 1 is 0 bytes, not 1..128",
    '["shell", 1, ""]': "item 1 is a number, not a string",
    '["' + "x" * 129 + '"]': "item 0 is 129 bytes, not 1..128",
    # 65 characters, 130 bytes: within the schema's maxLength, beyond the byte bound the check adds
    '["' + "é" * 65 + '"]': "item 0 is 130 bytes, not 1..128",
    '["' + "é" * 65 + '", 1]': "item 0 is 130 bytes, not 1..128",
    '[1, "' + "é" * 65 + '"]': "item 0 is a number, not a string",
    '["shell"]': None,
}
SCOPES_SAID = {
    '["face:chat","face:chat"]': "its scopes are not Go's sorted, deduplicated JSON array",
    "[]": "its scopes are empty",
    '["face:chat", 1]': "its scopes are not a JSON array of scope names",
    '["face:admin","face:admin","face:chat"]': (
        "its scopes include 2 value(s) that are not one of the 10 face:* scopes"
    ),
    '["face:chat","face:approve"]': "its scopes are not Go's sorted, deduplicated JSON array",
    '["face:approve", "face:chat"]': "its scopes are not Go's sorted, deduplicated JSON array",
    '{"face:chat":true}': "its scopes are not a JSON array of scope names",
    "null": "its scopes are not a JSON array of scope names",
    "[": "its scopes are not a JSON array of scope names",
    '["face:approve","face:chat"]': None,
}
NOT_FORM = "tool_calls is not in the form Half-Pi's agent writes (Go JSON, keys ID, Name, Args in order)"
NOT_KEYS = "a tool call is not an object with exactly the keys ID, Name and Args"
NOT_STRING = "a tool call's ID, Name or Args is not a string"
CALLS_SAID: dict[str, tuple[list[tuple[str, str, str]], str | None]] = {
    "nul": ([], "tool_calls is not JSON"),
    " null": ([], "tool_calls is neither null nor a JSON array"),
    "{}": ([], "tool_calls is neither null nor a JSON array"),
    '[1, {"ID":"a"}]': ([], NOT_KEYS),
    '[{"ID":1,"Name":"b"}]': ([], NOT_KEYS),
    '[{"ID":1,"Name":"b","Args":"c"},{"ID":"a"}]': ([], NOT_STRING),
    '[{"ID":"a","Name":"b","Args":{"x":1}}]': ([], NOT_STRING),
    '[{"Name":"b","ID":"a","Args":"c"}]': ([("a", "b", "c")], NOT_FORM),
    '[{"ID":"a","Name":"b","Args":"<"}]': ([("a", "b", "<")], NOT_FORM),
    '[{"ID":"a","Name":"b","Args":"\\u003c"}]': ([("a", "b", "<")], None),
    "[]": ([], None),
}


def test_the_checks_say_what_they_said_before() -> None:
    assert {text: details_problem_of(text) for text in DETAILS_SAID} == DETAILS_SAID
    assert {text: risk_labels_problem_of(text) for text in LABELS_SAID} == LABELS_SAID
    scopes = {text: list(_scope_problems(text)) for text in SCOPES_SAID}
    assert scopes == {text: [said] if said else [] for text, said in SCOPES_SAID.items()}
    assert {text: parse_tool_calls(text) for text in CALLS_SAID} == CALLS_SAID


# --- agreement with the checks on damaged stores ---------------------------------------------------------


def python_findings(path: Path, tmp_path: Path) -> set[tuple[str, str, int]]:
    """(table, rule, rowid) of the findings of the rules that report the described columns."""
    found: list[Violation] = [*opened_violations(str(path), tmp_path), *violations_of(path, tmp_path)]
    rules = set(COLUMN_RULES.values())
    return {(str(item.table), item.rule, int(item.rowid or 0)) for item in found if item.rule in rules}


def as_findings(failures: set[Failure]) -> set[tuple[str, str, int]]:
    return {(table, COLUMN_RULES[(table, column)], row_id) for table, column, row_id in failures}


def _history(*statements: Statement) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        path, _ = build_store(root, statements)
        return Path(path)

    return build


def _calls(text: str) -> Callable[[Path], Path]:
    """The assistant row calling ./deploy.sh with `tool_calls` set to `text`."""
    return _history((f"UPDATE messages SET tool_calls = ? WHERE rowid = {chat_message(10)}", (text,)))


def _decision_column(column: str, value: str) -> Callable[[Path], Path]:
    """The admitted message's security decision with `column` set to `value` (its outbox row untouched)."""

    def damage(builder: StoreBuilder, ids: Scenario) -> None:
        target = rowid(builder, "SELECT rowid FROM security_decisions WHERE id = ?", (ids.admitted,))
        builder.execute(f"UPDATE security_decisions SET {column} = ? WHERE rowid = ?", (value, target))

    def build(root: Path) -> Path:
        path, _ = built_store(root, damage=damage)
        return path

    return build


# damaged stores whose damage is a shape problem: the project's own and a few more
SHAPE_DAMAGES: dict[str, Callable[[Path], Path]] = {
    **{
        name: CASES[name]
        for name in (
            "damaged-SA612-projection-not-canonical",
            "damaged-SA661-payload-array",
            "damaged-SA664-details-key",
            "damaged-SA665-labels-object",
        )
    },
    "calls-without-args": _calls('[{"ID":"call_3","Name":"bash"}]'),
    "calls-args-parsed": _calls('[{"ID":"call_3","Name":"bash","Args":{"command":"./deploy.sh"}}]'),
    "calls-an-object": _calls('{"ID":"call_3","Name":"bash","Args":"{}"}'),
    "projection-an-array": _history(
        f"UPDATE messages SET compact_projection = '[]' WHERE session_id = {CHAT} AND role = 'tool'"
    ),
    "scopes-empty": _history("UPDATE face_tokens SET scopes = '[]'"),
    "scopes-unknown": _history("""UPDATE face_tokens SET scopes = '["face:admin","face:chat"]'"""),
    "scopes-duplicated": _history("""UPDATE face_tokens SET scopes = '["face:chat","face:chat"]'"""),
    "details-integer-as-float": _decision_column("details_redacted", '{"duration_ms":12.0}'),
    "labels-too-many": _decision_column("risk_labels", json.dumps(["shell"] * 65)),
    "label-empty": _decision_column("risk_labels", '["shell",""]'),
}
# damages no schema can see: order, Go's bytes, a row's role, bytes beyond characters
BEYOND_SCHEMAS: dict[str, Callable[[Path], Path]] = {
    **{
        name: CASES[name]
        for name in (
            "damaged-SA612-projection-on-a-user-row",
            "damaged-SA618-tool-calls-spaced",
            "damaged-SA618-unknown-role",
            "damaged-SA624-scopes-not-sorted",
        )
    },
    "label-of-130-bytes": _decision_column("risk_labels", json.dumps(["é" * 65], ensure_ascii=False)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_DAMAGES))
def test_on_a_shape_damage_the_schemas_fail_exactly_where_the_check_reports(
    tmp_path: Path, name: str
) -> None:
    path = SHAPE_DAMAGES[name](tmp_path / "store")
    failures = schema_failures(path, tmp_path)
    assert failures, name
    assert as_findings(failures) == python_findings(path, tmp_path)


@pytest.mark.parametrize("name", sorted(BEYOND_SCHEMAS))
def test_beyond_the_schemas_only_the_check_reports(tmp_path: Path, name: str) -> None:
    path = BEYOND_SCHEMAS[name](tmp_path / "store")
    assert schema_failures(path, tmp_path) == set()
    assert python_findings(path, tmp_path), name
