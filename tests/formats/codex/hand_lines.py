"""Small hand-written Codex rollout lines (one session `SID` in `/home/dev/x`, CLI 0.98.0), for the
damaged-line tests and the golden cases; `write` puts them in
`<root>/sessions/2026/03/14/rollout-2026-03-14T09-00-00-<SID>.jsonl` (another name on request).

`rollout()` is the whole undamaged session of eleven lines, one turn with one answered shell call and two
model responses:

    1 session_meta   2 turn_context   3 task_started   4 user message   5 user_message
    6 function_call call_1            7 token_count (response 1)         8 function_call_output call_1
    9 assistant message               10 token_count (response 2)        11 task_complete

Response 1 is `FIRST` (input 1000, of it cached 200, output 50, of it reasoning 20), response 2 `SECOND`
(1200, 900, 30, 0); the totals after them are `AFTER_FIRST` and `AFTER_SECOND`, written out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "0195a0b1-1111-7222-8333-444444444444"
FORK = "0195a0b9-5555-7666-8777-888888888888"
OTHER = "0195a0b1-9999-7aaa-8bbb-cccccccccccc"
CALL = "call_1"
VERSION = "0.98.0"
CWD = "/home/dev/x"
DAY = "2026/03/14"
STAMP = "2026-03-14T09-00-00"

# (input, cached, output, reasoning); total_tokens = input + output
Counts = tuple[int, int, int, int]
FIRST: Counts = (1000, 200, 50, 20)
SECOND: Counts = (1200, 900, 30, 0)
AFTER_FIRST: Counts = FIRST
AFTER_SECOND: Counts = (2200, 1100, 80, 20)

Line = dict[str, Any]


def at(seconds: float) -> str:
    """09:00:00 UTC on 2026-03-14 plus `seconds` (millisecond precision, `Z`)."""
    whole, millis = divmod(round(seconds * 1000), 1000)
    minutes, second = divmod(whole, 60)
    return f"2026-03-14T09:{minutes:02d}:{second:02d}.{millis:03d}Z"


def envelope(ts: str, kind: str, payload: dict[str, Any]) -> Line:
    return {"timestamp": ts, "type": kind, "payload": payload}


def session_meta(ts: str = at(0), sid: str = SID, **extra: Any) -> Line:
    payload: dict[str, Any] = {"id": sid}
    payload.update(extra.pop("forked", {}))
    payload |= {
        "timestamp": ts,
        "cwd": CWD,
        "originator": "codex_cli_rs",
        "cli_version": VERSION,
        "instructions": None,
        "source": "cli",
        "model_provider": "openai",
    }
    return envelope(ts, "session_meta", payload | extra)


def turn_context(ts: str = at(0.01)) -> Line:
    payload = {
        "cwd": CWD,
        "approval_policy": "on-request",
        "sandbox_policy": {"type": "workspace-write", "network_access": False},
        "model": "gpt-5-codex",
        "effort": "medium",
        "summary": "auto",
    }
    return envelope(ts, "turn_context", payload)


def event(ts: str, kind: str, **fields: Any) -> Line:
    return envelope(ts, "event_msg", {"type": kind, **fields})


def message(ts: str, role: str, text: str) -> Line:
    part = "output_text" if role == "assistant" else "input_text"
    return envelope(
        ts, "response_item", {"type": "message", "role": role, "content": [{"type": part, "text": text}]}
    )


def user_turn(ts: float = 1.0, text: str = "list the files", turn: str = "turn-1") -> list[Line]:
    """task_started, the prompt's message item and its user_message event (1 ms apart)."""
    return [
        event(at(ts), "task_started", turn_id=turn, model_context_window=272000),
        message(at(ts + 0.001), "user", text),
        event(at(ts + 0.002), "user_message", message=text, images=[]),
    ]


def function_call(ts: str, call_id: str = CALL, name: str = "shell") -> Line:
    arguments = json.dumps({"command": ["bash", "-lc", "ls"], "workdir": CWD}, separators=(",", ":"))
    return envelope(
        ts,
        "response_item",
        {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id},
    )


def function_output(ts: str, call_id: str = CALL, output: Any = "a.py\nb.py\n") -> Line:
    return envelope(
        ts, "response_item", {"type": "function_call_output", "call_id": call_id, "output": output}
    )


def usage(counts: Counts) -> dict[str, int]:
    inp, cached, out, reasoning = counts
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_output_tokens": reasoning,
        "total_tokens": inp + out,
    }


def token_count(ts: str, total: Counts, last: Counts, **changed: dict[str, int]) -> Line:
    """A token_count event; `changed` replaces a usage object outright (`total_token_usage=…`)."""
    info = {
        "total_token_usage": usage(total),
        "last_token_usage": usage(last),
        "model_context_window": 272000,
    }
    return event(ts, "token_count", info=info | changed, rate_limits=None)


def task_complete(ts: str, text: str | None = "Two files: a.py and b.py.", turn: str = "turn-1") -> Line:
    return event(ts, "task_complete", turn_id=turn, last_agent_message=text)


def rollout() -> list[Line]:
    """The undamaged session of the module docstring, lines 1–11."""
    return [
        session_meta(),
        turn_context(),
        *user_turn(),
        function_call(at(3.0)),
        token_count(at(3.1), AFTER_FIRST, FIRST),
        function_output(at(3.5)),
        message(at(5.0), "assistant", "Two files: a.py and b.py."),
        token_count(at(5.1), AFTER_SECOND, SECOND),
        task_complete(at(5.2)),
    ]


def encoded(item: Line | bytes) -> bytes:
    return item if isinstance(item, bytes) else json.dumps(item, separators=(",", ":")).encode()


def path_of(root: Path, sid: str = SID, stamp: str = STAMP) -> Path:
    return root / "sessions" / DAY / f"rollout-{stamp}-{sid}.jsonl"


def write(root: Path, *lines: Line | bytes, tail: bytes = b"", sid: str = SID, stamp: str = STAMP) -> Path:
    """The rollout file of `lines` (JSON objects, or raw bytes written as they are), each LF-terminated,
    then `tail` unterminated; named `rollout-<stamp>-<sid>.jsonl`."""
    path = path_of(root, sid, stamp)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(encoded(item) + b"\n" for item in lines) + tail)
    return path


def fork_lines(parent: list[Line], *, copy_at: float = 600.0) -> list[Line]:
    """A fork `FORK` of `parent` (whole, re-stamped 1 ms apart from `copy_at` s), then its own turn a
    minute later: one response `OWN` on top of the copied totals."""
    copied = [line | {"timestamp": at(copy_at + 0.001 * (i + 1))} for i, line in enumerate(parent)]
    own_at = copy_at + 60
    return [
        session_meta(at(copy_at), FORK, forked={"forked_from_id": SID}),
        *copied,
        *user_turn(own_at, "and the tests?", turn="turn-2"),
        message(at(own_at + 2), "assistant", "No tests yet."),
        token_count(at(own_at + 2.1), FORK_AFTER, OWN),
        task_complete(at(own_at + 2.2), "No tests yet.", turn="turn-2"),
    ]


OWN: Counts = (2500, 2048, 40, 8)
FORK_AFTER: Counts = (4700, 3148, 120, 28)  # AFTER_SECOND + OWN
FORK_STAMP = "2026-03-14T09-10-00"
