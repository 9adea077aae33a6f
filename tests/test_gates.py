"""--fail-on-verdict / --fail-on-condition: gates on verdicts and open runs' conditions, beside --fail-on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.model import Report
from sessaudit.policy import PolicyError, gate_failures, resolve_policy
from tests.sessions import clean_session, killed_during_deploy

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "clean.jsonl").write_bytes(clean_session())
    (tmp_path / "killed.jsonl").write_bytes(killed_during_deploy())  # effect-unknown, SA301/SA302 warnings
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*arguments: str) -> Any:
    return runner.invoke(app, ["verify", "--no-config", *arguments])


def test_a_gate_on_effects_of_unknown_outcome_ignores_warnings(corpus: Path) -> None:
    gate = ["--fail-on", "never", "--fail-on-condition", "effect-unknown"]
    failed = run(str(EXAMPLES), *gate)
    assert failed.exit_code == 1  # Rivumi's, tiny-agent's, Claude Code's and Codex's effect-unknown runs
    lines = failed.stderr.splitlines()
    assert len(lines) == 4 and all(line.endswith(": effect-unknown") for line in lines)
    assert all(line.startswith("sessaudit: fails --fail-on-condition: ") for line in lines)
    # the Half-Pi example has warnings (run-left-open, permissions) but no effect of unknown outcome
    half_pi = str(EXAMPLES / "half-pi")
    assert run(half_pi, "--fail-on", "warning").exit_code == 1
    assert run(half_pi, *gate).exit_code == 0
    assert run("clean.jsonl", *gate).exit_code == 0
    killed = run("killed.jsonl", *gate)
    assert killed.exit_code == 1
    assert killed.stderr.startswith("sessaudit: fails --fail-on-condition: killed.jsonl: run ")
    assert killed.stderr.rstrip().endswith(": effect-unknown")
    assert run("killed.jsonl", "--fail-on", "never").exit_code == 0  # no gate, no failure


def test_a_gate_on_verdicts(corpus: Path) -> None:
    assert run("killed.jsonl", "--fail-on", "never", "--fail-on-verdict", "corrupt,repairable").exit_code == 0
    result = run("killed.jsonl", "clean.jsonl", "--fail-on", "never", "--fail-on-verdict", "needs-recovery")
    assert result.exit_code == 1
    assert result.stderr == "sessaudit: fails --fail-on-verdict: killed.jsonl: needs-recovery\n"
    repeated = run("clean.jsonl", "--fail-on-verdict", "corrupt", "--fail-on-verdict", "clean")
    assert repeated.exit_code == 1  # repeatable; `clean` is a verdict too
    bad = run("clean.jsonl", "--fail-on-verdict", "broken")
    assert bad.exit_code == 2 and "--fail-on-verdict: 'broken': not one of clean," in bad.stderr


def test_gates_from_the_config_file_and_flags_win(corpus: Path) -> None:
    (corpus / "sessaudit.toml").write_text('fail-on = "never"\nfail-on-condition = ["effect-unknown"]\n')
    result = runner.invoke(app, ["verify", "killed.jsonl", "--format", "json"])
    assert result.exit_code == 1
    assert "sessaudit: fails sessaudit.toml: fail-on-condition: killed.jsonl: run " in result.stderr
    settings = json.loads(result.stdout)["settings"]
    assert settings["fail_on"] == "never" and settings["fail_on_condition"] == ["effect-unknown"]
    # a flag replaces the file's list; an empty one switches the gate off
    assert runner.invoke(app, ["verify", "killed.jsonl", "--fail-on-condition", ""]).exit_code == 0
    other = runner.invoke(app, ["verify", "killed.jsonl", "--fail-on-condition", "task-stale"])
    assert other.exit_code == 0


def test_every_condition_of_a_run_counts_not_only_the_first(corpus: Path) -> None:
    report = audit(["killed.jsonl"]).report
    source = report.sources[0]
    session = source.sessions[0]
    runs = [item for item in session.runs if item.recovery is not None]
    assert runs and runs[0].recovery is not None and runs[0].recovery.condition == "effect-unknown"
    recovery = runs[0].recovery.model_copy(update={"conditions": ["effect-unknown", "awaiting-terminal"]})
    changed = session.model_copy(update={"runs": [runs[0].model_copy(update={"recovery": recovery})]})
    both = Report.model_validate(
        report.model_copy(
            update={"sources": [source.model_copy(update={"sessions": [changed]})]}
        ).model_dump()
    )
    policy = resolve_policy(fail_on_condition=["awaiting-terminal"], no_config=True)
    assert [line.endswith(": awaiting-terminal") for line in gate_failures(both, policy)] == [True]
    assert gate_failures(report, policy) == []


def test_gate_values_are_checked() -> None:
    with pytest.raises(PolicyError, match="--fail-on-condition: 'lost': not one of effect-unknown"):
        resolve_policy(fail_on_condition=["effect-unknown,lost"], no_config=True)
    policy = resolve_policy(fail_on_verdict=["Corrupt needs-recovery", "corrupt"], no_config=True)
    assert policy.fail_on_verdict == ("needs-recovery", "corrupt")  # verdict order, no repeats


def test_verify_help_documents_the_gates() -> None:
    text = runner.invoke(app, ["verify", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--fail-on-verdict" in text and "--fail-on-condition" in text
    assert "repository root" in text  # where --config is looked for without it


def test_redact_keeps_the_settings(corpus: Path) -> None:
    result = run("killed.jsonl", "--redact", "--format", "json", "--fail-on", "never")
    settings = json.loads(result.stdout)["settings"]
    assert settings["fail_on"] == "never"  # the user's own values, not log content: never masked
    gated = run("killed.jsonl", "--redact", "--format", "json", "--fail-on-condition", "effect-unknown")
    assert json.loads(gated.stdout)["settings"]["fail_on_condition"] == ["effect-unknown"]
