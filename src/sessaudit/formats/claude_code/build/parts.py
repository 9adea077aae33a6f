"""The builder's values: token usage, content blocks, handles to calls and responses, the tool table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

JsonObject = dict[str, Any]
Streaming = Literal["growing", "identical"]
Layout = Literal["folder", "beside"]
Outcome = Literal["ok", "error", "interrupted", "unknown"]

INTERRUPT_MARKER: Final = "[Request interrupted by user for tool use]"

# Spec §10, "changes the world": True for tools whose effects outlive the session (MCP tools count as
# True, the spec's default); False for the read-only ones. Tools outside the table count as True.
CHANGES_WORLD: Final[dict[str, bool]] = {
    "Bash": True,
    "Write": True,
    "Edit": True,
    "MultiEdit": True,
    "NotebookEdit": True,
    "Read": False,
    "Glob": False,
    "Grep": False,
    "LS": False,
    "WebFetch": False,
    "WebSearch": False,
    "TodoWrite": False,
    "Task": True,
}


def changes_world(name: str) -> bool:
    """Spec §10's classification of a tool name (unknown and `mcp__…` names: True)."""
    return CHANGES_WORLD.get(name, True)


@dataclass(frozen=True, slots=True)
class Usage:
    """One API response's true final usage; the cache writes split by TTL (5 minutes / 1 hour)."""

    input_tokens: int
    output_tokens: int
    cache_5m: int = 0
    cache_1h: int = 0
    cache_read: int = 0

    @property
    def cache_creation(self) -> int:
        return self.cache_5m + self.cache_1h

    def as_manifest(self) -> JsonObject:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.cache_5m,
                "ephemeral_1h_input_tokens": self.cache_1h,
            },
            "cache_read_input_tokens": self.cache_read,
        }


@dataclass(frozen=True, slots=True)
class Text:
    """An assistant `text` block."""

    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    """An assistant `thinking` block (the builder signs it with a seeded signature)."""

    thinking: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """An assistant `tool_use` block; the builder gives it its `toolu_…` id."""

    name: str
    input: JsonObject


Block = Text | Thinking | ToolUse


@dataclass(frozen=True, slots=True)
class Call:
    """A written `tool_use`: its id, tool name, and where it stands (file key, line index, line uuid)."""

    id: str
    name: str
    input: JsonObject
    file: str
    line: int
    assistant_uuid: str


@dataclass(frozen=True, slots=True)
class Response:
    """One written API response: its ids, the uuids of its lines, and its tool calls in order."""

    message_id: str
    request_id: str | None
    uuids: tuple[str, ...]
    calls: tuple[Call, ...] = field(default=())

    @property
    def call(self) -> Call:
        """The response's only tool call (an error when it has none or several)."""
        (only,) = self.calls
        return only
