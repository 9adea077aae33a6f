"""Named Claude Code transcripts for golden reports, each written under a root folder (a config dir).

Every builder scenario is a case (its project directory is verified: the session files, their sub-agent
files and resume copies), and one hand-written file per rule SA701–SA717 shows that rule alone: a prompt
and its answer (`hand_lines`) with one line damaged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_one
from tests.formats.claude_code.hand_lines import SID, U1, U2, U3, answer, line, prompt, write

Case = Callable[[Path], Path]
OTHER_SESSION = "99999999-2222-4333-8444-555555555555"
U4 = "aaaaaaaa-bbbb-4ccc-8ddd-000000000004"


def _scenario(name: str) -> Case:
    def build(root: Path) -> Path:
        entry = build_one(root, name)
        (folder,) = {Path(item["path"]).parts[1] for item in entry["files"]}
        return root / "projects" / folder

    return build


def _lines(*lines: object, tail: bytes = b"") -> Case:
    return lambda root: write(root, *lines, tail=tail)


def _orphan_result() -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "ok"}
    return line("user", U3, U2, "2026-03-14T09:00:02.000Z", message={"role": "user", "content": [block]})


def _without_cwd() -> dict[str, object]:
    record = answer(U2, U1)
    del record["cwd"]
    return record


U5, U6, U7, U8 = (f"aaaaaaaa-bbbb-4ccc-8ddd-00000000000{i}" for i in (5, 6, 7, 8))
AGENT = "a1b2c3d4e5f607182"
TASK = "toolu_01TaskSpawnsTheAgent000001"


def _in_agent(record: dict[str, object]) -> dict[str, object]:
    return record | {"isSidechain": True, "agentId": AGENT}


def _agent_case(trunk: list[object], agent: list[object]) -> Case:
    """A session file of `trunk` lines and its nested sub-agent file `agent-<AGENT>.jsonl` of `agent`."""

    def build(root: Path) -> Path:
        path = write(root, *trunk)
        folder = path.parent / SID / "subagents"
        folder.mkdir(parents=True)
        (folder / f"agent-{AGENT}.jsonl").write_bytes(
            b"".join(json.dumps(item).encode() + b"\n" for item in agent)
        )
        return path

    return build


def _spawned_session() -> list[object]:
    """Prompt, a Task call, its result naming the agent (`agentId: …`), the final answer."""
    call = answer(U2, U1)
    spawn = {"type": "tool_use", "id": TASK, "name": "Task", "input": {"prompt": "Read calc.py"}}
    call["message"] = {**call["message"], "content": [spawn], "stop_reason": "tool_use"}  # type: ignore[dict-item]
    block = {"type": "tool_result", "tool_use_id": TASK, "content": f"calc.py adds.\nagentId: {AGENT}"}
    result = line("user", U3, U2, "2026-03-14T09:00:09.000Z", message={"role": "user", "content": [block]})
    return [prompt(U1), call, result, answer(U4, U3, ts="2026-03-14T09:00:10.000Z")]


def _agent_lines() -> list[object]:
    ask = _in_agent(prompt(U5, ts="2026-03-14T09:00:02.000Z"))
    return [ask, _in_agent(answer(U6, U5, ts="2026-03-14T09:00:05.000Z"))]


CASES: dict[str, Case] = {
    **{name.replace("_", "-"): _scenario(name) for name in SCENARIOS},
    "damaged-SA701-transcript-line-invalid": _lines(prompt(U1), b'{"type":"user",', answer(U2, U1)),
    "damaged-SA702-transcript-torn-tail": _lines(prompt(U1), answer(U2, U1), tail=b'{"type":"user","mess'),
    "damaged-SA703-transcript-final-newline-missing": _lines(
        prompt(U1), tail=json.dumps(answer(U2, U1)).encode()
    ),
    "damaged-SA704-transcript-record-not-object": _lines(prompt(U1), b"[1,2]", answer(U2, U1)),
    "damaged-SA705-transcript-record-type-missing": _lines(
        prompt(U1), answer(U2, U1), {"uuid": U3, "sessionId": SID}
    ),
    "damaged-SA706-transcript-record-type-unknown": _lines(
        prompt(U1), answer(U2, U1), line("brand-new-kind", None, None, "2026-03-14T09:00:02.000Z")
    ),
    "damaged-SA707-transcript-record-shape-invalid": _lines(
        prompt(U1), line("assistant", U2, U1, "2026-03-14T09:00:01.000Z", message={"content": "not a list"})
    ),
    "damaged-SA708-transcript-record-shape-unusual": _lines(prompt(U1), _without_cwd()),
    "damaged-SA709-transcript-uuid-duplicate": _lines(
        prompt(U1), answer(U2, U1), answer(U2, U1, "2026-03-14T09:00:02.000Z")
    ),
    "damaged-SA710-transcript-parent-unresolved": _lines(prompt(U1, parent=U3), answer(U2, U1)),
    "damaged-SA711-transcript-tool-result-orphan": _lines(
        prompt(U1), answer(U2, U1), _orphan_result(), answer(U4, U3, "2026-03-14T09:00:03.000Z")
    ),
    "damaged-SA712-transcript-session-id-inconsistent": _lines(
        prompt(U1), answer(U2, U1) | {"sessionId": OTHER_SESSION}
    ),
    "damaged-SA713-transcript-timestamp-decreasing": _lines(
        prompt(U1), answer(U2, U1, "2026-03-14T08:59:00.000Z")
    ),
    "damaged-SA714-transcript-field-unknown": _lines(prompt(U1), answer(U2, U1, shinyNewField=1)),
    "damaged-SA715-transcript-summary-leaf-unresolved": _lines(
        {"type": "summary", "summary": "Fix the cart", "leafUuid": U8}, prompt(U1), answer(U2, U1)
    ),
    "damaged-SA716-transcript-subagent-untied": _agent_case([prompt(U1), answer(U2, U1)], _agent_lines()),
    "damaged-SA717-transcript-sidechain-line-foreign": _agent_case(
        _spawned_session(),
        [*_agent_lines(), answer(U7, U6, ts="2026-03-14T09:00:06.000Z") | {"agentId": AGENT}],
    ),
}
