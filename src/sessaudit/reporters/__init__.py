"""Reporters: the audit result for people (console) and programs (json); a plain name→function dict."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from sessaudit.model import Report
from sessaudit.reporters.console import render_console
from sessaudit.reporters.json import render_json


class OutputFormat(StrEnum):
    CONSOLE = "console"
    JSON = "json"


Renderer = Callable[[Report], str]

RENDERERS: dict[OutputFormat, Renderer] = {
    OutputFormat.CONSOLE: render_console,
    OutputFormat.JSON: render_json,
}
