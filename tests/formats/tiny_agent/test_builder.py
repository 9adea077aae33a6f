"""The session builder writes what tiny-agent's SessionStore writes, reproducibly, and damages on request."""

from __future__ import annotations

import io
import json
import re
import stat
from pathlib import Path

import pytest

from sessaudit.formats.tiny_agent.build.legacy_v1 import LegacySessionBuilder
from sessaudit.formats.tiny_agent.build.machinery import iso_instant
from sessaudit.formats.tiny_agent.build.session import (
    DELETE,
    SYNTHETIC_TEXTS,
    Call,
    KeyOrder,
    SessionBuilder,
    session_file,
)
from sessaudit.formats.tiny_agent.read.digests import uuid7_millis
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.verdicts import Verdict
from tests.formats.tiny_agent.damaged import DAMAGED
from tests.formats.tiny_agent.invariants import check_session, committed_lines
from tests.formats.tiny_agent.scenarios import LEGAL, tools_completed, write_tools_run
from tests.formats.tiny_agent.walk import random_session

FILE_NAME = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.jsonl$"
)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legal_scenarios_keep_the_writer_invariants(name: str) -> None:
    data, expected = LEGAL[name]()
    check_session(data)
    assert data.endswith(b"\n") != expected.torn


@pytest.mark.parametrize("seed", range(40))
def test_random_legal_walks_keep_the_writer_invariants(seed: int) -> None:
    data, _ = random_session(seed)
    assert check_session(data) >= 0


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damage_leaves_the_lines_before_it_intact(name: str) -> None:
    data, expected = DAMAGED[name]()
    assert not expected.ok and expected.line is not None
    if expected.line > 1 and expected.code != "INVALID_UTF8":
        check_session(data, through_line=expected.line)


def test_builds_are_reproducible_and_seeded() -> None:
    for build in LEGAL.values():
        assert build()[0] == build()[0]
    assert SessionBuilder(seed=1).data() != SessionBuilder(seed=2).data()


def test_atomic_groups_are_arrays_and_single_facts_are_objects() -> None:
    data, _ = tools_completed()
    shapes = [
        (type(value).__name__, [fact["kind"] for fact in value] if isinstance(value, list) else value["kind"])
        for value in map(json.loads, committed_lines(data)[1:])
    ]
    assert shapes[0] == ("list", ["entry", "record"])  # user entry + runStarted
    assert shapes[2] == ("list", ["entry", "usage"])  # assistant entry + model usage
    assert ("list", ["entry", "usage"]) in shapes[3:]  # a tool result + tool usage
    assert shapes[1] == ("dict", "record")


def test_header_matches_the_store() -> None:
    builder = SessionBuilder(seed=3, created_at=1795983957606, cwd="/w", environment_identity="env")
    header = json.loads(builder.data())
    assert list(header) == [
        "kind",
        "version",
        "id",
        "createdAt",
        "cwd",
        "provider",
        "model",
        "environmentIdentity",
    ]
    assert uuid7_millis(header["id"]) == header["createdAt"] == builder.created_at
    assert (header["cwd"], header["environmentIdentity"], header["provider"]) == ("/w", "env", "openrouter")
    assert builder.file_name == f"2026-11-29T20-25-57-606Z_{builder.session_id}.jsonl"
    assert FILE_NAME.match(builder.file_name)
    assert SessionBuilder.session_id_for(3, 1795983957606) == builder.session_id


def test_store_key_order_puts_the_envelope_last_and_sorted_order_sorts() -> None:
    builder = SessionBuilder(seed=4, key_order=KeyOrder.SORTED)
    builder.user("hi")
    sorted_fact = json.loads(committed_lines(builder.data())[1])
    assert list(sorted_fact) == sorted(sorted_fact)
    plain = SessionBuilder(seed=4)
    plain.user("hi")
    assert list(json.loads(committed_lines(plain.data())[1])) == ["kind", "entry", "id", "seq", "timestamp"]


def test_streaming_into_a_stream_writes_the_same_bytes(tmp_path: Path) -> None:
    stream = io.BytesIO()
    write_tools_run(SessionBuilder(seed=9, sink=stream))
    assert stream.getvalue() == tools_completed()[0]
    with pytest.raises(RuntimeError):
        SessionBuilder(sink=io.BytesIO()).data()
    with session_file(tmp_path, seed=9) as builder:
        builder.exchange("Hi.", "Hello.")
    path = tmp_path / builder.file_name
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes().startswith(b'{"kind":"header"')
    with pytest.raises(FileExistsError), session_file(tmp_path, seed=9):
        pass


def test_save_names_the_file_and_never_replaces(tmp_path: Path) -> None:
    builder = SessionBuilder(seed=5)
    builder.exchange("Hi.", "Hello.")
    path = builder.save(tmp_path)
    assert path.name == builder.file_name and path.read_bytes() == builder.data()
    with pytest.raises(FileExistsError):
        builder.save(tmp_path)


def test_message_memory_bounds_what_a_compaction_can_retain() -> None:
    builder = SessionBuilder(seed=6, message_memory=2)
    for number in range(5):
        builder.exchange(f"question {number}", f"answer {number}")
    builder.compact("summary", keep_last=2)
    check_session(builder.data())
    with pytest.raises(ValueError, match="message_memory"):
        builder.compaction_entry(builder.step(builder.start_compaction(keep_last=3)), "summary")


def test_a_compaction_never_retains_a_tool_result_without_its_call() -> None:
    """After an aborted run the last message is a tool result: retaining it alone would be an illegal
    transcript (spec §8.6 step 8, SA209), so the builder refuses it and `retainable` avoids it."""
    builder = SessionBuilder(seed=8)
    builder.exchange("Hi.", "Hello.")
    run = builder.start_run("Read it.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("read", {"path": "a"}), Call("grep", {})])
    builder.tool_result(builder.start_tool(answer, 0), "a")
    builder.tool_result(builder.start_tool(answer, 1, arguments={"pattern": "x"}), "b")
    step = builder.step(run)
    builder.abort(run)
    builder.step_failed(step, "aborted", "Operation aborted")
    builder.finish(run, "aborted")
    assert [builder.retainable(at_most) for at_most in (0, 1, 2, 3, 9)] == [0, 0, 0, 3, 5]
    with pytest.raises(ValueError, match="legal transcript"):
        builder.start_compaction(keep_last=1)
    builder.compact("summary", keep_last=builder.retainable(1))
    check_session(builder.data())
    builder.compact("again", keep_last=builder.retainable(1))  # the same boundary: nothing new to retain
    check_session(builder.data())
    data = builder.data()
    outcome = verify_tiny_agent("s.jsonl", "s.jsonl", io.BytesIO(data), len(data))
    assert outcome.native["reducer"]["ok"] is True
    assert [session.verdict for session in outcome.sessions] == [Verdict.CLEAN]


def test_ids_predate_their_fact_for_a_slow_tool() -> None:
    builder = SessionBuilder(seed=7)
    run = builder.start_run("Deploy.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    intent = builder.start_tool(answer, 0)
    builder.tool_result(intent, "deployed", duration_ms=120_000)
    result = json.loads(committed_lines(builder.data())[-1])
    assert result["id"] == intent.result_entry_id
    assert result["timestamp"] - uuid7_millis(intent.result_entry_id) >= 120_000


def test_synthetic_texts_are_the_spec_texts() -> None:
    assert SYNTHETIC_TEXTS["interrupted"].endswith("the tool was not replayed.")
    assert SYNTHETIC_TEXTS["aborted"] == "Operation aborted before execution."
    assert len(SYNTHETIC_TEXTS) == 5


def test_tamper_and_framing_damage() -> None:
    builder = SessionBuilder(seed=8, byte_order_mark=True, header_overrides={"cwd": DELETE})
    builder.tamper_next("seq", 9)
    builder.tamper_next("id", str.upper, fact=1)
    builder.user("one")
    builder.crlf_next()
    builder.user("two")
    builder.raw_line("not json")
    data = builder.data()
    assert data.startswith(b"\xef\xbb\xbf{") and b'"cwd"' not in committed_lines(data)[0]
    first, second = (json.loads(line) for line in committed_lines(data)[1:3])
    assert first["seq"] == 9 and second["seq"] == 2 and second["id"] != second["id"].lower()
    assert committed_lines(data)[2].endswith(b"\r") and committed_lines(data)[3] == b"not json"


def test_torn_tail_ends_structured_writing() -> None:
    builder = SessionBuilder(seed=9)
    builder.tear_next(-1)
    builder.user("one")
    assert not builder.data().endswith(b"\n") and builder.data().endswith(b"}")
    with pytest.raises(RuntimeError, match="torn tail"):
        builder.user("two")
    other = SessionBuilder(seed=9)
    other.torn_tail(b'{"kind":"ent')
    with pytest.raises(ValueError):
        other.torn_tail(b"a\nb")
    empty_tear = SessionBuilder(seed=9)
    empty_tear.tear_next(0)
    with pytest.raises(ValueError):
        empty_tear.user("x")


def test_legacy_v1_lines_follow_the_cli_writer() -> None:
    builder = LegacySessionBuilder(seed=10)
    builder.user("Run the tests.")
    calls = builder.assistant(
        None, calls=[Call("bash", {"command": "npm test"}), Call("read", {"path": "a"})]
    )
    builder.abort_tools(calls, 0)
    builder.compaction("Tests were aborted.", compacted=3, kept=1)
    lines = [json.loads(line) for line in committed_lines(builder.data())]
    header = lines[0]
    assert list(header) == ["type", "version", "id", "createdAt", "cwd", "provider", "model", "timestamp"]
    assert header["createdAt"] == iso_instant(uuid7_millis(header["id"]))
    assert [line["type"] for line in lines] == [
        "session",
        "message",
        "message",
        "message",
        "message",
        "interruption",
        "compaction",
    ]
    assert [line["message"]["content"] for line in lines[3:5]] == [
        "Operation aborted",
        "Operation aborted before execution",
    ]
    assert lines[5] == {
        "type": "interruption",
        "phase": "tool",
        "toolCallId": calls[0].call_id,
        "reason": "escape",
        "timestamp": lines[5]["timestamp"],
    }
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", line["timestamp"]) for line in lines)


def native_answer(data: bytes) -> dict[str, object]:
    verifier = pytest.importorskip("sessaudit.formats.tiny_agent.verifier", reason="needs the v2 verifier")
    outcome = verifier.verify_tiny_agent("built.jsonl", "/built.jsonl", io.BytesIO(data), len(data))
    answer: dict[str, object] = outcome.native["reducer"]
    return answer


@pytest.mark.parametrize("name", sorted(LEGAL) + sorted(DAMAGED))
def test_the_verifier_answers_what_tiny_agent_answered(name: str) -> None:
    # Every Expected here was confirmed once against tiny-agent's own TypeScript reducer.
    data, expected = {**LEGAL, **DAMAGED}[name]()
    native = native_answer(data)
    if expected.ok:
        assert (native["ok"], native["operation"]) == (True, expected.operation)
    else:
        assert (native["ok"], native["code"], native["line"], native["seq"]) == (
            False,
            expected.code,
            expected.line,
            expected.seq,
        )
