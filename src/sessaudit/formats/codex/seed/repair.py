"""The lines that answer a rollout's open calls (spec §7), for a seed's `next_facts` and the native repair.

Per open call, in the order the calls were made, one output item of the call's kind (a function call's and
a local shell call's `function_call_output`, a custom call's `custom_tool_call_output`) whose `output` is a
string (the form Codex accepts, spec §3.3.1) saying the outcome is unknown and nothing was run again; then a
`turn_aborted` event, which ends the turn as Codex does when a turn is interrupted (spec §3.4, §4). The
`timestamp` is the caller's: a placeholder in a seed, a real time in a native repair."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.codex.read.lines import Record
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


def repair_lines(calls: list[Record], *, timestamp: Any) -> list[dict[str, Any]]:
    """What answers `calls` and ends their turn (nothing when no call is open)."""
    if not calls:
        return []
    return [*(output_line(call, timestamp=timestamp) for call in calls), abort_line(timestamp=timestamp)]
