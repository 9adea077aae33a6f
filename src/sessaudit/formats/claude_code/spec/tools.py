"""Spec §10 as a table: whether re-running a tool call is safe (a read) or never (it may change the world).

The table decides unless `--current FILE` names the tool (recover/current.py: a Claude Code tool table,
schemas/claude-code-current.v1.schema.json, for every session or per session id): then the file's policy
wins for the tools it names. `ToolTable` (sessaudit.tooltables) is the two together, as one session's open
calls are judged."""

from __future__ import annotations

from typing import Final

from sessaudit.tooltables import ReplayPolicy, ToolTable

__all__ = ["BUILT_IN_TABLE", "REPLAY", "SPAWNING", "ReplayPolicy", "ToolTable", "replay_policy"]

# "changes the world: no" in §10 -> "safe"; "yes", "indirect", "depends" and unknown -> "never"
REPLAY: Final[dict[str, ReplayPolicy]] = {
    "Bash": "never",
    "PowerShell": "never",
    "Write": "never",
    "Edit": "never",
    "MultiEdit": "never",
    "NotebookEdit": "never",
    "Read": "safe",
    "View": "safe",
    "NotebookRead": "safe",
    "LS": "safe",
    "Glob": "safe",
    "Grep": "safe",
    "WebFetch": "safe",
    "WebSearch": "safe",
    "Task": "never",
    "Agent": "never",
    "TodoWrite": "safe",
    "TodoRead": "safe",
    "TaskCreate": "safe",
    "TaskGet": "safe",
    "TaskList": "safe",
    "TaskUpdate": "safe",
    "TaskOutput": "safe",
    "BashOutput": "safe",
    "TaskStop": "never",
    "KillShell": "never",
    "ExitPlanMode": "safe",
    "exit_plan_mode": "safe",
    "EnterPlanMode": "safe",
    "AskUserQuestion": "safe",
    "EnterWorktree": "never",
    "ExitWorktree": "never",
    "Skill": "never",
    "CronCreate": "safe",
    "CronDelete": "safe",
    "CronList": "safe",
    "LSP": "safe",
    "ToolSearch": "safe",
    "ListMcpResourcesTool": "safe",
    "ReadMcpResourceTool": "safe",
    "Artifact": "never",
    "Workflow": "never",
    "SendMessage": "never",
    "TeamCreate": "never",
    "TeamDelete": "never",
}


def replay_policy(name: str) -> ReplayPolicy:
    """The table's policy; MCP tools (`mcp__…`) and names it does not hold: "never"."""
    if name.startswith("mcp__"):
        return "never"
    return REPLAY.get(name, "never")


BUILT_IN: Final = "the built-in table (docs/formats/claude-code.md §10)"
BUILT_IN_TABLE: Final = ToolTable(replay_policy, BUILT_IN)


# the tools whose call spawns a sub-agent with a transcript of its own (spec §1.4): Task, Agent in 2.1.x
SPAWNING: Final = frozenset({"Task", "Agent"})
