"""The session builder's values: handles to what it wrote, token usage, tool calls and the configuration."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from sessaudit.formats.tiny_agent.build.machinery import JsonObject, dump_json
from sessaudit.formats.tiny_agent.read.digests import sha256_digest

StopReason = Literal["stop", "toolUse", "length"]
Replay = Literal["safe", "never"]
OperationKind = Literal["run", "compaction"]
PreExecutionReason = Literal["invalidArguments", "unknownTool", "truncated", "aborted"]
Phase = Literal["model", "tool", "compact"]
Outcome = Literal["completed", "aborted", "failed"]
Completion = Literal["normal", "truncated"]

# Spec §8.5: exact, non-localised tool message contents of synthetic results.
SYNTHETIC_TEXTS: Final[dict[str, str]] = {
    "invalidArguments": "Error: Tool arguments were invalid; the tool was not executed.",
    "unknownTool": "Error: Unknown tool; the tool was not executed.",
    "truncated": (
        "Error: Tool call arguments were truncated by the model token limit; the tool was not executed."
    ),
    "aborted": "Operation aborted before execution.",
    "interrupted": "Operation interrupted after execution status became unknown; the tool was not replayed.",
}

ABORTED_ERROR: Final = ("aborted", "Operation aborted")
PLANNER_FAILURE: Final = ("model_error", "provider request failed")

# Tool declarations the builder digests into `definitionDigest` (the design's canonical
# {name, description, parameters}); tools outside this table get a generic definition.
TOOL_DEFINITIONS: Final[dict[str, tuple[str, Replay, JsonObject]]] = {
    "read": ("Read a file from the workspace.", "safe", {"path": {"type": "string"}}),
    "grep": ("Search files for a pattern.", "safe", {"pattern": {"type": "string"}}),
    "edit": ("Replace text in a file.", "never", {"path": {"type": "string"}, "old": {"type": "string"}}),
    "write": ("Write a file.", "never", {"path": {"type": "string"}, "content": {"type": "string"}}),
    "bash": ("Run a shell command in the workspace.", "never", {"command": {"type": "string"}}),
}


def default_replay(tool_name: str) -> Replay:
    """The replay policy a built-in tool declares: reads are safe to repeat, everything else never."""
    definition = TOOL_DEFINITIONS.get(tool_name)
    return definition[1] if definition else "never"


def tool_definition(tool_name: str) -> JsonObject:
    description, _, properties = TOOL_DEFINITIONS.get(tool_name, (f"The {tool_name} tool.", "never", {}))
    return {
        "name": tool_name,
        "description": description,
        "parameters": {"type": "object", "properties": properties},
    }


def estimate_tokens(text: str) -> int:
    """A rough token count (four characters a token), enough for plausible usage numbers."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """One usage fact's counters; `input` excludes cached input, as tiny-agent records it (spec §10)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def as_json(self) -> JsonObject:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
        }


AUTO: Final = "auto"
UsageChoice = TokenUsage | Literal["auto"] | None


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call to put in an assistant message: parsed arguments, or the provider's raw text verbatim."""

    name: str
    arguments: Mapping[str, Any] | None = None
    raw_arguments: str | None = None
    call_id: str | None = None

    def arguments_text(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return dump_json(dict(self.arguments or {}))


@dataclass(frozen=True, slots=True)
class PlacedCall:
    """A call as written in an assistant message, at its index."""

    index: int
    call_id: str
    name: str
    arguments_text: str

    def parsed_arguments(self) -> JsonObject | None:
        """The arguments as a JSON object, or None when the provider's text is not one."""
        try:
            value = json.loads(self.arguments_text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class Operation:
    """A run or a compaction the builder opened; `input_entry_id` is the run's user entry or the
    compaction's `inputThroughEntryId`."""

    operation_id: str
    kind: OperationKind
    input_entry_id: str
    result_entry_id: str | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """One `stepAttempt`: a physical model request of an operation."""

    operation: Operation
    step_id: str
    attempt_id: str
    attempt: int
    context_through_entry_id: str
    configuration_digest: str
    configuration: Configuration


@dataclass(frozen=True, slots=True)
class Answer:
    """An assistant message entry and the calls it carries."""

    entry_id: str
    step: Step
    stop_reason: StopReason
    calls: tuple[PlacedCall, ...]
    content: str | None


@dataclass(frozen=True, slots=True)
class ToolIntent:
    """A `toolStarted` record: its fact id (the `toolStartedId`) and the provisioned result slot."""

    fact_id: str
    result_entry_id: str
    answer: Answer
    call: PlacedCall
    replay: Replay
    step_id: str


@dataclass(frozen=True, slots=True)
class Configuration:
    """What a `stepAttempt` snapshots: model, prompt and tool digests, adapter and routing (spec §9.3)."""

    model: str = "deepseek/deepseek-v4-flash-0731"
    tools: tuple[str, ...] = ("read", "grep", "edit", "bash")
    system_prompt: str = "You are tiny-agent, a careful coding assistant working in the user's repository."
    adapter_identity: str = "openrouter:chat-completions:v1"
    output_options: JsonObject = field(default_factory=lambda: {"maxTokens": 8192, "temperature": 0})

    def snapshot(self) -> JsonObject:
        return {
            "model": self.model,
            "systemPromptDigest": sha256_digest(self.system_prompt),
            "tools": [
                {"name": name, "definitionDigest": sha256_digest(tool_definition(name))}
                for name in self.tools
            ],
            "adapterIdentity": self.adapter_identity,
            "routingIdentity": f"openrouter:{self.model}",
            "outputOptionsDigest": sha256_digest(self.output_options),
        }


def place_calls(calls: Sequence[Call], make_call_id: Callable[[int], str]) -> tuple[PlacedCall, ...]:
    """Give each call its index and a provider call id (the caller's, or a generated one)."""
    return tuple(
        PlacedCall(index, call.call_id or make_call_id(index), call.name, call.arguments_text())
        for index, call in enumerate(calls)
    )
