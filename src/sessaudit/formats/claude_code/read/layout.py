"""Where a session's files lie (spec §1.3, §1.4): `<project>/<session-uuid>.jsonl`, its sub-agents in
`<session-uuid>/subagents/` (2.1.2+) or, older, `agent-<id>.jsonl` beside it. Light: the plugin uses it to
recognise files, so it reads at most a first line."""

from __future__ import annotations

import os
import re
from typing import Final

from sessaudit.evidence import read_prefix

UUID: Final = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
AGENT_FILE: Final = re.compile(r"agent-[A-Za-z0-9_-]+\.jsonl")
FIRST_LINE_BYTES: Final = 16 * 1024
SESSION_ID: Final = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')


def session_stem(real_path: str) -> str | None:
    """The session uuid a `<uuid>.jsonl` file is named after, or None."""
    name = os.path.basename(real_path)
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else None
    return stem if stem is not None and UUID.fullmatch(stem) else None


def in_projects(real_path: str) -> bool:
    """`.../projects/<dir>/<file>`: the file lies in a project directory of a Claude Code root."""
    return os.path.basename(os.path.dirname(os.path.dirname(real_path))) == "projects"


def first_session_id(real_path: str) -> str | None:
    """The `sessionId` of a file's first line (its first 16 KiB), or None (absent, unreadable)."""
    try:
        head = read_prefix(real_path, FIRST_LINE_BYTES)
    except OSError:
        return None
    found = SESSION_ID.search(head.split(b"\n", 1)[0])
    return found.group(1).decode("utf-8", "replace") if found else None


def session_of_subagent(real_path: str) -> str | None:
    """The session file a sub-agent file belongs to when that file exists, else None: the folder layout
    (`<uuid>/subagents/…/agent-*.jsonl`: the `<uuid>.jsonl` beside the `<uuid>` folder) or the flat one
    (`agent-*.jsonl` whose first line names a session whose file lies beside it)."""
    name = os.path.basename(real_path)
    if not AGENT_FILE.fullmatch(name):
        return None
    parts = real_path.split(os.sep)
    if "subagents" in parts:
        at = len(parts) - 1 - parts[::-1].index("subagents")
        folder = os.sep.join(parts[:at])
        owner = folder + ".jsonl"
        return owner if UUID.fullmatch(os.path.basename(folder)) and os.path.isfile(owner) else None
    session = first_session_id(real_path)
    if session is None or not UUID.fullmatch(session):
        return None
    owner = os.path.join(os.path.dirname(real_path), session + ".jsonl")
    return owner if os.path.isfile(owner) else None


def subagent_files(real_path: str) -> list[str]:
    """A session file's sub-agent transcripts, sorted: every `agent-*.jsonl` below `<uuid>/subagents/`
    (workflows included), then the flat `agent-*.jsonl` beside it whose first line carries its session id
    (one first line read per flat agent file of the project directory: cheap)."""
    stem = session_stem(real_path)
    if stem is None:
        return []
    folder = os.path.join(os.path.dirname(real_path), stem, "subagents")
    found: list[str] = []
    for top, directories, names in os.walk(folder):
        directories.sort()
        found.extend(os.path.join(top, name) for name in sorted(names) if AGENT_FILE.fullmatch(name))
    try:
        beside = sorted(os.listdir(os.path.dirname(real_path) or "."))
    except OSError:
        beside = []
    for name in beside:
        path = os.path.join(os.path.dirname(real_path), name)
        if AGENT_FILE.fullmatch(name) and os.path.isfile(path) and first_session_id(path) == stem:
            found.append(path)
    return found


def companions(real_path: str) -> list[str]:
    """Everything a session file owns: its sub-agent files and the other files of its `<uuid>/` folder
    (meta sidecars, tool-results/, session-memory/)."""
    stem = session_stem(real_path)
    if stem is None:
        return []
    owned = subagent_files(real_path)
    for top, directories, names in os.walk(os.path.join(os.path.dirname(real_path), stem)):
        directories.sort()
        owned.extend(os.path.join(top, name) for name in sorted(names))
    return sorted(set(owned))


def project_files(real_path: str) -> list[str]:
    """The other `*.jsonl` session and flat agent files of the file's project directory, sorted."""
    directory = os.path.dirname(real_path) or "."
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [
        os.path.join(directory, name)
        for name in names
        if name.endswith(".jsonl") and os.path.join(directory, name) != real_path
    ]
