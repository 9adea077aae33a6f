"""Nothing verified is not a pass: a named directory without a session log is SA006 and exit 3 unless
`--allow-empty`; a Rivumi run zero-filled by a power loss is still a run (reported, not walked past)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.discovery import discover
from sessaudit.engine import audit
from sessaudit.plugin import VerifyOptions
from tests.formats.names import Format

runner = CliRunner()


def test_a_named_directory_without_a_session_log_is_incomplete_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a log\n")
    result = runner.invoke(app, ["verify", str(tmp_path), "--format", "json"])
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    assert [(item["rule"], item["severity"], item["location"]["path"]) for item in report["findings"]] == [
        ("SA006", "note", str(tmp_path))
    ]
    assert report["settings"]["allow_empty"] is False
    assert "no session log found, nothing was verified (--allow-empty accepts this)" in result.stderr
    allowed = runner.invoke(app, ["verify", str(tmp_path), "--format", "json", "--allow-empty"])
    assert allowed.exit_code == 0, allowed.stderr
    allowed_report = json.loads(allowed.stdout)
    assert [item["rule"] for item in allowed_report["findings"]] == ["SA006"]  # still said
    assert allowed_report["settings"]["allow_empty"] is True


def test_an_empty_directory_beside_a_verified_one_still_counts(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(
        b'{"kind":"header","version":2,"id":"018f0000-0000-7000-8000-000000000001"}\n'
    )
    result = audit([str(tmp_path / "logs"), str(tmp_path / "empty")])
    assert [item.rule for item in result.report.findings if item.rule == "SA006"] == ["SA006"]
    assert len(result.incomplete) == 1 and result.incomplete[0].startswith(str(tmp_path / "empty"))
    allowed = audit([str(tmp_path / "empty")], options=VerifyOptions(allow_empty=True))
    assert allowed.incomplete == [] and allowed.report.settings.allow_empty is True


def test_load_of_a_directory_without_a_session_log_is_incomplete_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    database = str(tmp_path / "w.duckdb")
    result = runner.invoke(app, ["load", str(tmp_path / "empty"), "--db", database])
    assert result.exit_code == 3
    assert "load incomplete" in result.stderr and "no session log found" in result.stderr
    allowed = runner.invoke(app, ["load", str(tmp_path / "empty"), "--db", database, "--allow-empty"])
    assert allowed.exit_code == 0, allowed.stderr


def test_a_zero_filled_rivumi_run_without_request_json_is_reported_not_passed(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "6b9bb2f6535a7e07b6dffce8112d9d11"
    run.mkdir(parents=True)
    (run / "events.jsonl").write_bytes(b"\0" * 5026)  # a power loss: sizes kept, contents zeroed
    (run / "session.json").write_bytes(b"\0" * 812)
    found = discover([str(tmp_path / "runs")])
    assert [(c.format, c.real_path) for c in found.candidates] == [(Format.RIVUMI, str(run))]
    result = runner.invoke(app, ["verify", str(tmp_path / "runs"), "--format", "json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [(source["format"], source["verdict"]) for source in report["sources"]] == [("rivumi", "corrupt")]
    rules = {item["rule"] for item in report["findings"]}
    assert {"SA503", "SA531", "SA536"} <= rules  # the torn NUL log, the NUL manifest, no request.json
    assert all(run["recovery"] is None or run["recovery"]["seed"] is None for run in _runs(report))


def _runs(report: dict[str, object]) -> list[dict[str, object]]:
    sources = report["sources"]
    assert isinstance(sources, list)
    return [run for source in sources for session in source["sessions"] for run in session["runs"]]
