"""After the first error (CONTRACT §4): framing, JSON, seq continuity and fact ids are checked to the end."""

from __future__ import annotations

import io

from sessaudit.formats.tiny_agent.build.session import SessionBuilder
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.model import Finding
from sessaudit.plugin import SourceOutcome


def verify(data: bytes) -> SourceOutcome:
    return verify_tiny_agent("s.jsonl", "s.jsonl", io.BytesIO(data), len(data))


def rules(outcome: SourceOutcome) -> list[tuple[str, int | None]]:
    return [
        (finding.rule, finding.location.line) for finding in outcome.findings if finding.severity != "note"
    ]


def notes(outcome: SourceOutcome, rule: str) -> list[Finding]:
    return [finding for finding in outcome.findings if finding.rule == rule]


def test_two_seq_gaps_give_two_findings_each_reported_once() -> None:
    builder = SessionBuilder(seed=1)
    builder.user("one")  # line 2, seq 1
    builder.skip_seq(2)
    builder.user("two")  # line 3, seq 4: a gap
    builder.user("three")  # line 4, seq 5: continues from the found value
    builder.skip_seq(1)
    builder.user("four")  # line 5, seq 7: a second gap
    outcome = verify(builder.data())
    assert outcome.native["reducer"] == {
        "ok": False,
        "code": "SEQ_MISMATCH",
        "line": 3,
        "seq": 4,
        "repaired_length": None,
        "operation": None,
    }
    gaps = [finding for finding in outcome.findings if finding.rule == "SA205"]
    assert [(gap.location.line, gap.evidence) for gap in gaps] == [
        (3, {"expected": 2, "found": 4}),
        (5, {"expected": 6, "found": 7}),
    ]
    assert gaps[1].native_code == "SEQ_MISMATCH"
    (stopped,) = notes(outcome, "SA215")
    assert stopped.location.line == 4
    assert outcome.sessions[0].last_seq == 7 and outcome.sessions[0].facts == 4


def test_a_malformed_middle_line_then_valid_lines() -> None:
    builder = SessionBuilder(seed=2)
    builder.user("one")  # line 2, seq 1
    builder.raw_line(b'{"kind":"entry",')  # line 3
    builder.user("two")  # line 4, seq 2: accepted as the new base, no gap reported
    builder.user("three")  # line 5, seq 3
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["code"] == "MALFORMED_JSON"
    assert outcome.native["reducer"]["line"] == 3
    assert rules(outcome) == [("SA106", 3)]
    (stopped,) = notes(outcome, "SA215")
    assert stopped.location.line == 4
    assert stopped.evidence == {"stopped_at_line": 3}


def test_after_an_unparseable_line_a_later_gap_is_still_found() -> None:
    builder = SessionBuilder(seed=3)
    builder.user("one")
    builder.raw_line(b"garbage")  # line 3
    builder.skip_seq(5)
    builder.user("two")  # line 4, seq 7: the new base
    builder.skip_seq(1)
    builder.user("three")  # line 5, seq 9: a gap after the new base
    outcome = verify(builder.data())
    assert rules(outcome) == [("SA106", 3), ("SA205", 5)]


def test_ids_are_still_checked_after_reduction_stopped() -> None:
    builder = SessionBuilder(seed=4)
    first = builder.user("one")  # line 2
    builder.tamper_next("entry.message.role", "system")
    builder.user("two")  # line 3: semantic error, reduction stops
    builder.tamper_next("id", first)
    builder.user("three")  # line 4: a duplicate fact id
    builder.tamper_next("id", "NOT-AN-ID")
    builder.user("four")  # line 5: an invalid fact id
    builder.tamper_next("timestamp", -1)
    builder.user("five")  # line 6: an invalid timestamp
    outcome = verify(builder.data())
    assert rules(outcome) == [("SA204", 3), ("SA206", 4), ("SA214", 5), ("SA204", 6)]
    assert outcome.native["reducer"]["line"] == 3
    assert [finding.native_code for finding in outcome.findings if finding.severity == "error"] == [
        "INVALID_FACT",
        "DUPLICATE_ID",
        "INVALID_FACT",
        "INVALID_FACT",
    ]


def test_the_rest_of_the_failing_transaction_is_still_checked() -> None:
    builder = SessionBuilder(seed=5)
    builder.tamper_next("seq", 9, fact=0)
    builder.tamper_next("id", "bad", fact=1)
    builder.start_run("Explain.")  # [user seq 9 (gap), runStarted seq 2→10 with a bad id]
    outcome = verify(builder.data())
    findings = [finding for finding in outcome.findings if finding.severity == "error"]
    assert [(finding.rule, finding.location.pointer) for finding in findings] == [
        ("SA205", "/0/seq"),
        ("SA205", "/1/seq"),
        ("SA214", "/1/id"),
    ]


def test_the_failing_fact_reports_its_later_envelope_problems_too() -> None:
    builder = SessionBuilder(seed=6)
    builder.tamper_next("seq", 4)
    builder.tamper_next("id", "bad")
    builder.user("one")
    outcome = verify(builder.data())
    findings = [finding for finding in outcome.findings if finding.severity == "error"]
    assert [(finding.rule, finding.location.pointer) for finding in findings] == [
        ("SA205", "/seq"),
        ("SA214", "/id"),
    ]


def test_a_broken_header_still_checks_the_lines_after_it() -> None:
    builder = SessionBuilder(seed=7, header_overrides={"kind": "headr"})
    builder.user("one")
    builder.skip_seq(1)
    builder.user("two")
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["code"] == "INVALID_HEADER"
    assert rules(outcome) == [("SA201", 1), ("SA205", 3)]
    assert [note.location.line for note in notes(outcome, "SA215")] == [2]


def test_no_note_when_the_error_is_on_the_last_line() -> None:
    builder = SessionBuilder(seed=8)
    builder.user("one")
    builder.raw_line(b"[]")
    outcome = verify(builder.data())
    assert rules(outcome) == [("SA203", 3)]
    assert not notes(outcome, "SA215")
