"""What a family of rollouts (a session, its forks and sub-agents) has written so far.

Builders of one family share a `Family`: one seeded source of ids and time, the files in creation order,
and the records the manifest is made from (responses, calls, turns). Line indices are 0-based here; the
manifest turns them into 1-based line numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from sessaudit.formats.codex.build.ids import Ids
from sessaudit.formats.codex.build.parts import CallKind, FileKind, JsonObject, Usage


@dataclass(slots=True)
class LineRecord:
    """One line: its JSON (`timestamp`, `type`, `payload`); for a copy, the (file key, index) it copies."""

    data: JsonObject
    copy_of: tuple[str, int] | None = None


@dataclass(slots=True)
class FileState:
    """One rollout file; `key` is its path relative to the root, in POSIX form.

    `torn_at` (set by a torn crash) is how many bytes of the last line reach the disk. `copied` is the
    index range [first, last] of the lines copied from `parent_key` (a fork or sub-agent); `repeats` the
    rate-limit-only token_counts, which repeat the current `info` (null before the first response).
    """

    key: str
    session_id: str
    kind: FileKind
    archived: bool
    offset: timedelta
    cli_version: str
    lines: list[LineRecord] = field(default_factory=list)
    torn_at: int | None = None
    killed: bool = False
    forked_from: str | None = None
    parent_key: str | None = None
    copied: tuple[int, int] | None = None
    task_events: bool = True
    turn_starts: list[int] = field(default_factory=list)
    repeats: list[int] = field(default_factory=list)


@dataclass(slots=True)
class ResponseRecord:
    """One model response (one API call): its true usage, its token_count lines, the items it produced.

    `copy_of` is the index (in `Family.responses`) of the parent response a copied one repeats.
    """

    index: int
    file: str
    usage: Usage
    token_count_lines: list[int]
    items: list[int]
    doubled: bool
    copy_of: int | None = None


@dataclass(slots=True)
class CallRecord:
    """One tool call as written in `file`; `answer` is the index of its output line there, if any."""

    call_id: str
    name: str
    kind: CallKind
    world_changing: bool
    file: str
    line: int
    answer: int | None = None
    exec_end: int | None = None
    copied: bool = False


@dataclass(slots=True)
class Family:
    """The shared state of the builders of one scenario."""

    root: Path
    ids: Ids
    files: dict[str, FileState] = field(default_factory=dict)
    responses: list[ResponseRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    finished: bool = False

    def add_file(self, state: FileState) -> FileState:
        if state.key in self.files:
            raise ValueError(f"two rollouts at {state.key}")
        self.files[state.key] = state
        return state

    def call(self, file: str, call_id: str) -> CallRecord:
        for record in self.calls:
            if record.file == file and record.call_id == call_id:
                return record
        raise KeyError(f"no call {call_id} in {file}")


def complete_count(state: FileState) -> int:
    """How many lines of `state` reach the disk whole (all but a torn last line)."""
    return len(state.lines) - (1 if state.torn_at is not None else 0)
