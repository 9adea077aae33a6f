"""A deterministic tiny-agent v2 session builder: files as its SessionStore writes them, or damaged."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from sessaudit.formats.tiny_agent.build.machinery import (
    DELETE,
    JsonObject,
    KeyOrder,
    choose_delay,
    dump_json,
    session_file_name,
)
from sessaudit.formats.tiny_agent.build.parts import (
    AUTO,
    SYNTHETIC_TEXTS,
    Answer,
    Call,
    Configuration,
    Operation,
    PlacedCall,
    PreExecutionReason,
    Replay,
    Step,
    TokenUsage,
    ToolIntent,
    UsageChoice,
    default_replay,
    estimate_tokens,
)
from sessaudit.formats.tiny_agent.build.runs import RunWriter
from sessaudit.formats.tiny_agent.build.writer import DEFAULT_CREATED_AT

__all__ = [
    "DEFAULT_CREATED_AT",
    "DELETE",
    "SYNTHETIC_TEXTS",
    "Answer",
    "Call",
    "Configuration",
    "KeyOrder",
    "Operation",
    "PlacedCall",
    "SessionBuilder",
    "Step",
    "TokenUsage",
    "ToolIntent",
    "session_file",
]


class SessionBuilder(RunWriter):
    """Writes one tiny-agent v2 session, line by line, into a stream (or memory), from a seeded clock.

    Every method appends one transaction (the atomic groups of spec §5 become arrays) and returns a
    handle for later references. Use `transaction()` to group facts yourself, and the `*_next` methods,
    `skip_seq`, `raw` and `torn_tail` for deliberate damage. For example:

        builder = SessionBuilder(seed=7)
        run = builder.start_run("Why does the cart test fail?")
        answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "npm test"})])
        intent = builder.start_tool(answer, 0)  # bash: replay "never"
        builder.tool_result(intent, "1 failing", outcome="error")
        builder.assistant(builder.step(run), "total() ignores qty.")
        builder.finish(run)
        builder.compact("The cart total ignores quantities.")
        data = builder.data()
    """

    # --- tools ----------------------------------------------------------------------------
    def start_tool(
        self,
        answer: Answer,
        index: int,
        *,
        replay: Replay | None = None,
        arguments: Mapping[str, Any] | None = None,
        replay_key: str | None = None,
        environment_identity: str | None = None,
    ) -> ToolIntent:
        """`toolStarted`: the durable intent, with a fresh provisioned `resultEntryId`."""
        self._tick()
        call = answer.calls[index]
        effective = dict(arguments) if arguments is not None else call.parsed_arguments()
        if effective is None:
            raise ValueError(f"call {index} has no JSON-object arguments; pass arguments= explicitly")
        intent = ToolIntent(
            fact_id=self._ids.uuid7(),
            result_entry_id=self._ids.uuid7(),
            answer=answer,
            call=call,
            replay=replay or default_replay(call.name),
            step_id=answer.step.step_id,
        )
        record = {
            "type": "toolStarted",
            "operationId": answer.step.operation.operation_id,
            "stepId": intent.step_id,
            "assistantEntryId": answer.entry_id,
            "toolIndex": index,
            "toolCallId": call.call_id,
            "toolName": call.name,
            "arguments": effective,
            "replay": intent.replay,
            "replayKey": replay_key or f"builtin:{call.name}:v1",
            "environmentIdentity": environment_identity or self.environment_identity,
            "resultEntryId": intent.result_entry_id,
        }
        self._emit("record", {"record": record}, intent.fact_id)
        return intent

    def _started_result(self, intent: ToolIntent, content: str, result: JsonObject) -> None:
        message: JsonObject = {"role": "tool", "tool_call_id": intent.call.call_id, "content": content}
        entry = {
            "type": "message",
            "stepId": intent.step_id,
            "message": message,
            "toolName": intent.call.name,
            "toolStartedId": intent.fact_id,
            "result": result,
        }
        self._emit("entry", {"entry": entry}, intent.result_entry_id)
        self._remember_message(intent.result_entry_id, message)

    def tool_result(
        self,
        intent: ToolIntent,
        content: str,
        *,
        outcome: Literal["success", "error"] = "success",
        usage: TokenUsage | None = None,
        duration_ms: int | None = None,
    ) -> str:
        """The executed tool's result at its provisioned id (`success` or `error`), plus tool usage."""
        self._clock.advance(
            duration_ms if duration_ms is not None else choose_delay(self._generator, 5, 1500)
        )
        with self.transaction():
            self._started_result(intent, content, {"type": outcome})
            if usage is not None:
                self._usage(intent.answer.step.operation, "toolStartedId", intent.fact_id, usage)
        return intent.result_entry_id

    def interrupted(self, intent: ToolIntent) -> str:
        """The `interrupted` synthetic result recovery writes for a started tool of unknown outcome."""
        self._tick()
        self._started_result(
            intent, SYNTHETIC_TEXTS["interrupted"], {"type": "synthetic", "reason": "interrupted"}
        )
        return intent.result_entry_id

    def pre_execution(self, answer: Answer, index: int, reason: PreExecutionReason) -> str:
        """A pre-execution synthetic result (no `toolStarted`): fresh id, fixed text (spec §8.4)."""
        self._tick()
        call = answer.calls[index]
        message: JsonObject = {
            "role": "tool",
            "tool_call_id": call.call_id,
            "content": SYNTHETIC_TEXTS[reason],
        }
        entry = {
            "type": "message",
            "stepId": answer.step.step_id,
            "assistantEntryId": answer.entry_id,
            "toolIndex": index,
            "message": message,
            "toolName": call.name,
            "result": {"type": "synthetic", "reason": reason},
        }
        entry_id = self._ids.uuid7()
        self._emit("entry", {"entry": entry}, entry_id)
        self._remember_message(entry_id, message)
        return entry_id

    # --- compaction -------------------------------------------------------------------------
    def start_compaction(self, *, keep_last: int = 1) -> Operation:
        """`compactionStarted` over every message entry so far: all but the last `keep_last` compacted."""
        self._tick()
        if not 0 <= keep_last < len(self._message_ids):
            raise ValueError(
                f"keep_last must leave at least one of {len(self._message_ids)} messages to compact"
            )
        split = len(self._message_ids) - keep_last
        compacted, retained = self._message_ids[:split], tuple(self._message_ids[split:])
        if self._standalone(retained) is False:
            raise ValueError(
                f"the last {keep_last} message(s) are no legal transcript on their own (spec §8.6 step 8: "
                "a tool result's assistant would be compacted away); choose keep_last with retainable()"
            )
        operation = Operation(self._ids.uuid7(), "compaction", self._message_ids[-1], self._ids.uuid7())
        digest = self._source_hash.copy()
        digest.update(b"]")
        record = {
            "type": "compactionStarted",
            "operationId": operation.operation_id,
            "operationKind": "compaction",
            "inputThroughEntryId": operation.input_entry_id,
            "resultEntryId": operation.result_entry_id,
            "compactedEntryIds": compacted,
            "retainedEntryIds": list(retained),
            "sourceDigest": "sha256:" + digest.hexdigest(),
        }
        self._emit("record", {"record": record}, self._ids.uuid7())
        self._partitions[operation.operation_id] = (compacted[-1], retained)
        return operation

    def _standalone(self, entry_ids: tuple[str, ...] | list[str]) -> bool | None:
        """Whether these remembered messages are a legal transcript on their own (spec §12.3): no tool
        result without its call before it, no message while calls are pending. None: one was forgotten."""
        if any(entry_id not in self._messages for entry_id in entry_ids):
            return None
        pending: set[object] = set()
        for entry_id in entry_ids:
            message = self._messages[entry_id]
            if message["role"] == "tool":
                if message["tool_call_id"] not in pending:
                    return False
                pending.discard(message["tool_call_id"])
                continue
            if pending:
                return False
            calls = message.get("tool_calls") or []
            assert isinstance(calls, list)
            pending.update(call["id"] for call in calls)
        return True

    def retainable(self, at_most: int = 1) -> int:
        """The longest tail of at most `at_most` messages a compaction may retain: a legal transcript on
        its own (spec §8.6 step 8), so never one starting with a tool result (0 when none is)."""
        count = min(at_most, len(self._message_ids) - 1)
        while count > 0 and self._standalone(self._message_ids[len(self._message_ids) - count :]) is not True:
            count -= 1
        return max(count, 0)

    def compaction_entry(
        self, step: Step, summary: str, *, usage: UsageChoice = AUTO, latency_ms: int | None = None
    ) -> str:
        """The compaction entry at the provisioned id, retaining the declared tail, plus its usage."""
        self._clock.advance(
            latency_ms if latency_ms is not None else choose_delay(self._generator, 800, 4000)
        )
        operation = step.operation
        if operation.result_entry_id is None or operation.operation_id not in self._partitions:
            raise ValueError("compaction_entry needs an open compaction started by this builder")
        compacted_through, retained = self._partitions[operation.operation_id]
        missing = [entry_id for entry_id in retained if entry_id not in self._messages]
        if missing:
            raise ValueError(f"retained messages forgotten (raise message_memory): {missing}")
        entry = {
            "type": "compaction",
            "operationId": operation.operation_id,
            "summary": summary,
            "compactedThroughEntryId": compacted_through,
            "retainedTail": [
                {"sourceEntryId": entry_id, "message": self._messages[entry_id]} for entry_id in retained
            ],
        }
        tokens = self._model_usage(usage, summary)
        with self.transaction():
            self._emit("entry", {"entry": entry}, operation.result_entry_id)
            if tokens is not None:
                self._usage(operation, "attemptId", step.attempt_id, tokens)
        self._context_tokens = estimate_tokens(summary) + sum(
            estimate_tokens(dump_json(self._messages[entry_id])) for entry_id in retained
        )
        return operation.result_entry_id

    def compact(self, summary: str, *, keep_last: int = 1) -> Operation:
        """A whole compaction operation: started, its one step, the entry + usage, finished."""
        operation = self.start_compaction(keep_last=keep_last)
        self.compaction_entry(self.step(operation), summary)
        self.finish(operation)
        return operation

    def exchange(self, question: str, reply: str) -> Operation:
        """A whole tool-less run: user + runStarted, one step, the final answer, completed/normal."""
        operation = self.start_run(question)
        self.assistant(self.step(operation), reply)
        self.finish(operation)
        return operation


@contextmanager
def session_file(directory: Path, **options: Any) -> Iterator[SessionBuilder]:
    """Stream a new session into `<directory>/<stamp>_<id>.jsonl` (created exclusively, mode 0600)."""
    seed = options.get("seed", 0)
    created_at = options.get("created_at", DEFAULT_CREATED_AT)
    path = directory / session_file_name(created_at, SessionBuilder.session_id_for(seed, created_at))
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        yield SessionBuilder(sink=stream, **options)
