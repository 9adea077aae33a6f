"""A walk of `projects/` meets a session's sub-agent folder before the session file (`<uuid>/` sorts before
`<uuid>.jsonl`): once the session is found, its sub-agent files are its companions, neither sources of
their own nor "skipped" (discovery drops what a source found later owns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessaudit.discovery import discover
from sessaudit.formats.claude_code.build.scenarios import build_one
from sessaudit.registry import registry


@pytest.mark.parametrize("layout", ["subagent_folder", "subagent_beside"])
def test_sub_agent_files_are_owned_not_skipped(tmp_path: Path, layout: str) -> None:
    build_one(tmp_path, layout)
    files = sorted(str(path) for path in (tmp_path / "projects").rglob("*.jsonl"))
    assert len(files) >= 2  # the session and at least one sub-agent file
    found = discover([str(tmp_path / "projects")])
    sessions = [item for item in found.candidates if item.problem is None]
    assert [item.format for item in sessions] == ["claude-code"]
    assert Path(sessions[0].real_path).parent.parent.name == "projects"
    assert [item.path for item in found.skipped if item.path.endswith(".jsonl")] == []
    assert set(files) - {sessions[0].real_path} <= found.owned


def test_claude_code_is_a_built_in_format() -> None:
    assert "claude-code" in registry().builtin
    assert [plugin.name for plugin in registry().plugins if plugin.name == "claude-code"] == ["claude-code"]
