"""The builder's small parts: crash points, token counts, tool calls and the manifest's running usage."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

JsonObject = dict[str, Any]


class CrashMode(StrEnum):
    AFTER_APPEND = "after-append"  # killed once the event is durable (and its follow-up save done)
    BEFORE_APPEND = "before-append"  # manifest saved, event lost: the manifest is one ahead
    TORN = "torn"  # manifest saved, only the first bytes of the event line written
    NO_NEWLINE = "no-newline"  # the whole event line but its LF (not a Rivumi window; a mutation)


@dataclass(frozen=True, slots=True)
class Crash:
    """Where the writer dies: the `occurrence`-th event of `event_type`, or the event with `sequence`."""

    event_type: str | None = None
    sequence: int | None = None
    occurrence: int = 1
    mode: CrashMode = CrashMode.AFTER_APPEND
    torn_bytes: int | None = None  # TORN: bytes of the line kept (default: half)


class Killed(Exception):
    """The simulated writer process died at its crash point; the run directory stays as it was left."""


@dataclass(frozen=True, slots=True)
class TokenCounts:
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    provider_total_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        if self.provider_total_tokens is not None:
            return self.provider_total_tokens
        return self.input_tokens + self.output_tokens

    def as_event(self) -> JsonObject:
        """The usage object of a `model.completed` event: the five fields plus the computed total."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "provider_total_tokens": self.provider_total_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(slots=True)
class ToolCall:
    name: str
    arguments: JsonObject
    effect: str = "read"
    tool_call_id: str = ""


@dataclass(slots=True)
class UsageCounters:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0

    def add(self, counts: TokenCounts) -> None:
        self.input_tokens += counts.input_tokens
        self.output_tokens += counts.output_tokens
        self.cached_input_tokens += counts.cached_input_tokens
        self.reasoning_tokens += counts.reasoning_tokens
        self.total_tokens += counts.total_tokens

    def as_manifest(self) -> JsonObject:
        # the loop's running total puts the cumulative total into provider_total_tokens (spec §3.3)
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "provider_total_tokens": self.total_tokens,
        }


@dataclass(slots=True)
class BuiltEvent:
    """An event as the builder meant it, and whether (and how) it reached the file."""

    event: JsonObject
    line: bytes
    written: str = "whole"  # whole | none | torn | no-newline
