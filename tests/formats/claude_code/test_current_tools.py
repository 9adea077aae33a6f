"""`--current FILE` for Claude Code: a tool table (schemas/claude-code-current.v1.schema.json) whose policies
win over the built-in one (spec/tools.py) for the tools it names: SA302 becomes SA303 and effect-unknown
effect-replayable for a call of a tool it calls safe, and the other way round; the recovery says which
table decided."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.formats.claude_code.build.scenarios import build_all
from sessaudit.formats.claude_code.recover.current import (
    EXTRA,
    ToolOverride,
    ToolTableError,
    load_tool_override,
    parse_tool_override,
)
from sessaudit.formats.claude_code.spec.tools import BUILT_IN_TABLE, ToolTable, replay_policy
from sessaudit.model import Recovery, Report
from sessaudit.plugin import VerifyOptions
from sessaudit.resources import load_schema

runner = CliRunner()
BUILT_IN = "tool replay policies: the built-in table (docs/formats/claude-code.md §10)"
NAMES = ["dangling_bash", "dangling_read", "killed_during_bash"]


def problems_of(document: Any) -> list[tuple[str, str]]:
    with pytest.raises(ToolTableError) as caught:
        parse_tool_override(document, source="t.json")
    return list(caught.value.problems)


# --- the file ----------------------------------------------------------------------------------------------


def test_the_schema_is_shipped_under_its_id() -> None:
    schema = load_schema("claude-code-current.v1.schema.json")
    assert schema["$id"] == "https://sessaudit.dev/schemas/claude-code-current.v1.schema.json"


def test_one_table_for_every_session() -> None:
    loaded = parse_tool_override(
        {"tools": [{"name": "Bash", "replay": "safe"}, {"name": "Read", "replay": "never"}]}
    )
    table = loaded.for_session("any")
    assert table.override == {"Bash": "safe", "Read": "never"}
    assert (table.policy("Bash"), table.policy("Read"), table.policy("Write"), table.policy("Grep")) == (
        "safe",
        "never",
        "never",  # not named: the built-in table's
        "safe",
    )


def test_a_map_by_session_id() -> None:
    loaded = parse_tool_override({"s1": {"tools": [{"name": "Bash", "replay": "safe"}]}, "s2": {"tools": []}})
    assert loaded.for_session("s1").override == {"Bash": "safe"}
    assert loaded.for_session("s2") is BUILT_IN_TABLE  # a table that names nothing changes nothing
    assert loaded.for_session("s3") is BUILT_IN_TABLE
    assert parse_tool_override({}).for_session("s1") is BUILT_IN_TABLE


def test_a_tiny_agent_configuration_is_a_tool_table_too() -> None:
    configuration = {
        "configurationDigest": "sha256:" + "0" * 64,
        "environmentIdentity": "/home/dev/shop",
        "tools": [
            {"name": "Bash", "definitionDigest": "sha256:" + "1" * 64, "replay": "safe", "replayKey": "k1"},
        ],
    }
    assert parse_tool_override(configuration).for_session(None).override == {"Bash": "safe"}
    fleet = {"s1": configuration}
    assert parse_tool_override(fleet).for_session("s1").override == {"Bash": "safe"}


def test_every_problem_is_located_at_once() -> None:
    document = {"tools": [{"name": "Bash", "replay": "sometimes"}, {"replay": "safe"}, "Read"], "x": 1}
    assert problems_of(document) == [
        ("/tools/0/replay", "'sometimes' is not one of 'safe', 'never'"),
        ("/tools/1", "'name' is a required property"),
        ("/tools/2", "expected object, found 'Read'"),
    ]
    by_session = {"s1": {"tools": [{"name": "", "replay": "safe"}]}, "s2": {"tool": []}}
    assert problems_of(by_session) == [
        ("/s1/tools/0/name", "'' should be non-empty"),
        ("/s2", "'tools' is a required property"),
    ]
    assert problems_of([]) == [("", "expected object, found an array")]
    twice = {"tools": [{"name": "Bash", "replay": "safe"}, {"name": "Bash", "replay": "never"}]}
    assert problems_of(twice) == [("/tools/1/name", "tool 'Bash' is named twice")]


def test_a_file_that_is_no_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ToolTableError) as caught:
        load_tool_override(path)
    assert str(caught.value).startswith(f"{path}: (the document): is not JSON")


def test_which_table_decided_in_words() -> None:
    table = ToolTable(
        replay_policy, "the built-in table (docs/formats/claude-code.md §10)", {"Bash": "safe"}, "t.json"
    )
    assert table.decided(["Read", "Bash", "Read"]) == (
        "tool replay policies: --current t.json for Bash; "
        "the built-in table (docs/formats/claude-code.md §10) for Read"
    )
    assert table.decided(["Bash"]) == "tool replay policies: --current t.json for Bash"
    assert table.decided(["Read"]) == BUILT_IN


# --- the verifier ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("claude-code-current")
    return root, build_all(root, names=NAMES)


def verified(root: Path, override: ToolOverride | None = None) -> Report:
    options = VerifyOptions(extras={EXTRA: override} if override is not None else {})
    return audit([str(root / "projects")], options=options).report


def open_work(report: Report, manifest: dict[str, Any], name: str) -> tuple[list[str], Recovery]:
    """The scenario's open-call rule codes and its one recovery."""
    (session_file,) = [item["path"] for item in manifest[name]["files"] if item["kind"] == "session"]
    (source,) = [item for item in report.sources if item.path.endswith(session_file.split("/")[-1])]
    codes = sorted(
        item.rule
        for item in report.findings
        if item.location.path == source.path and item.rule in ("SA302", "SA303")
    )
    (recovery,) = [run.recovery for run in source.sessions[0].runs if run.recovery is not None]
    return codes, recovery


def session_of(manifest: dict[str, Any], name: str) -> str:
    (session_id,) = {item["session_id"] for item in manifest[name]["files"]}
    return str(session_id)


def test_without_current_the_built_in_table_decides(built: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = built
    report = verified(root)
    codes, recovery = open_work(report, manifest, "dangling_bash")
    assert (codes, recovery.condition, recovery.assumes) == (["SA302"], "effect-unknown", [BUILT_IN])
    codes, recovery = open_work(report, manifest, "dangling_read")
    assert (codes, recovery.condition, recovery.assumes) == (["SA303"], "effect-replayable", [BUILT_IN])


def test_an_override_calling_bash_safe_makes_its_open_call_replayable(
    built: tuple[Path, dict[str, Any]],
) -> None:
    root, manifest = built
    report = verified(
        root, parse_tool_override({"tools": [{"name": "Bash", "replay": "safe"}]}, source="t.json")
    )
    codes, recovery = open_work(report, manifest, "dangling_bash")
    assert (codes, recovery.condition, recovery.conditions) == (
        ["SA303"],
        "effect-replayable",
        ["effect-replayable"],
    )
    assert [effect.replay_policy for effect in recovery.pending_effects] == ["safe"]
    assert recovery.assumes == ["tool replay policies: --current t.json for Bash"]
    said = [item.message for item in report.findings if item.rule == "SA303" and ": Bash (" in item.message]
    assert len(said) == 2  # dangling_bash's and killed_during_bash's calls
    assert all(
        text.endswith("was started and has no tool_result; it is safe to re-run (--current t.json)")
        for text in said
    )
    codes, recovery = open_work(report, manifest, "dangling_read")  # Read is not named: the table's
    assert (codes, recovery.condition, recovery.assumes) == (["SA303"], "effect-replayable", [BUILT_IN])


def test_an_override_calling_read_never_makes_its_open_call_unknown(
    built: tuple[Path, dict[str, Any]],
) -> None:
    root, manifest = built
    report = verified(
        root, parse_tool_override({"tools": [{"name": "Read", "replay": "never"}]}, source="t.json")
    )
    codes, recovery = open_work(report, manifest, "dangling_read")
    assert (codes, recovery.condition) == (["SA302"], "effect-unknown")
    assert [effect.replay_policy for effect in recovery.pending_effects] == ["never"]
    assert recovery.assumes == ["tool replay policies: --current t.json for Read"]


def test_a_map_overrides_the_sessions_it_names_only(built: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = built
    table = {"tools": [{"name": "Bash", "replay": "safe"}]}
    report = verified(
        root, parse_tool_override({session_of(manifest, "dangling_bash"): table}, source="t.json")
    )
    codes, recovery = open_work(report, manifest, "dangling_bash")
    assert (codes, recovery.condition) == (["SA303"], "effect-replayable")
    codes, recovery = open_work(report, manifest, "killed_during_bash")  # its Bash call: not in the map
    assert (codes, recovery.condition, recovery.assumes) == (["SA302"], "effect-unknown", [BUILT_IN])


def test_verify_current_on_the_command_line(built: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, _ = built
    table = tmp_path / "tools.json"
    table.write_text(json.dumps({"tools": [{"name": "Bash", "replay": "safe"}]}), encoding="utf-8")
    result = runner.invoke(
        app, ["verify", str(root / "projects"), "--current", str(table), "--format", "json"]
    )
    document = json.loads(result.stdout)
    codes = sorted(item["rule"] for item in document["findings"] if item["rule"] in ("SA302", "SA303"))
    assert codes == ["SA303", "SA303", "SA303"]  # dangling_bash, dangling_read, killed_during_bash
    conditions = sorted(
        run["recovery"]["condition"]
        for source in document["sources"]
        for session in source["sessions"]
        for run in session["runs"]
        if run.get("recovery")
    )
    assert conditions == ["effect-replayable"] * 3
