"""The HTML incident report as bytes: self-contained, the answer first, every log string inert text, the
seeds and timelines the same as `seed` and `show` give, and a golden page for examples/ (normalised)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import sessaudit.cli
import sessaudit.timeline
from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.reporters.html import _ms, compact
from sessaudit.timeline import build_timelines, timelines_json
from sessaudit.warehouse.extract import EvidenceChanged
from tests.golden import check_golden
from tests.reporters.corpus import REPO
from tests.sessions import HOSTILE, hostile_session

runner = CliRunner()
NOW = datetime(2026, 12, 2, 3, 0, 0, tzinfo=UTC)


def html_of(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *arguments: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sessaudit.cli, "utc_now", lambda: NOW)
    page = tmp_path / "incident.html"
    result = runner.invoke(app, ["verify", *arguments, "--report", f"html={page}"])
    return result.exit_code, page.read_text(encoding="utf-8"), result.stderr


def hostile_corpus(tmp_path: Path) -> Path:
    """The hostile session under a folder and a file name that are markup too."""
    folder = tmp_path / "evidence" / '"><img src=x onerror=alert(4)>'
    folder.mkdir(parents=True)
    (folder / "<svg onload=alert(5)>.jsonl").write_bytes(hostile_session())
    return tmp_path / "evidence"


def normalised(page: str) -> str:
    """The page without what changes from release to release (the version, the policy's hashes) and
    without its inline style and script, which are report.css and report.js as they are."""
    page = re.sub(r"sessaudit \d+\.\d+\.\d+\S*", "sessaudit VERSION", page)
    page = re.sub(r"<style>.*?</style>", "<style>(report.css)</style>", page, count=1, flags=re.DOTALL)
    page = re.sub(
        r"<script>(?!\{).*?</script>", "<script>(report.js)</script>", page, count=1, flags=re.DOTALL
    )
    return re.sub(r"'sha256-[A-Za-z0-9+/=]+'", "'sha256-…'", page)


def test_examples_page_matches_the_golden_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, update_golden: bool
) -> None:
    monkeypatch.chdir(REPO)
    code, page, _ = html_of(monkeypatch, tmp_path, "examples/")
    assert code == 1  # examples/ holds a corrupt session on purpose, as for the console report
    check_golden(REPO / "tests" / "golden" / "examples.report.html", normalised(page), update_golden)
    css = (REPO / "src" / "sessaudit" / "reporters" / "html" / "report.css").read_text(encoding="utf-8")
    js = (REPO / "src" / "sessaudit" / "reporters" / "html" / "report.js").read_text(encoding="utf-8")
    assert f"<style>{css}</style>" in page and f"<script>{js}</script>" in page


def test_the_page_needs_nothing_from_outside_and_runs_only_its_own_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    _, page, _ = html_of(monkeypatch, tmp_path, "examples/")
    # URLs may be text (a schema's id, a tool's argument); nothing the page holds loads one
    assert not re.search(r"<(link|img|iframe|object|embed|base|form|meta http-equiv=\"refresh)\b", page)
    assert not re.search(r"\bsrc=", page)
    assert {href.split(",")[0] for href in re.findall(r'href="([^"#][^"]*)"', page)} == {
        "data:application/json;base64"
    }
    assert "url(" not in page.split("<style>")[1].split("</style>")[0] and "@import" not in page
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    rules = dict(part.strip().split(" ", 1) for part in html.unescape(policy.group(1)).split(";"))
    assert rules["default-src"] == "'none'" and rules["img-src"] == "data:"
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)
    scripts = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    assert style is not None and len(scripts) == 1

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    # the inline style and script are allowed by their hashes, and nothing else is
    assert rules["style-src"] == digest(style.group(1)) and rules["script-src"] == digest(scripts[0])


def test_the_answer_comes_first_the_effects_of_unknown_outcome(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    _, page, _ = html_of(monkeypatch, tmp_path, "examples/")
    sections = re.findall(r'<section id="([a-z-]+)"', page)
    assert sections == ["unknown-effects", "verdicts", "timelines", "findings", "seeds", "usage", "settings"]
    headline = re.search(r'<p id="headline" class="headline alarm">(.*?)</p>', page)
    assert headline is not None and headline.group(1).startswith(
        "5 effect(s) of unknown outcome in 5 session(s)"
    )
    effects = page.split('<section id="unknown-effects"')[1].split("</section>")[0]
    assert effects.count('<tr class="unknown">') == 5
    for tool in ("Bash", "exec_command", "replace_text", "bash"):
        assert f'<strong class="tool">{tool}</strong>' in effects


def test_every_hostile_string_is_text_and_no_control_character_reaches_the_page(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code, page, _ = html_of(monkeypatch, tmp_path, str(hostile_corpus(tmp_path)))
    assert code == 0  # the call of unknown outcome is a warning
    assert re.findall(r"<script[^>]*>", page) == [
        '<script type="application/json" id="timeline-data">',
        "<script>",
    ]
    assert page.count("</script>") == 2  # the data cannot close its element: `<` is \u003c in it
    assert "<img" not in page and "&lt;img src=x onerror=" in page  # escaped: text, not an element
    assert not re.search(r"<[a-z]+[^>]*\son[a-z]+=", page)  # no element has an event handler
    assert not re.search(r'href="javascript:', page)
    # Trojan Source and terminal escapes: written as escapes, never raw
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page)
    assert "\\u202e" in page
    data = re.search(r'<script type="application/json" id="timeline-data">(.*?)</script>', page, re.DOTALL)
    assert data is not None
    timelines = json.loads(data.group(1))
    session = timelines["sessions"][0]
    (unknown,) = session["x"]
    assert HOSTILE[0] in session["d"][str(unknown)]  # the data holds the arguments as text


def test_a_seed_downloads_as_the_seed_command_prints_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    corpus = hostile_corpus(tmp_path)
    _, page, _ = html_of(monkeypatch, tmp_path, str(corpus))
    links = re.findall(
        r'<a class="seed" id="seed-\d+" download="([^"]+)" href="data:application/json;base64,([^"]+)">', page
    )
    assert links, "no seed link"
    assert page.count("data:application/json;base64,") == len(links)  # each seed's data once
    name, encoded = links[0]
    assert name.endswith(".seed.json") and "/" not in name
    printed = runner.invoke(app, ["seed", str(corpus)])
    assert json.loads(base64.b64decode(encoded)) == json.loads(printed.stdout)[0]


def test_html_on_stdout_and_as_a_report_are_the_same_page(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    code, page, _ = html_of(monkeypatch, tmp_path, "examples/", "--format", "html")
    result = runner.invoke(app, ["verify", "examples/", "--format", "html"])
    assert (code, result.exit_code) == (1, 1)
    assert result.stdout == page


def test_redacted_page_masks_arguments_in_the_table_and_the_timeline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, page, _ = html_of(monkeypatch, tmp_path, str(hostile_corpus(tmp_path)), "--redact")
    assert "window.__pwned" not in page and "pwned" not in page
    assert "bash" in page  # names are kept


def _undo(differences: list[int | None]) -> list[int | None]:
    found: list[int | None] = []
    last = 0
    for value in differences:
        if value is not None:
            last += value
        found.append(None if value is None else last)
    return found


def _decoded(compacted: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """The events of one session as the page's script reads them back (report.js `decode`)."""
    raw = compacted["sessions"][index]
    strings, kinds = compacted["strings"], compacted["kinds"]

    def text(number: int) -> str | None:
        return strings[number] if number >= 0 else None

    lines, offsets, seqs = _undo(raw["ln"]), _undo(raw["b"]), _undo(raw["s"])
    owners = [owner for owner, count in raw["r"] for _ in range(count)]
    durations = iter(raw["u"])
    events, at = [], raw["t0"]
    for number in range(len(raw["e"])):
        step = raw["t"][number]
        if step is not None and at is not None:
            at += step
        moment = at if step is not None else None
        key = str(number)
        label, kind, status, rule = compacted["labels"][raw["e"][number]]
        duration = next(durations) if kinds[kind] == "tool" else 0
        events.append(
            {
                "at": moment,
                "kind": kinds[kind],
                "label": strings[label],
                "line": lines[number],
                "byte_offset": offsets[number],
                "seq": seqs[number],
                "rowid": raw["rw"].get(key),
                "run_id": raw["runs"][owners[number]][0] if owners[number] >= 0 else None,
                "status": text(status),
                "until": moment + duration if duration and moment is not None else None,
                "unknown": number in raw["x"],
                "detail": raw["d"].get(key),
                "rule": text(rule),
            }
        )
    return events


def _kept(item: dict[str, Any], near_end: bool) -> str | None:
    """An event's detail as the page keeps it: whole for open calls and findings; 300 characters for
    failed calls and those near the end of the log; none for the other settled calls."""
    detail = item["detail"]
    if detail is None or item["unknown"] or item["kind"] != "tool":
        return detail
    if item["status"] == "failed" or near_end:  # the last 8 events
        return detail if len(detail) <= 300 else detail[:300] + "…"
    return None


def test_the_compact_timelines_read_back_as_the_timelines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    document = timelines_json(build_timelines(audit(["examples/"]).report))
    compacted = compact(document)
    assert len(compacted["sessions"]) == len(document["sessions"]) == 11
    for index, session in enumerate(document["sessions"]):
        events = session["events"]
        expected = [
            {
                **item,
                "at": _ms(item["at"]),
                "until": _ms(item["until"]) if _ms(item["until"]) != _ms(item["at"]) else None,
                "detail": _kept(item, number >= len(events) - 8),
            }
            for number, item in enumerate(events)
        ]
        for item in expected:
            del item["placed"]
        assert _decoded(compacted, index) == expected


def test_a_source_that_cannot_be_drawn_makes_the_audit_incomplete(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def changed(*_: object, **__: object) -> None:
        raise EvidenceChanged("evidence/s.jsonl changed after it was verified")

    monkeypatch.setattr(sessaudit.timeline, "extract", changed)
    code, page, stderr = html_of(monkeypatch, tmp_path, str(hostile_corpus(tmp_path)))
    assert code == 3
    assert (
        "sessaudit: html report incomplete: records not drawn: evidence/s.jsonl changed after it was"
        in stderr
    )
    assert "records not drawn: evidence/s.jsonl changed after it was verified" in page
