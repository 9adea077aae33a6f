"""The user line that answers one response's dangling calls (spec §8 repair step 2; §4.3).

One line per response, all its results in it (the API wants them in the *next* user message), parented on
the response's last line holding one of the calls, with the envelope of that line. Its `uuid` and
`timestamp` are the caller's: placeholders in a seed's `next_facts`, real values in a native repair."""

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
