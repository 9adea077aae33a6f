"""How a Codex tool call ended, as far as its rollout tells (spec §3.3.1, §3.4): the output item's text and,
where the CLI persists them, the end events (exec_command_end's `exit_code`, patch_apply_end's `success`,
mcp_tool_call_end's result).

Codex writes no success flag with an output (spec §3.3.1), so an outcome is read only from what says it
reliably: a shell tool's exit code (the JSON string `{"output", "metadata": {"exit_code"}}` of older CLIs,
or the "Process exited with code N" / "Exit code: N" header of the text form), apply_patch's "Success."
answer, or an end event. An output that says nothing either way is "answered" (a result, outcome not
recorded); the output `aborted` (what Codex answers a call it lost, spec §7) and the answer of
sessaudit's own repair (seed/repair.py) say the outcome is unknown."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from sessaudit.formats.codex.seed.repair import ANSWER
from sessaudit.warehouse.drafts import ANSWERED, FAILED, SUCCEEDED, UNKNOWN

# result_type: what the record said
OK: Final = "ok"
ERROR: Final = "error"
ABORTED: Final = "aborted"
OUTPUT: Final = "output"  # an output that says nothing about the outcome

STATUS: Final = {OK: SUCCEEDED, ERROR: FAILED, ABORTED: UNKNOWN, OUTPUT: ANSWERED}

SHELLS: Final = frozenset(
    {"shell", "shell_command", "local_shell", "container.exec", "exec_command", "write_stdin"}
)
HEADER_CODE: Final = re.compile(r"^(?:Process exited with code|Exit code:)\s*(-?[0-9]+)\s*$")
REPAIR_PREFIX: Final = ANSWER.split("{tool}", 1)[0]


def output_text(payload: Mapping[str, Any]) -> str | None:
    """An output item's text: the string, or the texts of its content items joined; None for another
    shape (which Codex cannot read, SA805)."""
    output = payload.get("output")
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(
            str(item.get("text")) for item in output if isinstance(item, Mapping) and "text" in item
        )
    return None


def exit_code(text: str) -> int | None:
    """A shell tool's exit code from its output text, or None when the text does not state one."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        metadata = value.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return code if type(code) is int else None
    for row in text.splitlines():
        if row == "Output:":
            break  # the header ends; what follows is the command's own output
        found = HEADER_CODE.match(row)
        if found is not None:
            return int(found.group(1))
    return None


def from_event(payload: Mapping[str, Any]) -> str | None:
    """What an end event says of its call (ok or error), or None when it says nothing."""
    kind = payload.get("type")
    if kind == "exec_command_end":
        code = payload.get("exit_code")
        return None if type(code) is not int else (OK if code == 0 else ERROR)
    if kind == "patch_apply_end":
        success = payload.get("success")
        return None if not isinstance(success, bool) else (OK if success else ERROR)
    if kind == "mcp_tool_call_end":
        result = payload.get("result")
        if isinstance(result, Mapping) and "Err" in result:
            return ERROR
        done = result.get("Ok") if isinstance(result, Mapping) else None
        flag = done.get("isError") if isinstance(done, Mapping) else None
        return None if not isinstance(flag, bool) else (ERROR if flag else OK)
    return None


def outcome(name: str, payload: Mapping[str, Any], event: str | None) -> str:
    """ok, error, aborted or output for the output item `payload` of a call of tool `name`, given what its
    end event said (None: no event, or one that says nothing)."""
    text = output_text(payload)
    if text is not None and (text.strip() == "aborted" or text.startswith(REPAIR_PREFIX)):
        return ABORTED
    if event is not None:
        return event
    if text is None:
        return OUTPUT
    if name in SHELLS:
        code = exit_code(text)
        if code is not None:
            return OK if code == 0 else ERROR
    if name == "apply_patch" and text.startswith("Success. "):
        return OK
    return OUTPUT
