"""JUnit XML as a consumer reads it (junitparser): a suite per source, a case per session, errors fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from sessaudit.model import Session
from sessaudit.reporters.junit import render_junit
from sessaudit.verdicts import Severity, Verdict
from tests.reporters.corpus import bare_source, examples_report, finding, handmade_report


def parse(text: str, tmp_path: Path) -> JUnitXml:
    path = tmp_path / "report.xml"
    path.write_text(text, encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def test_examples_junit_parses_with_one_suite_per_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = examples_report(monkeypatch)
    xml = parse(render_junit(report), tmp_path)
    suites = list(xml)
    assert [suite.name for suite in suites] == [source.path for source in report.sources]
    failed = []
    for suite, source in zip(suites, report.sources, strict=True):
        cases = list(suite)
        session_ids = [session.session_id for session in source.sessions]
        assert [case.name for case in cases if case.name != source.path] == session_ids
        for case in cases:
            assert case.classname == f"sessaudit.{source.format}"
            failed += [(case.name, result) for result in case.result if isinstance(result, Failure)]
    errors = [item for item in report.findings if item.severity is Severity.ERROR]
    assert len(failed) == len(errors) == xml.failures == 1
    name, failure = failed[0]
    assert name == errors[0].location.session_id
    assert failure.message == "SA205 seq-mismatch"
    assert failure.text is not None and ":5 (byte 2543, seq 7, pointer /seq): seq: expected 6" in failure.text


def test_source_level_errors_and_control_characters(tmp_path: Path) -> None:
    source = bare_source("bad.jsonl", Verdict.CORRUPT).model_copy(
        update={"sessions": [Session(session_id="s1", verdict=Verdict.CORRUPT, facts=0, last_seq=None)]}
    )
    report = handmade_report(
        [
            finding(
                "SA201", "header-invalid", Severity.ERROR, "broken \x1b header", path="bad.jsonl", line=1
            ),
            finding("SA205", "seq-mismatch", Severity.ERROR, "in s1", path="bad.jsonl", session_id="s1"),
            finding("SA999", "elsewhere", Severity.ERROR, "claims", path="claims.json"),
        ],
        sources=[source],
    )
    xml = parse(render_junit(report), tmp_path)
    suites = list(xml)
    assert [suite.name for suite in suites] == ["bad.jsonl", "sessaudit"]
    cases = {case.name: case for case in suites[0]}
    assert set(cases) == {"bad.jsonl", "s1"}
    source_failure = cases["bad.jsonl"].result[0]
    assert isinstance(source_failure, Failure)
    assert source_failure.text == "bad.jsonl:1: broken \\x1b header"
    assert [case.name for case in suites[1]] == ["claims.json"]
    assert xml.failures == 3
