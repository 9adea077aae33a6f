"""Sub-agent files tied to the calls that spawned them (spec §1.4): every line of an `agent-<id>.jsonl` is a
sidechain line of that agent (SA717 when one says otherwise), and each agent file is tied to a Task/Agent
call of the session (SA716 when nothing ties it): by its meta sidecar's `toolUseId` (2.1.2+), or by the
spawning call's result, whose `toolUseResult.agentId` or text tail `agentId: <id>` names the agent (a
nested spawn's result lies in another agent's file)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from sessaudit.formats.claude_code.check.links import tool_results, tool_uses
from sessaudit.formats.claude_code.read.lines import TranscriptFile
from sessaudit.formats.claude_code.spec.tools import SPAWNING
from sessaudit.model import Finding
from sessaudit.rules import finding

AGENT_NAME: Final = re.compile(r"agent-([^/\\]+)\.jsonl\Z")
AGENT_LINE: Final = re.compile(r"(?m)^agentId: ([A-Za-z0-9_-]{1,200})\s*$")
CONVERSATION: Final = frozenset({"user", "assistant", "system", "attachment", "progress"})


def _texts(block: Mapping[str, Any]) -> list[str]:
    content = block.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            item["text"] for item in content if isinstance(item, dict) and isinstance(item.get("text"), str)
        ]
    return []


def spawned(files: list[TranscriptFile]) -> dict[str, str]:
    """agent id -> the tool_use id whose result names it, over every file of the session."""
    found: dict[str, str] = {}
    for file in files:
        for record in file.records:
            structured = record.value.get("toolUseResult")
            for _, block in tool_results(record):
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    continue
                named = [structured.get("agentId")] if isinstance(structured, dict) else []
                for text in _texts(block):
                    named += AGENT_LINE.findall(text)
                for agent in named:
                    if isinstance(agent, str):
                        found.setdefault(agent, call_id)
    return found


def check_agents(files: list[TranscriptFile], metas: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """`metas`: an agent file's path -> its decoded meta sidecar (None: there is none, or it is no JSON
    object)."""
    calls = {
        block["id"]
        for file in files
        for record in file.records
        for _, block in tool_uses(record)
        if isinstance(block.get("id"), str) and block.get("name") in SPAWNING
    }
    results = spawned(files)
    found: list[Finding] = []
    for file in files:
        name = AGENT_NAME.search(file.path)
        if file.kind != "subagent" or name is None:
            continue
        agent = name.group(1)
        found += _sidechain_lines(file, agent)
        meta = metas.get(file.path)
        via_meta = meta.get("toolUseId") if meta is not None else None
        if (isinstance(via_meta, str) and via_meta in calls) or results.get(agent) in calls:
            continue
        named_call = via_meta if isinstance(via_meta, str) else None
        reason = (
            f"its meta sidecar names call {named_call}, which is no Task or Agent call of the session"
            if named_call is not None
            else "no meta sidecar names its call and no tool_result of the session names the agent"
        )
        found.append(
            finding(
                "SA716",
                f"{file.path}: agent {agent} is tied to no Task or Agent call of the session ({reason}): a "
                "/btw side question, or a spawn whose call is in a file that is gone",
                path=file.path,
                evidence={"agent_id": agent, "meta_tool_use_id": named_call},
            )
        )
    return found


def _sidechain_lines(file: TranscriptFile, agent: str) -> list[Finding]:
    found: list[Finding] = []
    for record in file.records:
        if record.kind not in CONVERSATION:
            continue
        problems: list[tuple[str, str]] = []
        if record.value.get("isSidechain") is False:
            problems.append(("/isSidechain", "isSidechain is false"))
        own = record.value.get("agentId")
        if isinstance(own, str) and own != agent:
            problems.append(("/agentId", f"agentId is {own}"))
        for pointer, problem in problems:
            found.append(
                finding(
                    "SA717",
                    f"line {record.line}: {problem} in the file of agent {agent}: a line of another "
                    "conversation in a sub-agent's file",
                    **record.where(pointer),
                )
            )
    return found
