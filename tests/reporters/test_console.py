"""The console report: the answer first, settings named, times a person reads, fitted to the width."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sessaudit.cli
from sessaudit.cli import app
from sessaudit.model import PendingEffect, Recovery, Report, Run, Session, Settings, Source
from sessaudit.reporters.console import render_console
from sessaudit.reporters.console.text import readable_epochs, relative, short_pointer, shorten_path
from sessaudit.reporters.console.words import describe_effect
from sessaudit.reporters.json import render_json
from sessaudit.verdicts import Severity, Verdict
from tests.golden import check_golden
from tests.reporters.corpus import REPO, examples_report, finding, handmade_report
from tests.sessions import clean_session, killed_during_deploy

runner = CliRunner()
NOW = datetime(2026, 12, 2, 3, 0, 0, tzinfo=UTC)  # the fixed clock of every rendering here
UUID = "01a22cc6-bdba-7faa-9d33-fda9b6dc0914"


def _verify(monkeypatch: pytest.MonkeyPatch, *arguments: str, columns: int = 80) -> tuple[int, str, str]:
    monkeypatch.setattr(sessaudit.cli, "utc_now", lambda: NOW)
    result = runner.invoke(app, ["verify", *arguments], env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout, result.stderr


def _too_wide(text: str, width: int) -> list[str]:
    """Lines over `width` but for an unbreakable token (an id, a path) too long for any line."""
    return [
        line
        for line in text.splitlines()
        if len(line) > width and max(len(word) for word in line.split()) <= width - 8
    ]


@pytest.mark.parametrize("columns", [80, 160])
def test_examples_console_matches_golden_files(
    columns: int, update_golden: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    code, stdout, _ = _verify(monkeypatch, "examples/", columns=columns)
    assert code == 1  # the corpus holds a corrupt session on purpose
    check_golden(REPO / "tests" / "golden" / f"examples.console.{columns}.txt", stdout, update_golden)
    assert _too_wide(stdout, columns) == []


def test_no_line_exceeds_80_columns_but_a_single_unbreakable_token(monkeypatch: pytest.MonkeyPatch) -> None:
    report = examples_report(monkeypatch)
    deep = finding(
        "SA011", "json-too-deep", Severity.ERROR, "nested too deep", path="a.jsonl", pointer="/0" * 512
    )
    token = "x" * 120  # nothing to break it at: it stays whole, on a line of its own
    long = finding("SA204", "n", Severity.WARNING, f"see {token} there", path=f"d/{UUID}/" + "y" * 90)
    report = report.model_copy(update={"findings": [*report.findings, deep, long]})
    text = render_console(report, width=80, now=NOW)
    over = [line for line in text.splitlines() if len(line) > 80]
    assert _too_wide(text, 80) == []
    assert len(over) == 1 and over[0].endswith(f" see {token}")  # kept with the word before it
    assert "/0/0/…/0 (512 levels)" in text and "/0/0/0/0/0/0/0" not in text


def test_paths_are_shortened_in_the_middle_never_inside_an_id() -> None:
    path = f"tiny-agent/.tiny-agent/sessions/2026-11-30T14-05-51-930Z_{UUID}.jsonl"
    assert shorten_path(path, 200) == path
    assert shorten_path(path, 80) == f"tiny-agent/…/2026-11-30T14-05-51-930Z_{UUID}.jsonl"
    assert shorten_path(path, 72) == f"…/2026-11-30T14-05-51-930Z_{UUID}.jsonl"
    assert shorten_path(path, 60) == f"…/2026-11-30T14-0…{UUID}.jsonl"
    for limit in (50, 44, 20):
        shortened = shorten_path(path, limit)
        assert UUID in shortened and shortened.endswith(".jsonl")
    assert (
        shorten_path("rivumi/runs/6b9bb2f6535a7e07b6dffce8112d9d11", 20) == "6b9bb2f6535a7e07b6dffce8112d9d11"
    )


def test_long_json_pointers_are_shortened() -> None:
    assert short_pointer("/0" * 512) == "/0/0/…/0 (512 levels)"
    assert short_pointer("/record/attempt") == "/record/attempt"
    mixed = "/a/b" * 40
    assert len(short_pointer(mixed)) < 80 and short_pointer(mixed).endswith("(80 levels)")


def test_epoch_milliseconds_in_messages_are_shown_as_utc_times() -> None:
    text = "remote run 1: (args digest ab; accepted_at 1785412800303; 1 progress events)"
    assert (
        readable_epochs(text)
        == "remote run 1: (args digest ab; accepted_at 2026-07-30T12:00:00.303Z; 1 progress events)"
    )
    assert readable_epochs("seq 1785412800303") == "seq 1785412800303"  # only fields named *_at


def _open_run_report(tmp_path: Path, last_written_at: str | None) -> Report:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())
    report = sessaudit.cli.audit([str(path)]).report
    source = report.sources[0]
    session = source.sessions[0]
    runs = [run.model_copy(update={"last_written_at": last_written_at}) for run in session.runs]
    sessions = [session.model_copy(update={"runs": runs})]
    return report.model_copy(update={"sources": [source.model_copy(update={"sessions": sessions})]})


def test_open_runs_say_when_they_last_wrote_relative_to_the_injected_clock(tmp_path: Path) -> None:
    report = _open_run_report(tmp_path, "2026-12-01T23:59:30.118Z")
    text = render_console(report, width=120, now=NOW)
    assert "last wrote: 2026-12-01T23:59:30.118Z (3 h ago)" in text
    assert "last wrote: 2026-12-01T23:59:30.118Z\n" in render_console(report, width=120)  # no clock, no "ago"
    assert "ago" not in render_json(report)
    unknown = render_console(_open_run_report(tmp_path, None), width=120, now=NOW)
    assert "last wrote: not recorded" in unknown


def test_relative_times() -> None:
    assert relative(datetime(2026, 12, 2, 2, 59, 20, tzinfo=UTC), NOW) == "40 s ago"
    assert relative(datetime(2026, 12, 2, 2, 15, tzinfo=UTC), NOW) == "45 min ago"
    assert relative(datetime(2026, 11, 29, 1, 0, tzinfo=UTC), NOW) == "3 d ago"
    assert relative(datetime(2026, 12, 2, 5, 0, tzinfo=UTC), NOW) == "2 h ahead of this clock"


def _headline(stdout: str) -> str:
    """The verdict line: the first line after the title (and the settings line, when one is shown)."""
    lines = stdout.splitlines()
    return lines[lines.index("") + 1]


def test_verdict_line_when_all_is_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(clean_session())
    code, stdout, _ = _verify(monkeypatch, str(tmp_path))
    assert (code, _headline(stdout)) == (0, "ok — 2 sources clean")


def test_verdict_line_when_an_effect_is_of_unknown_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "killed.jsonl").write_bytes(killed_during_deploy())
    code, stdout, _ = _verify(monkeypatch, str(tmp_path))
    assert (code, _headline(stdout)) == (0, "ATTENTION — 1 needs recovery: 1 effect of unknown outcome")
    # the answer comes first: the unknown effect precedes the table, the findings and the summary
    assert stdout.index("UNKNOWN: tool bash") < stdout.index("Sources (1)") < stdout.index("Findings")
    code, stdout, _ = _verify(monkeypatch, str(tmp_path), "--fail-on", "warning")
    failing = "FAIL — 1 needs recovery: 1 effect of unknown outcome; 2 warnings"
    assert (code, _headline(stdout)) == (1, failing)
    # with the settings in the report (filled by the CLI), the failing findings are counted too
    report = sessaudit.cli.audit([str(tmp_path)]).report
    failing = report.model_copy(update={"settings": Settings(fail_on="warning")})
    headline = "FAIL — 1 needs recovery: 1 effect of unknown outcome; 2 warnings"
    assert render_console(failing, width=120, now=NOW).splitlines()[3] == headline


def test_verdict_line_when_a_source_is_corrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad.jsonl").write_bytes(clean_session().replace(b'"seq":3', b'"seq":4', 1))
    code, stdout, _ = _verify(monkeypatch, str(tmp_path))
    assert code == 1 and _headline(stdout).startswith("FAIL — 1 corrupt; ")
    corrupt = stdout[stdout.index("Corrupt or unreadable") :]
    assert corrupt.splitlines()[2].split()[:2] == ["error", "SA205"]  # the first corrupting finding


def test_verdict_line_when_nothing_was_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("not a log\n", encoding="utf-8")
    code, stdout, _ = _verify(monkeypatch, str(tmp_path))
    word = {0: "EMPTY", 3: "INCOMPLETE"}[code]  # whichever exit code the empty-audit gate gives
    assert _headline(stdout) == f"{word} — no session logs found (1 file skipped); nothing was audited"


def test_skipped_files_are_counted_and_listed_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_bytes(clean_session())
    for number in range(5):
        (tmp_path / f"notes{number}.txt").write_text("not a log\n", encoding="utf-8")
    _, stdout, _ = _verify(monkeypatch, str(tmp_path))
    assert "5 files skipped: not a session log of a known format (--show-skipped lists them)" in stdout
    assert "notes0.txt" not in stdout
    _, listed, _ = _verify(monkeypatch, str(tmp_path), "--show-skipped")
    words = " ".join(listed.split())  # long temporary paths wrap
    assert all(f"notes{number}.txt: not a session log" in words for number in range(5))


def test_the_settings_in_force_are_named_under_the_title(monkeypatch: pytest.MonkeyPatch) -> None:
    report = examples_report(monkeypatch)
    assert "settings:" not in render_console(report, now=NOW)  # all defaults: nothing extra
    settings = Settings(
        config="sessaudit.toml",
        ignore=["SA6"],
        severity={"SA302": "note"},
        baseline="b.json",
        fail_on="warning",
    )
    text = render_console(report.model_copy(update={"settings": settings}), width=160, now=NOW)
    assert (
        text.splitlines()[1]
        == "settings: sessaudit.toml; ignore SA6; severity SA302=note; fail on warning; baseline b.json"
    )
    flags_only = render_console(report.model_copy(update={"settings": Settings(select=["SA1"])}), now=NOW)
    assert flags_only.splitlines()[1] == "settings: no settings file; select SA1"


def test_findings_are_grouped_errors_first_within_a_file() -> None:
    findings = [
        finding("SA109", "torn-tail", Severity.WARNING, "w", path="s.jsonl", line=1),
        finding("SA215", "reduction-stopped", Severity.NOTE, "n", path="s.jsonl", line=2),
        finding("SA205", "seq-mismatch", Severity.ERROR, "e", path="s.jsonl", line=3),
    ]
    text = render_console(handmade_report(findings), now=NOW)
    block = text[text.index("Findings") :]
    assert block.index("SA205") < block.index("SA109") < block.index("SA215")


def _source_with_runs(warnings: list[str], runs: int) -> Source:
    recovery = Recovery(
        condition="step-pending", conditions=["step-pending"], seed_kind="replay", warnings=warnings
    )
    return Source(
        path="store.db",
        format="half-pi",
        format_version=None,
        files=[],
        sha256=None,
        evidence_unchanged=True,
        verdict=Verdict.NEEDS_RECOVERY,
        sessions=[
            Session(
                session_id="s",
                verdict=Verdict.NEEDS_RECOVERY,
                facts=1,
                last_seq=1,
                runs=[
                    Run(run_id=f"r{number}", kind="run", state="open", recovery=recovery)
                    for number in range(runs)
                ],
            )
        ],
    )


def test_a_warning_repeated_by_runs_of_one_source_is_said_once() -> None:
    report = handmade_report([], [_source_with_runs(["the store was copied while open"], 3)])
    text = render_console(report, width=120, now=NOW)
    assert text.count("the store was copied while open") == 1
    assert text.count("1 warning(s) as for an earlier run of this source, not repeated") == 2


def test_an_effect_started_without_a_replay_policy_is_of_unknown_outcome() -> None:
    """It used to read "declared safe to re-run": nothing declared it so."""
    effect = PendingEffect(
        tool_call_id="c1",
        tool_name="bash",
        arguments={"command": "x"},
        intent_id="i1",
        result_slot=None,
        replay_policy=None,
    )
    assert describe_effect(effect).startswith("UNKNOWN: tool bash (c1)")
    safe_effect = effect.model_copy(update={"replay_policy": "safe"})
    assert describe_effect(safe_effect).endswith("declared safe to re-run")


def test_console_output_to_a_file_is_plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "killed.jsonl").write_bytes(killed_during_deploy())
    out = tmp_path / "report.txt"
    _verify(monkeypatch, str(tmp_path / "killed.jsonl"), "--output", str(out))
    text = out.read_text(encoding="utf-8")
    assert "\x1b[" not in text and not set("┃━╇│") & set(text)
    assert _too_wide(text, 80) == []


def test_log_derived_text_is_escaped_in_every_part() -> None:
    effect = PendingEffect(
        tool_call_id="c\x1b[2J",
        tool_name="bash\u202e",
        arguments={"command": "\x1b]0;pwned\x07"},
        intent_id="i\x07",
        result_slot=None,
        replay_policy="never",
    )
    recovery = Recovery(
        condition="effect-unknown", conditions=["effect-unknown"], seed_kind="fork", pending_effects=[effect]
    )
    source = _source_with_runs([], 1)
    run = Run(run_id="r\x1b[31m", kind="run", state="open", recovery=recovery, last_written_at="\x1b[1m")
    session = source.sessions[0].model_copy(update={"runs": [run]})
    source = source.model_copy(
        update={"path": "logs/\x1b[2Jstore.db", "format_version": "v\x1b[5m", "sessions": [session]}
    )
    findings = [
        finding("SA205", "seq-mismatch", Severity.ERROR, "m\x9b31m", path=source.path, pointer="/\x1b")
    ]
    report = handmade_report(findings, [source, source.model_copy(update={"path": "logs/b\u2066.db"})])
    report = report.model_copy(update={"settings": Settings(config="s\x1b.toml"), "skipped": []})
    for width in (80, 160):
        text = render_console(report, width=width, now=NOW)
        assert not any(character in text for character in "\x1b\x07\x9b\u202e\u2066"), text
        assert "UNKNOWN: tool bash\\u202e (c\\x1b[2J)" in text
