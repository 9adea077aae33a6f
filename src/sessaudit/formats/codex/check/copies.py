"""Which lines of a rollout are its own, and which were copied from a parent (spec §6).

A fork or a spawned sub-agent writes its own session_meta first, then its parent's lines as they were (the
parent's session_meta and every token_count among them, re-stamped with the time of copying), then its own
turns. The copy is exact when the parent's rollout is found in the same Codex home (read/layout.py
`Rollouts`): the longest run of lines after the own session_meta equal, in type and payload, to the
parent's lines from its first, and past a copied line that differs from the parent's (SA817) the copy goes on
to the last line of the copy-time burst that equals the parent's line at its place (so an edited line inside
the copy neither ends it nor turns the rest of it into the session's own lines). Otherwise the copy ends
where the burst of copy-time stamps ends: the first gap of more than BURST_GAP_MS between lines (spec §6,
inferred; SA816 says so). A session_meta with the file's own id after the first, or one after the session's
own lines began, is SA807."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from sessaudit.formats.codex.read.lines import Record, RolloutFile
from sessaudit.model import Finding
from sessaudit.rules import finding
from sessaudit.times import moment_from_text

BURST_GAP_MS: Final = 1000


@dataclass(slots=True)
class Copy:
    """Lines `start`..`end` (indexes into the file's records, inclusive) copied from `parent_id`'s rollout;
    `method` is "parent" (matched with the parent's file, `parent_path`) or "burst" (inferred)."""

    start: int
    end: int
    parent_id: str | None
    method: str
    parent_path: str | None = None


@dataclass(slots=True)
class Segments:
    """The rollout's own session_meta (index, or None when the file has none first) and its copy."""

    meta: int | None
    session_id: str | None
    copy: Copy | None = None
    findings: list[Finding] = field(default_factory=list)
    parent_reads: list[Any] = field(default_factory=list)  # FileRead of the parent rollout matched

    def copied(self, index: int) -> bool:
        return self.copy is not None and self.copy.start <= index <= self.copy.end

    def own(self, records: list[Record]) -> list[tuple[int, Record]]:
        """The records that are the session's own (neither the copy nor what precedes session_meta)."""
        first = 0 if self.meta is None else self.meta
        return [(i, r) for i, r in enumerate(records) if i >= first and not self.copied(i)]


def parent_named(meta: Mapping[str, Any]) -> str | None:
    """The parent a session_meta payload names: `forked_from_id`, or a spawned sub-agent's
    `source.subagent.thread_spawn.parent_thread_id`."""
    forked = meta.get("forked_from_id")
    if isinstance(forked, str) and forked:
        return forked
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return parent if isinstance(parent, str) and parent else None


def _ms(record: Record) -> float | None:
    stamp = record.timestamp
    moment = moment_from_text(stamp) if stamp is not None else None
    return moment.timestamp() * 1000 if moment is not None else None


def _same(one: Record, other: Record) -> bool:
    return one.value.get("type") == other.value.get("type") and one.value.get("payload") == other.value.get(
        "payload"
    )


ParentReader = Callable[[str, str], RolloutFile | None]


def segments_of(file: RolloutFile, find_parent: ParentReader | None = None) -> Segments:
    """The file's own session_meta and its copied segment; `find_parent(real_path, parent_id)` reads the
    parent's rollout (None when it is not found or cannot be read)."""
    records = file.records
    metas = [i for i, record in enumerate(records) if record.kind == "session_meta"]
    if not metas:
        return Segments(None, None)
    own = metas[0]
    own_id = records[own].payload.get("id")
    own_id = own_id if isinstance(own_id, str) else None
    result = Segments(own, own_id)
    start = own + 1
    if start < len(records) and records[start].kind == "session_meta":
        copied_id = records[start].payload.get("id")
        if isinstance(copied_id, str) and copied_id != own_id:
            named = parent_named(records[own].payload)
            parent_id = named or copied_id
            parent = find_parent(file.real_path, parent_id) if find_parent is not None else None
            result.copy = _copy(file, start, parent_id, parent, result)
    later = [i for i in metas[1:] if not result.copied(i)]
    for index in later:
        record = records[index]
        same = record.payload.get("id") == own_id
        said = "carries the rollout's own id" if same else "comes after the session's own lines began"
        result.findings.append(
            finding(
                "SA807",
                f"line {record.line}: a second session_meta {said} (the first is line {records[own].line})",
                **record.where("/payload/id"),
                evidence={"id": record.payload.get("id"), "own_id": own_id},
            )
        )
    return result


def _copy(file: RolloutFile, start: int, parent_id: str, parent: RolloutFile | None, into: Segments) -> Copy:
    records = file.records
    if parent is not None:
        into.parent_reads.append(parent.read)
        matched = 0
        while (
            start + matched < len(records)
            and matched < len(parent.records)
            and _same(records[start + matched], parent.records[matched])
        ):
            matched += 1
        if matched:
            end = _resumed_end(file, start, matched, parent, parent_id, into)
            return Copy(start, end, parent_id, "parent", parent.path)
        into.findings.append(
            finding(
                "SA817",
                f"line {records[start].line}: the copied history differs from the parent rollout "
                f"{parent.path} from its first line",
                **records[start].where("/payload"),
                evidence={"parent_id": parent_id, "parent": parent.path},
            )
        )
    end = _burst_end(records, start)
    if parent is None:
        into.findings.append(
            finding(
                "SA816",
                f"lines {records[start].line}–{records[end].line} are taken as history copied from "
                f"{parent_id}, whose rollout was not found beside this one: the copy's end is inferred "
                f"from its copy-time stamps",
                **records[start].where("/payload/id"),
                evidence={"parent_id": parent_id, "copied_lines": [records[start].line, records[end].line]},
            )
        )
    return Copy(start, end, parent_id, "burst")


def _burst_end(records: list[Record], start: int) -> int:
    """The index of the last line of the burst of copy-time stamps that begins at `start`."""
    end = start
    previous = _ms(records[start])
    while end + 1 < len(records):
        moment = _ms(records[end + 1])
        if moment is None or previous is None or moment - previous > BURST_GAP_MS:
            break
        previous = moment
        end += 1
    return end


def _resumed_end(
    file: RolloutFile, start: int, matched: int, parent: RolloutFile, parent_id: str, into: Segments
) -> int:
    """The copy's last index when its first `matched` lines equal the parent's: past them, the last line of
    the copy-time burst equal to the parent's line at its place (SA817 names the first line that differs
    before it), else the end of the matched lines."""
    records = file.records
    within = min(_burst_end(records, start) - start + 1, len(parent.records))
    again = [i for i in range(matched + 1, within) if _same(records[start + i], parent.records[i])]
    if not again:
        return start + matched - 1
    differing = [i for i in range(matched, again[-1]) if not _same(records[start + i], parent.records[i])]
    first = records[start + matched]
    shown = ", ".join(str(records[start + i].line) for i in differing)
    into.findings.append(
        finding(
            "SA817",
            f"line {first.line}: the copied history differs from the parent rollout {parent.path} at its "
            f"line {parent.records[matched].line} (copied lines differing: {shown}; the copy goes on to line "
            f"{records[start + again[-1]].line})",
            **first.where("/payload"),
            evidence={
                "parent_id": parent_id,
                "parent": parent.path,
                "parent_line": parent.records[matched].line,
                "differing_lines": [records[start + i].line for i in differing],
            },
        )
    )
    return start + again[-1]


def parent_path_shown(path: str, real_path: str, parent_real: str) -> str:
    """The parent's path as reported: relative to the folder the rollout is reported in."""
    return os.path.join(os.path.dirname(path), os.path.relpath(parent_real, os.path.dirname(real_path)))
