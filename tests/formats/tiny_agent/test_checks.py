"""Beyond tiny-agent's reducer: SA109–SA111 and SA401–SA422 on files the reducer accepts."""

from __future__ import annotations

import io
from typing import Any

from sessaudit.formats.tiny_agent.build.session import DEFAULT_CREATED_AT, Call, SessionBuilder, TokenUsage
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.model import Finding
from sessaudit.plugin import SourceOutcome
from sessaudit.verdicts import Verdict

READ = Call("read", {"path": "src/cart.js"})
BASH = Call("bash", {"command": "npm test"})


def verify(data: bytes) -> SourceOutcome:
    outcome = verify_tiny_agent("s.jsonl", "s.jsonl", io.BytesIO(data), len(data))
    assert outcome.native["reducer"]["ok"] is True, outcome.native
    return outcome


def only(outcome: SourceOutcome, rule: str) -> Finding:
    found = [finding for finding in outcome.findings if finding.rule == rule]
    assert len(found) == 1, [finding.rule for finding in outcome.findings]
    return found[0]


def absent(outcome: SourceOutcome, rule: str) -> bool:
    return all(finding.rule != rule for finding in outcome.findings)


def tools_run(seed: int, *calls: Call) -> tuple[SessionBuilder, Any, Any]:
    builder = SessionBuilder(seed=seed)
    run = builder.start_run("Why does the cart test fail?")
    answer = builder.assistant(builder.step(run), None, calls=list(calls or (READ, BASH)))
    return builder, run, answer


def test_a_clean_builder_session_has_no_warnings() -> None:
    builder, run, answer = tools_run(1)
    builder.tool_result(builder.start_tool(answer, 0), "export function total() {}")
    builder.tool_result(builder.start_tool(answer, 1), "1 failing")
    builder.assistant(builder.step(run), "total() ignores qty.")
    builder.finish(run)
    builder.compact("The cart total ignores qty.")
    outcome = verify(builder.data())
    assert outcome.findings == []
    assert outcome.sessions[0].verdict is Verdict.CLEAN


def test_sa111_integral_floats() -> None:
    builder = SessionBuilder(seed=2)
    builder.tamper_next("seq", float)
    builder.user("one")
    finding = only(verify(builder.data()), "SA111")
    assert (finding.location.line, finding.location.pointer, finding.severity) == (2, "/seq", "warning")


def test_sa401_is_one_note_with_a_count() -> None:
    builder = SessionBuilder(seed=3)
    for index in range(3):
        builder.tamper_next("timestamp", DEFAULT_CREATED_AT + 1)
        builder.user(f"message {index}")
        builder.wait(10_000)
    outcome = verify(builder.data())
    finding = only(outcome, "SA401")
    assert finding.location.line == 2  # every id is allocated after createdAt + 1
    assert finding.evidence["count"] == 3
    assert finding.message.startswith("3 fact(s)")


def test_sa402_header_id_time() -> None:
    builder = SessionBuilder(seed=4, header_overrides={"createdAt": DEFAULT_CREATED_AT + 5})
    finding = only(verify(builder.data()), "SA402")
    assert finding.evidence == {"id_millis": DEFAULT_CREATED_AT, "created_at": DEFAULT_CREATED_AT + 5}


def test_sa403_and_sa404_timestamps() -> None:
    builder = SessionBuilder(seed=5)
    builder.user("one")
    builder.tamper_next("timestamp", DEFAULT_CREATED_AT - 1)
    builder.user("two")
    outcome = verify(builder.data())
    assert only(outcome, "SA403").location.line == 3
    assert only(outcome, "SA404").location.line == 3


def test_cap_lists_ten_and_counts_the_rest() -> None:
    builder = SessionBuilder(seed=6)
    for index in range(14):
        builder.tamper_next("timestamp", DEFAULT_CREATED_AT - 1 - index)
        builder.user(f"m{index}")
    outcome = verify(builder.data())
    backwards = [finding for finding in outcome.findings if finding.rule == "SA403"]
    assert len(backwards) == 11
    assert backwards[-1].evidence == {"not_listed": 3}


def test_sa410_failed_run_with_a_pending_tool() -> None:
    builder, run, answer = tools_run(7)
    builder.start_tool(answer, 1)
    builder.finish(run, "failed")
    outcome = verify(builder.data())
    assert only(outcome, "SA410").location.line == 6


def test_sa411_result_after_finish() -> None:
    builder, run, answer = tools_run(8)
    intent = builder.start_tool(answer, 1)
    builder.finish(run, "failed")
    builder.tool_result(intent, "late")
    outcome = verify(builder.data())
    assert only(outcome, "SA411").location.line == 7
    assert outcome.sessions[0].runs[0].recovery is None


def test_sa412_truncated_without_synthetics() -> None:
    builder = SessionBuilder(seed=9)
    run = builder.start_run("Write it all.")
    builder.assistant(builder.step(run), None, calls=[READ], stop_reason="length")
    builder.finish(run, completion="truncated")
    assert only(verify(builder.data()), "SA412").location.line == 5


def test_sa413_input_entry_reused() -> None:
    builder = SessionBuilder(seed=10)
    first = builder.user("question")
    run = builder.start_run(input_entry_id=first)
    builder.assistant(builder.step(run), "answer")
    builder.finish(run)
    builder.start_run(input_entry_id=first)
    outcome = verify(builder.data())
    assert "already used" in only(outcome, "SA413").message


def test_sa414_abort_record_mismatch() -> None:
    builder = SessionBuilder(seed=11)
    run = builder.start_run("Explain.")
    builder.abort(run, "compact")
    assert only(verify(builder.data()), "SA414").location.pointer == "/record"


def test_sa415_arguments_and_sa416_environment() -> None:
    builder, _, answer = tools_run(12)
    builder.start_tool(answer, 0, arguments={"path": "other.js"}, environment_identity="/elsewhere")
    outcome = verify(builder.data())
    assert only(outcome, "SA415").evidence["call_arguments"] == {"path": "src/cart.js"}
    assert only(outcome, "SA416").evidence == {"intent": "/elsewhere", "header": "/home/dev/shop"}


def test_sa417_compaction_partition_mismatch() -> None:
    builder = SessionBuilder(seed=13)
    builder.exchange("One?", "Two.")
    builder.exchange("Three?", "Four.")
    operation = builder.start_compaction(keep_last=1)
    messages = builder.message_entry_ids
    step = builder.step(operation)

    def retain_one_more(tail: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"sourceEntryId": messages[-2], "message": {"role": "user", "content": "Three?"}}, *tail]

    builder.tamper_next("entry.compactedThroughEntryId", messages[-3])
    builder.tamper_next("entry.retainedTail", retain_one_more)
    builder.compaction_entry(step, "summary")
    finding = only(verify(builder.data()), "SA417")
    assert finding.evidence["declared_last_compacted"] == messages[-2]


def test_sa418_usage_on_a_superseded_attempt() -> None:
    builder = SessionBuilder(seed=14)
    run = builder.start_run("Explain.")
    first = builder.step(run)
    second = builder.retry(first)
    builder.tamper_next("attemptId", first.attempt_id, fact=1)
    builder.assistant(second, "It sums.", usage=TokenUsage(input=1))
    finding = only(verify(builder.data()), "SA418")
    assert "superseded" in finding.message


def test_sa419_aborted_synthetic_without_abort() -> None:
    builder, _, answer = tools_run(15, READ)
    builder.pre_execution(answer, 0, "aborted")
    assert "without an abort request" in only(verify(builder.data()), "SA419").message


def test_sa420_start_order_and_sa421_intent_after_abort() -> None:
    builder, run, answer = tools_run(16)
    builder.abort(run, "tool", "call_x")
    builder.start_tool(answer, 1)
    outcome = verify(builder.data())
    assert only(outcome, "SA420").evidence == {"toolIndex": 1, "untouched_before": [0]}
    assert only(outcome, "SA421").location.line == 6
    assert "names no call" in only(outcome, "SA414").message


def test_sa422_step_with_an_untouched_call() -> None:
    builder, run, answer = tools_run(17)
    builder.tool_result(builder.start_tool(answer, 0), "ok")
    builder.step(run)
    assert only(verify(builder.data()), "SA422").evidence["untouched"] == [1]


def test_checks_of_a_rejected_transaction_are_dropped() -> None:
    builder = SessionBuilder(seed=18)
    builder.tamper_next("timestamp", DEFAULT_CREATED_AT - 1, fact=0)
    builder.tamper_next("record.inputEntryId", "01a029fc-5d8a-7101-8002-00005eed0099", fact=1)
    builder.start_run("Explain.")
    outcome = verify_tiny_agent("s", "s", io.BytesIO(builder.data()), len(builder.data()))
    assert absent(outcome, "SA404")


def test_sa423_string_coerced_digest() -> None:
    builder = SessionBuilder(seed=19)
    run = builder.start_run("Explain.")
    builder.tamper_next("record.configurationDigest", lambda digest: [digest])
    builder.step(run)
    finding = only(verify(builder.data()), "SA423")
    assert (finding.location.pointer, finding.severity) == ("/record/configurationDigest", "warning")
    assert finding.evidence["found"][0].startswith("sha256:")


def test_evidence_carries_the_exact_found_value() -> None:
    builder = SessionBuilder(seed=20)
    builder.tamper_next("timestamp", -7)
    builder.user("hello")
    data = builder.data()
    outcome = verify_tiny_agent("s", "s", io.BytesIO(data), len(data))
    (finding,) = [finding for finding in outcome.findings if finding.severity == "error"]
    assert finding.evidence == {"found": -7}
