"""The HTML incident report in a real browser (headless Chromium through Playwright, tests/browser.py):
it opens with no console error and no request, shows the effects of unknown outcome first, draws the
timelines (a mark focused says its line, byte offset and seq; the zoom narrows them), and a hostile log's
strings stay text: no dialog opens and none of their scripts runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser import artefact, browser, visit  # noqa: F401  (browser: the fixture)
from tests.reporters.corpus import REPO
from tests.reporters.test_html import hostile_corpus, html_of
from tests.sessions import HOSTILE


def _page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, target: str) -> Path:
    html_of(monkeypatch, tmp_path, target)
    return tmp_path / "incident.html"


def test_examples_open_clean_with_the_unknown_effects_first(
    browser: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(REPO)
    seen = visit(browser, _page(monkeypatch, tmp_path, "examples/"))
    page = seen.page
    page.screenshot(path=str(artefact("examples-report.png", tmp_path)), full_page=True)
    assert seen.errors == [] and [item for item in seen.console if item[0] in ("error", "warning")] == []
    assert [url for url in seen.requests if not url.startswith("file:")] == []
    first = page.evaluate("document.querySelector('main').firstElementChild.id")
    assert first == "unknown-effects"
    rows = page.locator("#unknown-effects tr.unknown")
    assert rows.count() == 5
    assert "exec_command" in rows.nth(1).inner_text()
    # the open sessions are drawn: one SVG each, with marks a keyboard reaches
    drawn = page.locator("details.session[open] svg.timeline")
    assert drawn.count() >= 5
    session = page.locator("details.session[open]").first
    unknown = session.locator("g.k-tool.unknown").first
    unknown.focus()
    detail = session.locator(".detail").inner_text()
    assert "Bash: unknown, effect-unknown" in detail and "line 16, byte 11661, seq 16" in detail
    assert session.locator("g.end.crash").count() == 1


def test_zooming_to_the_last_minute_narrows_every_drawn_timeline(
    browser: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(REPO)
    page = visit(browser, _page(monkeypatch, tmp_path, "examples/")).page
    codex = page.locator("details.session[open]").nth(1)  # the Codex session spans 104 s
    texts = "nodes => nodes.map(node => node.textContent)"
    before = codex.locator("svg text.tick").evaluate_all(texts)
    page.select_option("#zoom", "1")
    after = codex.locator("svg text.tick").evaluate_all(texts)
    assert before[-1] == after[-1] == "18:42:51.152"  # both end where the log ends
    assert before[0] == "18:41:07.591" and after[0] == "18:41:51.152"  # the start moves up to a minute before


def test_a_hostile_log_stays_text_and_runs_nothing(
    browser: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    seen = visit(browser, _page(monkeypatch, tmp_path, str(hostile_corpus(tmp_path))))
    page = seen.page
    page.screenshot(path=str(artefact("hostile-report.png", tmp_path)), full_page=True)
    for mark in page.locator("svg .mark").all():  # hovering and focusing writes each mark's text
        mark.focus()
        mark.dispatch_event("mouseenter")
    assert seen.dialogs == [] and seen.errors == []
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 2  # the data and the page's own
    arguments = page.locator("#unknown-effects pre.arguments").inner_text()
    assert HOSTILE[0] in arguments and HOSTILE[1].replace('"', '\\"') in arguments
    assert "\\u202eevil\\u202c" in arguments  # a bidi override, shown as its escape
    assert "<svg onload=alert(5)>.jsonl" in page.locator("#verdicts").inner_text()
    focused = page.locator("details.session[open] g.k-tool.unknown").first
    focused.focus()
    assert HOSTILE[0] in page.locator("details.session[open] .detail").first.inner_text()
