"""The session builder's run records: user entries, runs, steps, answers, failures, aborts and terminals."""

from __future__ import annotations

from collections.abc import Sequence

from sessaudit.formats.tiny_agent.build.machinery import JsonObject, choose_delay, dump_json
from sessaudit.formats.tiny_agent.build.parts import (
    AUTO,
    PLANNER_FAILURE,
    Answer,
    Call,
    Completion,
    Configuration,
    Operation,
    Outcome,
    Phase,
    Step,
    StopReason,
    UsageChoice,
    place_calls,
)
from sessaudit.formats.tiny_agent.build.writer import SessionWriter


class RunWriter(SessionWriter):
    """Writes the facts of runs: user input, model steps and their answers, aborts and terminal records."""

    # --- runs and steps ---------------------------------------------------------------------
    def user(self, text: str) -> str:
        """A user message entry on its own (a run may reference it later)."""
        self._tick()
        entry_id = self._ids.uuid7()
        message: JsonObject = {"role": "user", "content": text}
        self._emit("entry", {"entry": {"type": "message", "message": message}}, entry_id)
        self._remember_message(entry_id, message)
        return entry_id

    def start_run(self, text: str | None = None, *, input_entry_id: str | None = None) -> Operation:
        """The user entry + `runStarted` as one transaction; or only `runStarted` for an existing entry."""
        with self.transaction():
            if text is not None:
                input_entry_id = self.user(text)
            elif input_entry_id is None:
                raise ValueError("start_run needs the user's text or an existing input entry id")
            else:
                self._tick()
            operation = Operation(self._ids.uuid7(), "run", input_entry_id)
            record = {
                "type": "runStarted",
                "operationId": operation.operation_id,
                "operationKind": "run",
                "inputEntryId": input_entry_id,
            }
            self._emit("record", {"record": record}, self._ids.uuid7())
        return operation

    def step(
        self,
        operation: Operation,
        *,
        attempt: int = 1,
        step_id: str | None = None,
        context_through_entry_id: str | None = None,
        configuration: Configuration | None = None,
    ) -> Step:
        """A `stepAttempt`, by default attempt 1 of a new step at the current boundary; the step kind
        follows the operation's kind."""
        self._tick()
        context = context_through_entry_id or self._boundary
        if context is None:
            raise ValueError("no message entry yet: give context_through_entry_id")
        configuration = configuration or self.configuration
        snapshot, digest = self._snapshot(configuration)
        step = Step(
            operation=operation,
            step_id=step_id or self._ids.uuid7(),
            attempt_id=self._ids.uuid7(),
            attempt=attempt,
            context_through_entry_id=context,
            configuration_digest=digest,
            configuration=configuration,
        )
        record = {
            "type": "stepAttempt",
            "operationId": operation.operation_id,
            "stepId": step.step_id,
            "attemptId": step.attempt_id,
            "stepKind": "assistant" if operation.kind == "run" else "compaction",
            "attempt": attempt,
            "contextThroughEntryId": context,
            "configurationSnapshot": snapshot,
            "configurationDigest": step.configuration_digest,
        }
        self._emit("record", {"record": record}, self._ids.uuid7())
        return step

    def retry(self, step: Step, *, configuration: Configuration | None = None) -> Step:
        """Attempt 2 of `step`: same step id, context boundary and (by default) configuration, a new
        attempt id (spec §13.5)."""
        return self.step(
            step.operation,
            attempt=2,
            step_id=step.step_id,
            context_through_entry_id=step.context_through_entry_id,
            configuration=configuration or step.configuration,
        )

    def assistant(
        self,
        step: Step,
        content: str | None,
        *,
        calls: Sequence[Call] = (),
        stop_reason: StopReason | None = None,
        usage: UsageChoice = AUTO,
        latency_ms: int | None = None,
    ) -> Answer:
        """The assistant entry settling `step`, with its model usage in the same transaction."""
        self._clock.advance(
            latency_ms if latency_ms is not None else choose_delay(self._generator, 400, 2500)
        )
        placed = place_calls(calls, self._ids.call_id)
        message: JsonObject = {"role": "assistant", "content": content}
        if placed:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text},
                }
                for call in placed
            ]
        answer = Answer(
            self._ids.uuid7(), step, stop_reason or ("toolUse" if placed else "stop"), placed, content
        )
        entry = {
            "type": "message",
            "stepId": step.step_id,
            "attemptId": step.attempt_id,
            "stopReason": answer.stop_reason,
            "message": message,
        }
        tokens = self._model_usage(usage, dump_json(message))
        with self.transaction():
            self._emit("entry", {"entry": entry}, answer.entry_id)
            self._remember_message(answer.entry_id, message)
            if tokens is not None:
                self._usage(step.operation, "attemptId", step.attempt_id, tokens)
        self._answers[step.operation.operation_id] = answer
        return answer

    def step_failed(
        self, step: Step, code: str = "model_error", message: str = "OpenRouter 429: rate limited"
    ) -> str:
        """`stepFailed`: a provider error, or abort closure with ("aborted", "Operation aborted")."""
        self._tick()
        record = {
            "type": "stepFailed",
            "operationId": step.operation.operation_id,
            "stepId": step.step_id,
            "attemptId": step.attempt_id,
            "error": {"code": code, "message": message},
        }
        fact_id = self._ids.uuid7()
        self._emit("record", {"record": record}, fact_id)
        return fact_id

    def abort(self, operation: Operation, phase: Phase = "model", tool_call_id: str | None = None) -> str:
        """`abortRequested` (the user pressed escape); `tool_call_id` only for phase `tool`."""
        self._tick()
        record: JsonObject = {
            "type": "abortRequested",
            "operationId": operation.operation_id,
            "operationKind": operation.kind,
            "phase": phase,
        }
        if tool_call_id is not None:
            record["toolCallId"] = tool_call_id
        record["reason"] = "escape"
        fact_id = self._ids.uuid7()
        self._emit("record", {"record": record}, fact_id)
        return fact_id

    def finish(
        self,
        operation: Operation,
        outcome: Outcome = "completed",
        *,
        completion: Completion | None = None,
        final_entry_id: str | None = None,
        error: tuple[str, str] | None = None,
    ) -> str:
        """`operationFinished`; a completed run defaults to its latest answer (normal, or truncated for
        `length`), a completed compaction to its entry, a failed one to the planner's fixed error."""
        self._tick()
        record: JsonObject = {
            "type": "operationFinished",
            "operationId": operation.operation_id,
            "operationKind": operation.kind,
            "outcome": outcome,
        }
        latest = self._answers.pop(operation.operation_id, None)
        if outcome == "completed" and operation.kind == "run":
            record["completion"] = completion or (
                "truncated" if latest and latest.stop_reason == "length" else "normal"
            )
            if final_entry_id is None and latest is None:
                raise ValueError("a completed run needs an answer or final_entry_id")
            record["finalEntryId"] = final_entry_id or (latest.entry_id if latest else None)
        elif outcome == "completed":
            record["finalEntryId"] = final_entry_id or operation.result_entry_id
        elif outcome == "failed":
            code, message = error or PLANNER_FAILURE
            record["error"] = {"code": code, "message": message}
        fact_id = self._ids.uuid7()
        self._emit("record", {"record": record}, fact_id)
        self._partitions.pop(operation.operation_id, None)
        return fact_id
