"""Turns: one run of kind "turn" per user turn of the session's own lines, to its task_complete (spec §4).

A turn starts at a `task_started` event, or at a `user_message` event that no task_started opened (older
CLIs write neither task_started nor task_complete). It is open when a call in it has no output (a crash or
a kill while the tool ran), or when it is the rollout's last turn and has neither a task_complete nor a
turn_aborted: waiting for the model (`model-request-open`: its last item is the user's message, a call's
output or a reasoning item) or answered but never closed (`awaiting-terminal`: its last item is the
assistant's message; only in rollouts whose CLI writes task_complete). An open turn gets a Recovery:
`effect-unknown` for calls of world-changing tools, `effect-replayable` for read-only ones (the session's
ToolTable: spec/tools.py, or `--current` for the tools it names). Its seed (seed/seeding.py) forks at the
turn's last line; a corrupt history gets none."""

from __future__ import annotations

import json
from typing import Any

from sessaudit.formats.codex.check.copies import Segments
from sessaudit.formats.codex.check.links import Links
from sessaudit.formats.codex.read.lines import Record, RolloutFile
from sessaudit.formats.codex.read.turns import Turn, run_id_of, turns_of
from sessaudit.formats.codex.recover.words import resume_plan
from sessaudit.formats.codex.seed.seeding import seeded
from sessaudit.formats.codex.spec.records import ABORTED, CALLS, TURN_ENDS, TURN_STARTS
from sessaudit.formats.codex.spec.tools import BUILT_IN_TABLE, tool_name
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
from sessaudit.tooltables import ToolTable
from sessaudit.turnseeds import Seeding, seed_words


def pending_calls(turn: Turn, links: Links) -> list[Record]:
    return [
        record
        for record in turn.records
        if record.is_item(*CALLS)
        and record.call_id is not None
        and record.call_id not in links.answered
        and links.calls.get(record.call_id) is record
    ]


def runs_of(
    file: RolloutFile,
    segments: Segments,
    links: Links,
    *,
    session_id: str,
    tools: ToolTable = BUILT_IN_TABLE,
    seeding: Seeding | None = None,
) -> tuple[list[Run], list[Finding]]:
    """The rollout's own turns as runs, and the open-work findings (SA301–SA303) of the open ones, the open
    calls judged by `tools`; with `seeding`, each open turn's recovery carries its seed (or is withheld)."""
    own = [record for _, record in segments.own(file.records)]
    turns = turns_of(own)
    closes = any(record.is_event(*TURN_ENDS, *TURN_STARTS) for record in own)
    runs: list[Run] = []
    found: list[Finding] = []
    for number, turn in enumerate(turns, 1):
        pending = pending_calls(turn, links)
        state, condition = _state(turn, last=number == len(turns), pending=bool(pending), closes=closes)
        recovery = None
        run_id = run_id_of(turn)
        if state == "open":
            recovery = _recovery(pending, condition, tools)
            if seeding is not None:
                recovery = seeded(recovery, file.records, segments, turn.records, run_id, session_id, seeding)
            found += _open_work(file, turn, recovery, pending, session_id, tools)
        stamps = [record.timestamp for record in turn.records if record.timestamp is not None]
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


def _last_item(turn: Turn) -> Record | None:
    items = [record for record in turn.records if record.kind == "response_item"]
    return items[-1] if items else None


def _state(turn: Turn, *, last: bool, pending: bool, closes: bool) -> tuple[RunState, Condition | None]:
    """(state, the condition when no call is open). `closes`: the rollout's CLI writes task events, so a
    turn without its task_complete was never closed."""
    if pending:
        return "open", None
    ended = turn.ended
    if ended is not None:
        return ("aborted" if ended.is_event(ABORTED) else "completed"), None
    final = _last_item(turn)
    answered = final is not None and final.item == "message" and final.payload.get("role") == "assistant"
    if not last:
        return ("aborted" if closes else "completed"), None
    if answered:
        return ("open", "awaiting-terminal") if closes else ("completed", None)
    return "open", "model-request-open"


def _recovery(pending: list[Record], condition: Condition | None, tools: ToolTable) -> Recovery:
    effects = [
        PendingEffect(
            tool_call_id=str(record.call_id),
            tool_name=tool_name(record.payload),
            arguments=_arguments(record.payload),
            intent_id=f"line {record.line}",
            result_slot=None,
            replay_policy=tools.policy(tool_name(record.payload)),
        )
        for record in pending
    ]
    conditions: set[Condition] = {condition} if condition is not None else set()
    for effect in effects:
        conditions.add("effect-unknown" if effect.replay_policy == "never" else "effect-replayable")
    ordered = order_conditions(conditions)
    return Recovery(
        condition=ordered[0],
        conditions=ordered,
        seed_kind=SEED_KIND[ordered[0]],
        assumes=[tools.decided(effect.tool_name for effect in effects)] if effects else [],
        pending_effects=effects,
        native_plan=resume_plan(effects, ordered[0]),
    )


def _arguments(payload: dict[str, Any]) -> Any:
    """A call's arguments as the model gave them: a function call's `arguments` string decoded when it is
    JSON (kept as the string when not), a custom call's `input`, a local shell call's `action`."""
    if payload.get("type") == "custom_tool_call":
        return payload.get("input")
    if payload.get("type") == "local_shell_call":
        return payload.get("action")
    arguments = payload.get("arguments")
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _open_work(
    file: RolloutFile,
    turn: Turn,
    recovery: Recovery,
    pending: list[Record],
    session_id: str,
    tools: ToolTable,
) -> list[Finding]:
    last = turn.records[-1]
    run_id = run_id_of(turn)
    shown = f"{last.kind}/{last.item}" if last.item else str(last.kind)
    found = [
        finding(
            "SA301",
            f"turn {run_id} (started on line {turn.start.line}) was left open: its last line is "
            f"{last.line} ({shown}); condition {recovery.condition}, {seed_words(recovery)}",
            path=file.path,
            session_id=session_id,
            line=last.line,
            byte_offset=last.offset,
            evidence={"condition": recovery.condition, "last_line_type": shown},
        )
    ]
    for record in pending:
        name = tool_name(record.payload)
        code = "SA303" if tools.policy(name) == "safe" else "SA302"
        outcome = "it is a read and safe to re-run" if code == "SA303" else "its outcome is unknown"
        if name in tools.override:  # the user's word, not the table's
            outcome = f"{outcome.replace('a read and ', '')} (--current {tools.source})"
        found.append(
            finding(
                code,
                f"turn {run_id}: {name} ({record.call_id}) was called and has no output; {outcome}",
                path=file.path,
                session_id=session_id,
                line=record.line,
                byte_offset=record.offset,
                evidence={"tool_name": name, "call_id": record.call_id},
            )
        )
    return found
