"""The truth written beside the rollouts: what each scenario's files contain, by construction.

Per scenario: the files (kind, parent, copied range, torn tail); every model response with its true usage,
its token_count line(s), whether doubled, whether copied from a parent response; the usage totals of each
file's own responses (what an exact ledger must find) and of responses whose token_count never reached the
disk whole; the rate-limit-only token_counts (they repeat the current info: never usage); every tool call
with its answer; the open calls; the turns (a turn runs from its first line to the line before the next).
Line numbers are 1-based, paths relative to the root the builder was given (POSIX form).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from sessaudit.formats.codex.build.family import Family, FileState, ResponseRecord, complete_count
from sessaudit.formats.codex.build.ids import format_offset
from sessaudit.formats.codex.build.parts import USAGE_FIELDS, ZERO, JsonObject, Usage

MANIFEST_NAME: Final = "manifest.json"


def summed(usages: Iterable[Usage]) -> JsonObject:
    """The five usage fields summed, and the number of responses."""
    total, count = ZERO, 0
    for usage in usages:
        total, count = total + usage, count + 1
    return {**total.as_json(), "responses": count}


def _visible(family: Family, record: ResponseRecord) -> list[int]:
    whole = complete_count(family.files[record.file])
    return [index + 1 for index in record.token_count_lines if index < whole]


def _response(family: Family, record: ResponseRecord) -> JsonObject:
    original = None if record.copy_of is None else family.responses[record.copy_of]
    lines = _visible(family, record)
    return {
        "index": record.index,
        "file": record.file,
        "usage": record.usage.as_json(),
        "token_count_lines": lines,
        "doubled": record.doubled,
        "logged": bool(lines),
        "copied": original is not None,
        "copy_of": None if original is None else {"file": original.file, "index": original.index},
        "item_lines": [index + 1 for index in record.items],
    }


def _turns(state: FileState) -> list[JsonObject]:
    whole = complete_count(state)
    starts = sorted(state.turn_starts)
    turns: list[JsonObject] = []
    for number, first in enumerate(starts):
        last = starts[number + 1] - 1 if number + 1 < len(starts) else len(state.lines) - 1
        copied = state.copied is not None and state.copied[0] <= first <= state.copied[1]
        if copied and state.copied is not None:
            last = min(last, state.copied[1])
        kinds = [
            state.lines[index].data["payload"].get("type")
            for index in range(first, min(last + 1, whole))
            if state.lines[index].data["type"] == "event_msg"
        ]
        turns.append(
            {
                "file": state.key,
                "first_line": first + 1,
                "last_line": last + 1,
                "complete": "task_complete" in kinds,
                "aborted": "turn_aborted" in kinds,
                "copied": copied,
            }
        )
    return turns


def _file(family: Family, state: FileState, responses: list[ResponseRecord]) -> JsonObject:
    own = [r for r in responses if r.file == state.key and r.copy_of is None]
    parent = None if state.parent_key is None else family.files[state.parent_key]
    return {
        "path": state.key,
        "session_id": state.session_id,
        "kind": state.kind,
        "archived": state.archived,
        "utc_offset": format_offset(state.offset),
        "cli_version": state.cli_version,
        "task_events": state.task_events,
        "lines": len(state.lines),
        "torn_tail_bytes": state.torn_at,
        "killed": state.killed,
        "forked_from": state.forked_from,
        "parent": None if parent is None else {"file": parent.key, "session_id": parent.session_id},
        "copied_lines": None if state.copied is None else [state.copied[0] + 1, state.copied[1] + 1],
        "totals": summed(r.usage for r in own if _visible(family, r)),
    }


def truth(family: Family) -> JsonObject:
    """The manifest entry of one scenario."""
    records = family.responses
    own_logged = [r for r in records if r.copy_of is None and _visible(family, r)]
    unlogged = [r for r in records if r.copy_of is None and not _visible(family, r)]
    calls = []
    for call in family.calls:
        whole = complete_count(family.files[call.file])
        answered = call.answer is not None and call.answer < whole
        calls.append(
            {
                "call_id": call.call_id,
                "name": call.name,
                "kind": call.kind,
                "world_changing": call.world_changing,
                "answered": answered,
                "file": call.file,
                "line": call.line + 1,
                "output_line": call.answer + 1 if answered and call.answer is not None else None,
                "exec_end_line": None if call.exec_end is None else call.exec_end + 1,
                "copied": call.copied,
            }
        )
    states = list(family.files.values())
    return {
        "files": [_file(family, state, records) for state in states],
        "responses": [_response(family, record) for record in records],
        "totals": summed(r.usage for r in own_logged),
        "unlogged": summed(r.usage for r in unlogged),
        "calls": calls,
        "open_calls": [
            {"file": c["file"], "call_id": c["call_id"], "copied": c["copied"]}
            for c in calls
            if not c["answered"]
        ],
        "turns": [turn for state in states for turn in _turns(state)],
        "repeated_token_counts": [
            {
                "file": state.key,
                "line": index + 1,
                "info_null": state.lines[index].data["payload"]["info"] is None,
            }
            for state in states
            for index in state.repeats
        ],
        "compacted": [
            {"file": state.key, "line": index + 1}
            for state in states
            for index, line in enumerate(state.lines)
            if line.data["type"] == "compacted"
        ],
        "torn_tail": [
            {"file": state.key, "line": len(state.lines), "kept_bytes": state.torn_at}
            for state in states
            if state.torn_at is not None
        ],
        "forked_from": [
            {
                "file": state.key,
                "session_id": state.session_id,
                "forked_from_id": state.forked_from,
                "parent_file": state.parent_key,
                "copied_lines": None if state.copied is None else [state.copied[0] + 1, state.copied[1] + 1],
            }
            for state in states
            if state.parent_key is not None
        ],
    }


def write_manifest(root: Path, scenarios: Mapping[str, JsonObject], *, kind: str = "scenarios") -> Path:
    """`<root>/manifest.json` (beside `sessions/`), the entries under `kind`; refuses to overwrite."""
    path = root / MANIFEST_NAME
    text = json.dumps({"format": "codex", kind: dict(scenarios)}, indent=2, ensure_ascii=False)
    root.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as stream:
        stream.write(text + "\n")
    return path


__all__ = ["MANIFEST_NAME", "USAGE_FIELDS", "summed", "truth", "write_manifest"]
