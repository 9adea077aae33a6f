"""A real browser for the HTML report's tests: Playwright driving Debian's Chromium (never a browser of
Playwright's own: `playwright install` would download one). Without either, the tests that need it skip
with the reason; under SESSAUDIT_REQUIRE_BROWSER (set by .ci/run, which installs both) they fail instead.
Screenshots go to $SESSAUDIT_ARTEFACTS when it is set."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


def chromium_path() -> str | None:
    configured = os.environ.get("SESSAUDIT_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("SESSAUDIT_REQUIRE_BROWSER"):
        pytest.fail(f"a browser is required by SESSAUDIT_REQUIRE_BROWSER: {reason}")
    pytest.skip(f"{reason} (install Debian's chromium and `pip install playwright`; .ci/run does)")


@dataclass
class Visit:
    """What a page did while it was open: console messages, page errors, requests, dialogs."""

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed")
    executable = chromium_path()
    if executable is None:
        _unavailable("no chromium on PATH")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def visit(browser: Any, page_file: Path, *, width: int = 1280, height: int = 900) -> Visit:
    """Open `page_file` in a fresh page (no network: every request other than the file is recorded, and
    refused), wait for its script, and return the page with what it did."""
    context = browser.new_context(viewport={"width": width, "height": height}, java_script_enabled=True)
    page = context.new_page()
    seen = Visit(page)
    page.on("console", lambda message: seen.console.append((message.type, message.text)))
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on("request", lambda request: seen.requests.append(request.url))

    def dialog(opened: Any) -> None:
        seen.dialogs.append(opened.message)
        opened.dismiss()

    page.on("dialog", dialog)
    page.route(
        "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
    )
    page.goto(page_file.resolve().as_uri())
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)  # the observer draws the open sections
    return seen


def artefact(name: str, tmp_path: Path) -> Path:
    """Where a screenshot goes: $SESSAUDIT_ARTEFACTS (kept after the run), else the test's tmp folder."""
    folder = Path(os.environ.get("SESSAUDIT_ARTEFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
