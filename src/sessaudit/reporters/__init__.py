"""Reporters: the audit result for people (console, html), programs (json) and CI (sarif, junit, github).

Each reporter's module is imported when its format is rendered, not with this package: a JSON report never
loads rich (the console's) or xml.etree (JUnit's), and `from sessaudit.reporters.json import ...` stays
light."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessaudit.model import Report
    from sessaudit.reporters.timing import AuditTimes


class OutputFormat(StrEnum):
    CONSOLE = "console"
    JSON = "json"
    SARIF = "sarif"
    JUNIT = "junit"
    GITHUB = "github"
    HTML = "html"


Renderer = Callable[["Report"], str]


def _console(report: Report) -> str:
    from sessaudit.reporters.console import render_console

    return render_console(report)


def _json(report: Report) -> str:
    from sessaudit.reporters.json import render_json

    return render_json(report)


def _sarif(report: Report, times: AuditTimes | None = None) -> str:
    from sessaudit.reporters.sarif import render_sarif

    return render_sarif(report, times)


def _junit(report: Report, times: AuditTimes | None = None) -> str:
    from sessaudit.reporters.junit import render_junit

    return render_junit(report, times)


def _github(report: Report) -> str:
    from sessaudit.reporters.github import render_github

    return render_github(report)


def _html(report: Report) -> str:
    """The HTML page without timelines (`verify` draws them: sessaudit.timeline needs the evidence)."""
    from sessaudit.reporters.html import render_html

    return render_html(report, {"sessions": []})


RENDERERS: dict[OutputFormat, Renderer] = {
    OutputFormat.CONSOLE: _console,
    OutputFormat.JSON: _json,
    OutputFormat.SARIF: _sarif,
    OutputFormat.JUNIT: _junit,
    OutputFormat.GITHUB: _github,
    OutputFormat.HTML: _html,
}


def render(output_format: OutputFormat, report: Report, times: AuditTimes | None = None) -> str:
    """`report` in `output_format`; `times` (`--timestamps`) reach the formats with a place for them."""
    if output_format is OutputFormat.SARIF:
        return _sarif(report, times)
    if output_format is OutputFormat.JUNIT:
        return _junit(report, times)
    return RENDERERS[output_format](report)
