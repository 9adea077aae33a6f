"""The tiny-agent fast path under mutation (issue 21): valid sessions varied so that they stay valid must be
proven by the fast path with the exact pass's outcome; each kind of corruption must be doubted by it and
found by the exact pass. The properties are derandomized (bench/fuzz.py's `fast-path` target runs the
same with fresh seeds in CI); the examples pin each variation and corruption to the exact verifier's
literal answer. The defects the fuzzer found are kept at the end, each with its minimal input."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder
from sessaudit.formats.tiny_agent.v2 import fast
from sessaudit.formats.tiny_agent.v2.verification import _Verification
from sessaudit.plugin import DEFAULT_OPTIONS
from sessaudit.verdicts import Severity
from tests.fuzz_targets import (
    BYTE_CORRUPTIONS,
    CORRUPTION_KINDS,
    CORRUPTIONS,
    FAST_PATH_NAME,
    FLOAT_NAMES,
    JSONL_EDITS,
    LONG_SEED,
    TOOL_SEEDS,
    UNKNOWN_ID,
    VARIATION_KINDS,
    Corruption,
    Decoded,
    FastCase,
    Transaction,
    Variation,
    check_fast_path,
    decode_session,
    encode_session,
    fact_type,
    fast_path_input,
    fast_path_seeds,
    fix_compactions,
    fresh_id,
    fuzz_settings,
    number_variations,
    run_fast_path,
    variations,
)

SEEDS = st.sampled_from(sorted(fast_path_seeds()))
# LONG_SEED's own findings: a failed run with a pending tool and a late result, and the crash at its end
LONG_RULES = ["SA301", "SA302", "SA410", "SA411"]


# --- the properties ----------------------------------------------------------------------------------


@fuzz_settings(600)
@given(SEEDS, variations())
def test_valid_variations_are_proven_with_the_exact_outcome(
    seed: str, changes: tuple[Variation, ...]
) -> None:
    run_fast_path(FastCase(seed, changes))


@fuzz_settings(300)
@given(st.sampled_from(TOOL_SEEDS), number_variations())
def test_argument_numbers_agree_with_the_exact_pass(seed: str, changes: tuple[Variation, ...]) -> None:
    run_fast_path(FastCase(seed, changes))


@fuzz_settings(600)
@given(SEEDS, variations(cut=False), CORRUPTIONS)
def test_corruptions_are_doubted_and_found(
    seed: str, changes: tuple[Variation, ...], corruption: Corruption
) -> None:
    run_fast_path(FastCase(seed, changes, corruption))


@fuzz_settings(400)
@given(SEEDS, variations(), JSONL_EDITS)
def test_generic_edits_of_varied_sessions_agree(
    seed: str, changes: tuple[Variation, ...], edits: list[Any]
) -> None:
    run_fast_path(FastCase(seed, changes, None, tuple(edits)))


# --- the decoded form is faithful ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", sorted(fast_path_seeds()))
def test_a_seed_decodes_and_encodes_to_its_own_bytes(seed: str) -> None:
    """The writer's default spelling is the builder's, and the independent canonical JSON of the
    compaction fix-up gives the builder's sourceDigests: an unvaried seed comes back byte for byte."""
    data = fast_path_seeds()[seed]
    decoded = decode_session(data)
    fix_compactions(decoded)
    assert encode_session(decoded) == data


def test_the_seeds_cover_every_shape_the_brief_names() -> None:
    decoded = decode_session(fast_path_seeds()[LONG_SEED])
    kinds = {fact_type(fact) for fact in decoded.facts()}
    assert kinds == {
        "user",
        "assistant",
        "started-result",
        "pre-execution",
        "compaction",
        "runStarted",
        "compactionStarted",
        "stepAttempt",
        "stepFailed",
        "toolStarted",
        "abortRequested",
        "operationFinished",
        "usage",
    }
    attempts = {fact["record"]["attempt"] for fact in decoded.facts() if fact_type(fact) == "stepAttempt"}
    assert attempts == {1, 2}
    assert any(len(line.facts) > 1 for line in decoded.lines)
    torn = decode_session(fast_path_seeds()["long-torn"])
    assert torn.tail[:20] == b'[{"kind":"entry","en'


# --- each variation keeps the file accepted (the exact verifier's literal answer) ------------------------

VARIATION_EXAMPLES = [
    ("content", Variation("content", 3, 1, 0, "日本語 😀\u2028\x01"), LONG_RULES),
    ("summary", Variation("summary", 0, 0, 0, "\x00 ünïcödé"), LONG_RULES),
    ("error-text", Variation("error-text", 0, 1, 0, '"quoted"\\'), LONG_RULES),
    (
        "timestamps",
        Variation("timestamps", 60, 0, -3, ""),
        ["SA301", "SA302", "SA401", "SA403", "SA410", "SA411"],
    ),
    (
        "created-at",
        Variation("created-at", 0, 0, 10**6, ""),
        ["SA301", "SA302", "SA402", "SA404", "SA410", "SA411"],
    ),
    ("usage", Variation("usage", 2, 1, 12345, ""), LONG_RULES),
    ("usage-boundary", Variation("usage-boundary", 0, 0, 0, ""), LONG_RULES),
    ("call-arguments", Variation("call-arguments", 0, 4, 0, ""), [*LONG_RULES, "SA415"]),
    ("numbers", Variation("numbers", 0, 8, 1, ""), [*LONG_RULES, "SA415"]),
    ("environment", Variation("environment", 0, 0, 0, "/elsewhere"), [*LONG_RULES, "SA416"]),
    ("header-environment", Variation("header-environment", 0, 0, 0, "/srv/other"), [*LONG_RULES, "SA416"]),
    ("call-id", Variation("call-id", 0, 0, 0, "call-🙂"), LONG_RULES),
    ("replay", Variation("replay", 0, 0, 0, ""), LONG_RULES),
    ("replay-key", Variation("replay-key", 0, 0, 0, "builtin:read:v2"), LONG_RULES),
    ("split", Variation("split", 0, 0, 0, ""), LONG_RULES),
    ("merge", Variation("merge", 4, 2, 0, ""), LONG_RULES),
    ("wrap", Variation("wrap", 2, 0, 0, ""), LONG_RULES),
    ("floats", Variation("floats", 3, 2 ** len(FLOAT_NAMES) - 1, 1, ""), ["SA111", *LONG_RULES]),
    ("key-order", Variation("key-order", 3, 2, 7, ""), LONG_RULES),
    ("spacing", Variation("spacing", 3, 0, 7, ""), LONG_RULES),
    ("escapes", Variation("escapes", 3, 0, 7, ""), LONG_RULES),
    ("tear", Variation("tear", 0, 0, 3000, ""), ["SA109"]),
]


def test_every_variation_kind_has_an_example() -> None:
    assert sorted({name for name, _, _ in VARIATION_EXAMPLES}) == sorted(VARIATION_KINDS)


@pytest.mark.parametrize(
    ("name", "variation", "rules"), VARIATION_EXAMPLES, ids=[row[0] for row in VARIATION_EXAMPLES]
)
def test_a_variation_keeps_the_exact_verdict_clean(name: str, variation: Variation, rules: list[str]) -> None:
    """The exact verifier alone, on a sample of each variation: no error (no SA1xx/SA2xx), only the
    notes the variation is meant to cause; the fast path then proves the same outcome."""
    data, accepted = fast_path_input(LONG_SEED, (variation,))
    assert accepted is True
    assert data != fast_path_input(LONG_SEED)[0]
    name = FAST_PATH_NAME
    exact = _Verification(name, name, io.BytesIO(data), len(data), DEFAULT_OPTIONS, None).run()
    assert not [item.rule for item in exact.findings if item.severity is Severity.ERROR]
    assert sorted({item.rule for item in exact.findings}) == rules
    check = check_fast_path(data, accepted=True)
    assert check.fast == exact


# --- each targeted corruption is doubted by the fast path and found by the exact pass --------------------

CORRUPTION_EXAMPLES = [
    (Corruption("seq-skip", 5, 0), ["SA205"]),
    (Corruption("seq-repeat", 5, 0), ["SA205"]),
    (Corruption("duplicate-id", 5, 0), ["SA206"]),
    (Corruption("reserved-id", 5, 0), ["SA206"]),
    (Corruption("unknown-reference", 5, 0), ["SA207"]),
    (Corruption("unknown-reference", 5, 1), ["SA214"]),
    (Corruption("other-kind-reference", 5, 0), ["SA207"]),
    (Corruption("tool-call-mismatch", 5, 0), ["SA207"]),
    (Corruption("tool-call-mismatch", 5, 1), ["SA207"]),
    (Corruption("tool-call-mismatch", 5, 2), ["SA207"]),
    (Corruption("undeclared-tool", 5, 0), ["SA208"]),
    (Corruption("configuration-digest", 5, 0), ["SA210"]),
    (Corruption("configuration-digest", 5, 1), ["SA210"]),
    (Corruption("missing-key", 5, 0), ["SA201"]),
    (Corruption("missing-key", 40, 3), ["SA204"]),
    (Corruption("extra-key", 5, 0), ["SA204"]),
    (Corruption("wrong-type", 5, 0), ["SA201"]),
    (Corruption("wrong-type", 40, 3), ["SA204"]),
    (Corruption("tool-call-mismatch", 5, 3), ["SA204"]),
    (Corruption("stop-reason", 5, 0), ["SA209"]),
    (Corruption("stop-reason", 5, 0, end=True), ["SA209"]),
    (Corruption("blank-final-answer", 5, 0), ["SA209"]),
    (Corruption("blank-final-answer", 5, 1), ["SA209"]),
    (Corruption("blank-final-answer", 5, 2), ["SA209"]),
    (Corruption("closed-attempt", 5, 0), ["SA207"]),
    (Corruption("closed-attempt", 5, 0, end=True), ["SA207"]),
    (Corruption("wrong-call", 5, 0), ["SA207"]),
    (Corruption("wrong-call", 5, 1), ["SA207"]),
    (Corruption("wrong-call", 5, 0, end=True), ["SA207"]),
    (Corruption("usage-overflow", 5, 0), ["SA204"]),
    (Corruption("usage-overflow", 5, 1), ["SA213"]),
    (Corruption("negative-usage", 5, 0), ["SA204"]),
    (Corruption("user-while-pending", 5, 0), ["SA209"]),
    (Corruption("empty-string", 5, 0), ["SA204"]),
    (Corruption("repeated-intent", 5, 0), ["SA208"]),
    (Corruption("duplicate-call-id", 5, 0), ["SA209"]),
    (Corruption("stale-context", 5, 0), ["SA208"]),
    (Corruption("bad-enum", 5, 0), ["SA204"]),
    (Corruption("invalid-fresh-id", 5, 0), ["SA214"]),
    (Corruption("invalid-fresh-id", 5, 3), ["SA214"]),
    (Corruption("invalid-fresh-id", 5, 5, end=True), ["SA214"]),
    (Corruption("truncate-line", 5, 0), ["SA106"]),
    (Corruption("truncate-line", 5, 1), ["SA106"]),
]


def test_every_corruption_kind_has_an_example() -> None:
    kinds = {corruption.kind for corruption, _ in CORRUPTION_EXAMPLES}
    assert kinds == {*CORRUPTION_KINDS, *BYTE_CORRUPTIONS}


@pytest.mark.parametrize(("corruption", "errors"), CORRUPTION_EXAMPLES, ids=str)
def test_a_corruption_of_a_tool_run_is_doubted(corruption: Corruption, errors: list[str]) -> None:
    seed = LONG_SEED if corruption.site == 40 else "tools-completed"
    data, accepted = fast_path_input(seed, (), corruption)
    assert accepted is False
    check = check_fast_path(data, accepted=False)
    assert check.fast is None
    assert check.errors == errors


# Hand-made corruptions of `tools-completed` (lines: 1 header, 2 user + runStarted, 3 stepAttempt,
# 4 assistant + usage, 5 toolStarted read, 6 its result, 7 toolStarted bash, 8 its result + tool usage,
# 9 stepAttempt, 10 final answer + usage, 11 operationFinished), each with the first error's rule and line.
Change = Callable[[Decoded], None]


def _nth(decoded: Decoded, kind: str, index: int = 0) -> dict[str, Any]:
    return [fact for fact in decoded.facts() if fact_type(fact) == kind][index]


def _set_in(kind: str, path: str, value: Any, index: int = 0) -> Change:
    """Set (or, with `...`, remove) the dotted path of the index-th fact of that type."""

    def change(decoded: Decoded) -> None:
        holder: Any = decoded.header if kind == "header" else _nth(decoded, kind, index)
        *parents, last = path.split(".")
        for part in parents:
            holder = holder[int(part)] if isinstance(holder, list) else holder[part]
        if value is ...:
            del holder[last]
        else:
            holder[last] = value

    return change


def _own_id(kind: str, path: str, index: int = 0) -> Change:
    """The fact's id becomes one of its own reference or reservation fields."""

    def change(decoded: Decoded) -> None:
        fact = _nth(decoded, kind, index)
        holder: Any = fact
        for part in path.split("."):
            holder = holder[part]
        fact["id"] = holder

    return change


def _id_of(kind: str, target: str, source: str, path: str) -> Change:
    """The first `kind` fact's `target` key becomes the `path` value of the first `source` fact."""

    def change(decoded: Decoded) -> None:
        holder: Any = _nth(decoded, source)
        for part in path.split("."):
            holder = holder[part]
        _nth(decoded, kind)[target] = holder

    return change


def _step_id_is_the_operation(kind: str, where: str) -> Change:
    """The first `kind` fact names the run's operationId (a known id) as its stepId."""

    def change(decoded: Decoded) -> None:
        _nth(decoded, kind)[where]["stepId"] = _nth(decoded, "runStarted")["record"]["operationId"]

    return change


def _same_call_twice(decoded: Decoded) -> None:
    """The second intent (line 7) names call 0, which already has one."""
    first, second = _nth(decoded, "toolStarted", 0)["record"], _nth(decoded, "toolStarted", 1)["record"]
    for name in ("toolIndex", "toolCallId", "toolName", "arguments", "replay", "replayKey"):
        second[name] = first[name]


def _one_call_id(decoded: Decoded) -> None:
    calls = _nth(decoded, "assistant")["entry"]["message"]["tool_calls"]
    calls[1]["id"] = calls[0]["id"]


def _context_is_the_user_entry(decoded: Decoded) -> None:
    _nth(decoded, "stepAttempt", 1)["record"]["contextThroughEntryId"] = _nth(decoded, "user")["id"]


def _input_is_an_answer(decoded: Decoded) -> None:
    """A second run after the first (line 12) whose input is the first run's final answer."""
    last = decoded.facts()[-1]
    record = {
        "type": "runStarted",
        "operationId": fresh_id(1),
        "operationKind": "run",
        "inputEntryId": _nth(decoded, "assistant", 1)["id"],
    }
    fact = {"kind": "record", "record": record, "id": fresh_id(2), "seq": last["seq"] + 1, "timestamp": 1}
    decoded.lines.append(Transaction([fact], False))


def _step_before_a_result(decoded: Decoded) -> None:
    """The bash result (line 8) is gone: the next step (now line 8) starts while its intent is pending,
    its context the last result there is (line 6)."""
    result = _nth(decoded, "started-result", 1)
    position = next(index for index, line in enumerate(decoded.lines) if line.facts[0] is result)
    removed = len(decoded.lines[position].facts)
    del decoded.lines[position]
    for line in decoded.lines[position:]:
        for fact in line.facts:
            fact["seq"] -= removed
    _nth(decoded, "stepAttempt", 1)["record"]["contextThroughEntryId"] = _nth(decoded, "started-result")["id"]


def _answers_call(index: int) -> Change:
    """The first started result answers the index-th call of the answer instead of its own."""

    def change(decoded: Decoded) -> None:
        calls = _nth(decoded, "assistant")["entry"]["message"]["tool_calls"]
        _nth(decoded, "started-result")["entry"]["message"]["tool_call_id"] = calls[index]["id"]

    return change


HANDMADE: list[tuple[str, Change, tuple[str, int]]] = [
    # fact ids in the one namespace
    ("fact id = its own operationId", _own_id("runStarted", "record.operationId"), ("SA206", 2)),
    ("fact id = its own stepId", _own_id("stepAttempt", "record.stepId"), ("SA206", 3)),
    ("fact id = its own attemptId", _own_id("stepAttempt", "record.attemptId"), ("SA206", 3)),
    ("fact id = its own resultEntryId", _own_id("toolStarted", "record.resultEntryId"), ("SA206", 5)),
    ("assistant id = its stepId", _own_id("assistant", "entry.stepId"), ("SA206", 4)),
    ("usage id = its attemptId", _own_id("usage", "attemptId"), ("SA206", 4)),
    (
        "result id = the operationId",
        _id_of("started-result", "id", "runStarted", "record.operationId"),
        ("SA207", 6),
    ),
    # references to nothing
    ("unknown inputEntryId", _set_in("runStarted", "record.inputEntryId", UNKNOWN_ID), ("SA207", 2)),
    ("unknown operationId", _set_in("usage", "operationId", UNKNOWN_ID), ("SA207", 4)),
    ("unknown attemptId", _set_in("assistant", "entry.attemptId", UNKNOWN_ID), ("SA207", 4)),
    ("unknown assistantEntryId", _set_in("toolStarted", "record.assistantEntryId", UNKNOWN_ID), ("SA207", 5)),
    ("unknown toolStartedId", _set_in("started-result", "entry.toolStartedId", UNKNOWN_ID), ("SA207", 6)),
    ("unknown finalEntryId", _set_in("operationFinished", "record.finalEntryId", UNKNOWN_ID), ("SA207", 11)),
    # the call a tool intent or result names
    ("wrong toolIndex", _set_in("toolStarted", "record.toolIndex", 1), ("SA207", 5)),
    ("toolIndex past the calls", _set_in("toolStarted", "record.toolIndex", 2), ("SA207", 5)),
    ("wrong toolCallId", _set_in("toolStarted", "record.toolCallId", "call_9"), ("SA207", 5)),
    ("wrong toolName", _set_in("toolStarted", "record.toolName", "bash"), ("SA207", 5)),
    ("result for the other call", _answers_call(1), ("SA207", 6)),
    ("result's stepId another id", _step_id_is_the_operation("started-result", "entry"), ("SA207", 6)),
    ("intent's stepId another id", _step_id_is_the_operation("toolStarted", "record"), ("SA207", 5)),
    ("a second intent for call 0", _same_call_twice, ("SA208", 7)),
    ("two calls with one id", _one_call_id, ("SA209", 4)),
    ("replay neither safe nor never", _set_in("toolStarted", "record.replay", "sometimes"), ("SA204", 5)),
    (
        "result type synthetic without reason",
        _set_in("started-result", "entry.result.type", "synthetic"),
        ("SA204", 6),
    ),
    ("step context not the boundary", _context_is_the_user_entry, ("SA208", 9)),
    ("run input an assistant entry", _input_is_an_answer, ("SA207", 12)),
    ("a step while a tool is pending", _step_before_a_result, ("SA208", 8)),
    # configuration
    (
        "configurationDigest of another snapshot",
        _set_in("stepAttempt", "record.configurationSnapshot.model", "m"),
        ("SA210", 3),
    ),
    # a missing key at each level
    ("no fact timestamp", _set_in("stepAttempt", "timestamp", ...), ("SA204", 3)),
    ("no entry stopReason", _set_in("assistant", "entry.stopReason", ...), ("SA204", 4)),
    ("no record replayKey", _set_in("toolStarted", "record.replayKey", ...), ("SA204", 5)),
    ("no message content", _set_in("user", "entry.message.content", ...), ("SA204", 2)),
    ("no call type", _set_in("assistant", "entry.message.tool_calls.0.type", ...), ("SA204", 4)),
    (
        "no function arguments",
        _set_in("assistant", "entry.message.tool_calls.1.function.arguments", ...),
        ("SA204", 4),
    ),
    ("no result type", _set_in("started-result", "entry.result.type", ...), ("SA204", 6)),
    ("no usage counter", _set_in("usage", "usage.cacheRead", ...), ("SA204", 4)),
    ("no snapshot model", _set_in("stepAttempt", "record.configurationSnapshot.model", ...), ("SA204", 3)),
    ("no header cwd", _set_in("header", "cwd", ...), ("SA201", 1)),
    # an extra key at each level
    ("extra fact key", _set_in("usage", "stepId", "x"), ("SA204", 4)),
    ("extra entry key", _set_in("started-result", "entry.toolIndex", 0), ("SA204", 6)),
    ("extra record key", _set_in("runStarted", "record.completion", "normal"), ("SA204", 2)),
    ("extra message key", _set_in("user", "entry.message.name", "x"), ("SA204", 2)),
    ("extra call key", _set_in("assistant", "entry.message.tool_calls.0.index", 0), ("SA204", 4)),
    ("extra result key", _set_in("started-result", "entry.result.reason", "interrupted"), ("SA204", 6)),
    ("extra usage counter", _set_in("usage", "usage.reasoning", 1), ("SA204", 4)),
    (
        "extra snapshot key",
        _set_in("stepAttempt", "record.configurationSnapshot.temperature", "0"),
        ("SA204", 3),
    ),
    ("extra header key", _set_in("header", "type", "session"), ("SA201", 1)),
    # a wrong type for a field
    ("seq as a string", _set_in("stepAttempt", "seq", "3"), ("SA204", 3)),
    ("timestamp as true", _set_in("stepAttempt", "timestamp", True), ("SA204", 3)),
    ("toolIndex as a string", _set_in("toolStarted", "record.toolIndex", "0"), ("SA204", 5)),
    ("attempt as 1.5", _set_in("stepAttempt", "record.attempt", 1.5), ("SA204", 3)),
    ("user content as a number", _set_in("user", "entry.message.content", 1), ("SA204", 2)),
    ("tool_calls as an object", _set_in("assistant", "entry.message.tool_calls", {}), ("SA204", 4)),
    ("arguments as an array", _set_in("toolStarted", "record.arguments", []), ("SA204", 5)),
    ("usage input as null", _set_in("usage", "usage.input", None), ("SA204", 4)),
    ("createdAt as a string", _set_in("header", "createdAt", "1787410800000"), ("SA201", 1)),
    # stopReason against the calls
    ("toolUse answer as stop", _set_in("assistant", "entry.stopReason", "stop"), ("SA209", 4)),
    ("final answer as toolUse", _set_in("assistant", "entry.stopReason", "toolUse", 1), ("SA209", 10)),
    # usage
    ("usage of 2^53", _set_in("usage", "usage.output", 2**53), ("SA204", 4)),
    ("usage past the session total", _set_in("usage", "usage.input", 2**53 - 1, 1), ("SA213", 8)),
    ("negative usage", _set_in("usage", "usage.cacheWrite", -1), ("SA204", 4)),
    # strings that must not be empty
    ("empty user content", _set_in("user", "entry.message.content", ""), ("SA204", 2)),
    ("empty call id", _set_in("assistant", "entry.message.tool_calls.0.id", ""), ("SA204", 4)),
    ("empty tool_call_id", _set_in("started-result", "entry.message.tool_call_id", ""), ("SA204", 6)),
]


@pytest.mark.parametrize("end", [False, True], ids=["file-goes-on", "file-ends-there"])
@pytest.mark.parametrize(("name", "change", "first"), HANDMADE, ids=[row[0] for row in HANDMADE])
def test_a_handmade_corruption_is_doubted(
    name: str, change: Change, first: tuple[str, int], end: bool
) -> None:
    """Each hand-made corruption of `tools-completed`, with its first error's rule and line; ending the
    file at that line leaves no later fact to reject it, so a rule the fast path forgot shows."""
    decoded = decode_session(fast_path_seeds()["tools-completed"])
    change(decoded)
    if end:
        del decoded.lines[first[1] - 1 :]
        decoded.tail = b""
    check = check_fast_path(encode_session(decoded), accepted=False)
    errors = [item for item in check.exact.findings if item.severity is Severity.ERROR]
    assert (errors[0].rule, errors[0].location.line) == first
    assert check.fast is None


def test_every_corruption_near_the_start_of_a_run_is_doubted() -> None:
    """A sweep, not a sample: each kind of corruption at its first sites, in four ways, with the file
    going on and ending at the corrupted line. Ending there is what shows a rule the fast path forgot
    (no later fact rejects the file instead); the random property reaches the same only by chance."""
    failures = []
    for kind in sorted([*CORRUPTION_KINDS, *BYTE_CORRUPTIONS]):
        for site in range(8):
            for choice in range(4):
                for end in (False, True):
                    corruption = Corruption(kind, site, choice, end)
                    data, _ = fast_path_input("tools-completed", (), corruption)
                    try:
                        check_fast_path(data, accepted=False)
                    except AssertionError as failure:
                        failures.append(f"{corruption}: {failure}")
    assert not failures, "\n".join(failures[:20])


def test_a_corruption_can_end_the_file_at_its_line() -> None:
    """With `end`, no later fact is left to reject the file: the corrupted line is the last one."""
    whole, _ = fast_path_input("tools-completed", (), Corruption("wrong-call", 5, 0))
    ended, _ = fast_path_input("tools-completed", (), Corruption("wrong-call", 5, 0, end=True))
    assert (whole.count(b"\n"), ended.count(b"\n")) == (11, 8)
    assert ended == whole[: len(ended)]


def test_usage_for_a_tool_intent_of_another_operation_is_doubted() -> None:
    """The last run's tool usage names an intent of an earlier run (LONG_SEED's site 93 of the kind)."""
    data, _ = fast_path_input(LONG_SEED, (), Corruption("other-kind-reference", 93, 0, end=True))
    check = check_fast_path(data, accepted=False)
    errors = [item for item in check.exact.findings if item.severity is Severity.ERROR]
    assert [(item.rule, item.location.line) for item in errors] == [("SA207", 82)]
    assert "is not a tool intent of operation" in errors[0].message


def test_settling_a_superseded_attempt_is_doubted() -> None:
    data, _ = fast_path_input("retry-settled", (), Corruption("closed-attempt", 0, 0, end=True))
    check = check_fast_path(data, accepted=False)
    assert [(item.rule, item.location.line) for item in check.exact.findings] == [("SA207", 5)]


def test_a_user_message_while_calls_are_pending_is_doubted() -> None:
    data, _ = fast_path_input("tools-completed", (), Corruption("user-while-pending", 0, 0))
    check = check_fast_path(data, accepted=False)
    assert [
        (item.rule, item.location.line) for item in check.exact.findings if item.rule.startswith("SA2")
    ] == [
        ("SA209", 5),
        ("SA215", 6),
    ]


def test_truncation_mid_line_is_corrupt_with_its_lf_and_torn_without() -> None:
    data = fast_path_seeds()["tools-completed"]
    lines = data.split(b"\n")
    cut_with_lf = b"\n".join(lines[:5]) + b"\n" + lines[5][:40] + b"\n"
    corrupt = check_fast_path(cut_with_lf, accepted=False)
    assert corrupt.errors == ["SA106"]
    torn = check_fast_path(b"\n".join(lines[:5]) + b"\n" + lines[5][:40], accepted=True)
    assert torn.rules == ["SA109", "SA301", "SA303"]  # torn after the safe read's intent


# --- defects the fuzzer found (fixed): their minimal inputs, kept -------------------------------------------


def _intent_against_call(arguments: dict[str, Any], text: str) -> bytes:
    """A run whose only call's arguments text is `text`, started with the intent's `arguments`."""
    builder = SessionBuilder(seed=3)
    run = builder.start_run("count")
    answer = builder.assistant(builder.step(run), None, calls=[Call("read", raw_arguments=text)])
    builder.start_tool(answer, 0, arguments=arguments)
    return builder.data()


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ({"n": 2**64}, '{"n":18446744073709551617}'),
        ({"n": -(2**63)}, '{"n":-9223372036854775809}'),
        ({"n": 1e23}, '{"n":99999999999999991611393}'),
    ],
    ids=["2^64+1", "-2^63-1", "1e23+1"],
)
def test_a_wide_integer_in_the_call_text_is_sa415_on_both_paths(arguments: dict[str, Any], text: str) -> None:
    data = _intent_against_call(arguments, text)
    exact = _Verification("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, None).run()
    assert sorted({item.rule for item in exact.findings}) == ["SA301", "SA303", "SA415"]
    fast.differential_check(exact, "s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS)


@pytest.mark.parametrize("data", [b"", b'{"kind":"header"}', b"\xef\xbb\xbf"], ids=["empty", "no-lf", "bom"])
def test_a_file_without_lf_is_doubted_by_the_fast_path(data: bytes) -> None:
    assert fast.prove_accepted("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS) is None


def test_a_deeply_nested_pending_intent_is_planned() -> None:
    nested: Any = 1
    for _ in range(500):
        nested = [nested]
    check_fast_path(_intent_against_call({"n": nested}, "{}"))


def test_deeply_nested_call_arguments_are_a_note_not_a_crash() -> None:
    check_fast_path(_intent_against_call({"n": 1}, "[" * 10_000 + "]" * 10_000), accepted=True)
