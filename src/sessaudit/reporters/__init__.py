"""Reporters: the audit result for people (console), programs (json) and CI (sarif, junit, github)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from sessaudit.model import Report
from sessaudit.reporters.console import render_console
from sessaudit.reporters.github import render_github
from sessaudit.reporters.json import render_json
from sessaudit.reporters.junit import render_junit
from sessaudit.reporters.sarif import render_sarif
from sessaudit.reporters.timing import AuditTimes


class OutputFormat(StrEnum):
    CONSOLE = "console"
    JSON = "json"
    SARIF = "sarif"
    JUNIT = "junit"
    GITHUB = "github"


Renderer = Callable[[Report], str]

RENDERERS: dict[OutputFormat, Renderer] = {
    OutputFormat.CONSOLE: render_console,
    OutputFormat.JSON: render_json,
    OutputFormat.SARIF: render_sarif,
    OutputFormat.JUNIT: render_junit,
    OutputFormat.GITHUB: render_github,
}


def render(output_format: OutputFormat, report: Report, times: AuditTimes | None = None) -> str:
    """`report` in `output_format`; `times` (`--timestamps`) reach the formats with a place for them."""
    if output_format is OutputFormat.SARIF:
        return render_sarif(report, times)
    if output_format is OutputFormat.JUNIT:
        return render_junit(report, times)
    return RENDERERS[output_format](report)
