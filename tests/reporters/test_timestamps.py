"""`verify --timestamps` (CONTRACT §2): outputs carry no wall-clock time unless asked, and then valid UTC."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from junitparser import JUnitXml
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.reporters.timing import AuditTimes, Stopwatch, junit_time, sarif_time
from tests.reporters.corpus import REPO
from tests.reporters.test_sarif import validate

runner = CliRunner()
SARIF_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
JUNIT_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")


def verify_examples(folder: Path, *extra: str) -> dict[str, bytes]:
    """`verify examples/` with SARIF on --output and JUnit and JSON as --report files; their bytes."""
    folder.mkdir()
    outputs = {name: folder / name for name in ("report.sarif", "report.xml", "report.json")}
    result = runner.invoke(
        app,
        [
            "verify",
            "examples/",
            "--format",
            "sarif",
            "--output",
            str(outputs["report.sarif"]),
            "--report",
            f"junit={outputs['report.xml']}",
            "--report",
            f"json={outputs['report.json']}",
            "--jobs",
            "1",
            *extra,
        ],
    )
    assert result.exit_code == 1, result.output  # the examples hold a corrupt session on purpose
    return {name: path.read_bytes() for name, path in outputs.items()}


def test_without_the_flag_two_runs_are_byte_identical(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    first = verify_examples(tmp_path / "first")
    second = verify_examples(tmp_path / "second")
    assert first == second
    invocation = json.loads(first["report.sarif"])["runs"][0]["invocations"][0]
    assert "startTimeUtc" not in invocation and "endTimeUtc" not in invocation
    assert b"timestamp=" not in first["report.xml"] and b' time="' not in first["report.xml"]


def test_with_the_flag_sarif_and_junit_carry_utc_times(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    plain = verify_examples(tmp_path / "plain")
    before = datetime.now(UTC)
    timed = verify_examples(tmp_path / "timed", "--timestamps")
    after = datetime.now(UTC)

    document = json.loads(timed["report.sarif"])
    validate(document)  # still valid against the official SARIF 2.1.0 schema
    invocation = document["runs"][0]["invocations"][0]
    start, end = invocation["startTimeUtc"], invocation["endTimeUtc"]
    assert SARIF_TIME.match(start) and SARIF_TIME.match(end)
    started, ended = datetime.fromisoformat(start), datetime.fromisoformat(end)
    assert started.utcoffset() == timedelta(0) and ended.utcoffset() == timedelta(0)
    # milliseconds are truncated: allow one for the comparison with this test's own clock
    slack = timedelta(milliseconds=1)
    assert before - slack <= started <= ended <= after + slack
    # apart from the two times, the SARIF document is the one without the flag
    del invocation["startTimeUtc"], invocation["endTimeUtc"]
    assert document == json.loads(plain["report.sarif"])

    junit_file = tmp_path / "timed" / "report.xml"
    xml = JUnitXml.fromfile(str(junit_file))
    suites = list(xml)
    assert suites
    for suite in suites:
        assert JUNIT_TIME.match(suite.timestamp)
        stamp = datetime.fromisoformat(suite.timestamp).replace(tzinfo=UTC)
        assert before - timedelta(seconds=1) <= stamp <= after
    assert 0 <= xml.time <= (after - before).total_seconds()

    # the JSON report has no place for times (schemas/report.v1.schema.json): unchanged by the flag
    assert timed["report.json"] == plain["report.json"]


def test_end_never_precedes_start_when_the_wall_clock_steps_back() -> None:
    wall = iter([datetime(2026, 11, 30, 3, 0, 0, 500_000, tzinfo=timezone(timedelta(hours=2)))])
    ticks = iter([100.0, 102.25])
    watch = Stopwatch(clock=lambda: next(wall), monotonic=lambda: next(ticks))
    times = watch.stop()
    assert times == AuditTimes(
        datetime(2026, 11, 30, 1, 0, 0, 500_000, tzinfo=UTC),
        datetime(2026, 11, 30, 1, 0, 2, 750_000, tzinfo=UTC),
    )
    assert times.seconds == 2.25
    assert sarif_time(times.start) == "2026-11-30T01:00:00.500Z"
    assert sarif_time(times.end) == "2026-11-30T01:00:02.750Z"
    assert junit_time(times.end) == "2026-11-30T01:00:02"
    backwards = iter([50.0, 49.0])  # a monotonic clock never does this; the elapsed time stays >= 0
    stepped = Stopwatch(clock=lambda: datetime(2026, 1, 1, tzinfo=UTC), monotonic=lambda: next(backwards))
    assert stepped.stop().seconds == 0.0
