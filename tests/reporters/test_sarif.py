"""SARIF 2.1.0: valid against the official schema (vendored), catalogue rules, stable fingerprints."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator

from sessaudit.reporters.sarif import artifact_uri, render_sarif, sarif_document
from sessaudit.rules import RULES
from sessaudit.verdicts import Severity, Verdict
from tests.reporters.corpus import REPO, bare_source, examples_report, finding, handmade_report

VENDORED = REPO / "tests" / "vendor" / "sarif-schema-2.1.0.json"
VENDORED_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


def validate(document: dict[str, Any]) -> None:
    """The official schema, format checks off (it is draft-04; `uri` formats need extra packages)."""
    Draft4Validator(json.loads(VENDORED.read_text(encoding="utf-8"))).validate(document)


def test_vendored_schema_is_the_recorded_official_file() -> None:
    assert hashlib.sha256(VENDORED.read_bytes()).hexdigest() == VENDORED_SHA256
    assert VENDORED_SHA256 in (REPO / "tests" / "vendor" / "README.md").read_text(encoding="utf-8")
    schema = json.loads(VENDORED.read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")


def test_examples_sarif_is_valid_and_carries_every_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    report = examples_report(monkeypatch)
    document = json.loads(render_sarif(report))
    validate(document)
    assert document["version"] == "2.1.0" and len(document["runs"]) == 1
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in RULES]
    assert len(run["results"]) == len(report.findings)
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
    error = next(result for result in run["results"] if result["ruleId"] == "SA205")
    physical = error["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].startswith("examples/tiny-agent/.tiny-agent/sessions/")
    assert physical["region"] == {"startLine": 5, "byteOffset": 2543}
    row = next(r for r in run["results"] if r.get("properties", {}).get("table") == "remote_runs")
    assert row["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "remote_runs/1"
    assert "region" not in row["locations"][0]["physicalLocation"]


def test_rule_descriptors_link_to_the_rules_page() -> None:
    document = sarif_document(handmade_report([]))
    validate(document)
    anchors = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    for descriptor, rule in zip(document["runs"][0]["tool"]["driver"]["rules"], RULES, strict=True):
        # SARIF wants helpUri absolute and sessaudit has no web address: the rule page is named in help
        assert "helpUri" not in descriptor
        page = f"docs/rules.md#{rule.code.lower()}"
        assert page in descriptor["help"]["text"] and page in descriptor["help"]["markdown"]
        assert f"sessaudit rules {rule.code}" in descriptor["help"]["markdown"]
        assert f"## {rule.code}" in anchors
        assert descriptor["defaultConfiguration"]["level"] == rule.severity.value
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] == rule.doc


def test_fingerprints_are_stable_and_ignore_numbers_that_move(monkeypatch: pytest.MonkeyPatch) -> None:
    report = examples_report(monkeypatch)
    first, second = render_sarif(report), render_sarif(examples_report(monkeypatch))
    assert first == second  # deterministic: no clock, keys sorted
    moved = handmade_report(
        [
            finding(
                "SA205",
                "seq-mismatch",
                Severity.ERROR,
                "seq: expected 6, found 7",
                path="a.jsonl",
                seq=7,
                line=5,
            )
        ]
    )
    grown = handmade_report(
        [
            finding(
                "SA205",
                "seq-mismatch",
                Severity.ERROR,
                "seq: expected 6, found 7",
                path="a.jsonl",
                seq=7,
                line=9,
            )
        ]
    )
    key = "sessauditFinding/v1"

    def prints(document: dict[str, Any]) -> list[str]:
        return [result["partialFingerprints"][key] for result in document["runs"][0]["results"]]

    assert prints(sarif_document(moved)) == prints(sarif_document(grown))
    twice = handmade_report(
        [finding("SA686", "permissions-wide", Severity.WARNING, "mode 0644", path="a.db")] * 2
    )
    values = prints(sarif_document(twice))
    assert len(set(values)) == 2 and values[1] == values[0] + ":2"


def test_uris_are_relative_posix_and_percent_encoded(tmp_path: Path) -> None:
    assert artifact_uri("logs/a b#1:x.jsonl") == "logs/a%20b%231%3Ax.jsonl"
    assert artifact_uri(str(tmp_path / "sub" / "ü.jsonl"), base=tmp_path) == "sub/%C3%BC.jsonl"
    outside = artifact_uri("/elsewhere/x.jsonl", base=tmp_path)
    assert outside == "file:///elsewhere/x.jsonl"


def test_unreadable_inputs_are_notifications_and_pathless_findings_sit_at_run_level() -> None:
    report = handmade_report(
        [
            finding(
                "SA001",
                "input-unreadable",
                Severity.ERROR,
                "missing.jsonl: no such file",
                path="missing.jsonl",
            ),
            finding("SA205", "seq-mismatch", Severity.ERROR, "no place known"),
        ],
        sources=[bare_source("missing.jsonl", Verdict.UNREADABLE), bare_source("gone", Verdict.UNREADABLE)],
    )
    document = sarif_document(report)
    validate(document)
    invocation = document["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    assert [note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for note in notes] == [
        "missing.jsonl",
        "gone",
    ]
    assert notes[0]["descriptor"] == {"id": "SA001"}
    pathless = next(r for r in document["runs"][0]["results"] if r["message"]["text"] == "no place known")
    assert "locations" not in pathless
