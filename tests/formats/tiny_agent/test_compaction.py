"""Compactions (spec §8.6, §9.2, §11): partitions, sourceDigest, and retained tails re-read from the file."""

from __future__ import annotations

import io
import json
from typing import Any

from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder
from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.plugin import SourceOutcome
from sessaudit.verdicts import Verdict


def verify(data: bytes) -> SourceOutcome:
    return verify_tiny_agent("s.jsonl", "s.jsonl", io.BytesIO(data), len(data))


def facts_of(data: bytes) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    for line in data.split(b"\n")[1:-1]:
        value = json.loads(line)
        facts.extend(value if isinstance(value, list) else [value])
    return facts


def early_compaction(retained_change: str | None = None) -> bytes:
    """A session of two tool runs, then a compaction whose input stops at the first run's answer, so the
    sourceDigest and the retained tail cover messages that are not the latest."""
    builder = SessionBuilder(seed=11)
    for question in ("Why does the cart test fail?", "And the discount?"):
        run = builder.start_run(question)
        calls = [Call("read", {"path": "src/cart.js"}), Call("grep", {"pattern": "qty"})]
        answer = builder.assistant(builder.step(run), None, calls=calls)
        builder.tool_result(builder.start_tool(answer, 0), 'export function total() {\n  return "é";\n}')
        builder.tool_result(builder.start_tool(answer, 1), "src/cart.js:3")
        builder.assistant(builder.step(run), f"Answer to {question}")
        builder.finish(run)
    data = builder.data()
    facts = facts_of(data)
    messages = [
        (fact["id"], fact["entry"]["message"])
        for fact in facts
        if fact["kind"] == "entry" and fact["entry"]["type"] == "message"
    ]
    through = 4  # user, assistant(calls), two tool results, final answer of run 1
    retained = messages[1 : through + 1]
    snapshot = next(
        fact for fact in facts if fact["kind"] == "record" and fact["record"]["type"] == "stepAttempt"
    )
    seq, timestamp = facts[-1]["seq"], facts[-1]["timestamp"]
    operation, result, step, attempt = (f"01a02a00-0000-7000-8000-0000000000{n:02x}" for n in range(1, 5))
    tail = [{"sourceEntryId": entry_id, "message": message} for entry_id, message in retained]
    if retained_change == "content":
        tail[2] = {
            "sourceEntryId": tail[2]["sourceEntryId"],
            "message": {**tail[2]["message"], "content": "x"},
        }
    lines = [
        {
            "kind": "record",
            "seq": seq + 1,
            "id": "01a02a00-0000-7000-8000-0000000000a1",
            "timestamp": timestamp,
            "record": {
                "type": "compactionStarted",
                "operationId": operation,
                "operationKind": "compaction",
                "inputThroughEntryId": messages[through][0],
                "resultEntryId": result,
                "compactedEntryIds": [messages[0][0]],
                "retainedEntryIds": [entry_id for entry_id, _ in retained],
                "sourceDigest": sha256_digest(
                    [
                        {"sourceEntryId": entry_id, "message": message}
                        for entry_id, message in messages[: through + 1]
                    ]
                ),
            },
        },
        {
            "kind": "record",
            "seq": seq + 2,
            "id": "01a02a00-0000-7000-8000-0000000000a2",
            "timestamp": timestamp,
            "record": {
                **snapshot["record"],
                "operationId": operation,
                "stepId": step,
                "attemptId": attempt,
                "stepKind": "compaction",
                "contextThroughEntryId": messages[-1][0],
            },
        },
        [
            {
                "kind": "entry",
                "seq": seq + 3,
                "id": result,
                "timestamp": timestamp,
                "entry": {
                    "type": "compaction",
                    "operationId": operation,
                    "summary": "the cart",
                    "compactedThroughEntryId": messages[0][0],
                    "retainedTail": tail,
                },
            }
        ],
    ]
    return data + b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines)


def test_a_compaction_of_an_earlier_prefix_is_verified_by_re_reading() -> None:
    outcome = verify(early_compaction())
    assert outcome.native["reducer"]["ok"] is True, outcome.native
    assert outcome.native["reducer"]["operation"] == "compaction"
    recovery = outcome.sessions[0].runs[-1].recovery
    assert recovery is not None and recovery.conditions == ["awaiting-terminal"]


def test_a_retained_message_that_differs_from_its_source() -> None:
    outcome = verify(early_compaction("content"))
    assert outcome.native["reducer"]["code"] == "INVALID_REFERENCE"
    finding = next(finding for finding in outcome.findings if finding.severity == "error")
    assert finding.location.pointer == "/0/entry/retainedTail/2/message"
    assert outcome.sessions[0].verdict is Verdict.CORRUPT


def test_the_usual_compaction_uses_the_running_digest() -> None:
    builder = SessionBuilder(seed=12)
    builder.exchange("One?", "Two.")
    builder.exchange("Three?", "Four.")
    builder.compact("summary", keep_last=2)
    builder.exchange("Five?", "Six.")
    builder.compact("again", keep_last=1)
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["ok"] is True
    assert [run.kind for run in outcome.sessions[0].runs] == ["run", "run", "compaction", "run", "compaction"]


def test_a_partition_that_skips_a_message() -> None:
    builder = SessionBuilder(seed=13)
    builder.exchange("One?", "Two.")
    builder.exchange("Three?", "Four.")
    builder.tamper_next("record.compactedEntryIds", lambda ids: ids[1:])
    builder.start_compaction(keep_last=1)
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["code"] == "INVALID_REFERENCE"
    finding = next(finding for finding in outcome.findings if finding.severity == "error")
    assert finding.location.pointer == "/record/compactedEntryIds/0"


def test_a_partition_with_an_invalid_id_fails_on_the_id_first() -> None:
    builder = SessionBuilder(seed=14)
    builder.exchange("One?", "Two.")
    builder.tamper_next("record.retainedEntryIds", lambda ids: [*ids, "nope"])
    builder.start_compaction(keep_last=1)
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["code"] == "INVALID_FACT"
    finding = next(finding for finding in outcome.findings if finding.severity == "error")
    assert (finding.rule, finding.location.pointer) == ("SA214", "/record/retainedEntryIds/1")
