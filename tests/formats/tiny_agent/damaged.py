"""Deliberately damaged tiny-agent v2 sessions from the builder, with the error its reducer reports."""

from __future__ import annotations

from typing import Any

from sessaudit.formats.tiny_agent.build.legacy_v1 import LegacySessionBuilder
from sessaudit.formats.tiny_agent.build.session import DELETE, Answer, Call, SessionBuilder, TokenUsage
from tests.formats.tiny_agent.scenarios import Expected, Scenario

HEADER_LINE = 1


def _error(code: str, line: int, seq: int | None = None) -> Expected:
    return Expected(ok=False, code=code, line=line, seq=seq)


def _tools_session(seed: int) -> tuple[SessionBuilder, Answer]:
    """A run whose answer asks for two tools, the first one started: the common base for damage."""
    builder = SessionBuilder(seed=seed)
    run = builder.start_run("Why does the cart test fail?")
    calls = [Call("read", {"path": "src/cart.js"}), Call("bash", {"command": "npm test"})]
    answer = builder.assistant(builder.step(run), None, calls=calls)
    return builder, answer


def tampered(path: str, value: Any, code: str, *, with_seq: bool = True) -> Scenario:
    """Damage one field of the `stepAttempt` (seq 3, line 3) of an otherwise legal run."""

    def build() -> tuple[bytes, Expected]:
        builder = SessionBuilder(seed=40)
        run = builder.start_run("Explain the cart module.")
        line, seq = builder.next_line, builder.last_seq + 1
        builder.tamper_next(path, value)
        builder.step(run)
        # tiny-agent reports the fact's own seq once it is a valid safe integer ≥ 1.
        reported = (value if path == "seq" else seq) if with_seq else None
        return builder.data(), _error(code, line, reported)

    return build


def seq_gap_in_middle() -> tuple[bytes, Expected]:
    builder, answer = _tools_session(41)
    builder.tool_result(builder.start_tool(answer, 0), "export function total() {}")
    line, seq = builder.next_line, builder.last_seq + 1
    builder.tamper_next("seq", seq + 1)
    builder.tool_result(builder.start_tool(answer, 1), "ok")
    return builder.data(), _error("SEQ_MISMATCH", line, seq + 1)


def seq_gap_inside_array() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=42)
    line = builder.next_line
    builder.tamper_next("seq", 3, fact=1)
    builder.start_run("Explain.")
    return builder.data(), _error("SEQ_MISMATCH", line, 3)


def duplicate_fact_id() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=43)
    first = builder.user("one")
    line, seq = builder.next_line, builder.last_seq + 1
    builder.tamper_next("id", first)
    builder.user("two")
    return builder.data(), _error("DUPLICATE_ID", line, seq)


def wrong_source_digest() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=44)
    builder.exchange("What does total() do?", "It sums item prices.")
    line, seq = builder.next_line, builder.last_seq + 1
    builder.tamper_next("record.sourceDigest", "sha256:" + "0" * 64)
    builder.start_compaction()
    return builder.data(), _error("INVALID_REFERENCE", line, seq)


def wrong_synthetic_text() -> tuple[bytes, Expected]:
    builder, answer = _tools_session(45)
    intent = builder.start_tool(answer, 1)
    builder.tool_result(builder.start_tool(answer, 0), "export function total() {}")
    line, seq = builder.next_line, builder.last_seq + 1
    builder.tamper_next("entry.message.content", "Interrupted.")
    builder.interrupted(intent)
    return builder.data(), _error("INVALID_TRANSCRIPT", line, seq)


def usage_with_both_owners() -> tuple[bytes, Expected]:
    builder, answer = _tools_session(46)
    intent = builder.start_tool(answer, 0)
    line, seq = builder.next_line, builder.last_seq + 2
    builder.tamper_next("attemptId", answer.step.attempt_id, fact=1)
    builder.tool_result(intent, "export function total() {}", usage=TokenUsage())
    return builder.data(), _error("INVALID_FACT", line, seq)


def retry_after_settle() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=47)
    run = builder.start_run("Explain.")
    step = builder.step(run)
    builder.assistant(step, "It sums prices.")
    line, seq = builder.next_line, builder.last_seq + 1
    builder.retry(step)
    return builder.data(), _error("INVALID_TRANSITION", line, seq)


def stop_with_calls() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=48)
    run = builder.start_run("Explain.")
    step = builder.step(run)
    line, seq = builder.next_line, builder.last_seq + 1
    builder.assistant(step, "Reading.", calls=[Call("read", {"path": "a"})], stop_reason="stop")
    return builder.data(), _error("INVALID_TRANSCRIPT", line, seq)


# Raw lines appended after a legal run, and the code tiny-agent reports.
RAW_LINES: dict[str, tuple[bytes, str]] = {
    "blank": (b"", "BLANK_LINE"),
    "malformed": (b"not json", "MALFORMED_JSON"),
    "empty-transaction": (b"[]", "EMPTY_TRANSACTION"),
}
# Lexical damage inside an otherwise valid user fact: what replaces its content `"content":"MARK"`.
# JSON.parse (and so a schema) would never notice; INVALID_UTF8 is reported at line 1 whatever the line.
LEXICAL: dict[str, tuple[bytes, str]] = {
    "invalid-utf8": (b'"content":"caf\xe9"', "INVALID_UTF8"),
    "raw-surrogate": (b'"content":"\xed\xa0\x80"', "MALFORMED_JSON"),
    "escaped-surrogate": (b'"content":"\\ud800"', "MALFORMED_JSON"),
    "duplicate-key": (b'"content":"ok","c\\u006fntent":"ok"', "MALFORMED_JSON"),
}


def framing(kind: str) -> Scenario:
    """Byte-level damage after a legal first run: CRLF, one of RAW_LINES, or one of LEXICAL."""

    def build() -> tuple[bytes, Expected]:
        builder = SessionBuilder(seed=49)
        builder.exchange("What does total() do?", "It sums item prices.")
        line = builder.next_line
        if kind == "crlf":
            builder.crlf_next()
            builder.user("next")
            return builder.data(), _error("CRLF_NOT_ALLOWED", line)
        if kind in RAW_LINES:
            data, code = RAW_LINES[kind]
            builder.raw_line(data)
            return builder.data(), _error(code, line)
        replacement, code = LEXICAL[kind]
        builder.user("MARK")
        damaged = builder.data().replace(b'"content":"MARK"', replacement)
        return damaged, _error(code, HEADER_LINE if code == "INVALID_UTF8" else line)

    return build


def header(overrides: dict[str, Any], code: str) -> Scenario:
    def build() -> tuple[bytes, Expected]:
        builder = SessionBuilder(seed=50, header_overrides=overrides)
        builder.exchange("Hi.", "Hello.")
        return builder.data(), _error(code, HEADER_LINE)

    return build


def header_without_line_feed() -> tuple[bytes, Expected]:
    return SessionBuilder(seed=51, header_line_ending=b"").data(), _error("MISSING_HEADER", HEADER_LINE)


def legacy_v1() -> tuple[bytes, Expected]:
    builder = LegacySessionBuilder(seed=52)
    builder.user("Why does the cart test fail?")
    calls = builder.assistant(None, calls=[Call("read", {"path": "src/cart.js"})])
    builder.tool_result(calls[0], "export function total() {}")
    builder.assistant("total() ignores qty.")
    return builder.data(), _error("INVALID_HEADER", HEADER_LINE)


DAMAGED: dict[str, Scenario] = {
    "upper-case-id": tampered("id", str.upper, "INVALID_FACT"),
    "wrong-configuration-digest": tampered(
        "record.configurationDigest", "sha256:" + "f" * 64, "INVALID_FACT"
    ),
    "attempt-three": tampered("record.attempt", 3, "INVALID_FACT"),
    "extra-fact-key": tampered("stepId", "01a029fc-5d8a-7101-8002-00005eed0002", "INVALID_FACT"),
    "missing-timestamp": tampered("timestamp", DELETE, "INVALID_FACT"),
    "negative-seq": tampered("seq", 0, "INVALID_FACT", with_seq=False),
    "wrong-seq": tampered("seq", 7, "SEQ_MISMATCH"),
    "seq-gap-in-middle": seq_gap_in_middle,
    "seq-gap-inside-array": seq_gap_inside_array,
    "duplicate-fact-id": duplicate_fact_id,
    "wrong-source-digest": wrong_source_digest,
    "wrong-synthetic-text": wrong_synthetic_text,
    "usage-with-both-owners": usage_with_both_owners,
    "retry-after-settle": retry_after_settle,
    "stop-with-calls": stop_with_calls,
    "crlf": framing("crlf"),
    **{f"raw-{kind}": framing(kind) for kind in RAW_LINES},
    **{f"lexical-{kind}": framing(kind) for kind in LEXICAL},
    "header-version-1": header({"version": 1}, "UNSUPPORTED_VERSION"),
    "header-extra-key": header({"title": "x"}, "INVALID_HEADER"),
    "header-upper-case-id": header({"id": str.upper}, "INVALID_HEADER"),
    "header-without-line-feed": header_without_line_feed,
    "legacy-v1": legacy_v1,
}
