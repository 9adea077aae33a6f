"""--select / --ignore / --severity: they change findings, levels and the exit code, never a verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.policy import Policy, PolicyError, apply_policy, parse_selector, resolve_policy
from sessaudit.resources import load_schema
from sessaudit.verdicts import Severity
from tests.sessions import clean_session, killed_during_deploy

runner = CliRunner()


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """a.jsonl corrupt (SA106 error), b.jsonl killed during a deploy (SA301, SA302 warnings)."""
    (tmp_path / "a.jsonl").write_bytes(clean_session() + b"not json\n")
    (tmp_path / "b.jsonl").write_bytes(killed_during_deploy())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def verify_json(*arguments: str, code: int) -> dict[str, Any]:
    result = runner.invoke(
        app, ["verify", "a.jsonl", "b.jsonl", "--no-config", "--format", "json", *arguments]
    )
    assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    Draft202012Validator(load_schema("report.v1.schema.json")).validate(document)
    return document


def rules_of(document: dict[str, Any]) -> list[str]:
    return [item["rule"] for item in document["findings"]]


def verdicts_of(document: dict[str, Any]) -> list[str]:
    return [source["verdict"] for source in document["sources"]]


def test_without_a_policy_every_finding_is_reported(corpus: Path) -> None:
    document = verify_json(code=1)
    assert rules_of(document) == ["SA106", "SA301", "SA302"]
    assert document["baseline"] is None


@pytest.mark.parametrize(
    ("arguments", "rules", "code"),
    [
        (["--select", "SA1"], ["SA106"], 1),
        (["--select", "SA3"], ["SA301", "SA302"], 0),
        (["--ignore", "SA106"], ["SA301", "SA302"], 0),
        (["--ignore", "malformed-json"], ["SA301", "SA302"], 0),  # by name
        (["--ignore", "sa106,SA302"], ["SA301"], 0),  # comma-separated, codes case-insensitive
        (["--ignore", "SA106", "--ignore", "SA302"], ["SA301"], 0),  # repeatable
        (["--select", "SA3", "--ignore", "SA302"], ["SA301"], 0),
        (["--select", "SA302", "--ignore", "SA3"], ["SA302"], 0),  # the more specific selector wins
        (["--select", "SA3", "--ignore", "SA3"], [], 0),  # equally specific: ignore wins
        (["--select", "SA"], ["SA106", "SA301", "SA302"], 1),  # SA: every rule
    ],
)
def test_select_and_ignore_by_code_prefix_or_name(
    corpus: Path, arguments: list[str], rules: list[str], code: int
) -> None:
    document = verify_json(*arguments, code=code)
    assert rules_of(document) == rules
    assert verdicts_of(document) == ["corrupt", "needs-recovery"]  # never a verdict
    counts = document["summary"]["findings"]
    assert sum(counts.values()) == len(rules)  # the summary counts what is shown
    assert counts["error"] == rules.count("SA106")


def test_severity_override_changes_the_exit_code_never_the_verdict(corpus: Path) -> None:
    document = verify_json("--ignore", "SA1", code=0)
    assert verdicts_of(document) == ["corrupt", "needs-recovery"]
    raised = verify_json("--ignore", "SA1", "--severity", "SA301=error", code=1)
    assert [(item["rule"], item["severity"]) for item in raised["findings"]] == [
        ("SA301", "error"),
        ("SA302", "warning"),
    ]
    assert raised["summary"]["findings"] == {"error": 1, "warning": 1, "note": 0}
    assert verdicts_of(raised) == ["corrupt", "needs-recovery"]
    lowered = verify_json("--severity", "malformed-json=note", code=0)
    assert lowered["findings"][0]["severity"] == "note"
    assert verdicts_of(lowered) == ["corrupt", "needs-recovery"]
    # a prefix for many rules, a code for one: the code wins whatever the order
    mixed = verify_json("--severity", "SA302=note", "--severity", "SA3=error", code=1)
    assert [item["severity"] for item in mixed["findings"]] == ["error", "error", "note"]
    assert verify_json("--severity", "SA1=warning", "--fail-on", "warning", code=1)


def test_severity_applies_to_every_output_format(corpus: Path) -> None:
    result = runner.invoke(
        app, ["verify", "a.jsonl", "b.jsonl", "--no-config", "--format", "sarif", "--severity", "SA106=note"]
    )
    assert result.exit_code == 0, result.output
    levels = {item["ruleId"]: item["level"] for item in json.loads(result.stdout)["runs"][0]["results"]}
    assert levels == {"SA106": "note", "SA301": "warning", "SA302": "warning"}
    junit = runner.invoke(
        app, ["verify", "a.jsonl", "b.jsonl", "--no-config", "--format", "junit", "--ignore", "SA106"]
    )
    assert junit.exit_code == 0 and "SA106" not in junit.stdout and "SA301" in junit.stdout
    github = runner.invoke(
        app, ["verify", "a.jsonl", "b.jsonl", "--no-config", "--format", "github", "--ignore", "SA3"]
    )
    assert github.exit_code == 1 and "SA106" in github.stdout and "SA301" not in github.stdout
    console = runner.invoke(app, ["verify", "a.jsonl", "b.jsonl", "--no-config", "--select", "SA302"])
    assert console.exit_code == 0 and "SA302" in console.stdout and "SA106" not in console.stdout


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--select", "SA999"], "'SA999'"),
        (["--ignore", "SA106,nonsense"], "'nonsense'"),
        (["--select", "SA9"], "'SA9'"),  # a prefix no rule has
        (["--select", ","], "no rule given"),
        (["--severity", "SA301=fatal"], "'fatal'"),
        (["--severity", "SA301"], "CODE=LEVEL"),
        (["--severity", "bogus-rule=error"], "'bogus-rule'"),
    ],
)
def test_unknown_rules_and_bad_values_are_usage_errors(
    corpus: Path, arguments: list[str], named: str
) -> None:
    result = runner.invoke(app, ["verify", "a.jsonl", "--no-config", *arguments])
    assert result.exit_code == 2, result.output
    assert named in result.stderr
    assert result.stdout == ""  # nothing is audited or reported


def test_selectors_units() -> None:
    assert parse_selector("seq-mismatch", "--select").prefix == "SA205"
    assert parse_selector("sa2", "--select").specificity == 1
    with pytest.raises(PolicyError, match="unknown rule 'SA2x'"):
        parse_selector("SA2x", "--select")
    policy = resolve_policy(select=["SA1", "SA301"], ignore=["SA104"], no_config=True)
    assert policy.enabled("SA106") and policy.enabled("SA301")
    assert not policy.enabled("SA104") and not policy.enabled("SA302") and not policy.enabled("SA020")


def test_apply_policy_keeps_sources_and_recounts(corpus: Path) -> None:
    report = audit(["a.jsonl", "b.jsonl"]).report
    policy = resolve_policy(ignore=["SA3"], severity=["SA106=warning"], no_config=True)
    shown = apply_policy(report, policy).report
    assert shown.sources == report.sources
    assert [(item.rule, item.severity) for item in shown.findings] == [("SA106", Severity.WARNING)]
    assert shown.summary.findings == {"error": 0, "warning": 1, "note": 0}
    assert shown.summary.verdicts == report.summary.verdicts
    assert apply_policy(report, Policy()).report == report  # no policy: the report as audited
