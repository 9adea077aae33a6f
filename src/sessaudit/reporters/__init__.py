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
