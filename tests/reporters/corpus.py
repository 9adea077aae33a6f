"""Reports the reporter tests share: the example corpus and small hand-made reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessaudit.engine import audit
from sessaudit.model import Finding, Location, Report, Source, Summary, Tool
from sessaudit.verdicts import Severity, Verdict

REPO = Path(__file__).resolve().parents[2]


def examples_report(monkeypatch: pytest.MonkeyPatch) -> Report:
    monkeypatch.chdir(REPO)
    return audit(["examples/"]).report


def finding(rule: str, name: str, severity: Severity, message: str, **location: object) -> Finding:
    return Finding(rule=rule, name=name, severity=severity, message=message, location=Location(**location))


def handmade_report(findings: list[Finding], sources: list[Source] | None = None) -> Report:
    sources = sources or []
    counts = {level.value: sum(item.severity is level for item in findings) for level in Severity}
    return Report(
        tool=Tool(version="0.1.0"),
        sources=sources,
        skipped=[],
        findings=findings,
        summary=Summary(sources=len(sources), verdicts={}, session_verdicts={}, findings=counts),
    )


def bare_source(path: str, verdict: Verdict) -> Source:
    return Source(
        path=path,
        format=None,
        format_version=None,
        files=[],
        sha256=None,
        evidence_unchanged=True,
        verdict=verdict,
    )
