"""Hand-written damaged lines, one or more per Claude Code rule (SA701–SA715), through the installed
plugin; a walk of a projects/ tree; evidence is never written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sessaudit.engine import audit
from sessaudit.formats.claude_code.plugin import PLUGIN
from sessaudit.formats.claude_code.rules import CLAUDE_CODE_RULES
from sessaudit.model import Report
from tests.formats.claude_code.hand_lines import SID, U1, U2, U3, answer, line, prompt, write


def run(path: Path) -> Report:
    return audit([str(path)]).report


def codes(report: Report) -> list[tuple[str, int | None]]:
    return [(item.rule, item.location.line) for item in report.findings]


def test_clean_file_has_no_finding(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1), answer(U2, U1)))
    assert codes(report) == [] and report.sources[0].verdict.value == "clean"
    assert report.sources[0].format == "claude-code" and report.sources[0].format_version == "2.1.79"


@pytest.mark.parametrize(
    ("raw", "code"),
    [(b'{"type":"user",', "SA701"), (b"", "SA701"), (b'{"a":1}\r', "SA701"), (b"[1,2]", "SA704")],
)
def test_line_not_strict_json_or_not_an_object(tmp_path: Path, raw: bytes, code: str) -> None:
    report = run(write(tmp_path, prompt(U1), raw, answer(U2, U1)))
    assert (code, 2) in codes(report)
    assert report.sources[0].verdict.value == "corrupt"


def test_torn_last_line_is_repairable(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1), answer(U2, U1), tail=b'{"type":"user","mess'))
    assert codes(report) == [("SA702", 3)]
    assert report.sources[0].verdict.value == "repairable"
    assert (
        report.findings[0].location.byte_offset
        == len((tmp_path / "projects/-home-dev-x" / f"{SID}.jsonl").read_bytes()) - 20
    )


def test_whole_last_line_without_lf(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1), tail=json.dumps(answer(U2, U1)).encode()))
    assert codes(report) == [("SA703", 2)]


def test_type_missing_and_unknown(tmp_path: Path) -> None:
    missing = {"uuid": U3, "sessionId": SID}
    unknown = line("brand-new-kind", None, None, "2026-03-14T09:00:02.000Z")
    report = run(write(tmp_path, prompt(U1), answer(U2, U1), missing, unknown))
    assert ("SA705", 3) in codes(report) and ("SA706", 4) in codes(report)
    note = next(item for item in report.findings if item.rule == "SA706")
    assert "brand-new-kind" in note.message and "2.1.79" in note.message and note.severity.value == "note"


def test_shape_seen_is_an_error_and_inferred_a_warning(tmp_path: Path) -> None:
    bad = line("assistant", U2, U1, "2026-03-14T09:00:01.000Z", message={"content": "not a list"})
    thin = {"type": "user", "uuid": U3, "parentUuid": U2, "message": {"role": "user", "content": "more"}}
    report = run(write(tmp_path, prompt(U1), bad, thin))
    assert ("SA707", 2) in codes(report) and ("SA708", 3) in codes(report)
    assert next(i for i in report.findings if i.rule == "SA707").location.pointer == "/message/content"
    assert next(i for i in report.findings if i.rule == "SA708").severity.value == "warning"


def test_duplicate_uuid_in_one_file(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1), answer(U2, U1), answer(U2, U1, "2026-03-14T09:00:02.000Z")))
    assert ("SA709", 3) in codes(report) and report.sources[0].verdict.value == "corrupt"


def test_parent_resolving_nowhere_is_a_warning_naming_it(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1, parent=U3), answer(U2, U1)))
    assert codes(report) == [("SA710", 1)]
    assert U3 in report.findings[0].message


def test_parent_in_another_file_of_the_project_resolves(tmp_path: Path) -> None:
    path = write(tmp_path, prompt(U1, parent=U3), answer(U2, U1))
    other = line("user", U3, None, "2026-03-14T08:00:00.000Z", message={"role": "user", "content": "x"})
    other["sessionId"] = "99999999-2222-4333-8444-555555555555"
    (path.parent / "99999999-2222-4333-8444-555555555555.jsonl").write_text(json.dumps(other) + "\n")
    report = run(path)
    assert [code for code, _ in codes(report)] == []


def test_tool_result_without_tool_use(tmp_path: Path) -> None:
    block = {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "ok"}
    result = line("user", U3, U2, "2026-03-14T09:00:02.000Z", message={"role": "user", "content": [block]})
    report = run(write(tmp_path, prompt(U1), answer(U2, U1), result))
    assert ("SA711", 3) in codes(report) and report.sources[0].verdict.value == "corrupt"
    assert (
        next(i for i in report.findings if i.rule == "SA711").location.pointer
        == "/message/content/0/tool_use_id"
    )


def test_dangling_tool_use_is_open_work_not_a_finding_of_its_own(tmp_path: Path) -> None:
    call = answer(U2, U1)
    call["message"]["content"] = [
        {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": "a"}}
    ]
    call["message"]["stop_reason"] = "tool_use"
    report = run(write(tmp_path, prompt(U1), call))
    assert codes(report) == [("SA301", 2), ("SA302", 2)]
    (session,) = report.sources[0].sessions
    assert session.verdict.value == "needs-recovery"
    (effect,) = session.runs[0].recovery.pending_effects  # type: ignore[union-attr]
    assert (effect.tool_call_id, effect.intent_id, effect.replay_policy) == ("toolu_1", U2, "never")


def test_prompt_without_answer_is_a_model_request_open(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1)))
    (run_,) = report.sources[0].sessions[0].runs
    assert run_.state == "open" and run_.recovery is not None
    assert run_.recovery.condition == "model-request-open" and codes(report) == [("SA301", 1)]


def test_session_id_inconsistent_in_a_file(tmp_path: Path) -> None:
    other = answer(U2, U1)
    other["sessionId"] = "99999999-2222-4333-8444-555555555555"
    report = run(write(tmp_path, prompt(U1), other))
    assert codes(report) == [("SA712", 2)]


def test_timestamps_decreasing(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1), answer(U2, U1, "2026-03-14T08:59:00.000Z")))
    assert codes(report) == [("SA713", 2)]


def test_unknown_field_is_a_note_naming_field_and_version(tmp_path: Path) -> None:
    report = run(write(tmp_path, prompt(U1), answer(U2, U1, shinyNewField=1)))
    assert codes(report) == [("SA714", 2)]
    assert "shinyNewField" in report.findings[0].message and "2.1.79" in report.findings[0].message


def test_summary_whose_leaf_is_nowhere_is_a_note(tmp_path: Path) -> None:
    summary = {"type": "summary", "summary": "Fix the cart", "leafUuid": U3}
    report = run(write(tmp_path, summary, prompt(U1), answer(U2, U1)))
    assert codes(report) == [("SA715", 1)]
    assert (
        report.findings[0].evidence == {"leaf_uuid": U3}
        and report.findings[0].location.pointer == "/leafUuid"
    )
    assert report.sources[0].verdict.value == "clean"


def test_summary_whose_leaf_is_in_the_file_or_the_project_is_fine(tmp_path: Path) -> None:
    here = {"type": "summary", "summary": "Fix the cart", "leafUuid": U2}
    assert codes(run(write(tmp_path / "here", here, prompt(U1), answer(U2, U1)))) == []
    path = write(
        tmp_path / "there", {"type": "summary", "summary": "s", "leafUuid": U3}, prompt(U1), answer(U2, U1)
    )
    other = path.parent / "99999999-2222-4333-8444-555555555555.jsonl"
    earlier = prompt(U3, ts="2026-03-13T09:00:00.000Z") | {"sessionId": other.stem}
    other.write_bytes(json.dumps(earlier).encode() + b"\n")
    assert codes(run(path)) == []


def test_every_rule_has_a_test_here() -> None:
    source = Path(__file__).read_text()
    assert [rule.code for rule in CLAUDE_CODE_RULES if f'"{rule.code}"' not in source] == []


def test_a_walk_recognises_sessions_and_their_sub_agents(tmp_path: Path) -> None:
    path = write(tmp_path, prompt(U1), answer(U2, U1))
    nested = path.parent / SID / "subagents"
    nested.mkdir(parents=True)
    agent = prompt("aaaaaaaa-bbbb-4ccc-8ddd-000000000009") | {"isSidechain": True, "agentId": "abc"}
    (nested / "agent-abc.jsonl").write_text(json.dumps(agent) + "\n")
    beside = prompt("aaaaaaaa-bbbb-4ccc-8ddd-000000000008") | {"isSidechain": True, "agentId": "def"}
    (path.parent / "agent-def.jsonl").write_text(json.dumps(beside) + "\n")
    (path.parent / "notes.txt").write_text("not a transcript\n")
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.rglob("*") if p.is_file()}
    report = run(tmp_path / "projects")
    assert [os.path.basename(s.path) for s in report.sources] == [f"{SID}.jsonl"]
    assert sorted(os.path.basename(f.path) for f in report.sources[0].files) == [
        f"{SID}.jsonl", "agent-abc.jsonl", "agent-def.jsonl"]  # fmt: skip
    assert report.sources[0].evidence_unchanged
    # sub-agent runs are the session's: three turns, two of them open (no answer in the agent files)
    assert len(report.sources[0].sessions[0].runs) == 3
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before


def test_sniff_and_takes_walked() -> None:
    assert PLUGIN.sniff(json.dumps(prompt(U1)).encode() + b"\n", "/x/a.jsonl")
    assert PLUGIN.sniff(b'{"type":"summary","summary":"s","leafUuid":"u"}\n', "/x/a.jsonl")
    assert not PLUGIN.sniff(b'{"type":"summary","summary":"s"}\n', "/x/a.jsonl")
    assert not PLUGIN.sniff(b'{"type":"event","uuid":"u"}\n', "/x/a.jsonl")
    assert not PLUGIN.sniff(b"[1]\n", "/x/a.jsonl")
    assert PLUGIN.takes_walked(f"/r/projects/-home-x/{SID}.jsonl")
    assert not PLUGIN.takes_walked(f"/r/other/-home-x/{SID}.jsonl")
    assert not PLUGIN.takes_walked("/r/projects/-home-x/notes.jsonl")


def test_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    from sessaudit.limits import Limits
    from sessaudit.plugin import VerifyOptions

    path = write(tmp_path, prompt(U1), answer(U2, U1))
    size = path.stat().st_size
    before = path.read_bytes()
    result = audit([str(path)], options=VerifyOptions(limits=Limits(max_file_bytes=size - 1)))
    (source,) = result.report.sources
    assert source.verdict.value == "unreadable" and source.sessions == []
    assert [item.rule for item in result.report.findings] == ["SA012"]
    assert result.report.findings[0].evidence == {"bytes": size, "max_file_bytes": size - 1}
    assert result.incomplete and path.read_bytes() == before
    fits = audit([str(path)], options=VerifyOptions(limits=Limits(max_file_bytes=size)))
    assert fits.report.findings == [] and not fits.incomplete


TASK_ID = "toolu_01TaskCallForAgentAbc0001"


def task_call(uuid: str, parent: str) -> dict[str, Any]:
    spawn = answer(uuid, parent)
    block = {"type": "tool_use", "id": TASK_ID, "name": "Task", "input": {"prompt": "Read calc.py"}}
    spawn["message"] = spawn["message"] | {"content": [block], "stop_reason": "tool_use"}
    return spawn


def agent_session(tmp_path: Path, *agent_lines: dict[str, Any], meta: Any = None) -> Path:
    """A session whose line 2 is a Task call (never answered) and an agent-abc.jsonl in its subagents/."""
    path = write(tmp_path, prompt(U1), task_call(U2, U1))
    nested = path.parent / SID / "subagents"
    nested.mkdir(parents=True)
    (nested / "agent-abc.jsonl").write_text("".join(json.dumps(line) + "\n" for line in agent_lines))
    if meta is not None:
        (nested / "agent-abc.meta.json").write_text(json.dumps(meta))
    return path


AGENT_PROMPT = prompt("aaaaaaaa-bbbb-4ccc-8ddd-000000000009") | {"isSidechain": True, "agentId": "abc"}


def test_sub_agent_tied_to_no_call_is_a_note(tmp_path: Path) -> None:
    report = run(agent_session(tmp_path, AGENT_PROMPT))
    untied = [item for item in report.findings if item.rule == "SA716"]
    assert [(item.location.path.rsplit("/", 1)[-1], item.evidence) for item in untied] == [
        ("agent-abc.jsonl", {"agent_id": "abc", "meta_tool_use_id": None})
    ]
    assert "no meta sidecar names its call" in untied[0].message


def test_sub_agent_tied_by_its_meta_sidecar(tmp_path: Path) -> None:
    report = run(
        agent_session(tmp_path, AGENT_PROMPT, meta={"agentType": "general-purpose", "toolUseId": TASK_ID})
    )
    assert [item.rule for item in report.findings if item.rule in ("SA716", "SA717")] == []
    names = sorted(os.path.basename(item.path) for item in report.sources[0].files)
    assert names == [f"{SID}.jsonl", "agent-abc.jsonl", "agent-abc.meta.json"]  # the sidecar is evidence too


def test_sub_agent_whose_meta_names_another_call(tmp_path: Path) -> None:
    report = run(agent_session(tmp_path, AGENT_PROMPT, meta={"toolUseId": "toolu_01Elsewhere"}))
    (untied,) = [item for item in report.findings if item.rule == "SA716"]
    assert untied.evidence == {"agent_id": "abc", "meta_tool_use_id": "toolu_01Elsewhere"}


def test_sub_agent_tied_by_the_calls_result(tmp_path: Path) -> None:
    path = write(tmp_path, prompt(U1), task_call(U2, U1))
    result = prompt(U3, U2, ts="2026-03-14T09:00:05.000Z")
    tail = {"type": "text", "text": "agentId: abc\n<usage>total_tokens: 10</usage>"}
    block = {"type": "tool_result", "tool_use_id": TASK_ID, "content": [tail]}
    result["message"] = {"role": "user", "content": [block]}
    path.write_bytes(path.read_bytes() + json.dumps(result).encode() + b"\n")
    nested = path.parent / SID / "subagents"
    nested.mkdir(parents=True)
    (nested / "agent-abc.jsonl").write_text(json.dumps(AGENT_PROMPT) + "\n")
    assert [item.rule for item in run(path).findings if item.rule in ("SA716", "SA717")] == []


def test_foreign_line_in_a_sub_agents_file(tmp_path: Path) -> None:
    trunk = prompt("aaaaaaaa-bbbb-4ccc-8ddd-000000000010", ts="2026-03-14T09:00:09.000Z")  # isSidechain false
    other = AGENT_PROMPT | {"uuid": "aaaaaaaa-bbbb-4ccc-8ddd-000000000011", "agentId": "xyz"}
    meta = {"toolUseId": TASK_ID}
    report = run(agent_session(tmp_path, AGENT_PROMPT, trunk, other, meta=meta))
    foreign = [
        (item.location.line, item.location.pointer) for item in report.findings if item.rule == "SA717"
    ]
    assert foreign == [(2, "/isSidechain"), (3, "/agentId")]
