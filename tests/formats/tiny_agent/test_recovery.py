"""Runs and recovery (CONTRACT §4): states, conditions, pending effects, SA301–SA303, the verified prefix."""

from __future__ import annotations

import io

import pytest

from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder, TokenUsage
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.model import Recovery, Session
from sessaudit.plugin import SourceOutcome
from sessaudit.verdicts import Verdict

READ = Call("read", {"path": "src/cart.js"})
BASH = Call("bash", {"command": "npm test"})


def verify(data: bytes) -> SourceOutcome:
    return verify_tiny_agent("s.jsonl", "s.jsonl", io.BytesIO(data), len(data))


def session_of(builder: SessionBuilder) -> Session:
    return verify(builder.data()).sessions[0]


def recovery_of(builder: SessionBuilder, run: int = -1) -> Recovery:
    recovery = session_of(builder).runs[run].recovery
    assert recovery is not None
    return recovery


def test_run_states_in_start_order() -> None:
    builder = SessionBuilder(seed=1)
    builder.exchange("One?", "Two.")
    failed = builder.start_run("Fail.")
    builder.step_failed(builder.step(failed))
    builder.finish(failed, "failed")
    aborted = builder.start_run("Abort.")
    step = builder.step(aborted)
    builder.abort(aborted)
    builder.step_failed(step, "aborted", "Operation aborted")
    builder.finish(aborted, "aborted")
    builder.compact("summary")
    builder.start_run("Open.")
    session = session_of(builder)
    assert [(run.kind, run.state) for run in session.runs] == [
        ("run", "completed"),
        ("run", "failed"),
        ("run", "aborted"),
        ("compaction", "completed"),
        ("run", "open"),
    ]
    assert [run.recovery is not None for run in session.runs] == [False, False, False, False, True]
    assert session.facts == session.last_seq == builder.last_seq


@pytest.mark.parametrize(
    ("stage", "conditions"),
    [
        ("no-step", ["step-pending"]),
        ("attempt-1", ["model-request-open"]),
        ("attempt-2", ["attempts-exhausted"]),
        ("step-failed", ["awaiting-terminal"]),
        ("settled-stop", ["awaiting-terminal"]),
        ("settled-length", ["awaiting-terminal"]),
        ("calls-untouched", ["tool-not-started"]),
        ("pending-never", ["effect-unknown", "tool-not-started"]),  # call 0 is untouched
        ("pending-safe", ["effect-replayable", "tool-not-started"]),  # call 1 is untouched
        ("pending-safe-and-never", ["effect-unknown", "effect-replayable"]),
        ("all-answered", ["step-pending"]),
        ("abort-no-step", ["abort-pending"]),
        ("abort-untouched", ["abort-pending"]),
        ("abort-attempt-2", ["abort-pending", "attempts-exhausted"]),
        ("abort-pending-safe", ["abort-pending"]),
    ],
)
def test_open_run_conditions(stage: str, conditions: list[str]) -> None:
    builder = SessionBuilder(seed=2)
    run = builder.start_run("Why does the cart test fail?")
    if stage.startswith("abort"):
        builder.abort(run, "model")
    if stage in ("no-step", "abort-no-step"):
        pass
    elif stage in ("attempt-1",):
        builder.step(run)
    elif stage in ("attempt-2", "abort-attempt-2"):
        builder.retry(builder.step(run))
    elif stage == "step-failed":
        builder.step_failed(builder.step(run))
    elif stage == "settled-stop":
        builder.assistant(builder.step(run), "Done.")
    elif stage == "settled-length":
        builder.assistant(builder.step(run), None, calls=[READ], stop_reason="length")
    else:
        answer = builder.assistant(builder.step(run), None, calls=[READ, BASH])
        if stage in ("pending-never", "pending-safe-and-never"):
            builder.start_tool(answer, 1, replay="never")
        if stage in ("pending-safe", "pending-safe-and-never", "abort-pending-safe"):
            builder.start_tool(answer, 0, replay="safe")
        if stage == "all-answered":
            builder.tool_result(builder.start_tool(answer, 0), "a")
            builder.pre_execution(answer, 1, "unknownTool")
    recovery = recovery_of(builder)
    assert recovery.conditions == conditions
    assert recovery.condition == conditions[0]


def test_open_compaction_conditions() -> None:
    builder = SessionBuilder(seed=3)
    builder.exchange("One?", "Two.")
    operation = builder.start_compaction()
    assert recovery_of(builder).conditions == ["step-pending"]
    step = builder.step(operation)
    assert recovery_of(builder).conditions == ["model-request-open"]
    builder.compaction_entry(step, "summary")
    recovery = recovery_of(builder)
    assert recovery.conditions == ["awaiting-terminal"]
    assert recovery.seed_kind == "replay"


def test_pending_effects_and_the_unknown_effect_warning() -> None:
    builder = SessionBuilder(seed=4)
    run = builder.start_run("Fix it.")
    answer = builder.assistant(
        builder.step(run), None, calls=[BASH, Call("edit", raw_arguments="{not json"), READ]
    )
    intent = builder.start_tool(answer, 0)
    outcome = verify(builder.data())
    recovery = outcome.sessions[0].runs[0].recovery
    assert recovery is not None
    assert (recovery.condition, recovery.seed_kind) == ("effect-unknown", "fork")
    assert recovery.conditions == ["effect-unknown", "tool-not-started"]
    assert recovery.assumes == [
        "configuration unchanged",
        "replay policy of calls that never started is not recorded",
    ]
    started, malformed, untouched = recovery.pending_effects
    assert (started.intent_id, started.result_slot, started.replay_policy, started.replay_key) == (
        intent.fact_id,
        intent.result_entry_id,
        "never",
        "builtin:bash:v1",
    )
    assert started.arguments == {"command": "npm test"}
    assert (malformed.arguments, malformed.replay_policy, malformed.intent_id) == ("{not json", None, None)
    assert untouched.arguments == {"path": "src/cart.js"}
    (warning,) = [finding for finding in outcome.findings if finding.rule == "SA302"]
    assert warning.message.startswith(
        f"tool bash ({answer.calls[0].call_id}) intent recorded at line 5, no result"
    )
    assert warning.evidence["intent_id"] == intent.fact_id
    assert warning.evidence["arguments"] == {"command": "npm test"}
    (left_open,) = [finding for finding in outcome.findings if finding.rule == "SA301"]
    assert (left_open.location.line, left_open.location.seq) == (5, 6)
    assert "effect-unknown" in left_open.message
    assert outcome.sessions[0].verdict is Verdict.NEEDS_RECOVERY


def test_a_failed_run_with_a_pending_intent_keeps_recovery() -> None:
    builder = SessionBuilder(seed=5)
    run = builder.start_run("Deploy.")
    answer = builder.assistant(builder.step(run), None, calls=[BASH, READ])
    builder.start_tool(answer, 0)
    builder.start_tool(answer, 1)
    builder.finish(run, "failed")  # a new user message would now be an illegal transcript
    outcome = verify(builder.data())
    session = outcome.sessions[0]
    failed = session.runs[0]
    assert failed.state == "failed"
    assert failed.recovery is not None
    assert failed.recovery.conditions == ["effect-unknown", "effect-replayable"]
    assert len(failed.recovery.pending_effects) == 2
    assert [finding.rule for finding in outcome.findings if finding.rule.startswith("SA3")] == [
        "SA302",
        "SA303",
    ]
    assert session.verdict is Verdict.NEEDS_RECOVERY
    assert outcome.native["reducer"]["operation"] == "idle"


def test_a_rejected_transaction_leaves_the_state_of_the_last_accepted_one() -> None:
    builder = SessionBuilder(seed=6)
    run = builder.start_run("Explain.")
    step = builder.step(run)
    builder.tamper_next("attemptId", "01a029fc-5d8a-7101-8002-00005eed0099", fact=1)
    builder.assistant(step, "It sums.", usage=TokenUsage(input=5, output=7))  # [assistant, usage (bad)]
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["code"] == "INVALID_REFERENCE"
    session = outcome.sessions[0]
    assert session.verdict is Verdict.CORRUPT
    assert (session.usage.input, session.usage.output) == (0, 0)
    recovery = session.runs[0].recovery
    assert recovery is not None
    assert recovery.conditions == ["model-request-open"]  # the assistant entry was rolled back
    assert recovery.warnings[0].endswith(
        "tiny-agent refuses the file (INVALID_REFERENCE at line 4, seq 5); the open state shown is known "
        "only through line 3 (seq 3); later lines were not reduced"
    )
    assert not [finding for finding in outcome.findings if finding.rule in ("SA301", "SA302", "SA303")]


def test_usage_totals_keep_input_without_cache() -> None:
    builder = SessionBuilder(seed=7)
    run = builder.start_run("Explain.")
    builder.assistant(
        builder.step(run), "It sums.", usage=TokenUsage(input=10, output=2, cache_read=30, cache_write=4)
    )
    builder.finish(run)
    usage = session_of(builder).usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.input_total) == (
        10,
        2,
        30,
        4,
        44,
    )


def test_a_torn_tail_with_an_open_run_needs_recovery() -> None:
    builder = SessionBuilder(seed=8)
    run = builder.start_run("Explain.")
    builder.tear_next(20)
    builder.step(run)
    session = session_of(builder)
    assert session.verdict is Verdict.NEEDS_RECOVERY
    assert session.torn_tail_bytes == 20
    assert session.runs[0].recovery is not None
    assert session.runs[0].recovery.conditions == ["step-pending"]
