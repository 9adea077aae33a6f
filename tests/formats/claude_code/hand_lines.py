"""Small hand-written Claude Code transcript lines (one session, one project `-home-dev-x`), for the
damaged-line tests and the golden cases; `write` puts them in `<root>/projects/-home-dev-x/<SID>.jsonl`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "11111111-2222-4333-8444-555555555555"
U1, U2, U3 = (f"aaaaaaaa-bbbb-4ccc-8ddd-00000000000{i}" for i in (1, 2, 3))


def line(kind: str, uuid: str | None, parent: str | None, ts: str, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/x",
        "sessionId": SID,
        "version": "2.1.79",
        "type": kind,
        "timestamp": ts,
    }
    if uuid is not None:
        record["uuid"] = uuid
    return record | extra


def prompt(uuid: str, parent: str | None = None, ts: str = "2026-03-14T09:00:00.000Z") -> dict[str, Any]:
    return line("user", uuid, parent, ts, message={"role": "user", "content": "hello"})


def answer(uuid: str, parent: str, ts: str = "2026-03-14T09:00:01.000Z", **extra: Any) -> dict[str, Any]:
    message = {"id": "msg_1", "role": "assistant", "type": "message", "model": "claude-opus-4-6",
               "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}  # fmt: skip
    return line("assistant", uuid, parent, ts, message=message, requestId="req_1", **extra)


def write(root: Path, *lines: Any, tail: bytes = b"") -> Path:
    """The session file of `lines` (JSON objects, or raw bytes written as they are), each LF-terminated,
    then `tail` unterminated."""
    folder = root / "projects" / "-home-dev-x"
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    data = b"".join(
        (item if isinstance(item, bytes) else json.dumps(item).encode()) + b"\n" for item in lines
    )
    path.write_bytes(data + tail)
    return path
