"""The sessaudit seed (CONTRACT §5) of an open Codex turn.

The fork point is the turn's last line (`seq` null: Codex numbers nothing), or the line `--sequence N` of
the turn (1-based line numbers of the rollout). `context.messages` are the model history Codex rebuilds at
the fork point (spec §7): the response items from the latest `compacted` line on (its replacement history
first, when it has one), each as {line, type, role, content}; `next_facts` the lines `seed --native`
appends (seed/repair.py): an output for every call up to the fork point that has none, saying the outcome is
unknown and nothing was run again, then the turn_aborted event, `timestamp` left to assign. Codex has no
seed of its own: `native` and `native_text` stay null."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.codex.check.copies import Segments
from sessaudit.formats.codex.read.lines import Record
from sessaudit.formats.codex.seed.repair import repair_lines
from sessaudit.formats.codex.spec.records import CALLS, OUTPUTS
from sessaudit.model import ForkPoint, Recovery, Seed, SeedContext
from sessaudit.turnseeds import Seeding, turn_replay, unknown_effect_warnings

TIMESTAMP: Final = {"$assign": "timestamp"}


def open_calls(records: list[Record], through: int) -> list[Record]:
    """The calls on lines up to `through` with no output on a line up to it, in the order they were made."""
    answered = {r.call_id for r in records if r.line <= through and r.is_item(*OUTPUTS) and r.call_id}
    calls: dict[str, Record] = {}
    for record in records:
        call_id = record.call_id
        if record.line <= through and record.is_item(*CALLS) and call_id and call_id not in calls:
            calls[call_id] = record
    return [record for call_id, record in calls.items() if call_id not in answered]


def history_at(records: list[Record], through: int) -> list[dict[str, Any]]:
    """The model history at line `through` (spec §7): response items after the latest compacted line, its
    replacement history first (or its summary as a user message, as older CLIs rebuild it)."""
    kept = [record for record in records if record.line <= through]
    start = 0
    base: list[dict[str, Any]] = []
    for index, record in enumerate(kept):
        if record.kind != "compacted":
            continue
        start = index + 1
        replacement = record.payload.get("replacement_history")
        if isinstance(replacement, list):
            base = [_message(record.line, item) for item in replacement if isinstance(item, dict)]
        else:
            summary = record.payload.get("message")
            base = [{"line": record.line, "type": "compacted", "role": "user", "content": summary}]
    items = [_message(r.line, r.payload) for r in kept[start:] if r.kind == "response_item"]
    return base + items


def _message(line: int, item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    content: Any = item.get("content")
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        content = {
            key: item.get(key) for key in ("name", "call_id", "arguments", "input", "action") if key in item
        }
    elif kind in OUTPUTS:
        content = {"call_id": item.get("call_id"), "output": item.get("output")}
    elif kind == "reasoning":
        content = item.get("summary")
    return {"line": line, "type": kind, "role": item.get("role"), "content": content}


def seeded(
    recovery: Recovery,
    records: list[Record],
    segments: Segments,
    turn: list[Record],
    run_id: str,
    session_id: str,
    seeding: Seeding,
) -> Recovery:
    """`recovery` with its seed, or withheld (corrupt history), or with a warning why there is none."""
    if seeding.withheld is not None:
        return recovery.withheld(seeding.withheld)
    sequence = seeding.fork_sequence if seeding.fork_run in (None, run_id) else None
    fork = turn[-1] if sequence is None else next((r for r in turn if r.line == sequence), None)
    if fork is None:
        warning = f"no seed at the chosen fork point: line {sequence} is not in turn {run_id}"
        return recovery.model_copy(update={"warnings": [*recovery.warnings, warning]})
    seed_kind = recovery.offered_seed_kind()
    calls = open_calls(records, fork.line)
    copied = segments.copy
    warnings = [*recovery.warnings, *unknown_effect_warnings(recovery, "")]
    if copied is not None:
        first, last = records[copied.start].line, records[copied.end].line
        warnings.append(
            f"context.messages include the history copied from {copied.parent_id} (lines {first}–{last}), "
            "as Codex sends it"
        )
    seed = Seed(
        seed_kind=seed_kind,
        source=seeding.source,
        session_id=session_id or None,
        run_id=run_id,
        condition=recovery.condition,
        fork_point=ForkPoint(seq=None, line=fork.line, byte_offset=fork.offset, fact_id=None),
        pending_effects=recovery.pending_effects,
        replay=turn_replay(recovery, f"line {fork.line}") if seed_kind == "replay" else None,
        context=SeedContext(messages=history_at(records, fork.line)),
        next_facts=repair_lines(records, calls, fork.line, timestamp=TIMESTAMP),
        assumes=recovery.assumes,
        warnings=warnings,
    )
    return recovery.model_copy(update={"seed": seed})
