"""Run.last_written_at: when each run last wrote, as its own records say (UTC ISO-8601, ms), per format."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessaudit.engine import audit
from sessaudit.times import iso_from_epoch_ms, iso_from_text, latest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SESSIONS = EXAMPLES / "tiny-agent" / ".tiny-agent" / "sessions"


def run_times(path: Path) -> dict[str, str | None]:
    report = audit([str(path)]).report
    return {
        run.run_id: run.last_written_at
        for source in report.sources
        for session in source.sessions
        for run in session.runs
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1796047552440, "2026-11-30T14:05:52.440Z"),
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (253_402_300_800_000, None),
        (True, None),
        (1.5e12, None),
        ("1796047552440", None),
    ],
)
def test_epoch_milliseconds(value: object, expected: str | None) -> None:
    assert iso_from_epoch_ms(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-29T20:28:09.757379Z", "2026-11-29T20:28:09.757Z"),
        ("2026-11-29T20:28:15.94Z", "2026-11-29T20:28:15.940Z"),
        ("2026-11-29T22:28:09+02:00", "2026-11-29T20:28:09.000Z"),
        ("0001-01-01T00:30:00+00:00", "0001-01-01T00:30:00.000Z"),
        ("2026-11-29T20:28:09", None),  # no offset: no instant
        ("yesterday", None),
        (None, None),
    ],
)
def test_iso_text(value: object, expected: str | None) -> None:
    assert iso_from_text(value) == expected


def test_latest_of_iso_times() -> None:
    assert (
        latest(None, "2026-07-30T12:00:00.000Z", "2026-07-30T12:00:00.225Z", None)
        == "2026-07-30T12:00:00.225Z"
    )
    assert latest(None) is None


def test_tiny_agent_v2_runs_carry_their_last_fact_time() -> None:
    times = run_times(SESSIONS / "2026-11-30T14-05-51-930Z_01a22cc6-bdba-7faa-9d33-fda9b6dc0914.jsonl")
    assert times["01a22cc6-bdbc-79a4-87cd-8773bd387424"] == "2026-11-30T14:05:52.440Z"  # its toolStarted


def test_tiny_agent_v2_time_of_a_corrupt_session_comes_from_the_verified_prefix() -> None:
    times = run_times(SESSIONS / "2026-11-30T16-48-36-264Z_01a22d5b-bba8-7e0c-9657-f5bf97611f4e.jsonl")
    # line 4 (the last accepted) is stamped …360; the rejected line 5 and later lines are stamped later
    assert times["01a22d5b-bba9-7862-a482-a73fc4b0bf71"] == "2026-11-30T16:48:37.360Z"


def test_tiny_agent_v1_turn_carries_its_last_line_time() -> None:
    times = run_times(SESSIONS / "2026-11-29T20-25-07-234Z_01a228fb-99a2-7b5e-b9ab-bf0ffa6bb9c4.jsonl")
    assert times == {"turn:2": "2026-11-29T20:25:10.922Z"}


def test_rivumi_run_carries_its_last_event_time() -> None:
    times = run_times(EXAMPLES / "rivumi" / "runs" / "6b9bb2f6535a7e07b6dffce8112d9d11")
    assert times == {"6b9bb2f6535a7e07b6dffce8112d9d11": "2026-11-29T20:28:09.757Z"}


def test_half_pi_runs_carry_their_rows_latest_time() -> None:
    times = run_times(EXAMPLES / "half-pi" / "home" / "db" / "half-pi.db")
    assert times == {
        "59fb1ad012774d16": "2026-07-30T12:00:00.354Z",  # its last remote_run_events row
        "approval:0998d680510009ef": "2026-07-30T12:00:00.211Z",  # resolved_at
        "approval:3d415b40eb3ca466": "2026-07-30T12:00:00.359Z",  # created_at; resolved_at 0 is "not set"
        "request:019fb2e5-4e1a-77e4-9d60-fc9a8ab4f7ca": "2026-07-30T12:00:00.128Z",  # a security decision
        "request:019fb2e5-4e82-7de6-848f-214af146a194": "2026-07-30T12:00:00.225Z",
    }
