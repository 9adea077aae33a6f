"""Turns: one run of kind "turn" per user prompt, to its final answer (spec §4, §5, §8).

A turn is open when a tool_use in it has no tool_result in its file (a crash or an abort mid-response,
§4.3) or when it is the file's last turn and ends waiting for the model (a prompt or a tool result with no
response after it, or a response whose last line is a thinking block with `stop_reason` null, §5.3). An
open turn gets a Recovery: `effect-unknown` for calls of world-changing tools, `effect-replayable` for
read-only ones (the session's ToolTable, spec/tools.py: the built-in table, or `--current` for the tools it
names; the recovery's `assumes` says which decided), `model-request-open` when no call is open. Its seed
(seed/seeding.py) forks at the turn's last record; a corrupt history gets none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sessaudit.formats.claude_code.check.links import Links, tool_uses
from sessaudit.formats.claude_code.read.lines import Record, TranscriptFile
from sessaudit.formats.claude_code.recover.words import resume_plan
from sessaudit.formats.claude_code.seed.seeding import seeded
from sessaudit.formats.claude_code.spec.records import INTERRUPT_PREFIX, message_text
from sessaudit.formats.claude_code.spec.records import is_prompt as prompt_record
from sessaudit.formats.claude_code.spec.tools import BUILT_IN_TABLE, ToolTable
from sessaudit.model import (
    SEED_KIND,
    Condition,
    Finding,
    PendingEffect,
    Recovery,
    Run,
    RunState,
    order_conditions,
)
from sessaudit.rules import finding
from sessaudit.times import iso_from_text
from sessaudit.turnseeds import Seeding, seed_words


@dataclass(slots=True)
class Turn:
    prompt: Record
    records: list[Record] = field(default_factory=list)  # the prompt and what follows it, in file order


def _text_of(record: Record) -> str | None:
    return message_text(record.value)


def is_prompt(record: Record) -> bool:
    """A user line a person typed (spec.records.is_prompt): it starts a turn."""
    return prompt_record(record.value)


def turns_of(file: TranscriptFile) -> list[Turn]:
    turns: list[Turn] = []
    for record in file.records:
        if is_prompt(record):
            turns.append(Turn(record))
        if turns:
            turns[-1].records.append(record)
    return turns


def runs_of(
    file: TranscriptFile,
    links: Links,
    *,
    session_id: str,
    tools: ToolTable = BUILT_IN_TABLE,
    seeding: Seeding | None = None,
) -> tuple[list[Run], list[Finding]]:
    """The file's turns as runs, and the open-work findings (SA301–SA303) of the open ones, the open calls
    judged by `tools`; with `seeding`, each open turn's recovery carries its seed (or is withheld)."""
    turns = turns_of(file)
    answered = links.answered.get(file.path, set())
    runs: list[Run] = []
    found: list[Finding] = []
    for number, turn in enumerate(turns, 1):
        pending = _pending(turn, answered)
        last = number == len(turns)
        state, waiting = _state(
            turn, last=last, pending=bool(pending), torn=last and file.torn_tail_bytes > 0
        )
        recovery = None
        run_id = turn.prompt.uuid or f"{file.path}:{turn.prompt.line}"
        if state == "open":
            recovery = _recovery(pending, waiting, tools)
            if seeding is not None:
                recovery = seeded(recovery, file.records, turn.records, run_id, session_id, seeding)
            found += _open_work(file, turn, recovery, pending, session_id, tools)
        stamps = [r.value.get("timestamp") for r in turn.records if isinstance(r.value.get("timestamp"), str)]
        runs.append(
            Run(
                run_id=run_id,
                kind="turn",
                state=state,
                recovery=recovery,
                last_written_at=iso_from_text(stamps[-1]) if stamps else None,
            )
        )
    return runs, found


def _pending(turn: Turn, answered: set[str]) -> list[tuple[Record, Mapping[str, Any]]]:
    return [
        (record, block)
        for record in turn.records
        for _, block in tool_uses(record)
        if isinstance(block.get("id"), str) and block["id"] not in answered
    ]


def _state(turn: Turn, *, last: bool, pending: bool, torn: bool = False) -> tuple[RunState, bool]:
    """(state, waiting for the model). `torn`: the file ends in a torn line after this (its last) turn, so
    a final response line without `stop_reason` was cut mid-stream, whatever its block (a complete
    response may keep `stop_reason` null on its last line, spec §5.3, so without a torn line only a
    trailing thinking block says so)."""
    if pending:
        return "open", False
    talk = [
        record
        for record in turn.records
        if record.kind in ("user", "assistant")
        and not record.value.get("isMeta")
        and not record.value.get("isCompactSummary")
    ]
    final = talk[-1]
    if final.kind == "assistant":
        if final.value.get("isApiErrorMessage"):
            return "failed", False
        message = final.value.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        unfinished = (isinstance(message, dict) and message.get("stop_reason") is None and torn) or (
            isinstance(message, dict)
            and message.get("stop_reason") is None
            and isinstance(blocks, list)
            and bool(blocks)
            and isinstance(blocks[-1], dict)
            and blocks[-1].get("type") in ("thinking", "redacted_thinking")
        )
        if not unfinished:
            return "completed", False
    elif final is not turn.prompt and (_text_of(final) or "").startswith(INTERRUPT_PREFIX):
        return "aborted", False
    return ("open", True) if last else ("lost", False)


def _recovery(pending: list[tuple[Record, Mapping[str, Any]]], waiting: bool, tools: ToolTable) -> Recovery:
    effects = [
        PendingEffect(
            tool_call_id=block["id"],
            tool_name=str(block.get("name")),
            arguments=block.get("input"),
            intent_id=record.uuid,
            result_slot=None,
            replay_policy=tools.policy(str(block.get("name"))),
        )
        for record, block in pending
    ]
    conditions: set[Condition] = set()
    for effect in effects:
        conditions.add("effect-unknown" if effect.replay_policy == "never" else "effect-replayable")
    if waiting or not effects:
        conditions.add("model-request-open")
    ordered = order_conditions(conditions)
    return Recovery(
        condition=ordered[0],
        conditions=ordered,
        seed_kind=SEED_KIND[ordered[0]],
        assumes=[tools.decided(effect.tool_name for effect in effects)] if effects else [],
        pending_effects=effects,
        native_plan=resume_plan(effects),
    )


def _open_work(
    file: TranscriptFile,
    turn: Turn,
    recovery: Recovery,
    pending: list[tuple[Record, Mapping[str, Any]]],
    session_id: str,
    tools: ToolTable,
) -> list[Finding]:
    last = turn.records[-1]
    run_id = turn.prompt.uuid or f"line {turn.prompt.line}"
    found = [
        finding(
            "SA301",
            f"turn {run_id} (prompt on line {turn.prompt.line}) was left open: its last record is line "
            f"{last.line} ({last.kind}); condition {recovery.condition}, {seed_words(recovery)}",
            path=file.path,
            session_id=session_id,
            line=last.line,
            byte_offset=last.offset,
            evidence={"condition": recovery.condition, "last_record_type": last.kind},
        )
    ]
    for record, block in pending:
        name = str(block.get("name"))
        code = "SA303" if tools.policy(name) == "safe" else "SA302"
        outcome = "it is a read and safe to re-run" if code == "SA303" else "its outcome is unknown"
        if name in tools.override:  # the user's word, not the table's
            outcome = f"{outcome.replace('a read and ', '')} (--current {tools.source})"
        found.append(
            finding(
                code,
                f"turn {run_id}: {block.get('name')} ({block['id']}) was started and has no tool_result; "
                f"{outcome}",
                path=file.path,
                session_id=session_id,
                line=record.line,
                byte_offset=record.offset,
                evidence={"tool_name": block.get("name"), "intent_id": record.uuid},
            )
        )
    return found
