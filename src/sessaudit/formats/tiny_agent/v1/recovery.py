"""Settling a legacy v1 turn no answer or abort closed: its state, recovery, SA301 and SA302 (CONTRACT §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sessaudit.formats.tiny_agent.v1.lines import ABORTED_BEFORE_EXECUTION, Call, json_text
from sessaudit.model import SEED_KIND, Condition, PendingEffect, Recovery, Run, RunState, order_conditions
from sessaudit.strictjson import LineProblem, loads_strict
from sessaudit.times import iso_from_epoch_ms

RUN_LEFT_OPEN, EFFECT_UNKNOWN = "SA301", "SA302"
NO_CONFIGURATION = "configuration unchanged: v1 records no configuration snapshot, only the header's model"
NO_INTENT = "v1 records no tool intent: the first unanswered call may or may not have run"
NO_POLICY = "v1 records no replay policy or key: they are unknown (null) for every pending call"


@dataclass(frozen=True, slots=True)
class Note:
    """A finding before the session id is known: rule, message and place."""

    code: str
    message: str
    line: int
    offset: int | None
    pointer: str | None = None
    evidence: dict[str, Any] | None = None


@dataclass(slots=True)
class Turn:
    """One turn: from a user message to the next one or the end of the file (its run id names that line)."""

    line: int
    offset: int
    last_line: int
    last_offset: int
    registered: bool = True  # False for the stand-in that absorbs an answer written before any user message
    phase: Literal["model", "calls", "done"] = "model"
    state: RunState = "open"
    answer_line: int = 0
    answer_offset: int = 0
    calls: tuple[Call, ...] = ()
    answered: int = 0
    aborted: Call | None = None  # the call whose result is "Operation aborted": the user pressed Escape
    aborted_line: int = 0
    truncated: bool = False  # the answer was cut by the token limit: every call gets the truncation text
    recovery: Recovery | None = None
    last_written: int | None = None  # epoch ms of the last line of the turn (`timestamp`)

    @property
    def run_id(self) -> str:
        return f"turn:{self.line}"

    @property
    def pending(self) -> tuple[Call, ...]:
        return self.calls[self.answered :] if self.phase == "calls" else ()

    def unanswered(self) -> str:
        verb = "are" if len(self.pending) > 1 else "is"
        return f"{calls_text(self.pending)} of the answer at line {self.answer_line} {verb} unanswered"

    def run(self) -> Run:
        return Run(
            run_id=self.run_id,
            kind="turn",
            state=self.state,
            recovery=self.recovery,
            last_written_at=iso_from_epoch_ms(self.last_written),
        )


def calls_text(calls: tuple[Call, ...]) -> str:
    """`call bash (call_1)`, `calls read (call_0), bash (call_1)`: at most three named."""
    named = ", ".join(f"{call.name} ({call.call_id})" for call in calls[:3])
    more = f" and {len(calls) - 3} more" if len(calls) > 3 else ""
    return f"call{'s' if len(calls) > 1 else ''} {named}{more}"


def arguments_of(call: Call) -> Any:
    """The call's arguments as a JSON object when they are one, else the raw text."""
    try:
        value = loads_strict(call.arguments)
    except LineProblem:
        return call.arguments
    return value if isinstance(value, dict) else call.arguments


def _effect(call: Call) -> PendingEffect:
    arguments = arguments_of(call)
    return PendingEffect(
        tool_call_id=call.call_id,
        tool_name=call.name,
        arguments=arguments,
        intent_id=None,
        result_slot=None,
        replay_policy=None,
    )


class Settler:
    """Settles turns; `untrusted` is the first line past which the reconstructed state is a guess."""

    def __init__(self, untrusted: int | None) -> None:
        self.untrusted = untrusted
        self.notes: list[Note] = []

    def settle(self, turn: Turn, *, at_eof: bool, by_line: int = 0) -> list[Note]:
        """Give a turn its final state; a state open at the end of the file gets a recovery (CONTRACT §4)."""
        pending, phase = turn.pending, turn.phase
        turn.phase = "done"
        if not turn.registered:
            return self.notes
        if not at_eof:
            # Left by a new user message or a compaction: the request failed or the process stopped (v1 writes
            # no error); an aborted tool phase whose interruption line is missing still was an abort.
            turn.state = "aborted" if turn.aborted is not None else "failed"
            if pending and turn.aborted is None:
                moved = f"the session moved on at line {by_line} without its result"
                assumes = [NO_INTENT, f"{moved}; the calls after it never ran"]
                turn.recovery = self._recovery(["effect-unknown"], [_effect(pending[0])], assumes)
                self._unknown_effect(turn, pending[0], f"; {moved}")
        elif phase == "model":
            reply = f"the user message at line {turn.line} has no reply"
            self._open(
                turn, ["model-request-open"], f"{reply}: a model request was open (no side effect possible)"
            )
        elif turn.aborted is not None and not pending:
            turn.state = "aborted"  # every abort text is there; only the interruption line is missing
        elif turn.aborted is not None:
            aborted = f"the user aborted {calls_text((turn.aborted,))} at line {turn.aborted_line}"
            lacking = f"{calls_text(pending)} still lack{'' if len(pending) > 1 else 's'}"
            texts = f"{json_text(ABORTED_BEFORE_EXECUTION)} and the interruption line"
            never = f"the CLI never runs a call after an abort: {calls_text(pending)} did not run"
            self._open(turn, ["abort-pending"], f"{aborted}, and {lacking} {texts}", assumes=[never])
        elif not pending:
            answered = f"every call of the assistant message at line {turn.answer_line} has its result"
            self._open(turn, ["step-pending"], f"{answered}: the next model request was due or open")
        else:
            later = len(pending) - 1
            conditions: list[Condition] = (
                ["effect-unknown", "tool-not-started"] if later else ["effect-unknown"]
            )
            results = f"{turn.answered} of {len(turn.calls)} calls of the answer at line {turn.answer_line}"
            unknown = f"{calls_text(pending[:1])} may or may not have run"
            started = f", {later} later call{'s' if later > 1 else ''} never started" if later else ""
            effects = [_effect(call) for call in pending]
            self._open(
                turn,
                conditions,
                f"{results} have results; {unknown}{started}",
                effects,
                [NO_INTENT, NO_POLICY],
            )
            self._unknown_effect(turn, pending[0], "")
        return self.notes

    def _open(
        self,
        turn: Turn,
        conditions: list[Condition],
        explanation: str,
        effects: list[PendingEffect] | None = None,
        assumes: list[str] | None = None,
    ) -> None:
        turn.state = "open"
        turn.recovery = self._recovery(conditions, effects or [], [*(assumes or []), NO_CONFIGURATION])
        ordered = turn.recovery.conditions
        message = (
            f"{turn.run_id} was left open ({', '.join(ordered)}): {explanation}; last line {turn.last_line}"
        )
        evidence = {"run_id": turn.run_id, "condition": ordered[0], "conditions": list(ordered)}
        self.notes.append(
            Note(RUN_LEFT_OPEN, message + self._since(), turn.last_line, turn.last_offset, None, evidence)
        )

    def _recovery(
        self, conditions: list[Condition], effects: list[PendingEffect], assumes: list[str]
    ) -> Recovery:
        ordered = order_conditions(conditions)
        if self.untrusted is not None:
            assumes = [
                *assumes,
                f"the turn state is reconstructed past a broken line (line {self.untrusted})",
            ]
        first = ordered[0]
        return Recovery(
            condition=first,
            conditions=ordered,
            seed_kind=SEED_KIND[first],
            assumes=assumes,
            pending_effects=effects,
        )

    def _unknown_effect(self, turn: Turn, call: Call, tail: str) -> None:
        shown = call.arguments if len(call.arguments) <= 200 else call.arguments[:199] + "…"
        message = (
            f"tool {call.name} ({call.call_id}) with {shown} may or may not have run: v1 writes results "
            f"after the tool ran and records no intent{tail}; last line {turn.last_line}{self._since()}"
        )
        evidence = {
            "run_id": turn.run_id,
            "tool_call_id": call.call_id,
            "tool_name": call.name,
            "arguments": arguments_of(call),
            "last_line": turn.last_line,
        }
        pointer = f"/message/tool_calls/{call.index}"
        self.notes.append(
            Note(EFFECT_UNKNOWN, message, turn.answer_line, turn.answer_offset, pointer, evidence)
        )

    def _since(self) -> str:
        return (
            ""
            if self.untrusted is None
            else f" (the turn state is not trustworthy since line {self.untrusted})"
        )
