"""The user line that answers one response's dangling calls (spec §8 repair step 2; §4.3).

One line per response, all its results in it (the API wants them in the *next* user message), parented on
the response's last line holding one of the calls, with the envelope of that line. Its `uuid` and
`timestamp` are the caller's: placeholders in a seed's `next_facts`, real values in a native repair. After
the last one comes the marker line Claude Code itself writes after an interrupted tool (spec §4.2, §4.3):
it ends the turn, which would otherwise wait for a model response that never comes."""

from __future__ import annotations

import re
from typing import Any, Final

from sessaudit.formats.claude_code.seed.chain import Dangling

# what the answer says; {tool} is the call's tool name
ANSWER: Final = (
    "[sessaudit] The outcome of this {tool} call is unknown: the session ended before its result was "
    "recorded. It was not run again."
)
# the fields copied from the assistant line: spec §8 step 2's, and the sub-agent id and session slug
# where that line has them (Claude Code writes them on every line of a file that has them)
COPIED: Final = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId", "slug")
# spec §4.2: the user text Claude Code writes when a turn is interrupted during a tool run
TOOL_INTERRUPT: Final = "[Request interrupted by user for tool use]"
MAJOR: Final = re.compile(r"([0-9]+)\.")


def second_era(version: Any) -> bool:
    """A 2.x (or later) `version`: tool-result lines carry `sourceToolAssistantUUID` (spec §3.2)."""
    found = MAJOR.match(version) if isinstance(version, str) else None
    return found is not None and int(found.group(1)) >= 2


def answer_text(tool: Any) -> str:
    return ANSWER.format(tool=tool if isinstance(tool, str) else "tool")


def repair_line(group: Dangling, *, uuid: Any, timestamp: Any) -> dict[str, Any]:
    """The line, keys in the order Claude Code writes a tool-result line."""
    holder = group.holder.value
    line: dict[str, Any] = {"parentUuid": group.holder.uuid}
    line.update((key, holder[key]) for key in COPIED if key in holder)
    blocks = [
        {"tool_use_id": block.get("id"), "type": "tool_result", "content": answer_text(block.get("name")),
         "is_error": True}
        for _, block in group.calls
    ]  # fmt: skip
    line.update(type="user", message={"role": "user", "content": blocks}, uuid=uuid, timestamp=timestamp)
    if second_era(holder.get("version")):
        line["sourceToolAssistantUUID"] = group.holder.uuid
    return line


def marker_line(after: dict[str, Any], *, parent: Any, uuid: Any, timestamp: Any) -> dict[str, Any]:
    """The interruption marker, after the repair line `after` (whose envelope it shares)."""
    line: dict[str, Any] = {"parentUuid": parent}
    line.update((key, after[key]) for key in COPIED if key in after)
    message = {"role": "user", "content": [{"type": "text", "text": TOOL_INTERRUPT}]}
    line.update(type="user", message=message, uuid=uuid, timestamp=timestamp)
    return line
