"""Every tiny-agent reducer code, built small: the native answer, the finding's rule, place and pointer."""

from __future__ import annotations

import io
import json

import pytest

from sessaudit.formats.tiny_agent.build.session import DELETE, Call, SessionBuilder, TokenUsage
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.model import Finding
from sessaudit.plugin import SourceOutcome
from sessaudit.verdicts import Verdict

HEADER = {
    "kind": "header",
    "version": 2,
    "id": "01a029fc-5d80-71a2-8001-00005eed0001",
    "createdAt": 1787410800000,
    "cwd": "/home/dev/shop",
    "provider": "openrouter",
    "model": "deepseek/deepseek-v4-flash-0731",
    "environmentIdentity": "/home/dev/shop",
}


def verify(data: bytes) -> SourceOutcome:
    return verify_tiny_agent("s.jsonl", "/tmp/s.jsonl", io.BytesIO(data), len(data))


def native(outcome: SourceOutcome) -> tuple[str | None, int | None, int | None]:
    answer = outcome.native["reducer"]
    return answer["code"], answer["line"], answer["seq"]


def errors(outcome: SourceOutcome) -> list[Finding]:
    return [finding for finding in outcome.findings if finding.severity == "error"]


def header_line(**changes: object) -> bytes:
    header = {**HEADER, **changes}
    return json.dumps(header, separators=(",", ":")).encode() + b"\n"


def exchange() -> SessionBuilder:
    builder = SessionBuilder(seed=7)
    builder.exchange("What does total() do?", "It sums item prices.")
    return builder


# --- framing ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [b"", header_line()[:-1], b"\n" + header_line(), b"\xef\xbb\xbf\n" + header_line()],
    ids=["empty", "no-lf", "empty-first-line", "bom-only-first-line"],
)
def test_missing_header(data: bytes) -> None:
    outcome = verify(data)
    assert native(outcome) == ("MISSING_HEADER", 1, None)
    assert outcome.sessions[0].verdict is Verdict.CORRUPT
    assert any(
        finding.rule == "SA101" and finding.native_code == "MISSING_HEADER" for finding in outcome.findings
    )


def test_no_line_feed_is_not_a_torn_tail() -> None:
    outcome = verify(header_line()[:-1])
    assert outcome.sessions[0].repaired_length is None
    assert outcome.sessions[0].torn_tail_bytes == 0
    assert not any(finding.rule == "SA109" for finding in outcome.findings)


def test_invalid_utf8_is_line_1_natively_but_located_at_its_byte() -> None:
    data = exchange().data() + b'{"kind":"entry","caf\xe9":1}\n'
    outcome = verify(data)
    assert native(outcome) == ("INVALID_UTF8", 1, None)
    (finding,) = errors(outcome)
    assert finding.rule == "SA102"
    assert finding.location.line == 6
    assert finding.location.byte_offset == data.index(b"\xe9")


def test_an_encoded_surrogate_anywhere_wins_over_invalid_utf8_and_earlier_errors() -> None:
    builder = exchange()
    builder.raw_line(b"not json")  # line 6: the first error in file order
    builder.raw_line(b'"\xff"')  # line 7: invalid UTF-8
    builder.raw_line(b'"\xed\xa0\x80"')  # line 8: a UTF-8-encoded surrogate
    outcome = verify(builder.data())
    assert native(outcome) == ("MALFORMED_JSON", 8, None)
    assert [finding.rule for finding in errors(outcome)] == ["SA106", "SA102", "SA103"]


def test_invalid_utf8_anywhere_wins_over_an_earlier_semantic_error() -> None:
    builder = exchange()
    builder.tamper_next("entry.message.role", "system")
    builder.user("next")
    builder.raw_line(b'"\xc3"')
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_UTF8", 1, None)
    assert [finding.native_code for finding in errors(outcome)] == ["INVALID_FACT", "INVALID_UTF8"]


def test_bytes_after_the_last_lf_are_ignored_even_if_invalid() -> None:
    builder = exchange()
    tail = b'{"kind":"entry","seq":\xff\xfe'
    builder.torn_tail(tail)
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["ok"] is True
    assert outcome.native["reducer"]["repaired_length"] == len(builder.data()) - len(tail)
    session = outcome.sessions[0]
    assert (session.torn_tail_bytes, session.verdict) == (len(tail), Verdict.REPAIRABLE)
    (torn,) = [finding for finding in outcome.findings if finding.rule == "SA109"]
    assert torn.location.byte_offset == session.repaired_length
    assert torn.evidence == {"torn_tail_bytes": len(tail), "repaired_length": session.repaired_length}


@pytest.mark.parametrize(
    ("raw", "code", "rule"),
    [
        (b"", "BLANK_LINE", "SA104"),
        (b"[]", "EMPTY_TRANSACTION", "SA203"),
        (b"not json", "MALFORMED_JSON", "SA106"),
        (b'{"kind":"entry","kind":"entry"}', "MALFORMED_JSON", "SA107"),
        (b'{"kind":"\\ud800"}', "MALFORMED_JSON", "SA108"),
        (b'{"kind":"entry"}\r', "CRLF_NOT_ALLOWED", "SA105"),
        (b'{"kind":NaN}', "MALFORMED_JSON", "SA106"),
    ],
)
def test_line_level_codes(raw: bytes, code: str, rule: str) -> None:
    builder = exchange()
    builder.raw_line(raw)
    outcome = verify(builder.data())
    assert native(outcome) == (code, 6, None)
    assert [(finding.rule, finding.native_code, finding.location.line) for finding in errors(outcome)] == [
        (rule, code, 6)
    ]


def test_crlf_on_the_header() -> None:
    outcome = verify(header_line()[:-1] + b"\r\n")
    assert native(outcome) == ("CRLF_NOT_ALLOWED", 1, None)


def test_a_bom_is_stripped_as_tiny_agent_typescript_does_and_counted() -> None:
    builder = SessionBuilder(seed=3, byte_order_mark=True)
    builder.user("hello")
    outcome = verify(builder.data())
    assert outcome.native["reducer"]["ok"] is True
    assert outcome.native["reducer"]["repaired_length"] == len(builder.data())
    assert [finding.rule for finding in outcome.findings if finding.severity != "note"] == ["SA110"]
    assert outcome.sessions[0].verdict is Verdict.CLEAN


def test_a_bom_on_a_later_line_is_malformed() -> None:
    builder = exchange()
    builder.raw_line(b'\xef\xbb\xbf{"kind":"entry"}')
    assert native(verify(builder.data())) == ("MALFORMED_JSON", 6, None)


# --- header -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "code", "rule", "pointer"),
    [
        (b"[1]\n", "INVALID_HEADER", "SA201", None),
        (header_line(title="x"), "INVALID_HEADER", "SA201", "/title"),
        (header_line(kind="head"), "INVALID_HEADER", "SA201", "/kind"),
        (header_line(version=1), "UNSUPPORTED_VERSION", "SA202", "/version"),
        (header_line(version="2"), "UNSUPPORTED_VERSION", "SA202", "/version"),
        (header_line(id=HEADER["id"].upper()), "INVALID_HEADER", "SA201", "/id"),
        (header_line(createdAt=-1), "INVALID_HEADER", "SA201", "/createdAt"),
        (header_line(cwd=""), "INVALID_HEADER", "SA201", "/cwd"),
    ],
)
def test_broken_headers_are_corrupt(line: bytes, code: str, rule: str, pointer: str | None) -> None:
    outcome = verify(line + b'{"kind":"entry","seq":1}\n')
    assert native(outcome) == (code, 1, None)
    header_error = errors(outcome)[0]
    assert (header_error.rule, header_error.native_code, header_error.location.pointer) == (
        rule,
        code,
        pointer,
    )
    assert outcome.sessions[0].verdict is Verdict.CORRUPT


def test_a_later_version_is_unsupported() -> None:
    outcome = verify(header_line(version=3) + b"anything\n")
    assert native(outcome) == ("UNSUPPORTED_VERSION", 1, None)
    assert outcome.format_version == "3"
    assert [finding.rule for finding in outcome.findings] == ["SA003"]
    assert outcome.sessions[0].verdict is Verdict.UNSUPPORTED


def test_a_v1_header_is_unsupported_with_the_v2_answer_in_native() -> None:
    v1 = {"type": "session", "version": 1, "id": HEADER["id"], "createdAt": "2026-08-22T15:00:00.000Z"}
    outcome = verify(json.dumps(v1).encode() + b"\n" + b'{"type":"message"}\n')
    assert native(outcome) == ("INVALID_HEADER", 1, None)
    assert outcome.format_version == "1"
    (finding,) = outcome.findings
    assert finding.rule == "SA003" and "v1 verifier is not in this release" in finding.message
    assert outcome.sessions[0].session_id == HEADER["id"]


def test_a_v1_file_still_reports_what_tiny_agent_answers_for_a_later_surrogate() -> None:
    v1 = {"type": "session", "version": 1, "id": HEADER["id"]}
    outcome = verify(json.dumps(v1).encode() + b"\n" + b'"\xed\xb0\x80"\n')
    assert native(outcome) == ("MALFORMED_JSON", 2, None)


def test_version_2_written_as_a_float_is_accepted_with_a_warning() -> None:
    outcome = verify(header_line()[:-1].replace(b'"version":2', b'"version":2.0') + b"\n")
    assert outcome.native["reducer"]["ok"] is True
    assert outcome.format_version == "2"
    assert any(finding.rule == "SA111" for finding in outcome.findings)


# --- facts --------------------------------------------------------------------------------------------
def test_seq_mismatch_reports_the_found_seq_inside_an_array() -> None:
    builder = SessionBuilder(seed=1)
    builder.tamper_next("seq", 3, fact=1)
    builder.start_run("Explain.")
    outcome = verify(builder.data())
    assert native(outcome) == ("SEQ_MISMATCH", 2, 3)
    (finding,) = errors(outcome)
    assert (finding.rule, finding.location.seq, finding.location.pointer) == ("SA205", 3, "/1/seq")
    assert finding.evidence == {"expected": 2, "found": 3}


@pytest.mark.parametrize(
    ("path", "value", "seq", "rule", "pointer"),
    [
        ("seq", 0, None, "SA204", "/seq"),
        ("seq", "1", None, "SA204", "/seq"),
        ("seq", DELETE, None, "SA204", "/seq"),
        ("id", "not-an-id", 1, "SA214", "/id"),
        ("id", str.upper, 1, "SA214", "/id"),
        ("timestamp", -5, 1, "SA204", "/timestamp"),
        ("kind", "note", 1, "SA204", "/kind"),
        ("extra", 1, 1, "SA204", "/extra"),
        ("entry.message.role", "system", 1, "SA204", "/entry/message/role"),
        ("entry.message.content", "", 1, "SA204", "/entry/message/content"),
    ],
)
def test_invalid_fact(path: str, value: object, seq: int | None, rule: str, pointer: str) -> None:
    builder = SessionBuilder(seed=2)
    builder.tamper_next(path, value)
    builder.user("hello")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_FACT", 2, seq)
    finding = errors(outcome)[0]
    assert (finding.rule, finding.native_code, finding.location.pointer) == (rule, "INVALID_FACT", pointer)
    assert finding.location.byte_offset == builder.data().index(b"\n") + 1


def test_a_fact_that_is_not_an_object_has_no_seq() -> None:
    builder = exchange()
    builder.raw_line(b"[7]")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_FACT", 6, None)
    assert errors(outcome)[0].location.pointer == "/0"


def test_configuration_digest_mismatch_is_its_own_rule() -> None:
    builder = SessionBuilder(seed=4)
    run = builder.start_run("Explain.")
    builder.tamper_next("record.configurationDigest", "sha256:" + "f" * 64)
    builder.step(run)
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_FACT", 3, 3)
    finding = errors(outcome)[0]
    assert finding.rule == "SA210"
    assert finding.evidence["found"] == "sha256:" + "f" * 64
    assert finding.evidence["expected"].startswith("sha256:")


def test_usage_overflow_is_its_own_rule() -> None:
    builder = SessionBuilder(seed=5)
    run = builder.start_run("Explain.")
    builder.assistant(builder.step(run), "Hi.", usage=TokenUsage(input=2**53 - 1))
    builder.finish(run)
    builder.exchange("Again?", "Hi.")
    outcome = verify(builder.data())
    code, line, seq = native(outcome)
    assert code == "INVALID_FACT"
    finding = errors(outcome)[0]
    assert (finding.rule, finding.location.line, finding.location.seq) == ("SA213", line, seq)
    assert finding.location.pointer == "/1/usage/input"


def test_duplicate_fact_id_and_reserved_collision() -> None:
    builder = SessionBuilder(seed=6)
    first = builder.user("one")
    builder.tamper_next("id", first)
    builder.user("two")
    assert native(verify(builder.data())) == ("DUPLICATE_ID", 3, 2)

    builder = SessionBuilder(seed=6)
    run = builder.start_run("Explain.")
    builder.tamper_next("id", run.operation_id)
    builder.user("two")
    outcome = verify(builder.data())
    assert native(outcome) == ("DUPLICATE_ID", 3, 3)
    assert errors(outcome)[0].rule == "SA206"


def test_invalid_reference_points_into_the_array() -> None:
    builder = SessionBuilder(seed=8)
    builder.tamper_next("record.inputEntryId", "01a029fc-5d8a-7101-8002-00005eed0099", fact=1)
    builder.start_run("Explain.")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_REFERENCE", 2, 2)
    finding = errors(outcome)[0]
    assert (finding.rule, finding.location.pointer) == ("SA207", "/1/record/inputEntryId")


def test_source_digest_mismatch_is_its_own_rule() -> None:
    builder = exchange()
    builder.tamper_next("record.sourceDigest", "sha256:" + "0" * 64)
    builder.start_compaction()
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_REFERENCE", 6, 7)
    assert errors(outcome)[0].rule == "SA211"


def test_invalid_transition() -> None:
    builder = SessionBuilder(seed=9)
    builder.start_run("Explain.")
    builder.start_run("Again.")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_TRANSITION", 3, 4)
    assert errors(outcome)[0].rule == "SA208"


def test_synthetic_text_mismatch_is_its_own_rule() -> None:
    builder = SessionBuilder(seed=10)
    run = builder.start_run("Lint it.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("lint", {"path": "a"})])
    builder.tamper_next("entry.message.content", "Unknown tool.")
    builder.pre_execution(answer, 0, "unknownTool")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_TRANSCRIPT", 5, 6)
    assert errors(outcome)[0].rule == "SA212"


def test_transcript_error_is_reported_with_the_transactions_last_seq() -> None:
    builder = SessionBuilder(seed=11)
    run = builder.start_run("Read it.")
    builder.assistant(builder.step(run), None, calls=[Call("read", {"path": "a"})])
    builder.start_run("Another question while the call is unanswered.")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_TRANSITION", 5, 7)  # the run is still open: the fact fails first
    builder = SessionBuilder(seed=11)
    run = builder.start_run("Read it.")
    builder.assistant(builder.step(run), None, calls=[Call("read", {"path": "a"})])
    with builder.transaction():
        builder.user("a user message while the call is unanswered")
        builder.user("and another")
    outcome = verify(builder.data())
    assert native(outcome) == ("INVALID_TRANSCRIPT", 5, 7)
    finding = errors(outcome)[0]
    assert (finding.rule, finding.location.seq, finding.location.pointer) == ("SA209", 7, "/0/entry/message")


def test_a_later_fact_error_in_the_same_transaction_wins_over_the_transcript() -> None:
    builder = SessionBuilder(seed=12)
    run = builder.start_run("Read it.")
    builder.assistant(builder.step(run), None, calls=[Call("read", {"path": "a"})])
    builder.tamper_next("entry.message.role", "robot", fact=1)
    with builder.transaction():
        builder.user("an illegal user message")
        builder.user("a malformed fact")
    assert native(verify(builder.data())) == ("INVALID_FACT", 5, 7)
