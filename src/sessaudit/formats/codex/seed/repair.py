"""The lines that answer a rollout's open calls (spec §7), for a seed's `next_facts` and the native repair.

Per open call, in the order the calls were made, one output item of the call's kind (a function call's and
a local shell call's `function_call_output`, a custom call's `custom_tool_call_output`) whose `output` is a
string (the form Codex accepts, spec §3.3.1) saying the outcome is unknown and nothing was run again; then a
`turn_aborted` event, which ends the turn as Codex does when a turn is interrupted (spec §3.4, §4), unless
the turn at that point is closed already. The
`timestamp` is the caller's: a placeholder in a seed, a real time in a native repair."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.codex.read.lines import Record
from sessaudit.formats.codex.spec.records import ABORTED, TURN_ENDS, TURN_STARTS
from sessaudit.formats.codex.spec.tools import tool_name

ANSWER: Final = (
    "[sessaudit] The outcome of this {tool} call is unknown: the session ended before its output was "
    "recorded. It was not run again; check its effect before running it again."
)
ABORT_REASON: Final = "interrupted"


def answer_text(record: Record) -> str:
    return ANSWER.format(tool=tool_name(record.payload))


def output_line(call: Record, *, timestamp: Any) -> dict[str, Any]:
    """The output line for the open call `call`, keys in the order Codex writes them."""
    kind = "custom_tool_call_output" if call.item == "custom_tool_call" else "function_call_output"
    payload = {"type": kind, "call_id": call.call_id, "output": answer_text(call)}
    return {"timestamp": timestamp, "type": "response_item", "payload": payload}


def abort_line(*, timestamp: Any) -> dict[str, Any]:
    """The event that closes the turn."""
    return {
        "timestamp": timestamp,
        "type": "event_msg",
        "payload": {"type": "turn_aborted", "reason": ABORT_REASON},
    }


def turn_closed(records: list[Record], through: int) -> bool:
    """The turn holding line `through` was closed by then: a task_complete or turn_aborted comes after its
    start (a task_started or user_message event) and no later than `through`."""
    for record in reversed([record for record in records if record.line <= through]):
        if record.is_event(*TURN_ENDS, ABORTED):
            return True
        if record.is_event(*TURN_STARTS, "user_message"):
            return False
    return False


def repair_lines(
    records: list[Record], calls: list[Record], through: int, *, timestamp: Any
) -> list[dict[str, Any]]:
    """What answers `calls` after line `through`: their outputs, then the turn_aborted that ends the turn
    holding that line unless it is closed already (a later turn, completed after a resume, stays as it is).
    Nothing when no call is open."""
    if not calls:
        return []
    lines = [output_line(call, timestamp=timestamp) for call in calls]
    return lines if turn_closed(records, through) else [*lines, abort_line(timestamp=timestamp)]
