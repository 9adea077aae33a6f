"""`sessaudit show` and the timelines under it (sessaudit.timeline): each format's open call found at its
record, findings at theirs, the end of the log as the crash point, times and deltas a person reads at 80
columns, --run/--last/--around, JSON for tools (its schema), redaction, and a source that changed after it
was verified said, not drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.reporters.timeline import choose, delta
from sessaudit.resources import load_schema
from sessaudit.timeline import build_timelines, timelines_json
from tests.golden import check_golden
from tests.sessions import HOSTILE, hostile_session, killed_during_deploy

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()
SCHEMA = Draft202012Validator(load_schema("timeline.v1.schema.json"))


def _show(*arguments: str, columns: int = 80) -> tuple[int, str, str]:
    result = runner.invoke(app, ["show", *arguments], env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("example", "tool", "place"),
    [
        ("claude-code", "Bash", (16, 11661, 16)),
        ("codex", "exec_command", (30, None, 30)),
        ("rivumi", "replace_text", (15, None, 14)),
        ("tiny-agent", "bash", (5, None, 6)),
        ("half-pi", "exec_command", (None, None, None)),
    ],
)
def test_each_format_has_its_open_call_on_the_timeline_and_the_log_ends_at_the_crash(
    example: str, tool: str, place: tuple[int | None, int | None, int | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    timelines = build_timelines(audit([f"examples/{example}"]).report)
    unknown = [(timeline, item) for timeline in timelines for item in timeline.events if item.unknown]
    assert len(unknown) == 1
    timeline, event = unknown[0]
    assert event.kind == "tool" and event.label.startswith(f"{tool}: unknown")
    line, offset, seq = place
    assert (event.line, event.seq) == (line, seq)
    if offset is not None:
        assert event.byte_offset == offset
    end = timeline.events[-1]
    assert (
        end.kind == "end" and end.label.startswith("crash point: the log ends with") and end.status == "open"
    )
    assert event.at is not None and end.at is not None and event.at <= end.at
    findings = [item for item in timeline.events if item.kind == "finding"]
    assert {item.rule for item in findings} >= {"SA301", "SA302"}
    SCHEMA.validate(json.loads(json.dumps(timelines_json(timelines))))


def test_the_examples_timelines_at_80_columns_match_the_golden_file(
    monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    monkeypatch.chdir(REPO)
    code, stdout, stderr = _show("examples/", "--last", "8")
    assert (code, stderr) == (0, "")
    check_golden(REPO / "tests" / "golden" / "examples.show.80.txt", stdout, update_golden)
    assert [line for line in stdout.splitlines() if len(line) > 80 and " " in line.strip()[:60]] == []
    assert "◀ UNKNOWN: may or may not have run" in stdout
    assert "open call (line 16, byte 11661, seq 16): " in stdout


def test_run_last_and_around_choose_the_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    target = "examples/claude-code"
    code, stdout, _ = _show(target, "--format", "json")
    document = json.loads(stdout)
    SCHEMA.validate(document)
    events = document["sessions"][0]["events"]
    assert len(events) == 18
    run = next(item["run_id"] for item in events if item["unknown"])
    code, stdout, _ = _show(target, "--run", run, "--format", "json")
    chosen = json.loads(stdout)["sessions"][0]
    assert code == 0 and {item["run_id"] for item in chosen["events"] if item["kind"] != "end"} == {run}
    assert [item["run_id"] for item in chosen["runs"]] == [run]
    code, stdout, _ = _show(target, "--last", "3")
    assert code == 0 and "events 16–18 of 18" in stdout
    code, stdout, _ = _show(target, "--around", "8", "--last", "4")
    assert "events 5–8 of 18 around seq 8" in stdout
    code, _, stderr = _show(target, "--run", "no-such-run")
    assert code == 2 and "no session in examples/claude-code has a run 'no-such-run'" in stderr


def test_choose_and_delta() -> None:
    events = [{"seq": number} for number in range(1, 11)]
    assert choose(events, last=3, around=None) == (7, 10)
    assert choose(events, last=4, around=5) == (2, 6)
    assert choose(events, last=4, around=1) == (0, 4)
    assert choose(events, last=4, around=99) == (6, 10)  # past the end: the end
    assert choose(events, last=20, around=5) == (0, 10)
    assert [delta(value) for value in (None, 0, 0.0042, -0.25, 4.21, 184, 7384, 266400)] == [
        "",
        "+0 s",
        "+0.004 s",
        "-0.250 s",
        "+4.2 s",
        "+3 min 4 s",
        "+2 h 3 min",
        "+3 d 2 h",
    ]


def test_hostile_strings_reach_the_terminal_escaped_and_redaction_masks_arguments(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(hostile_session())
    code, stdout, _ = _show(str(session))
    assert code == 0
    assert "\x1b" not in stdout and "\u202e" not in stdout
    assert "\\u001b[31mred" in stdout and "\\u202eevil" in stdout  # as the arguments' JSON writes them
    code, stdout, _ = _show(str(session), "--redact", "--format", "json")
    document = json.loads(stdout)
    detail = next(item["detail"] for item in document["sessions"][0]["events"] if item["unknown"])
    assert all(text not in detail for text in HOSTILE) and "bash: unknown" in stdout


def test_a_source_that_changed_after_it_was_verified_is_said_not_drawn(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(killed_during_deploy())
    report = audit([str(session)]).report
    session.write_bytes(killed_during_deploy().replace(b"deploy", b"DEPLOY"))  # same size, other bytes
    timelines = build_timelines(report)
    assert len(timelines) == 1
    assert timelines[0].note == f"records not drawn: {session} changed after it was verified"
    assert [item.kind for item in timelines[0].events] == ["finding", "finding"]  # its findings alone


def test_show_of_nothing_says_so(tmp_path: Path) -> None:
    code, stdout, _ = _show(str(tmp_path))
    assert "No session to show" in stdout
    assert code in (0, 3)


def test_a_plugin_names_its_marks_and_the_role_names_the_rest() -> None:
    from sessaudit.plugin import TIMELINE_KINDS, FormatPlugin
    from sessaudit.registry import registry

    class Bare(FormatPlugin):
        name = "bare"

    bare = Bare()
    assert [bare.timeline_kind("x", "y", role) for role in ("user", "assistant", "tool", None)] == [
        "user",
        "model",
        None,
        None,
    ]
    tiny = registry().get("tiny-agent")
    assert tiny is not None
    assert tiny.timeline_kind("record", "stepAttempt", None) == "model-request"
    assert tiny.timeline_kind("entry", "compaction", None) == "compaction"
    for plugin in registry().plugins:  # every word a format uses is one the timeline draws
        assert set(plugin.timeline_marks.values()) <= set(TIMELINE_KINDS), plugin.name
