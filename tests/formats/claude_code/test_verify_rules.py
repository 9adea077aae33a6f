"""Hand-written damaged lines, one or more per Claude Code rule (SA701–SA714), through the installed
plugin; a walk of a projects/ tree; evidence is never written."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
