"""The legacy tiny-agent v1 verifier: framing, shapes, pairing, turn states, recovery and the line schema."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from sessaudit.formats.tiny_agent.v1.lines import instant, read_header, read_line
from sessaudit.formats.tiny_agent.v1.verifier import verify_tiny_agent_v1
from sessaudit.model import Finding, Run, Usage
from sessaudit.plugin import SourceOutcome
from sessaudit.resources import load_schema
from sessaudit.verdicts import Verdict

# --- samples written by tiny-agent's own v1 `Session`/`Agent` (a scripted provider, real tools) ------------
# Three turns with tools, a compaction and a fourth turn; provider keys refusal/reasoning/index kept.
REAL_CLEAN = (
    b'{"type":"session","version":1,"id":"01a22941-2e35-74ca-98e4-00b24202d74c","createdAt":"2026-'
    b'11-29T21:41:07.253Z","cwd":"/tmp/v1-nf1W4T","provider":"openrouter","model":"deepseek/deepse'
    b'ek-v4-flash-0731","timestamp":"2026-11-29T21:41:07.269Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"Why does the cart test fail?"},"timest'
    b'amp":"2026-11-29T21:41:07.271Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id"'
    b':"call_0_a","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"src/cart.js'
    b'\\"}"}},{"index":1,"id":"call_1_b","type":"function","function":{"name":"bash","arguments":"{'
    b'\\"command\\":\\"npm test\\"}"}}]},"usage":{"input":176,"output":40,"cacheRead":1024,"cacheWrite'
    b'":0},"timestamp":"2026-11-29T21:41:07.309Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_0_a","content":"contents of '
    b'src/cart.js"},"toolName":"read","timestamp":"2026-11-29T21:41:07.310Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_1_b","content":"ran npm test'
    b'"},"toolName":"bash","timestamp":"2026-11-29T21:41:07.311Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":"total() ignores qty.","refusal":n'
    b'ull,"reasoning":"looked at it"},"usage":{"input":176,"output":40,"cacheRead":1024,"cacheWrit'
    b'e":0},"timestamp":"2026-11-29T21:41:07.312Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"List files"},"timestamp":"2026-11-29T2'
    b'1:41:07.312Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_2_c'
    b'","type":"function","function":{"name":"bash","arguments":"{\\"command\\":\\"ls\\"}"}}]},"usage"'
    b':{"input":176,"output":40,"cacheRead":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.'
    b'313Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_2_c","content":"ran ls"},"to'
    b'olName":"bash","timestamp":"2026-11-29T21:41:07.313Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":"Done."},"usage":{"input":176,"out'
    b'put":40,"cacheRead":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.314Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"Thanks"},"timestamp":"2026-11-29T21:41'
    b':07.314Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":"Sure, here it is."},"usage":{"inp'
    b'ut":176,"output":40,"cacheRead":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.314Z"}'
    b"\n"
    b'{"type":"compaction","summary":"Summary of the session.","compactedMessages":5,"keptMessages'
    b'":6,"usage":{"input":176,"output":40,"cacheRead":1024,"cacheWrite":0},"timestamp":"2026-11-2'
    b'9T21:41:07.315Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"One more"},"timestamp":"2026-11-29T21:'
    b'41:07.317Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":"After compaction."},"usage":{"inp'
    b'ut":176,"output":40,"cacheRead":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.318Z"}'
    b"\n"
)
# Escape during the second of three calls, then a new turn.
REAL_ABORT_TOOL = (
    b'{"type":"session","version":1,"id":"01a22941-2e77-7284-8163-f6009b557a66","createdAt":"2026-'
    b'11-29T21:41:07.319Z","cwd":"/tmp/v1-olm4rU","provider":"openrouter","model":"deepseek/deepse'
    b'ek-v4-flash-0731","timestamp":"2026-11-29T21:41:07.320Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"do three things"},"timestamp":"2026-11'
    b'-29T21:41:07.320Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_0_x'
    b'","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"a\\"}"}},{"id":"call_1'
    b'_y","type":"function","function":{"name":"bash","arguments":"{\\"command\\":\\"sleep\\"}"}},{"id'
    b'":"call_2_z","type":"function","function":{"name":"bash","arguments":"{\\"command\\":\\"rm -rf '
    b'build\\"}"}}]},"usage":{"input":176,"output":40,"cacheRead":1024,"cacheWrite":0},"timestamp":'
    b'"2026-11-29T21:41:07.321Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_0_x","content":"contents of '
    b'a"},"toolName":"read","timestamp":"2026-11-29T21:41:07.321Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_1_y","content":"Operation ab'
    b'orted"},"toolName":"bash","timestamp":"2026-11-29T21:41:07.329Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_2_z","content":"Operation ab'
    b'orted before execution"},"toolName":"bash","timestamp":"2026-11-29T21:41:07.329Z"}\n'
    b'{"type":"interruption","phase":"tool","toolCallId":"call_1_y","reason":"escape","timestamp":'
    b'"2026-11-29T21:41:07.330Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"again"},"timestamp":"2026-11-29T21:41:'
    b'07.330Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":"next turn ok"},"usage":{"input":1'
    b'76,"output":40,"cacheRead":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.332Z"}\n'
)
# The process died while ./deploy.sh ran: 1 of 3 calls answered.
REAL_CRASH_IN_TOOL = (
    b'{"type":"session","version":1,"id":"01a22941-6f0f-77a4-8f56-d0c754cefe22","createdAt":"2026-'
    b'11-29T21:41:23.855Z","cwd":"/tmp/v1c-6jFeeV","provider":"openrouter","model":"deepseek/deeps'
    b'eek-v4-flash-0731","timestamp":"2026-11-29T21:41:23.857Z"}\n'
    b'{"type":"message","message":{"role":"user","content":"ship it"},"timestamp":"2026-11-29T21:4'
    b'1:23.859Z"}\n'
    b'{"type":"message","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_0_o'
    b'k","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"README.md\\"}"}},{"id'
    b'":"call_1_deploy","type":"function","function":{"name":"bash","arguments":"{\\"command\\":\\"./'
    b'deploy.sh\\"}"}},{"id":"call_2_notify","type":"function","function":{"name":"bash","arguments'
    b'":"{\\"command\\":\\"notify\\"}"}}]},"usage":{"input":600,"output":12,"cacheRead":0,"cacheWrite"'
    b':300},"timestamp":"2026-11-29T21:41:23.896Z"}\n'
    b'{"type":"message","message":{"role":"tool","tool_call_id":"call_0_ok","content":"# readme"},'
    b'"toolName":"read","timestamp":"2026-11-29T21:41:23.898Z"}\n'
)

SCHEMA = load_schema("tiny-agent-line.v1.schema.json")
SESSION_ID = "01a22941-2e35-74ca-98e4-00b24202d74c"  # its UUIDv7 time is CREATED_AT
CREATED_AT = datetime(2026, 11, 29, 21, 41, 7, 253000, tzinfo=UTC)
USAGE = {"input": 176, "output": 40, "cacheRead": 1024, "cacheWrite": 0}
REDUCER_SAYS_V1 = {
    "ok": False,
    "code": "INVALID_HEADER",
    "line": 1,
    "seq": None,
    "repaired_length": None,
    "operation": None,
}
TRUNCATED = "Error: Tool call arguments were truncated by the model token limit; the tool was not executed."


def stamp(milliseconds: int) -> str:
    return (CREATED_AT + timedelta(milliseconds=milliseconds)).isoformat(timespec="milliseconds")[:-6] + "Z"


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class Log:
    """A v1 file written line by line the way the CLI does (`{...record, timestamp}` + LF)."""

    def __init__(self, header: dict[str, Any] | None = None) -> None:
        self.header = header or {
            "type": "session",
            "version": 1,
            "id": SESSION_ID,
            "createdAt": stamp(0),
            "cwd": "/home/dev/shop",
            "provider": "openrouter",
            "model": "deepseek/deepseek-v4-flash-0731",
            "timestamp": stamp(1),
        }
        self.lines: list[bytes] = [dumps(self.header)]

    def add(self, record: dict[str, Any]) -> Log:
        self.lines.append(dumps({**record, "timestamp": stamp(10 * len(self.lines))}))
        return self

    def raw(self, line: bytes) -> Log:
        self.lines.append(line)
        return self

    def user(self, text: str = "Why does the cart test fail?") -> Log:
        return self.add({"type": "message", "message": {"role": "user", "content": text}})

    def answer(self, content: str | None = "Done.", *calls: dict[str, Any], usage: Any = USAGE) -> Log:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = list(calls)
        return self.add({"type": "message", "message": message, "usage": usage})

    def result(self, call_id: str, name: str, content: str = "ok") -> Log:
        message = {"role": "tool", "tool_call_id": call_id, "content": content}
        return self.add({"type": "message", "message": message, "toolName": name})

    def compaction(self, compacted: Any, kept: Any, usage: Any = USAGE) -> Log:
        return self.add(
            {
                "type": "compaction",
                "summary": "So far: cart.",
                "compactedMessages": compacted,
                "keptMessages": kept,
                "usage": usage,
            }
        )

    def interruption(self, phase: str, call_id: str | None = None) -> Log:
        record: dict[str, Any] = {"type": "interruption", "phase": phase}
        if call_id is not None:
            record["toolCallId"] = call_id
        return self.add({**record, "reason": "escape"})

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)

    def offset(self, line: int) -> int:
        return sum(len(data) + 1 for data in self.lines[: line - 1])


def verify(data: bytes | Log, size: int | None = None) -> SourceOutcome:
    raw = data.data() if isinstance(data, Log) else data
    return verify_tiny_agent_v1(
        "s.jsonl", "/real/s.jsonl", io.BytesIO(raw), len(raw) if size is None else size
    )


def rules(outcome: SourceOutcome) -> list[tuple[str, int | None]]:
    return [(item.rule, item.location.line) for item in outcome.findings]


def only(outcome: SourceOutcome, rule: str) -> Finding:
    matches = [item for item in outcome.findings if item.rule == rule]
    assert len(matches) == 1, rules(outcome)
    return matches[0]


def runs(outcome: SourceOutcome) -> list[tuple[str, str, str | None]]:
    return [
        (run.run_id, run.state, run.recovery.condition if run.recovery else None)
        for run in outcome.sessions[0].runs
    ]


def run(outcome: SourceOutcome, index: int = -1) -> Run:
    return outcome.sessions[0].runs[index]


def verdict(outcome: SourceOutcome) -> Verdict:
    return outcome.sessions[0].verdict


READ = call("call_0_read", "read", '{"path":"src/cart.js"}')
DEPLOY = call("call_1_deploy", "bash", '{"command":"./deploy.sh"}')
NOTIFY = call("call_2_notify", "bash", '{"command":"notify"}')


# --- real-writer files ------------------------------------------------------------------------------------
def test_real_writer_session_is_clean_with_exact_totals() -> None:
    outcome = verify(REAL_CLEAN)
    session = outcome.sessions[0]
    assert outcome.findings == []
    assert (outcome.format, outcome.format_version, outcome.native) == (
        "tiny-agent",
        "1",
        {"reducer": REDUCER_SAYS_V1},
    )
    assert outcome.files[0].bytes == len(REAL_CLEAN)
    assert outcome.files[0].sha256 == hashlib.sha256(REAL_CLEAN).hexdigest()
    assert (session.session_id, session.verdict) == ("01a22941-2e35-74ca-98e4-00b24202d74c", Verdict.CLEAN)
    assert (session.facts, session.last_seq, session.repaired_length) == (14, 15, len(REAL_CLEAN))
    assert session.torn_tail_bytes == 0
    # six answers and one compaction, each 176/40/1024/0
    assert session.usage == Usage.of(input=7 * 176, output=7 * 40, cache_read=7 * 1024, cache_write=0)
    assert runs(outcome) == [
        ("turn:2", "completed", None),
        ("turn:7", "completed", None),
        ("turn:11", "completed", None),
        ("turn:14", "completed", None),
    ]


def test_real_writer_tool_abort_is_an_aborted_turn() -> None:
    outcome = verify(REAL_ABORT_TOOL)
    assert outcome.findings == []
    assert runs(outcome) == [("turn:2", "aborted", None), ("turn:8", "completed", None)]


def test_real_writer_crash_during_a_tool_leaves_an_unknown_effect() -> None:
    outcome = verify(REAL_CRASH_IN_TOOL)
    assert verdict(outcome) is Verdict.NEEDS_RECOVERY
    assert rules(outcome) == [("SA302", 3), ("SA301", 4)]
    unknown = only(outcome, "SA302")
    assert unknown.message == (
        'tool bash (call_1_deploy) with {"command":"./deploy.sh"} may or may not have run: v1 writes results '
        "after the tool ran and records no intent; last line 4"
    )
    lines = REAL_CRASH_IN_TOOL.split(b"\n")
    assert unknown.location.byte_offset == len(lines[0]) + len(lines[1]) + 2
    assert unknown.location.pointer == "/message/tool_calls/1"
    assert unknown.location.session_id == "01a22941-6f0f-77a4-8f56-d0c754cefe22"
    left_open = only(outcome, "SA301")
    assert left_open.location.byte_offset == sum(len(line) + 1 for line in lines[:3])
    assert "effect-unknown, tool-not-started" in left_open.message and "last line 4" in left_open.message
    recovery = run(outcome).recovery
    assert recovery is not None
    assert (run(outcome).state, recovery.condition, recovery.seed_kind) == ("open", "effect-unknown", "fork")
    assert recovery.conditions == ["effect-unknown", "tool-not-started"]
    assert "v1 records no tool intent: the first unanswered call may or may not have run" in recovery.assumes
    assert [
        (effect.tool_call_id, effect.tool_name, effect.arguments) for effect in recovery.pending_effects
    ] == [
        ("call_1_deploy", "bash", {"command": "./deploy.sh"}),
        ("call_2_notify", "bash", {"command": "notify"}),
    ]
    first = recovery.pending_effects[0]
    assert (first.intent_id, first.result_slot, first.replay_policy) == (None, None, None)
    assert outcome.sessions[0].usage == Usage.of(input=600, output=12, cache_read=0, cache_write=300)


def test_all_real_writer_lines_match_the_schema() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for sample in (REAL_CLEAN, REAL_ABORT_TOOL, REAL_CRASH_IN_TOOL):
        for line in sample.splitlines():
            validator.validate(json.loads(line))


# --- turn states --------------------------------------------------------------------------------------------
def test_open_model_request() -> None:
    outcome = verify(Log().user())
    assert runs(outcome) == [("turn:2", "open", "model-request-open")]
    left_open = only(outcome, "SA301")
    assert (left_open.location.line, left_open.location.byte_offset) == (2, Log().offset(2))
    assert "the user message at line 2 has no reply" in left_open.message
    recovery = run(outcome).recovery
    assert recovery is not None and (recovery.seed_kind, recovery.pending_effects) == ("replay", [])
    assert recovery.assumes == [
        "configuration unchanged: v1 records no configuration snapshot, only the header's model"
    ]


def test_header_only_file_is_clean_and_has_no_runs() -> None:
    outcome = verify(Log())
    session = outcome.sessions[0]
    assert (outcome.findings, session.runs, session.facts, session.last_seq) == ([], [], 0, None)
    assert session.verdict is Verdict.CLEAN and session.session_id == SESSION_ID


def test_null_and_empty_tool_calls_and_summaries_are_what_the_cli_writes() -> None:
    log = (
        Log()
        .user()
        .add(
            {
                "type": "message",
                "message": {"role": "assistant", "content": "a", "tool_calls": None},
                "usage": USAGE,
            }
        )
    )
    log.user().add(
        {
            "type": "message",
            "message": {"role": "assistant", "content": "b", "tool_calls": []},
            "usage": USAGE,
        }
    )
    log.add(
        {"type": "compaction", "summary": None, "compactedMessages": 3, "keptMessages": 1, "usage": USAGE}
    )
    log.add({"type": "compaction", "compactedMessages": 1, "keptMessages": 1, "usage": USAGE})
    outcome = verify(log)
    assert outcome.findings == []
    assert runs(outcome) == [("turn:2", "completed", None), ("turn:4", "completed", None)]


def test_arguments_that_are_not_a_json_object_stay_raw_text() -> None:
    cut = call("call_0_cut", "bash", '{"command":"ech')
    outcome = verify(Log().user().answer(None, cut, call("call_1_list", "bash", "[1]")))
    recovery = run(outcome).recovery
    assert recovery is not None
    assert [effect.arguments for effect in recovery.pending_effects] == ['{"command":"ech', "[1]"]


def test_all_calls_answered_is_step_pending() -> None:
    outcome = verify(Log().user().answer(None, READ).result("call_0_read", "read"))
    assert runs(outcome) == [("turn:2", "open", "step-pending")]
    assert rules(outcome) == [("SA301", 4)]


def test_length_cut_answer_gets_truncation_texts_then_a_final_answer() -> None:
    log = Log().user().answer(None, READ, DEPLOY)
    log.result("call_0_read", "read", TRUNCATED).result("call_1_deploy", "bash", TRUNCATED)
    assert runs(verify(log)) == [("turn:2", "open", "step-pending")]
    outcome = verify(log.answer("Sorry, I was cut off."))
    assert (outcome.findings, runs(outcome)) == ([], [("turn:2", "completed", None)])


def test_model_interruption_aborts_the_turn() -> None:
    outcome = verify(Log().user().interruption("model").user("again").answer())
    assert outcome.findings == []
    assert runs(outcome) == [("turn:2", "aborted", None), ("turn:4", "completed", None)]


def test_compaction_interruption_between_turns_changes_nothing() -> None:
    outcome = verify(Log().user().answer().interruption("compact"))
    assert (outcome.findings, runs(outcome)) == ([], [("turn:2", "completed", None)])


def test_turns_that_end_without_an_answer_failed() -> None:
    log = Log().user().user("again")  # the model request failed: v1 writes no error
    log.answer(None, READ).result("call_0_read", "read").user("third")  # the next model step failed
    log.answer("   ").user("fourth")  # a blank answer: the CLI throws "Model returned an empty response"
    log.answer().compaction(2, 6)  # compacting after a completed turn (8 messages so far)
    outcome = verify(log)
    assert runs(outcome) == [
        ("turn:2", "failed", None),
        ("turn:3", "failed", None),
        ("turn:6", "failed", None),
        ("turn:8", "completed", None),
    ]
    assert rules(outcome) == []


def test_compaction_after_an_unanswered_request_fails_the_turn() -> None:
    outcome = verify(Log().user().user("again").answer("x").user("q").compaction(1, 3))
    assert runs(outcome)[-1] == ("turn:5", "failed", None)
    assert outcome.findings == []


def test_crash_between_abort_texts_is_abort_pending() -> None:
    log = Log().user().answer(None, READ, DEPLOY, NOTIFY)
    log.result("call_0_read", "read").result("call_1_deploy", "bash", "Operation aborted")
    outcome = verify(log)
    assert runs(outcome) == [("turn:2", "open", "abort-pending")]
    recovery = run(outcome).recovery
    assert recovery is not None and recovery.pending_effects == [] and recovery.seed_kind == "replay"
    assert rules(outcome) == [("SA301", 5)]
    # with every abort text written and only the interruption line missing, the turn is aborted
    done = verify(log.result("call_2_notify", "bash", "Operation aborted before execution"))
    assert (rules(done), runs(done)) == ([], [("turn:2", "aborted", None)])


def test_user_message_while_calls_are_unanswered() -> None:
    log = Log().user().answer(None, READ, DEPLOY).result("call_0_read", "read").user("hello?").answer()
    outcome = verify(log)
    assert rules(outcome) == [("SA302", 3), ("SA154", 5)]
    assert verdict(outcome) is Verdict.CORRUPT
    assert runs(outcome) == [("turn:2", "failed", "effect-unknown"), ("turn:5", "completed", None)]
    recovery = run(outcome, 0).recovery
    assert recovery is not None and [effect.tool_call_id for effect in recovery.pending_effects] == [
        "call_1_deploy"
    ]
    assert "the session moved on at line 5 without its result" in only(outcome, "SA302").message
    assert "not trustworthy from this line on" in only(outcome, "SA154").message


# --- rules SA150–SA159 --------------------------------------------------------------------------------------
def test_sa150_invalid_header() -> None:
    header = {
        **Log().header,
        "version": 2,
        "id": SESSION_ID.upper(),
        "createdAt": "yesterday",
        "cwd": "",
        "extra": 1,
    }
    outcome = verify(Log(header).user().answer())
    assert sorted((item.rule, item.location.pointer) for item in outcome.findings) == [
        ("SA150", "/createdAt"),
        ("SA150", "/cwd"),
        ("SA150", "/extra"),
        ("SA150", "/id"),
        ("SA150", "/version"),
    ]
    assert all(item.location.line == 1 and item.location.byte_offset == 0 for item in outcome.findings)
    assert verdict(outcome) is Verdict.CORRUPT
    assert outcome.sessions[0].session_id == SESSION_ID.upper()
    not_an_object = verify(b"[1]\n")
    assert rules(not_an_object) == [("SA150", 1)] and not_an_object.sessions[0].session_id is None


def test_sa151_invalid_lines() -> None:
    log = Log().user().raw(b"[]").raw(b'{"type":"note","timestamp":"2026-11-29T21:41:07.300Z"}')
    log.raw(
        dumps({"type": "message", "message": {"role": "user", "content": "x"}, "timestamp": "2026-13-01"})
    )
    log.raw(dumps(Log().header))
    outcome = verify(log)
    invalid = [item for item in outcome.findings if item.rule == "SA151"]
    assert [item.location.line for item in invalid] == [3, 4, 5, 6]
    assert [item.location.byte_offset for item in invalid] == [log.offset(n) for n in (3, 4, 5, 6)]
    assert "not a JSON object" in invalid[0].message and "unknown line type" in invalid[1].message
    assert invalid[2].location.pointer == "/timestamp"
    assert "second session header" in invalid[3].message
    assert runs(outcome) == [("turn:2", "failed", None), ("turn:5", "open", "model-request-open")]


def test_sa152_invalid_messages() -> None:
    log = Log().user().add({"type": "message", "message": {"role": "user", "content": 3}})
    log.add({"type": "message", "message": {"role": "system", "content": "x"}})
    log.answer(None, {"type": "function", "function": {"name": "read", "arguments": "{}"}})
    log.add({"type": "message", "message": {"role": "tool", "tool_call_id": "c", "content": "x"}})
    outcome = verify(log)
    assert [(item.rule, item.location.line, item.location.pointer) for item in outcome.findings][:4] == [
        ("SA152", 3, "/message/content"),
        ("SA152", 4, "/message/role"),
        ("SA152", 5, "/message/tool_calls/0/id"),
        ("SA152", 6, "/toolName"),
    ]
    assert verdict(outcome) is Verdict.CORRUPT


def test_assistant_objects_keep_unknown_provider_keys() -> None:
    answer: dict[str, Any] = {
        "role": "assistant",
        "content": "ok",
        "refusal": None,
        "reasoning": "…",
        "reasoning_details": [],
    }
    outcome = verify(Log().user().add({"type": "message", "message": answer, "usage": USAGE}))
    assert (outcome.findings, runs(outcome)) == ([], [("turn:2", "completed", None)])


def test_sa153_results_out_of_order() -> None:
    log = Log().user().answer(None, READ, DEPLOY, NOTIFY)
    log.result("call_1_deploy", "bash")  # before call_0_read
    log.result("call_1_deploy", "bash")  # a second result
    log.result("call_2_notify", "read")  # the wrong tool name
    log.answer().result("call_9", "bash")  # no call is open
    outcome = verify(log)
    assert rules(outcome) == [("SA153", 4), ("SA153", 5), ("SA153", 6), ("SA153", 8)]
    first, second, name, late = outcome.findings
    assert "before call read (call_0_read)" in first.message and "from this line on" in first.message
    assert "already has its result" in second.message and "since line 4" in second.message
    assert '"read"' in name.message and name.location.pointer == "/toolName"
    assert "answers no open call" in late.message
    assert late.location.byte_offset == log.offset(8)


def test_sa154_answer_while_calls_unanswered_or_after_the_turn_ended() -> None:
    outcome = verify(Log().user().answer(None, READ).answer().answer())
    assert rules(outcome) == [("SA154", 4), ("SA154", 5)]
    assert "while call read (call_0_read)" in outcome.findings[0].message
    assert "no model request was open: turn:2 had ended (completed)" in outcome.findings[1].message
    before_any_user = verify(Log().answer(None, READ).result("call_0_read", "read").answer().user())
    assert rules(before_any_user) == [("SA154", 2), ("SA301", 5)]  # its results pair with it: no cascade
    assert runs(before_any_user) == [("turn:5", "open", "model-request-open")]
    assert "not trustworthy since line 2" in only(before_any_user, "SA301").message
    after_abort = verify(
        Log().user().answer(None, READ).result("call_0_read", "read", "Operation aborted").answer()
    )
    assert (
        rules(after_abort) == [("SA154", 5)] and "after the user aborted" in after_abort.findings[0].message
    )


def test_sa155_fixed_texts() -> None:
    log = Log().user().answer(None, READ, DEPLOY).result("call_0_read", "read", "Operation aborted.")
    log.result("call_1_deploy", "bash", "Operation aborted before execution")
    log.user().answer(None, READ, DEPLOY).result("call_0_read", "read", TRUNCATED).result(
        "call_1_deploy", "bash"
    )
    log.user().answer(None, READ).result(
        "call_0_read",
        "read",
        "Operation interrupted after execution status became unknown; the tool was not replayed.",
    )
    log.answer()
    outcome = verify(log)
    assert rules(outcome) == [("SA155", 4), ("SA155", 5), ("SA155", 9), ("SA155", 12)]
    near, unexpected, cut, v2 = (item.message for item in outcome.findings)
    assert "near miss" in near and "no earlier call of this answer was aborted" in unexpected
    assert "cut by the token limit" in cut and "v2's fixed text" in v2
    assert verdict(outcome) is Verdict.CLEAN  # SA155 is a warning without verdict effect
    assert all(item.location.pointer == "/message/content" for item in outcome.findings)


def test_sa155_abort_texts_must_follow_the_aborted_call() -> None:
    log = Log().user().answer(None, READ, DEPLOY, NOTIFY).result("call_0_read", "read", "Operation aborted")
    log.result("call_1_deploy", "bash", "deployed").result(
        "call_2_notify", "bash", "Operation aborted before execution"
    )
    log.interruption("tool", "call_0_read")
    outcome = verify(log)
    assert rules(outcome) == [("SA155", 5)]
    assert runs(outcome) == [("turn:2", "aborted", None)]


def test_sa156_usage() -> None:
    log = Log().user().answer(usage={"input": 1, "output": -1, "cacheRead": 0.5, "cacheWrite": 0, "x": 0})
    log.user().add({"type": "message", "message": {"role": "assistant", "content": "no usage"}})
    log.user().answer(usage={"input": 2, "output": 3, "cacheRead": 4})
    outcome = verify(log)
    assert sorted((item.rule, item.location.line, item.location.pointer) for item in outcome.findings) == [
        ("SA156", 3, "/usage/cacheRead"),
        ("SA156", 3, "/usage/output"),
        ("SA156", 3, "/usage/x"),
        ("SA156", 5, "/usage"),
        ("SA156", 7, "/usage/cacheWrite"),
    ]
    assert outcome.sessions[0].usage == Usage()  # only well-formed usage objects count


def test_sa156_running_total_overflow_and_integral_floats() -> None:
    big = {"input": 2**53 - 1, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    outcome = verify(Log().user().answer(usage=big).user().answer(usage={**big, "input": 1.0}))
    assert rules(outcome) == [("SA111", 5), ("SA156", 5)]
    assert "passes 2^53−1" in only(outcome, "SA156").message


def test_sa157_compaction() -> None:
    log = Log().user().answer().compaction(1, 0)  # the context held 2 messages, not 1
    log.compaction("two", 1).add({"type": "compaction", "summary": 7, "keptMessages": 0, "usage": USAGE})
    outcome = verify(log)
    assert sorted((item.rule, item.location.line, item.location.pointer) for item in outcome.findings) == [
        ("SA157", 4, "/compactedMessages"),
        ("SA157", 5, "/compactedMessages"),
        ("SA157", 6, "/compactedMessages"),
        ("SA157", 6, "/summary"),
    ]
    assert "the model context held 2 messages" in outcome.findings[0].message
    assert outcome.sessions[0].usage.output == 4 * 40


def test_compaction_counts_follow_the_context() -> None:
    log = Log().user().answer(None, READ).result("call_0_read", "read").answer().compaction(2, 2)
    log.user().answer().compaction(2, 2)  # context: summary, 2 kept, user, answer = 5 → 3 + 2 is wrong
    outcome = verify(log)
    assert rules(outcome) == [("SA157", 9)]
    assert "held 5 messages" in outcome.findings[0].message
    assert verify(Log().user().answer().compaction(1, 1).user().answer().compaction(2, 2)).findings == []


def test_sa158_interruptions() -> None:
    log = Log().user().answer(None, READ, DEPLOY).result("call_0_read", "read", "Operation aborted")
    log.result("call_1_deploy", "bash", "Operation aborted before execution").interruption(
        "tool", "call_1_deploy"
    )
    log.interruption("model")  # the turn had already ended
    log.add({"type": "interruption", "phase": "compact", "toolCallId": "x", "reason": "ctrl-c"})
    outcome = verify(log)
    assert [(item.rule, item.location.line, item.location.pointer) for item in outcome.findings] == [
        ("SA158", 6, "/toolCallId"),
        ("SA158", 7, None),
        ("SA158", 8, "/reason"),
        ("SA158", 8, "/toolCallId"),
    ]
    assert 'the call aborted at line 4 is "call_0_read"' in outcome.findings[0].message
    assert "turn:2 had ended (aborted)" in outcome.findings[1].message
    early = Log().user().answer(None, READ, DEPLOY).result("call_0_read", "read", "Operation aborted")
    early.interruption("tool", "call_0_read")  # before "Operation aborted before execution" for call_1_deploy
    outcome = verify(early)
    assert rules(outcome) == [("SA158", 5)] and "first writes" in outcome.findings[0].message
    assert runs(outcome) == [("turn:2", "aborted", None)]
    assert rules(verify(Log().interruption("model"))) == [("SA158", 2)]


def test_sa159_blank_lines_are_notes() -> None:
    log = Log().user().raw(b"").answer()
    outcome = verify(log)
    assert rules(outcome) == [("SA159", 3)]
    assert (outcome.findings[0].location.byte_offset, verdict(outcome)) == (log.offset(3), Verdict.CLEAN)
    assert (outcome.sessions[0].facts, outcome.sessions[0].last_seq) == (2, 4)
    assert runs(outcome) == [("turn:2", "completed", None)]


# --- framing ------------------------------------------------------------------------------------------------
def test_torn_tail_is_repairable_when_nothing_is_open() -> None:
    log = Log().user().answer()
    data = log.data() + b'{"type":"message","mess'
    outcome = verify(data)
    torn = only(outcome, "SA109")
    assert (torn.location.line, torn.location.byte_offset) == (4, len(log.data()))
    assert torn.evidence == {"torn_tail_bytes": 23, "repaired_length": len(log.data())}
    session = outcome.sessions[0]
    assert (session.verdict, session.torn_tail_bytes, session.repaired_length) == (
        Verdict.REPAIRABLE,
        23,
        len(log.data()),
    )
    open_turn = verify(Log().user().data() + b"{")
    assert verdict(open_turn) is Verdict.NEEDS_RECOVERY and rules(open_turn) == [("SA301", 2), ("SA109", 3)]


def test_no_line_feed_at_all() -> None:
    for data in (b"", dumps(Log().header)):
        outcome = verify(data)
        assert rules(outcome) == [("SA101", 1)]
        assert outcome.native["reducer"]["code"] == "MISSING_HEADER"
        session = outcome.sessions[0]
        assert (session.session_id, session.repaired_length, session.facts, session.last_seq) == (
            None,
            None,
            0,
            None,
        )
        assert verdict(outcome) is Verdict.CORRUPT


def test_framing_problems_and_what_the_v2_reducer_says() -> None:
    log = Log().user()
    crlf = verify(log.data() + b'{"type":"message"}\r\n')
    assert only(crlf, "SA105").location.byte_offset == len(log.data()) + 18  # the CR
    assert crlf.native["reducer"] == REDUCER_SAYS_V1  # line 1 is fine, so the header is what v2 rejects
    bad_utf8 = verify(log.data() + b'{"type":"\xff"}\n')
    assert only(bad_utf8, "SA102").location.byte_offset == len(log.data()) + 9
    assert bad_utf8.native["reducer"]["code"] == "INVALID_UTF8" and bad_utf8.native["reducer"]["line"] == 1
    surrogate = verify(log.data() + b'{"a":"\xed\xa0\x80"}\n')
    assert only(surrogate, "SA103").location.line == 3
    assert (surrogate.native["reducer"]["code"], surrogate.native["reducer"]["line"]) == ("MALFORMED_JSON", 3)
    duplicate = verify(log.data() + b'{"type":"message","type":"message"}\n')
    assert only(duplicate, "SA107").location.line == 3 and verdict(duplicate) is Verdict.CORRUPT
    blank_first = verify(b"\n" + log.data())
    assert blank_first.native["reducer"]["code"] == "MISSING_HEADER"
    assert rules(blank_first) == [("SA159", 1), ("SA301", 3)]  # v1's reader skips it; line 2 is the header
    crlf_header = verify(log.data().replace(b"\n", b"\r\n", 1))
    assert crlf_header.native["reducer"]["code"] == "CRLF_NOT_ALLOWED"


def test_a_file_of_empty_lines_has_no_header() -> None:
    outcome = verify(b"\n\n")
    assert rules(outcome) == [("SA150", 1), ("SA159", 1), ("SA159", 2)]
    assert verdict(outcome) is Verdict.CORRUPT and outcome.native["reducer"]["code"] == "MISSING_HEADER"


def test_byte_order_mark_is_a_warning() -> None:
    outcome = verify(b"\xef\xbb\xbf" + Log().user().answer().data())
    assert rules(outcome) == [("SA110", 1)] and verdict(outcome) is Verdict.CLEAN
    assert outcome.sessions[0].session_id == SESSION_ID
    bom_line = verify(
        b"\xef\xbb\xbf\n" + Log().user().answer().data()
    )  # v1's trim() drops it like a blank line
    assert rules(bom_line) == [("SA110", 1), ("SA159", 1)] and bom_line.sessions[0].session_id == SESSION_ID


def test_reads_at_most_size_bytes() -> None:
    log = Log().user().answer()
    outcome = verify(log.data() + Log().user("later").lines[1] + b"\n", size=len(log.data()))
    assert outcome.files[0].bytes == len(log.data()) and outcome.findings == []


def test_timestamps_and_header_time() -> None:
    header = {**Log().header, "createdAt": stamp(5)}
    log = Log(header).user()
    log.raw(
        dumps(
            {
                "type": "message",
                "message": {"role": "assistant", "content": "ok"},
                "usage": USAGE,
                "timestamp": stamp(2),
            }
        )
    )
    outcome = verify(log)
    assert rules(outcome) == [("SA402", 1), ("SA403", 3), ("SA404", 3)]
    assert only(outcome, "SA402").evidence == {"id_time": instant(stamp(0)), "created_at": instant(stamp(5))}
    assert verdict(outcome) is Verdict.CLEAN


# --- the line schema agrees with the verifier ---------------------------------------------------------------
BAD_LINES = [
    {"type": "message", "message": {"role": "user", "content": 1}, "timestamp": stamp(0)},
    {
        "type": "message",
        "message": {"role": "tool", "tool_call_id": "c", "content": "x"},
        "timestamp": stamp(0),
    },
    {"type": "message", "message": {"role": "assistant", "content": "x"}, "timestamp": stamp(0)},
    {"type": "compaction", "compactedMessages": 0, "keptMessages": 1, "usage": USAGE, "timestamp": stamp(0)},
    {"type": "interruption", "phase": "model", "toolCallId": "c", "reason": "escape", "timestamp": stamp(0)},
    {"type": "interruption", "phase": "tool", "reason": "escape", "timestamp": stamp(0)},
    {"type": "message", "message": {"role": "user", "content": "x"}, "timestamp": "2026-11-29T21:41:07Z"},
    {"type": "note", "timestamp": stamp(0)},
]


@pytest.mark.parametrize("line", BAD_LINES)
def test_schema_and_verifier_reject_the_same_bad_lines(line: dict[str, Any]) -> None:
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(line)
    assert read_line(line).issues


# Generating from the schema's patterns is slow; a few dozen examples per shape keep the file under ~15 s.
SCHEMA_EXAMPLES = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


@cache
def _lines_of(name: str) -> st.SearchStrategy[Any]:
    """Instances of one `$defs` entry; built once, as canonicalising the schema is the slow part."""
    return from_schema({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"})


def _instants(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value.get(key) for key in ("timestamp", "createdAt") if key in value]
    return []


@pytest.mark.parametrize(
    "name",
    ["userMessageLine", "assistantMessageLine", "toolResultLine", "compactionLine", "interruptionLine"],
)
@SCHEMA_EXAMPLES
@given(data=st.data())
def test_every_schema_valid_line_passes_the_verifier(name: str, data: st.DataObject) -> None:
    line = data.draw(_lines_of(name))
    assume(all(instant(value) is not None for value in _instants(line)))  # calendar dates: beyond a schema
    calls = line.get("message", {}).get("tool_calls") or []
    assume(len({call["id"] for call in calls}) == len(calls))  # unique call ids: beyond a schema
    assert read_line(line).issues == []


@SCHEMA_EXAMPLES
@given(data=st.data())
def test_every_schema_valid_header_passes_the_verifier(data: st.DataObject) -> None:
    header = data.draw(_lines_of("header"))
    assume(all(instant(value) is not None for value in _instants(header)))
    assert read_header(header).issues == []
