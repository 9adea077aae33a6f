"""The model-visible context at a fork point (spec §7, §8 step 3) and the calls it leaves unanswered.

From the fork point's record, `parentUuid` is walked back to a root (`parentUuid` null), to a
`compact_boundary` (history before it is not loaded on resume) or to a parent that is not in the file. The
records on that walk are joined by the other lines of their responses (the same `message.id`) and by the
tool results naming those responses' calls, as Claude Code's loader re-attaches parallel calls; only
records up to the fork point's line count. Parents are written before their children, so file order is
chain order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sessaudit.formats.claude_code.check.links import tool_results, tool_uses
from sessaudit.formats.claude_code.read.lines import Record


@dataclass(frozen=True, slots=True)
class Chain:
    records: list[Record]  # in chain (file) order, the fork point last
    boundary: Record | None = None  # the compact_boundary the walk stopped at
    foreign_parent: str | None = None  # the parentUuid, not in this file, where the walk stopped


@dataclass(frozen=True, slots=True)
class Dangling:
    """One response's calls that have no result at the fork point."""

    holder: Record  # the last line of the response holding one of the calls
    calls: list[tuple[Record, Mapping[str, Any]]] = field(default_factory=list)  # (line, tool_use block)


def is_boundary(record: Record) -> bool:
    return record.kind == "system" and record.value.get("subtype") == "compact_boundary"


def message_id(record: Record) -> str | None:
    message = record.value.get("message")
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str) else None


def chain_at(records: Sequence[Record], fork: Record) -> Chain:
    """The context at `fork` among the file's `records` (spec §8 step 3)."""
    by_uuid: dict[str, Record] = {}
    for record in records:
        if record.uuid is not None:
            by_uuid.setdefault(record.uuid, record)
    walked: list[Record] = []
    seen: set[int] = set()
    boundary: Record | None = None
    foreign: str | None = None
    current: Record | None = fork
    while current is not None and current.line not in seen:
        if is_boundary(current):
            boundary = current
            break
        seen.add(current.line)
        walked.append(current)
        parent = current.value.get("parentUuid")
        if not isinstance(parent, str):
            break
        current = by_uuid.get(parent)
        if current is None:
            foreign = parent
        elif current.line >= fork.line:  # a parent written after the fork point is no history of it
            break
    floor = boundary.line if boundary is not None else 0
    window = [record for record in records if floor < record.line <= fork.line]
    responses = {found for found in map(message_id, walked) if found is not None}
    chosen = {record.line for record in walked}
    chosen |= {r.line for r in window if r.kind == "assistant" and message_id(r) in responses}
    calls = {block.get("id") for record in window if record.line in chosen for _, block in tool_uses(record)}
    chosen |= {
        record.line
        for record in window
        if any(block.get("tool_use_id") in calls for _, block in tool_results(record))
    }
    return Chain([record for record in window if record.line in chosen], boundary, foreign)


def dangling(chain: Chain) -> list[Dangling]:
    """The calls on the chain that no tool_result on it answers, one entry per response (by `message.id`,
    a line without one standing alone), in the order of the responses' last such line."""
    answered = {block.get("tool_use_id") for record in chain.records for _, block in tool_results(record)}
    groups: dict[str, list[tuple[Record, Mapping[str, Any]]]] = {}
    for record in chain.records:
        for _, block in tool_uses(record):
            call_id = block.get("id")
            if isinstance(call_id, str) and call_id not in answered:
                key = message_id(record) or f"line {record.line}"
                groups.setdefault(key, []).append((record, block))
    found = [Dangling(calls[-1][0], calls) for calls in groups.values()]
    return sorted(found, key=lambda item: item.holder.line)
