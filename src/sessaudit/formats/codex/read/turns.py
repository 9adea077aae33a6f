"""A rollout's own lines cut into turns (spec §4): a turn starts at a `task_started` event, or at a
`user_message` event that no task_started opened (older CLIs write neither task_started nor task_complete),
and runs to the next turn's start."""

from __future__ import annotations

from dataclasses import dataclass, field

from sessaudit.formats.codex.read.lines import Record
from sessaudit.formats.codex.spec.records import ABORTED, TURN_ENDS, TURN_STARTS


@dataclass(slots=True)
class Turn:
    start: Record  # its task_started or user_message event
    records: list[Record] = field(default_factory=list)  # from the start to the next turn's, in file order

    @property
    def prompted(self) -> bool:
        return any(record.is_event("user_message") for record in self.records)

    @property
    def ended(self) -> Record | None:
        return next((r for r in self.records if r.is_event(*TURN_ENDS, ABORTED)), None)


def turns_of(own: list[Record]) -> list[Turn]:
    turns: list[Turn] = []
    for record in own:
        if record.is_event(*TURN_STARTS) or (
            record.is_event("user_message")
            and (not turns or turns[-1].prompted or turns[-1].ended is not None)
        ):
            turns.append(Turn(record))
        if turns:
            turns[-1].records.append(record)
    return turns


def run_id_of(turn: Turn) -> str:
    """A turn's id: its `turn_id` when the start event has one (newer CLIs), else `line N`."""
    turn_id = turn.start.payload.get("turn_id")
    return turn_id if isinstance(turn_id, str) and turn_id else f"line {turn.start.line}"
