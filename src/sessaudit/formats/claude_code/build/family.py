"""What a family of transcripts (a session, its sub-agents, the sessions resumed from it) has written so far.

Builders of one family share a `Family`: one seeded source of ids and time, the files in creation order,
and the records the manifest is made from (responses, tool calls, summaries, synthetic lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sessaudit.formats.claude_code.build.ids import Ids
from sessaudit.formats.claude_code.build.parts import Call, JsonObject, Layout, Outcome, Streaming, Usage

FileKind = Literal["session", "subagent"]


@dataclass(slots=True)
class LineRecord:
    """One line of a file: its JSON, its `uuid` (None for summaries and snapshots), and what it copies."""

    data: JsonObject
    uuid: str | None
    copy_of: tuple[str, int] | None = None


@dataclass(slots=True)
class FileState:
    """One transcript file; `key` is its path below `<root>/projects`, in POSIX form.

    `torn_at` (set by a torn crash) is how many bytes of the last line reach the disk; `sidecar` is the
    nested layout's `agent-<id>.meta.json` (its key and JSON).
    """

    key: str
    session_id: str
    agent_id: str | None
    kind: FileKind
    layout: Layout | None
    lines: list[LineRecord] = field(default_factory=list)
    torn_at: int | None = None
    sidecar: tuple[str, JsonObject] | None = None


@dataclass(slots=True)
class ResponseRecord:
    """One API response as the builder made it, and the indices of its lines in `file`."""

    message_id: str
    request_id: str | None
    session_id: str
    agent_id: str | None
    model: str
    usage: Usage
    streaming: Streaming
    file: str
    lines: list[int]


@dataclass(slots=True)
class CallRecord:
    """One tool call and, once written, where its result stands and what it says."""

    call: Call
    session_id: str
    agent_id: str | None
    result: tuple[str, int, Outcome] | None = None


@dataclass(slots=True)
class Family:
    """The shared state of the builders of one scenario."""

    root: Path
    ids: Ids
    files: dict[str, FileState] = field(default_factory=dict)
    responses: list[ResponseRecord] = field(default_factory=list)
    calls: dict[str, CallRecord] = field(default_factory=dict)
    summaries: list[tuple[str, int, str]] = field(default_factory=list)
    synthetic: list[tuple[str, int, str]] = field(default_factory=list)
    crashed: bool = False
    finished: bool = False

    def add_file(self, state: FileState) -> FileState:
        if state.key in self.files:
            raise ValueError(f"two transcripts at {state.key}")
        self.files[state.key] = state
        return state


def complete_lines(state: FileState) -> list[LineRecord]:
    """The lines of `state` that reach the disk whole (all but a torn last line)."""
    return state.lines[:-1] if state.torn_at is not None else list(state.lines)
