"""Every builder scenario verified through the claude-code plugin (an installed format):
verdicts, findings (codes and places) and open calls from the manifest plus literal expectations."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sessaudit.engine import audit
from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_all
from sessaudit.model import Report, Source

# the literal verdict of every scenario's session source(s)
VERDICTS: dict[str, str] = (
    {name: "clean" for name in SCENARIOS}
    | {name: "needs-recovery" for name in SCENARIOS if name.startswith("dangling_")}
    | {"killed_during_bash": "needs-recovery", "torn_tail": "needs-recovery"}
)
OPEN_CONDITION: dict[str, str] = {
    "killed_during_bash": "effect-unknown",
    "torn_tail": "effect-unknown",
    "dangling_bash": "effect-unknown",
    "dangling_write": "effect-unknown",
    "dangling_edit": "effect-unknown",
    "dangling_multiedit": "effect-unknown",
    "dangling_notebookedit": "effect-unknown",
    "dangling_mcp": "effect-unknown",
    "dangling_read": "effect-replayable",
    "dangling_glob": "effect-replayable",
    "dangling_grep": "effect-replayable",
    "dangling_ls": "effect-replayable",
    "dangling_webfetch": "effect-replayable",
}
RUN_STATES: dict[str, list[str]] = {
    "user_interrupt": ["aborted", "failed", "completed"],
    "compacted": ["completed", "completed", "completed"],
    "placeholder_stop_null": ["completed", "completed"],
    "subagent_folder": ["completed", "completed"],  # the trunk's turn, then the agent's
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("claude-code")
    return root, build_all(root)


@pytest.fixture(scope="module")
def report(built: tuple[Path, dict[str, Any]]) -> Report:
    root, _ = built
    return audit([str(root / "projects")]).report


def rel(root: Path, path: str) -> str:
    return Path(path).resolve().relative_to(root.resolve()).as_posix()


def sources_of(report: Report, root: Path, entry: dict[str, Any]) -> dict[str, Source]:
    sessions = {item["path"] for item in entry["files"] if item["kind"] == "session"}
    found = {rel(root, source.path): source for source in report.sources}
    return {path: found[path] for path in sessions}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_each_scenario_verdict_and_open_calls(
    built: tuple[Path, dict[str, Any]], report: Report, name: str
) -> None:
    root, manifest = built
    entry = manifest[name]
    sources = sources_of(report, root, entry)
    assert {source.verdict.value for source in sources.values()} == {VERDICTS[name]}
    # every file of the scenario is verified, session files as sources and sub-agent files inside them
    # (a nested agent's meta sidecar is read too: it ties the agent to its Task call)
    read = {
        rel(root, file.path)
        for source in sources.values()
        for file in source.files
        if not file.path.endswith(".meta.json")
    }
    assert read == {item["path"] for item in entry["files"] if item["kind"] == "session" or name != "resumed"}
    pending = [
        effect
        for source in sources.values()
        for session in source.sessions
        for run in session.runs
        if run.recovery is not None
        for effect in run.recovery.pending_effects
    ]
    assert [effect.tool_call_id for effect in pending] == entry["open_calls"]
    calls = {call["id"]: call for call in entry["tool_calls"]}
    for effect in pending:
        call = calls[effect.tool_call_id]
        assert effect.tool_name == call["name"]
        assert effect.intent_id == call["assistant_uuid"]
        assert effect.replay_policy == ("never" if call["changes_world"] else "safe")
    conditions = [
        run.recovery.condition
        for source in sources.values()
        for session in source.sessions
        for run in session.runs
        if run.recovery is not None
    ]
    assert conditions == ([OPEN_CONDITION[name]] if name in OPEN_CONDITION else [])
    for source in sources.values():
        for session in source.sessions:
            for run in session.runs:
                assert run.kind == "turn"
                if run.recovery is not None:  # a seed of the kind its condition gives (test_seeds.py)
                    kind = "fork" if OPEN_CONDITION[name] == "effect-unknown" else "replay"
                    assert run.state == "open" and run.recovery.seed is not None
                    assert run.recovery.seed_kind == kind == run.recovery.seed.seed_kind
    if name in RUN_STATES:
        (source,) = sources.values()
        assert [run.state for run in source.sessions[0].runs] == RUN_STATES[name]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_each_scenario_findings(built: tuple[Path, dict[str, Any]], report: Report, name: str) -> None:
    root, manifest = built
    entry = manifest[name]
    paths = {item["path"] for item in entry["files"]}
    found = sorted(
        (finding.rule, rel(root, finding.location.path or ""), finding.location.line)
        for finding in report.findings
        if rel(root, finding.location.path or "") in paths
    )
    calls = {call["id"]: call for call in entry["tool_calls"]}
    expected = []
    for call_id in entry["open_calls"]:
        call = calls[call_id]
        expected.append(("SA302" if call["changes_world"] else "SA303", call["file"], call["line"]))
        expected.append(("SA301", call["file"], call["line"]))  # the turn ends at the dangling call's line
    for torn in entry["torn_tail"]:
        expected.append(("SA702", torn["file"], torn["line"]))
    for parent in entry["parents_elsewhere"]:
        if not parent["resolves_in"]:
            expected.append(("SA710", parent["file"], parent["line"]))
    assert found == sorted(expected)


def test_literal_findings_of_the_issue_example(built: tuple[Path, dict[str, Any]], report: Report) -> None:
    root, manifest = built
    entry = manifest["killed_during_bash"]
    (source,) = sources_of(report, root, entry).values()
    (session,) = source.sessions
    assert session.facts == 5 and session.session_id == entry["files"][0]["session_id"]
    (run,) = session.runs
    assert run.recovery is not None
    assert run.recovery.conditions == ["effect-unknown"]
    (effect,) = run.recovery.pending_effects
    assert effect.tool_name == "Bash"
    assert effect.arguments == {"command": "npm test", "description": "Run the test suite"}
    codes = [
        f.rule
        for f in report.findings
        if rel(root, f.location.path or "").startswith("projects/-home-dev-killed")
    ]
    assert codes == ["SA301", "SA302"]


def test_a_torn_tail_is_repairable_and_counted(built: tuple[Path, dict[str, Any]], report: Report) -> None:
    root, manifest = built
    entry = manifest["torn_tail"]
    (source,) = sources_of(report, root, entry).values()
    assert source.sessions[0].torn_tail_bytes == entry["torn_tail"][0]["kept_bytes"]
    torn = [f for f in report.findings if f.rule == "SA702"]
    assert len(torn) == 1 and torn[0].severity.value == "warning"


def test_sub_agent_files_are_read_with_their_session_in_both_layouts(
    built: tuple[Path, dict[str, Any]], report: Report
) -> None:
    root, manifest = built
    for name, agent_part in (("subagent_folder", "/subagents/agent-"), ("subagent_beside", "/agent-")):
        entry = manifest[name]
        (source,) = sources_of(report, root, entry).values()
        transcripts = [file for file in source.files if file.path.endswith(".jsonl")]
        assert len(transcripts) == 2 and agent_part in transcripts[1].path
        metas = [file.path.rsplit("/", 1)[-1] for file in source.files if file.path.endswith(".meta.json")]
        assert metas == (
            [transcripts[1].path.rsplit("/", 1)[-1].replace(".jsonl", ".meta.json")]
            if name == "subagent_folder"
            else []
        )
        assert all(file.unchanged for file in source.files)
        assert source.sessions[0].facts == sum(item["lines"] for item in entry["files"])
    agent_sources = [s for s in report.sources if os.path.basename(s.path).startswith("agent-")]
    assert agent_sources == []
