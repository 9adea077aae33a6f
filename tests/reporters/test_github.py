"""GitHub annotations: escaping as the runner expects, 10 per level, and the Markdown step summary."""

from __future__ import annotations

import pytest

from sessaudit.reporters.github import escape_data, escape_property, render_github, render_github_summary
from sessaudit.verdicts import Severity
from tests.reporters.corpus import examples_report, finding, handmade_report


def test_escaping_follows_the_actions_toolkit() -> None:
    assert escape_data("100%\r\nok: a,b") == "100%25%0D%0Aok: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_at_most_ten_annotations_per_level_errors_first() -> None:
    findings = [
        finding("SA686", "permissions-wide", Severity.WARNING, f"w{index}", path=f"w{index:02}.db")
        for index in range(12)
    ] + [finding("SA205", "seq-mismatch", Severity.ERROR, "bad,\nseq", path="a,b:c.jsonl", line=3)]
    lines = render_github(handmade_report(findings)).splitlines()
    annotations = [line for line in lines if line.startswith("::")]
    assert annotations[0] == "::error file=a%2Cb%3Ac.jsonl,line=3,title=SA205 seq-mismatch::bad,%0Aseq"
    assert sum(line.startswith("::warning ") for line in annotations) == 10
    assert lines[-1].endswith("2 not annotated (GitHub shows 10 per level), see the step summary")


def test_examples_summary_lists_every_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    report = examples_report(monkeypatch)
    summary = render_github_summary(report)
    assert "| error | 1 |" in summary and "| warning | 16 |" in summary  # with Half-Pi SA686
    for source in report.sources:
        assert f"| {source.path} | {source.format} | {source.verdict.value} |" in summary
    assert sum(
        line.startswith(("| error | SA", "| warning | SA", "| note | SA")) for line in summary.splitlines()
    ) == (len(report.findings))


def test_summary_cells_cannot_break_the_table() -> None:
    summary = render_github_summary(
        handmade_report([finding("SA205", "seq-mismatch", Severity.ERROR, "a | b\n<script>", path="x.jsonl")])
    )
    assert "a \\| b &lt;script&gt;" in summary
