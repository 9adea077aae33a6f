"""The issue's end-to-end path on a folder of builder transcripts: `sessaudit verify <root>/projects`, then
`sessaudit load … && sessaudit query usage-by-day`. Totals are literal, summed by hand from scenarios.py:
clean (6, 753, 7012, 65181; 4 responses), bedrock (6, 549, 8501, 13324; 3), resumed over its two sessions
(5, 168, 2420, 34300; 3, the copied response once), killed_during_bash (3, 157, 2461, 14210; 1)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.claude_code.build.scenarios import build_one

runner = CliRunner()
SCENARIOS = ("clean", "bedrock", "resumed", "killed_during_bash")


def corpus(tmp_path: Path) -> Path:
    """One Claude Code config dir holding every chosen scenario's project folders."""
    root = tmp_path / "claude"
    for name in SCENARIOS:
        build_one(root, name)
    return root / "projects"


def test_verify_the_projects_folder(tmp_path: Path) -> None:
    projects = corpus(tmp_path)
    result = runner.invoke(app, ["verify", str(projects), "--format", "json"])
    assert result.exit_code == 0, result.output  # open work is a warning: exit 0 under --fail-on error
    report = json.loads(result.stdout)
    assert [source["format"] for source in report["sources"]] == ["claude-code"] * 5
    verdicts = sorted(source["verdict"] for source in report["sources"])
    assert verdicts == ["clean", "clean", "clean", "clean", "needs-recovery"]
    rules = sorted(finding["rule"] for finding in report["findings"])
    assert rules == ["SA301", "SA302"]  # the Bash call killed mid-run: open turn, unknown outcome
    outputs = sorted(session["usage"]["output"] for s in report["sources"] for session in s["sessions"])
    assert outputs == [48, 120, 157, 549, 753]
    strict = runner.invoke(app, ["verify", str(projects), "--fail-on-condition", "effect-unknown"])
    assert strict.exit_code == 1


def test_load_then_usage_by_day(tmp_path: Path) -> None:
    projects = corpus(tmp_path)
    db = tmp_path / "claude.duckdb"
    loaded = runner.invoke(app, ["load", str(projects), "--db", str(db)])
    assert loaded.exit_code == 0, loaded.output
    answer = runner.invoke(app, ["query", "usage-by-day", "--db", str(db), "--format", "json"])
    assert answer.exit_code == 0, answer.output
    (day,) = json.loads(answer.stdout)
    said = (day["day"], day["format"], day["records"], day["sessions"])
    assert said == ("2026-03-14", "claude-code", 11, 5)
    tokens = (day["input"], day["output"], day["cache_write"], day["cache_read"], day["input_total"])
    assert tokens == (20, 1627, 20394, 127015, 20 + 20394 + 127015)


def test_a_named_transcript_opening_with_a_snapshot_is_claude_codes(tmp_path: Path) -> None:
    """2.x transcripts often open with a file-history-snapshot line (no sessionId, no uuid): named on its
    own, the file is still Claude Code's, and so is a damaged `<uuid>.jsonl` in a projects/ folder (never
    tiny-agent's catch-all for named `.jsonl` files)."""
    projects = tmp_path / "claude" / "projects"
    build_one(tmp_path / "claude", "killed_during_bash")
    (path,) = projects.rglob("*.jsonl")
    assert path.read_bytes().startswith(b'{"type":"file-history-snapshot"')
    report = json.loads(runner.invoke(app, ["verify", str(path), "--format", "json"]).stdout)
    assert [source["format"] for source in report["sources"]] == ["claude-code"]
    damaged = path.parent / "0b0b0b0b-2222-4333-8444-555555555555.jsonl"
    damaged.write_bytes(b"\x00\x00\x00 not json\n")
    said = json.loads(runner.invoke(app, ["verify", str(damaged), "--format", "json"]).stdout)
    assert [(s["format"], s["verdict"]) for s in said["sources"]] == [("claude-code", "corrupt")]


def test_seed_sequence_is_a_line_for_claude_code(tmp_path: Path) -> None:
    projects = corpus(tmp_path)
    (path,) = [
        p for p in projects.rglob("*.jsonl") if "killed_during_bash" in p.parent.name.replace("-", "_")
    ]
    (seed,) = json.loads(runner.invoke(app, ["seed", str(path)]).stdout)
    line = seed["fork_point"]["line"]
    assert seed["fork_point"]["seq"] is None and isinstance(line, int)
    moved = runner.invoke(app, ["seed", str(path), "--sequence", str(line)])
    assert moved.exit_code == 0 and json.loads(moved.stdout)[0]["fork_point"]["line"] == line
    assert runner.invoke(app, ["seed", str(path), "--sequence", "999"]).exit_code == 2


def test_seed_output_without_native_is_refused(tmp_path: Path) -> None:
    projects = corpus(tmp_path)
    (path,) = [
        p for p in projects.rglob("*.jsonl") if "killed_during_bash" in p.parent.name.replace("-", "_")
    ]
    target = tmp_path / "answered.jsonl"
    result = runner.invoke(app, ["seed", str(path), "--output", str(target)])
    assert result.exit_code == 2 and "--output is used only with --native" in result.output
    assert not target.exists()
    written = runner.invoke(app, ["seed", str(path), "--native", "--output", str(target)])
    assert written.exit_code == 0 and target.is_file()
