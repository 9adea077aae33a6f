"""The tiny-agent recovery planner on builder-made sessions: every plan type, every blocked reason, the
§13.4 defects planned as the design intends, and every appendable plan proven legal by appending it."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sessaudit.formats.tiny_agent.build.machinery import dump_json
from sessaudit.formats.tiny_agent.build.parts import default_replay
from sessaudit.formats.tiny_agent.build.session import Call, Configuration, SessionBuilder
from sessaudit.formats.tiny_agent.check.reducer import Reducer
from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.formats.tiny_agent.recover.current import CurrentConfiguration, CurrentTool
from sessaudit.formats.tiny_agent.recover.planner import (
    CONFIGURATION_UNCHANGED,
    REPLAY_POLICY_UNKNOWN,
    PlanResult,
    javascript_object,
    plan_recovery,
)
from sessaudit.formats.tiny_agent.v2.verification import _Verification
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome
from sessaudit.resources import load_schema
from sessaudit.verdicts import Verdict

PLAN_SCHEMA = Draft202012Validator(load_schema("tiny-agent-recovery-plan.v2.schema.json"))
DEFAULT = Configuration()
READ = Call("read", {"path": "src/cart.js"})
BASH = Call("bash", {"command": "npm test"})
NO_LEGAL_COMPLETION = {"code": "no_legal_completion", "message": "the run settled without a legal completion"}


# --- reducing, planning, and writing plans as facts (§13.3) ------------------------------------------
def reduce_bytes(data: bytes) -> tuple[SourceOutcome, Reducer]:
    """Verify a session and keep the reducer's final state."""
    verification = _Verification("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS)
    return verification.run(), verification.reducer


def check_plan(result: PlanResult | None) -> None:
    """Every plan the planner produces has tiny-agent's plan shape."""
    if result is not None:
        errors = [error.message for error in PLAN_SCHEMA.iter_errors(result.plan)]
        assert not errors, (result.plan, errors)
        assert result.blocked == (result.plan["type"] == "blocked")


def plan_of(data: bytes, current: CurrentConfiguration | None = None) -> PlanResult | None:
    outcome, reducer = reduce_bytes(data)
    assert outcome.native["reducer"]["ok"], outcome.native
    result = plan_recovery(reducer, reducer.current, current)
    check_plan(result)
    return result


def current_of(
    configuration: Configuration = DEFAULT,
    *,
    environment: str = "/home/dev/shop",
    digest: str | None = None,
    replay: dict[str, str] | None = None,
    keys: dict[str, str] | None = None,
    drop: tuple[str, ...] = (),
    add: tuple[str, ...] = (),
) -> CurrentConfiguration:
    """The builder's configuration as `--current` would state it, with deliberate changes."""
    snapshot = configuration.snapshot()
    tools = [
        (tool["name"], tool["definitionDigest"]) for tool in snapshot["tools"] if tool["name"] not in drop
    ]
    tools += [(name, sha256_digest(name)) for name in add]
    return CurrentConfiguration(
        configuration_digest=digest or sha256_digest(snapshot),
        environment_identity=environment,
        tools=tuple(
            CurrentTool(
                name,
                definition,
                (replay or {}).get(name, default_replay(name)),
                (keys or {}).get(name, f"builtin:{name}:v1"),
            )
            for name, definition in tools
        ),
        configuration_snapshot=None if digest or drop or add else snapshot,
    )


_IDS = random.Random(2026)


def fresh_id(millis: int) -> str:
    value = (millis << 80) | (0x7 << 76) | (_IDS.getrandbits(12) << 64) | (0b10 << 62) | _IDS.getrandbits(62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def materialize(
    r: Reducer,
    plan: dict[str, Any],
    current: CurrentConfiguration | None = None,
    snapshot: dict[str, Any] | None = None,
) -> list[list[dict[str, Any]]]:
    """The transactions a writer appends for a plan (§13.3); a started step or tool also gets its answer."""
    operation = r.current
    assert operation is not None
    kind = plan["type"]

    def record(body: dict[str, Any], fact_id: str | None = None) -> dict[str, Any]:
        return {"kind": "record", "record": {"operationId": operation.operation_id, **body}, "id": fact_id}

    if kind == "appendSynthetic":
        facts = []
        for result in plan["results"]:
            message = {"role": "tool", "content": result["content"], "tool_call_id": result["toolCallId"]}
            entry: dict[str, Any] = {"type": "message"}
            if result["reason"] == "interrupted":
                entry |= {"stepId": r.pending_intents[result["toolStartedId"]].step, "message": message}
                entry |= {"toolName": result["toolName"], "toolStartedId": result["toolStartedId"]}
            else:
                entry["stepId"] = operation.answers[result["assistantEntryId"]].step
                entry |= {"assistantEntryId": result["assistantEntryId"], "toolIndex": result["toolIndex"]}
                entry |= {"message": message, "toolName": result["toolName"]}
            entry["result"] = {"type": "synthetic", "reason": result["reason"]}
            facts.append({"kind": "entry", "entry": entry, "id": result.get("resultEntryId")})
        return [facts]
    if kind == "closeAttempt":
        step = operation.step
        assert step is not None
        close = {
            "type": "stepFailed",
            "stepId": step.step,
            "attemptId": step.attempt_id,
            "error": plan["error"],
        }
        return [[record(close)]]
    if kind == "finish":
        body = {key: value for key, value in plan.items() if key != "type"}
        return [[record({"type": "operationFinished", "operationKind": operation.kind, **body})]]
    if kind == "startStep":
        snapshot = snapshot or (current.configuration_snapshot if current else None) or DEFAULT.snapshot()
        step_id, attempt_id = plan.get("stepId") or fresh_id(1), fresh_id(2)
        started = record(
            {
                "type": "stepAttempt",
                "stepId": step_id,
                "attemptId": attempt_id,
                "stepKind": plan["stepKind"],
                "attempt": plan["attempt"],
                "contextThroughEntryId": plan["contextThroughEntryId"],
                "configurationSnapshot": snapshot,
                "configurationDigest": sha256_digest(snapshot),
            }
        )
        if plan["stepKind"] == "compaction":
            error = {"code": "model_error", "message": "OpenRouter 503"}
            answer = record(
                {"type": "stepFailed", "stepId": step_id, "attemptId": attempt_id, "error": error}
            )
            return [[started], [answer]]
        message = {"role": "assistant", "content": "Done."}
        reply = {"type": "message", "stepId": step_id, "attemptId": attempt_id, "stopReason": "stop"}
        return [[started], [{"kind": "entry", "entry": reply | {"message": message}, "id": None}]]
    assert kind == "startTool", plan
    if plan["mode"] == "replay":
        intent = r.pending_intents[plan["toolStartedId"]]
        started_id, slot, call_id, step_id = (
            intent.started_id,
            intent.result_slot,
            intent.call_id,
            intent.step,
        )
        transactions = []
    else:
        answer = operation.answers[plan["assistantEntryId"]]
        call_id, step_id = answer.calls[plan["toolIndex"]][0], answer.step
        started_id, slot = fresh_id(3), fresh_id(4)
        declared = current.tool(plan["toolName"]) if current else None
        policy = declared.replay if declared else default_replay(plan["toolName"])
        started = {key: plan[key] for key in ("assistantEntryId", "toolIndex", "toolName", "arguments")}
        started |= {"type": "toolStarted", "stepId": step_id, "toolCallId": call_id, "replay": policy}
        started |= {
            "replayKey": declared.replay_key if declared else f"builtin:{plan['toolName']}:v1",
            "environmentIdentity": current.environment_identity if current else r.environment,
            "resultEntryId": slot,
        }
        transactions = [[record(started, started_id)]]
    message = {"role": "tool", "content": "ok", "tool_call_id": call_id}
    result = {"type": "message", "stepId": step_id, "message": message, "toolName": plan["toolName"]}
    result |= {"toolStartedId": started_id, "result": {"type": "success"}}
    return [*transactions, [{"kind": "entry", "entry": result, "id": slot}]]


def recorded_snapshot(data: bytes, step_id: str) -> dict[str, Any]:
    """The configuration snapshot that attempt 1 of a step recorded (attempt 2 must repeat its digest)."""
    for line in data.splitlines()[1:]:
        value = json.loads(line)
        for fact in value if isinstance(value, list) else [value]:
            record = fact.get("record", {})
            if record.get("type") == "stepAttempt" and record["stepId"] == step_id:
                snapshot: dict[str, Any] = record["configurationSnapshot"]
                return snapshot
    raise AssertionError(f"no stepAttempt for step {step_id}")


def append(data: bytes, r: Reducer, transactions: list[list[dict[str, Any]]]) -> bytes:
    """Commit transactions as the store does: next seq, one timestamp per line, fresh ids where unset."""
    seq = r.next_seq
    assert seq is not None
    timestamp = (r.last_timestamp or 0) + 7
    lines = []
    for facts in transactions:
        for fact in facts:
            fact.update(seq=seq, timestamp=timestamp, id=fact["id"] or fresh_id(timestamp))
            seq += 1
        lines.append(dump_json(facts[0] if len(facts) == 1 else facts).encode() + b"\n")
        timestamp += 1
    return data + b"".join(lines)


def accepted(data: bytes) -> tuple[SourceOutcome, Reducer]:
    outcome, reducer = reduce_bytes(data)
    assert outcome.native["reducer"]["ok"], outcome.native["reducer"]
    assert outcome.sessions[0].verdict is not Verdict.CORRUPT
    return outcome, reducer


def drive(
    data: bytes,
    current: CurrentConfiguration | None = None,
    snapshot: dict[str, Any] | None = None,
    limit: int = 30,
) -> list[str]:
    """Plan, append the plan, verify, repeat: the plans until no plan (None) or a blocked plan."""
    seen: list[str] = []
    for _ in range(limit):
        _, reducer = accepted(data)
        result = plan_recovery(reducer, reducer.current, current)
        check_plan(result)
        if result is None:
            return seen
        plan = result.plan
        seen.append(summary(plan))
        if result.blocked:
            return seen
        if plan["type"] == "startStep" and plan["attempt"] == 2:
            snapshot = recorded_snapshot(data, plan["stepId"])
        data = append(data, reducer, materialize(reducer, plan, current, snapshot))
    raise AssertionError(f"no convergence after {limit} plans: {seen}")


def summary(plan: dict[str, Any]) -> str:
    """A plan in one short line: its type and the fields that tell plans of one type apart."""
    kind = plan["type"]
    if kind == "appendSynthetic":
        return kind + ":" + ",".join(result["reason"] for result in plan["results"])
    if kind == "blocked":
        return f"blocked:{plan['reason']}"
    if kind == "finish":
        return f"finish:{plan['outcome']}" + (f"/{plan['completion']}" if "completion" in plan else "")
    if kind == "startStep":
        return f"startStep:{plan['stepKind']}/{plan['attempt']}"
    if kind == "startTool":
        return f"startTool:{plan['mode']}"
    return kind


# --- sessions in every open state, from the project's builder -----------------------------------------
def _run(seed: int, text: str = "Fix the failing cart test.") -> tuple[SessionBuilder, Any]:
    builder = SessionBuilder(seed=seed)
    return builder, builder.start_run(text)


def _answer(seed: int, *calls: Call, stop_reason: Any = None) -> tuple[SessionBuilder, Any, Any]:
    builder, run = _run(seed)
    return builder, run, builder.assistant(builder.step(run), None, calls=calls, stop_reason=stop_reason)


def run_accepted() -> SessionBuilder:
    return _run(1)[0]


def open_attempt() -> SessionBuilder:
    builder, run = _run(2)
    builder.step(run)
    return builder


def open_retry() -> SessionBuilder:
    builder, run = _run(3)
    builder.retry(builder.step(run))
    return builder


def step_failed() -> SessionBuilder:
    builder, run = _run(4)
    builder.step_failed(builder.step(run))
    return builder


def settled(content: str | None) -> Callable[[], SessionBuilder]:
    def build() -> SessionBuilder:
        builder, run = _run(5)
        builder.assistant(builder.step(run), content)
        return builder

    return build


def stop_after_tools(abort: bool = False) -> SessionBuilder:
    """§13.4 defect 2: the run used tools and settled with `stop`; operationFinished is missing."""
    builder, run, answer = _answer(6, READ)
    builder.tool_result(builder.start_tool(answer, 0), "export function total() {}")
    builder.assistant(builder.step(run), "total() ignores qty.")
    if abort:
        builder.abort(run)
    return builder


def untouched(*calls: Call, configuration: Configuration = DEFAULT) -> Callable[[], SessionBuilder]:
    def build() -> SessionBuilder:
        builder = SessionBuilder(seed=7, configuration=configuration)
        run = builder.start_run("Check the cart.")
        builder.assistant(builder.step(run), None, calls=calls)
        return builder

    return build


def length(*calls: Call, truncated: int = 0) -> Callable[[], SessionBuilder]:
    def build() -> SessionBuilder:
        builder, _, answer = _answer(8, *calls, stop_reason="length")
        for index in range(truncated):
            builder.pre_execution(answer, index, "truncated")
        return builder

    return build


def pending(call: Call, replay: Any) -> Callable[[], SessionBuilder]:
    def build() -> SessionBuilder:
        builder, _, answer = _answer(9, call)
        builder.start_tool(answer, 0, replay=replay)
        return builder

    return build


def after_unknown_tool() -> SessionBuilder:
    """§13.4 defects 1 and 3: the one call got its unknownTool synthetic; the next step is due."""
    builder, _, answer = _answer(10, Call("lint", {}))
    builder.pre_execution(answer, 0, "unknownTool")
    return builder


def abort_model() -> SessionBuilder:
    builder, run = _run(11)
    builder.step(run)
    builder.abort(run)
    return builder


def abort_tools() -> SessionBuilder:
    builder, run, answer = _answer(12, BASH, READ)
    intent = builder.start_tool(answer, 0)
    builder.abort(run, "tool", intent.call.call_id)
    return builder


def abort_reconciled() -> SessionBuilder:
    builder, run = _run(13)
    step = builder.step(run)
    builder.abort(run)
    builder.step_failed(step, "aborted", "Operation aborted")
    return builder


def abort_after_synthetic() -> SessionBuilder:
    """§13.4 defect 1 under an abort: call 0 is already answered by a synthetic, call 1 is untouched."""
    builder, run, answer = _answer(14, Call("lint", {}), READ)
    builder.pre_execution(answer, 0, "unknownTool")
    builder.abort(run, "tool", answer.calls[1].call_id)
    return builder


def abort_after_stop() -> SessionBuilder:
    """§13.4 defect 2 under an abort: tools, then a settled `stop`, then the abort."""
    return stop_after_tools(abort=True)


def compaction(stage: str) -> Callable[[], SessionBuilder]:
    def build() -> SessionBuilder:
        builder = SessionBuilder(seed=15)
        builder.exchange("What is in the cart module?", "A total() function.")
        operation = builder.start_compaction()
        if stage != "started":
            step = builder.step(operation)
            if stage == "settled":
                builder.compaction_entry(step, "The cart module has total().")
            elif stage == "aborted":
                builder.abort(operation, "compact")
        return builder

    return build


def run_from_older_entry() -> SessionBuilder:
    """A run whose input is not the latest message: attempt 1 must still name the active boundary."""
    builder = SessionBuilder(seed=16)
    first = builder.user("Fix the failing cart test.")
    builder.user("Also the discount test, please.")
    builder.start_run(input_entry_id=first)
    return builder


UNCHANGED = current_of()
CASES: dict[str, tuple[Callable[[], SessionBuilder], CurrentConfiguration | None, str]] = {
    "start-step": (run_accepted, UNCHANGED, "startStep:assistant/1"),
    "run-from-older-entry": (run_from_older_entry, None, "startStep:assistant/1"),
    "retry": (open_attempt, UNCHANGED, "startStep:assistant/2"),
    "configuration-changed": (
        open_attempt,
        current_of(digest=sha256_digest("other")),
        "blocked:configuration_changed",
    ),
    "attempts-exhausted": (open_retry, None, "blocked:attempts_exhausted"),
    "step-failed": (step_failed, None, "finish:failed"),
    "settled-stop": (settled("Done."), None, "finish:completed/normal"),
    "stop-blank": (settled(" \n\t"), None, "finish:failed"),
    "stop-null": (settled(None), None, "finish:failed"),
    "stop-after-tools": (stop_after_tools, UNCHANGED, "finish:completed/normal"),
    "start-tool": (untouched(READ, BASH), UNCHANGED, "startTool:start"),
    "start-tool-derived": (untouched(READ, BASH), None, "startTool:start"),
    "unknown-tool": (untouched(Call("lint", {})), UNCHANGED, "appendSynthetic:unknownTool"),
    "not-in-snapshot": (
        untouched(BASH, configuration=Configuration(tools=("read",))),
        current_of(add=("bash",)),
        "appendSynthetic:unknownTool",
    ),
    "dropped-now": (untouched(BASH), current_of(drop=("bash",)), "appendSynthetic:unknownTool"),
    "invalid-arguments": (
        untouched(Call("read", raw_arguments='{"path": "src/ca')),
        None,
        "appendSynthetic:invalidArguments",
    ),
    "array-arguments": (
        untouched(Call("read", raw_arguments="[1]")),
        UNCHANGED,
        "appendSynthetic:invalidArguments",
    ),
    "truncated": (
        length(Call("write", raw_arguments='{"path'), BASH),
        None,
        "appendSynthetic:truncated,truncated",
    ),
    "truncated-rest": (
        length(Call("write", raw_arguments='{"path'), BASH, truncated=1),
        None,
        "appendSynthetic:truncated",
    ),
    "truncated-finish": (length(BASH, truncated=1), None, "finish:completed/truncated"),
    "length-without-calls": (length(), None, "finish:failed"),
    "interrupted": (pending(BASH, "never"), UNCHANGED, "appendSynthetic:interrupted"),
    "interrupted-derived": (pending(BASH, "never"), None, "appendSynthetic:interrupted"),
    "replay": (pending(READ, "safe"), UNCHANGED, "startTool:replay"),
    "replay-derived": (pending(READ, "safe"), None, "startTool:replay"),
    "replay-digest-changed": (
        pending(READ, "safe"),
        current_of(digest=sha256_digest("new")),
        "startTool:replay",
    ),
    "environment-changed": (
        pending(BASH, "never"),
        current_of(environment="/srv/other"),
        "blocked:environment_changed",
    ),
    "replay-now-never": (
        pending(READ, "safe"),
        current_of(replay={"read": "never"}),
        "blocked:replay_declaration_changed",
    ),
    "replay-key-changed": (
        pending(READ, "safe"),
        current_of(keys={"read": "builtin:read:v2"}),
        "blocked:replay_declaration_changed",
    ),
    "tool-missing-now": (pending(READ, "safe"), current_of(drop=("read",)), "blocked:configuration_changed"),
    "never-tool-missing-now": (
        pending(BASH, "never"),
        current_of(drop=("bash",)),
        "blocked:configuration_changed",
    ),
    "after-unknown-tool": (after_unknown_tool, UNCHANGED, "startStep:assistant/1"),
    "abort-model": (abort_model, None, "closeAttempt"),
    "abort-tools": (abort_tools, UNCHANGED, "appendSynthetic:interrupted,aborted"),
    "abort-reconciled": (abort_reconciled, None, "finish:aborted"),
    "abort-after-synthetic": (abort_after_synthetic, None, "appendSynthetic:aborted"),
    "abort-after-stop": (abort_after_stop, None, "finish:aborted"),
    "compaction-started": (compaction("started"), None, "startStep:compaction/1"),
    "compaction-retry": (compaction("attempting"), UNCHANGED, "startStep:compaction/2"),
    "compaction-settled": (compaction("settled"), None, "finish:completed"),
    "compaction-abort": (compaction("aborted"), None, "closeAttempt"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_plan_and_its_legality(name: str) -> None:
    """The plan, in tiny-agent's shape; appended plan by plan, every step is accepted by the reducer and the
    operation reaches its terminal record (then no plan), unless the plan is blocked."""
    build, current, expected = CASES[name]
    data = build().data()
    result = plan_of(data, current)
    assert result is not None
    assert summary(result.plan) == expected
    seen = drive(data, current)
    assert seen[0] == expected
    if result.blocked:
        assert seen == [expected]
    else:
        assert seen[-1].startswith("finish"), seen


def test_the_cases_cover_every_plan_type_blocked_reason_and_synthetic_reason() -> None:
    summaries = {expected for _, _, expected in CASES.values()}
    assert {text.split(":")[0] for text in summaries} == {
        "startStep",
        "startTool",
        "appendSynthetic",
        "closeAttempt",
        "finish",
        "blocked",
    }
    assert {text.split(":")[1] for text in summaries if text.startswith("blocked")} == {
        "configuration_changed",
        "environment_changed",
        "replay_declaration_changed",
        "attempts_exhausted",
    }
    reasons = {
        reason for text in summaries if text.startswith("appendSynthetic") for reason in text[16:].split(",")
    }
    assert reasons == {"interrupted", "aborted", "truncated", "unknownTool", "invalidArguments"}
    assert {"finish:completed/normal", "finish:completed/truncated", "finish:completed"} <= summaries
    assert {"finish:failed", "finish:aborted", "startTool:replay", "startStep:compaction/2"} <= summaries


# --- the §13.4 defects and the other design-intent answers, with exact ids ---------------------------
def test_defect_1_after_a_pre_execution_synthetic_the_plan_moves_on() -> None:
    """tiny-agent proposes the same synthetic again (the reducer rejects it: the pair is used); the design
    moves on to the next untouched call, then to the next step."""
    builder, _, answer = _answer(20, Call("lint", {}), READ)
    builder.pre_execution(answer, 0, "unknownTool")
    result = plan_of(builder.data(), UNCHANGED)
    assert result is not None
    assert result.plan == {
        "type": "startTool",
        "mode": "start",
        "assistantEntryId": answer.entry_id,
        "toolIndex": 1,
        "toolName": "read",
        "arguments": {"path": "src/cart.js"},
    }
    assert drive(builder.data(), UNCHANGED) == [
        "startTool:start",
        "startStep:assistant/1",
        "finish:completed/normal",
    ]


def test_defect_1_a_length_answer_converges_to_completed_truncated() -> None:
    builder, _, answer = _answer(21, BASH, READ, stop_reason="length")
    first = plan_of(builder.data())
    assert first is not None and [r["toolIndex"] for r in first.plan["results"]] == [0, 1]
    builder.pre_execution(answer, 0, "truncated")
    rest = plan_of(builder.data())
    assert rest is not None and rest.plan["results"] == [first.plan["results"][1]]
    builder.pre_execution(answer, 1, "truncated")
    finish = plan_of(builder.data())
    assert finish is not None
    assert finish.plan == {
        "type": "finish",
        "outcome": "completed",
        "completion": "truncated",
        "finalEntryId": answer.entry_id,
    }


def test_defect_2_a_terminal_stop_after_tool_steps_finishes_the_run() -> None:
    """tiny-agent labels the previous step's calls with the final entry's id and plans `startTool`, which
    the reducer rejects (INVALID_REFERENCE); the design table appends operationFinished(completed)."""
    builder = stop_after_tools()
    final = builder.message_entry_ids[-1]
    result = plan_of(builder.data(), UNCHANGED)
    assert result is not None
    assert result.plan == {
        "type": "finish",
        "outcome": "completed",
        "completion": "normal",
        "finalEntryId": final,
    }


def test_defect_3_the_next_step_after_a_synthetic_names_the_latest_message() -> None:
    """tiny-agent uses the last toolStarted's result slot as the context; after a pre-execution synthetic
    the reducer requires the latest message id (the synthetic's entry)."""
    builder, _, answer = _answer(22, READ, Call("lint", {}))
    builder.tool_result(builder.start_tool(answer, 0), "export function total() {}")
    synthetic = builder.pre_execution(answer, 1, "unknownTool")
    result = plan_of(builder.data(), UNCHANGED)
    assert result is not None
    assert result.plan == {
        "type": "startStep",
        "stepKind": "assistant",
        "attempt": 1,
        "contextThroughEntryId": synthetic,
    }
    assert synthetic == builder.context_boundary


def test_a_run_on_an_older_user_entry_starts_at_the_active_boundary() -> None:
    """tiny-agent starts a run's first step at its inputEntryId; the reducer requires the active boundary
    (defect 3's rule): here the user entry written after the run's input."""
    builder = run_from_older_entry()
    result = plan_of(builder.data())
    assert result is not None
    assert (
        result.plan["contextThroughEntryId"] == builder.message_entry_ids[-1] != builder.message_entry_ids[0]
    )


def test_abort_answers_the_unresolved_calls_of_the_latest_answer_even_after_a_failed_step() -> None:
    """A step started while a call was still untouched, failed, then the user aborted. tiny-agent takes
    calls only from a settled step and finishes `aborted`, which leaves the call unanswered for good: the
    next user message would be INVALID_TRANSCRIPT (§12.3). The design answers every unresolved call first
    (§12.2, abort closure), and the session can go on."""
    builder, run, answer = _answer(23, READ, BASH)
    builder.tool_result(builder.start_tool(answer, 0), "export function total() {}")
    builder.step_failed(builder.step(run))
    builder.abort(run)
    result = plan_of(builder.data())
    assert result is not None
    assert result.plan == {
        "type": "appendSynthetic",
        "results": [
            {
                "assistantEntryId": answer.entry_id,
                "toolIndex": 1,
                "toolCallId": answer.calls[1].call_id,
                "toolName": "bash",
                "reason": "aborted",
                "content": "Operation aborted before execution.",
            }
        ],
    }
    assert drive(builder.data()) == ["appendSynthetic:aborted", "finish:aborted"]
    _, reducer = reduce_bytes(builder.data())
    tiny_agent_plan = [
        [
            {
                "kind": "record",
                "id": None,
                "record": {
                    "type": "operationFinished",
                    "operationId": run.operation_id,
                    "operationKind": "run",
                    "outcome": "aborted",
                },
            }
        ]
    ]
    finished = append(builder.data(), reducer, tiny_agent_plan)
    _, reducer = accepted(finished)
    entry = {
        "kind": "entry",
        "id": None,
        "entry": {"type": "message", "message": {"role": "user", "content": "Hi"}},
    }
    outcome, _ = reduce_bytes(append(finished, reducer, [[entry]]))
    assert outcome.native["reducer"]["code"] == "INVALID_TRANSCRIPT"


def test_a_tool_outside_the_attempts_snapshot_gets_unknown_tool_even_when_declared_now() -> None:
    """The `start-tool` divergence: a toolStarted for it would be rejected (§9.5)."""
    build, current, _ = CASES["not-in-snapshot"]
    result = plan_of(build().data(), current)
    assert result is not None and result.plan["results"][0]["reason"] == "unknownTool"
    invalid = untouched(
        Call("bash", raw_arguments="{"), configuration=Configuration(tools=("read",))
    )().data()
    result = plan_of(invalid, current)
    assert result is not None and result.plan["results"][0]["reason"] == "invalidArguments"  # as tiny-agent


@pytest.mark.parametrize("name", ["stop-blank", "stop-null", "length-without-calls"])
def test_no_legal_completion_finishes_the_run_as_failed(name: str) -> None:
    build, _, _ = CASES[name]
    result = plan_of(build().data())
    assert result is not None
    assert result.plan == {"type": "finish", "outcome": "failed", "error": NO_LEGAL_COMPLETION}


# --- abort paths, idle, assumptions and warnings --------------------------------------------------------
def test_abort_reconciliation_batches_interrupted_and_aborted_results_in_index_order() -> None:
    builder, run, answer = _answer(24, READ, BASH, Call("lint", {}))
    builder.tool_result(builder.start_tool(answer, 0), "a")
    intent = builder.start_tool(answer, 1)
    builder.abort(run, "tool", intent.call.call_id)
    result = plan_of(builder.data())
    assert result is not None
    assert [(r["toolIndex"], r["reason"]) for r in result.plan["results"]] == [
        (1, "interrupted"),
        (2, "aborted"),
    ]
    interrupted = result.plan["results"][0]
    assert (interrupted["toolStartedId"], interrupted["resultEntryId"]) == (
        intent.fact_id,
        intent.result_entry_id,
    )
    assert drive(builder.data()) == ["appendSynthetic:interrupted,aborted", "finish:aborted"]


def test_an_idle_session_or_a_finished_run_has_no_plan() -> None:
    """`finish-idle`: tiny-agent answers an idle session with a finish-shaped plan that is not an action."""
    builder = SessionBuilder(seed=25)
    run = builder.exchange("One?", "Two.")
    _, reducer = reduce_bytes(builder.data())
    assert reducer.current is None
    assert plan_recovery(reducer, None, UNCHANGED) is None
    assert plan_recovery(reducer, reducer.operations[run.operation_id], UNCHANGED) is None
    assert plan_recovery(reducer, reducer.operations[run.operation_id], None) is None


def test_without_current_the_plan_says_what_it_assumes() -> None:
    start = plan_of(untouched(READ)().data())
    assert start is not None
    assert start.assumes == (CONFIGURATION_UNCHANGED, REPLAY_POLICY_UNKNOWN)
    retry = plan_of(open_attempt().data())
    assert retry is not None and retry.assumes == (CONFIGURATION_UNCHANGED,)
    replay = plan_of(pending(READ, "safe")().data())
    assert replay is not None and replay.assumes == (CONFIGURATION_UNCHANGED,)
    # plans that no configuration could change assume nothing
    for build in (step_failed, abort_model, settled("Done."), run_accepted):
        result = plan_of(build().data())
        assert result is not None and result.assumes == (), build
    # with --current the plan is exact
    given = plan_of(untouched(READ)().data(), UNCHANGED)
    assert given is not None and given.assumes == () and given.warnings == ()


def test_replaying_a_safe_tool_under_another_configuration_digest_warns() -> None:
    build, current, _ = CASES["replay-digest-changed"]
    result = plan_of(build().data(), current)
    assert result is not None and result.plan["mode"] == "replay" and not result.blocked
    assert len(result.warnings) == 1 and "configurationDigest" in result.warnings[0]
    unchanged = plan_of(build().data(), UNCHANGED)
    assert unchanged is not None and unchanged.warnings == ()


def test_a_never_tool_is_interrupted_whatever_the_current_declaration_says() -> None:
    result = plan_of(pending(BASH, "never")().data(), current_of(replay={"bash": "safe"}))
    assert result is not None and summary(result.plan) == "appendSynthetic:interrupted"


def test_arguments_are_read_as_javascripts_json_parse_reads_them() -> None:
    assert javascript_object('{"a": 1, "a": 2}') == {"a": 2}
    assert javascript_object(' {"path": "x"}\n') == {"path": "x"}
    assert javascript_object('{"s": "\\ud800"}') == {"s": "\ud800"}
    for text in (
        "",
        "[1]",
        '"text"',
        "null",
        "1",
        "NaN",
        '{"n": NaN}',
        '{"n": Infinity}',
        '{"a":',
        "\ufeff{}",
    ):
        assert javascript_object(text) is None, text


def test_an_untouched_call_comes_before_a_pending_intent_as_in_tiny_agent() -> None:
    builder, _, answer = _answer(26, BASH, READ)
    builder.start_tool(answer, 0)  # pending, never
    result = plan_of(builder.data(), UNCHANGED)
    assert result is not None and (result.plan["type"], result.plan["toolIndex"]) == ("startTool", 1)
    assert drive(builder.data(), UNCHANGED) == [
        "startTool:start",
        "appendSynthetic:interrupted",
        "startStep:assistant/1",
        "finish:completed/normal",
    ]


def test_defect_3_results_written_out_of_start_order_still_start_at_the_latest_message() -> None:
    """Two tools ran in parallel and the first one started finished last: tiny-agent takes the last
    toolStarted's result slot (call 1), the reducer requires the latest message (call 0's result)."""
    builder, _, answer = _answer(27, READ, Call("grep", {"pattern": "total("}))
    first, second = builder.start_tool(answer, 0), builder.start_tool(answer, 1)
    builder.tool_result(second, "src/cart.js:3")
    latest = builder.tool_result(first, "export function total() {}")
    result = plan_of(builder.data(), UNCHANGED)
    assert result is not None
    assert result.plan["contextThroughEntryId"] == latest == builder.context_boundary
    assert latest != second.result_entry_id
    assert drive(builder.data(), UNCHANGED) == ["startStep:assistant/1", "finish:completed/normal"]
