"""A deterministic builder of legacy v1 tiny-agent sessions, as the `tiny-ts` CLI writes them (§15.1)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO, Final, Literal

from sessaudit.formats.tiny_agent.build.machinery import (
    IdFactory,
    JsonObject,
    LineSink,
    SimulatedClock,
    choose_delay,
    dump_json,
    iso_instant,
    session_file_name,
)
from sessaudit.formats.tiny_agent.build.parts import (
    SYNTHETIC_TEXTS,
    Call,
    PlacedCall,
    TokenUsage,
    place_calls,
)

# v1 texts differ from v2's: no final period on the aborted ones (spec §15).
LEGACY_ABORTED: Final = "Operation aborted"
LEGACY_ABORTED_BEFORE_EXECUTION: Final = "Operation aborted before execution"
LEGACY_TRUNCATED: Final = SYNTHETIC_TEXTS["truncated"]


class LegacySessionBuilder:
    """Writes a v1 session: one JSON object a line, each stamped with an ISO `timestamp`, no seq or ids.

    Methods follow the CLI's `Agent`: a user message starts a turn, each model answer carries its usage,
    each tool result is written after the tool ran, an abort writes an `interruption`."""

    def __init__(
        self,
        *,
        seed: int = 0,
        created_at: int = 1795983907234,
        cwd: str = "/home/dev/legacy",
        model: str = "deepseek/deepseek-v4-flash-0731",
        sink: BinaryIO | None = None,
    ) -> None:
        self._generator = random.Random(seed)
        self._clock = SimulatedClock(created_at)
        self._ids = IdFactory(self._generator, self._clock)
        self._sink = LineSink(sink)
        self.created_at = created_at
        self.session_id = self._ids.uuid7(created_at)
        self._clock.advance(1)
        self._append(
            {
                "type": "session",
                "version": 1,
                "id": self.session_id,
                "createdAt": iso_instant(created_at),
                "cwd": cwd,
                "provider": "openrouter",
                "model": model,
            }
        )

    @property
    def file_name(self) -> str:
        return session_file_name(self.created_at, self.session_id)

    def data(self) -> bytes:
        return self._sink.data()

    def wait(self, milliseconds: int) -> None:
        self._clock.advance(milliseconds)

    def _append(self, record: JsonObject) -> None:
        # `JSON.stringify({...record, timestamp})` drops undefined values, so callers omit such keys.
        self._sink.write(
            dump_json({**record, "timestamp": iso_instant(self._clock.now())}).encode("utf-8") + b"\n"
        )

    def user(self, text: str) -> None:
        self._clock.advance(choose_delay(self._generator, 1, 4))
        self._append({"type": "message", "message": {"role": "user", "content": text}})

    def assistant(
        self,
        content: str | None,
        *,
        calls: Sequence[Call] = (),
        usage: TokenUsage | None = None,
        extra: Mapping[str, Any] | None = None,
        latency_ms: int | None = None,
    ) -> tuple[PlacedCall, ...]:
        """A model answer as received (`extra` adds provider keys such as `refusal`), with its usage."""
        self._clock.advance(
            latency_ms if latency_ms is not None else choose_delay(self._generator, 400, 2500)
        )
        placed = place_calls(calls, self._ids.call_id)
        message: JsonObject = {"role": "assistant", "content": content, **dict(extra or {})}
        if placed:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text},
                }
                for call in placed
            ]
        counters = usage or TokenUsage(input=900, output=max(1, len(dump_json(message)) // 4))
        self._append({"type": "message", "message": message, "usage": counters.as_json()})
        return placed

    def tool_result(self, call: PlacedCall, content: str, *, duration_ms: int | None = None) -> None:
        """A tool result, written after the tool ran (there is no intent record in v1)."""
        self._clock.advance(
            duration_ms if duration_ms is not None else choose_delay(self._generator, 5, 1500)
        )
        message = {"role": "tool", "tool_call_id": call.call_id, "content": content}
        self._append({"type": "message", "message": message, "toolName": call.name})

    def interruption(
        self, phase: Literal["model", "tool", "compact"], tool_call_id: str | None = None
    ) -> None:
        """A user abort (escape); `toolCallId` only for phase `tool`."""
        self._clock.advance(choose_delay(self._generator, 1, 4))
        record: JsonObject = {"type": "interruption", "phase": phase}
        if tool_call_id is not None:
            record["toolCallId"] = tool_call_id
        record["reason"] = "escape"
        self._append(record)

    def abort_tools(self, calls: Sequence[PlacedCall], running: int) -> None:
        """An abort while call `running` ran: `Operation aborted`, the later calls' text, the interruption."""
        self.tool_result(calls[running], LEGACY_ABORTED)
        for call in calls[running + 1 :]:
            self.tool_result(call, LEGACY_ABORTED_BEFORE_EXECUTION, duration_ms=0)
        self.interruption("tool", calls[running].call_id)

    def compaction(self, summary: str, *, compacted: int, kept: int, usage: TokenUsage | None = None) -> None:
        """`/compact`: all but the last `kept` messages replaced by the summary, counted, with its usage."""
        self._clock.advance(choose_delay(self._generator, 800, 4000))
        counters = usage or TokenUsage(input=1200, output=max(1, len(summary) // 4))
        self._append(
            {
                "type": "compaction",
                "summary": summary,
                "compactedMessages": compacted,
                "keptMessages": kept,
                "usage": counters.as_json(),
            }
        )

    def raw(self, data: bytes) -> None:
        """Append bytes exactly as given (a v1 file can hold anything its writer produced)."""
        self._sink.write(data)
