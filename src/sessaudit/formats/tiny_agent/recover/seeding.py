"""tiny-agent seeds: the active context at the fork point, the fork point itself, and the next facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO

from sessaudit.formats.tiny_agent.check.state import Operation
from sessaudit.framing import LineReader
from sessaudit.limits import REREAD_LINE_BYTES
from sessaudit.strictjson import LineProblem, decode_line

ASSIGN_UUID7: dict[str, str] = {"$assign": "uuid7"}
ASSIGN_TIMESTAMP: dict[str, str] = {"$assign": "timestamp"}
ASSIGN_SNAPSHOT: dict[str, str] = {"$assign": "configurationSnapshot"}
ASSIGN_DIGEST: dict[str, str] = {"$assign": "configurationDigest"}
ASSIGN_TOOL_OUTPUT: dict[str, str] = {"$assign": "toolOutput"}
ASSIGN_TOOL_RESULT: dict[str, str] = {"$assign": "toolResultType"}
COMPACTED_PREFIX = "[Compacted history]\n"


@dataclass(slots=True)
class ForkState:
    """What a second pass over the committed prefix learns: the fork point and the context there."""

    seq: int | None = None
    line: int | None = None
    byte_offset: int | None = None
    fact_id: str | None = None
    messages: list[Any] = field(default_factory=list)

    def fork_point(self) -> dict[str, Any]:
        return {"seq": self.seq, "line": self.line, "byte_offset": self.byte_offset, "fact_id": self.fact_id}


def fork_state(
    stream: BinaryIO, committed: int, *, through_seq: int, finished_run: str | None = None
) -> ForkState:
    """Re-read the committed, verified prefix up to fact `through_seq` (inclusive).

    The model-visible context is rebuilt as tiny-agent's reducer defines it: message entries append
    their message; a compaction entry replaces everything with its summary and retained tail. With
    `finished_run`, the pass also stops at that run's `operationFinished` if it comes first (the fork
    point of a finished run with an unknown effect)."""
    state = ForkState()
    stream.seek(0)
    for line in LineReader(stream, committed, report_progress=False, max_line_bytes=REREAD_LINE_BYTES):
        if line.number == 1:
            continue
        try:
            value = decode_line(line.data)
        except LineProblem:  # only verified lines are re-read, so this cannot happen in the prefix
            break
        facts = value if isinstance(value, list) else [value]
        for fact in facts:
            if not isinstance(fact, dict) or not isinstance(fact.get("seq"), int | float):
                return state
            seq = int(fact["seq"])
            if seq > through_seq:
                return state
            state.seq, state.line, state.byte_offset = seq, line.number, line.offset
            state.fact_id = fact.get("id") if isinstance(fact.get("id"), str) else None
            _follow_context(state.messages, fact)
            record = fact.get("record")
            if (
                finished_run is not None
                and isinstance(record, dict)
                and record.get("type") == "operationFinished"
                and record.get("operationId") == finished_run
            ):
                return state
    return state


def _follow_context(messages: list[Any], fact: dict[str, Any]) -> None:
    entry = fact.get("entry")
    if fact.get("kind") != "entry" or not isinstance(entry, dict):
        return
    if entry.get("type") == "message":
        messages.append(entry.get("message"))
    elif entry.get("type") == "compaction":
        retained = [item.get("message") for item in entry.get("retainedTail") or [] if isinstance(item, dict)]
        messages[:] = [
            {"role": "user", "content": COMPACTED_PREFIX + str(entry.get("summary", ""))},
            *retained,
        ]


@dataclass(frozen=True, slots=True)
class Continuation:
    """What recovery in place would do next: the facts it appends and the seed's `replay` object."""

    next_facts: list[dict[str, Any]]
    replay: dict[str, Any] | None


def continuation(
    plan: dict[str, Any] | None,
    operation: Operation,
    *,
    next_seq: int,
    environment: str,
    current_digest: str | None,
    current_snapshot: dict[str, Any] | None,
    current_replay: tuple[str | None, str | None],
) -> Continuation:
    """Materialise a native plan into the facts tiny-agent would append (spec §13.3).

    Values nobody can know yet are `$assign` placeholders (CONTRACT §5)."""
    if plan is None:
        return Continuation([], None)
    kind = plan["type"]
    facts: list[dict[str, Any]] = []

    def fact(kind_name: str, body_key: str, body: dict[str, Any], fact_id: Any = None) -> None:
        facts.append(
            {
                "kind": kind_name,
                "seq": next_seq + len(facts),
                "id": fact_id if fact_id is not None else ASSIGN_UUID7,
                "timestamp": ASSIGN_TIMESTAMP,
                body_key: body,
            }
        )

    if kind == "appendSynthetic":
        for result in plan["results"]:
            fact("entry", "entry", _synthetic_entry(result, operation), result.get("resultEntryId"))
        return Continuation(facts, {"kind": "append"})
    if kind == "closeAttempt":
        step = operation.step
        fact(
            "record",
            "record",
            {
                "type": "stepFailed",
                "operationId": operation.operation_id,
                "stepId": step.step if step else None,
                "attemptId": step.attempt_id if step else None,
                "error": plan["error"],
            },
        )
        return Continuation(facts, {"kind": "append"})
    if kind == "finish":
        record: dict[str, Any] = {
            "type": "operationFinished",
            "operationId": operation.operation_id,
            "operationKind": operation.kind,
            "outcome": plan["outcome"],
        }
        for key in ("completion", "finalEntryId", "error"):
            if key in plan:
                record[key] = plan[key]
        fact("record", "record", record)
        return Continuation(facts, {"kind": "append"})
    if kind == "startStep":
        step_id = plan.get("stepId") or ASSIGN_UUID7
        fact(
            "record",
            "record",
            {
                "type": "stepAttempt",
                "operationId": operation.operation_id,
                "stepId": step_id,
                "attemptId": ASSIGN_UUID7,
                "stepKind": plan["stepKind"],
                "attempt": plan["attempt"],
                "contextThroughEntryId": plan["contextThroughEntryId"],
                "configurationSnapshot": current_snapshot
                if current_snapshot is not None
                else ASSIGN_SNAPSHOT,
                "configurationDigest": current_digest if current_digest is not None else ASSIGN_DIGEST,
            },
        )
        replay = {
            "kind": "model_request",
            "step_id": step_id,
            "attempt": plan["attempt"],
            "context_through_entry_id": plan["contextThroughEntryId"],
        }
        return Continuation(facts, replay)
    if kind == "startTool":
        return _start_tool(plan, operation, fact, facts, environment, current_replay)
    return Continuation([], None)  # blocked: nothing is appended until the configuration is restored


def _synthetic_entry(result: dict[str, Any], operation: Operation) -> dict[str, Any]:
    message = {"role": "tool", "content": result["content"], "tool_call_id": result["toolCallId"]}
    outcome = {"type": "synthetic", "reason": result["reason"]}
    if "toolStartedId" in result:
        intent = next(
            (item for item in operation.intents if item.started_id == result["toolStartedId"]), None
        )
        return {
            "type": "message",
            "stepId": intent.step if intent else None,
            "message": message,
            "toolName": result["toolName"],
            "toolStartedId": result["toolStartedId"],
            "result": outcome,
        }
    answer = operation.answers.get(result["assistantEntryId"])
    return {
        "type": "message",
        "stepId": answer.step if answer else None,
        "assistantEntryId": result["assistantEntryId"],
        "toolIndex": result["toolIndex"],
        "message": message,
        "toolName": result["toolName"],
        "result": outcome,
    }


def _start_tool(
    plan: dict[str, Any],
    operation: Operation,
    fact: Any,
    facts: list[dict[str, Any]],
    environment: str,
    current_replay: tuple[str | None, str | None],
) -> Continuation:
    answer = operation.answers.get(plan["assistantEntryId"])
    index = plan["toolIndex"]
    call_id = answer.calls[index][0] if answer and index < len(answer.calls) else None
    if plan["mode"] == "replay":
        intent = next(
            (item for item in operation.intents if item.started_id == plan.get("toolStartedId")), None
        )
        message = {"role": "tool", "content": ASSIGN_TOOL_OUTPUT, "tool_call_id": call_id}
        fact(
            "entry",
            "entry",
            {
                "type": "message",
                "stepId": intent.step if intent else None,
                "message": message,
                "toolName": plan["toolName"],
                "toolStartedId": plan.get("toolStartedId"),
                "result": ASSIGN_TOOL_RESULT,
            },
            intent.result_slot if intent else None,
        )
        replay = {
            "kind": "tool",
            "mode": "replay",
            "tool_name": plan["toolName"],
            "arguments": plan["arguments"],
            "intent_id": plan.get("toolStartedId"),
            "result_slot": intent.result_slot if intent else None,
            "replay_key": intent.replay_key if intent else None,
        }
        return Continuation(facts, replay)
    policy, key = current_replay
    fact(
        "record",
        "record",
        {
            "type": "toolStarted",
            "operationId": operation.operation_id,
            "stepId": answer.step if answer else None,
            "assistantEntryId": plan["assistantEntryId"],
            "toolIndex": index,
            "toolCallId": call_id,
            "toolName": plan["toolName"],
            "arguments": plan["arguments"],
            "replay": policy,
            "replayKey": key,
            "environmentIdentity": environment,
            "resultEntryId": ASSIGN_UUID7,
        },
    )
    replay = {
        "kind": "tool",
        "mode": "start",
        "tool_name": plan["toolName"],
        "arguments": plan["arguments"],
        "intent_id": None,
        "result_slot": None,
        "replay_key": key,
    }
    return Continuation(facts, replay)
