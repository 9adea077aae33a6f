"""Each ccusage failure the issue (and spec §9.2) names, as a test of the ledger: on hand-made records
and on builder scenarios, with literal expected figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessaudit.formats.claude_code.build.scenarios import build_one
from sessaudit.formats.claude_code.usage.ledger import TranscriptFile, build_ledger
from tests.formats.claude_code.test_ledger_scenarios import transcript

SESSION = "5d1f0a52-0000-4000-8000-000000000001"
OTHER = "5d1f0a52-0000-4000-8000-000000000002"


def usage(output: int, *, input_tokens: int = 3, write: int = 100, read: int = 1000) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
    }


def assistant(
    uuid: str,
    parent: str | None,
    message_id: str,
    output: int,
    *,
    request: str | None = None,
    stop: str | None = None,
    stamp: str = "2026-03-14T09:00:00.000Z",
    session: str = SESSION,
    sidechain: bool = False,
    **counts: int,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": session,
        "isSidechain": sidechain,
        "timestamp": stamp,
        "message": {
            "id": message_id,
            "model": "claude-opus-4-6",
            "role": "assistant",
            "content": [],
            "stop_reason": stop,
            "usage": usage(output, **counts),
        },
    }
    if request is not None:
        record["requestId"] = request
    return record


def user(uuid: str, parent: str | None, *, session: str = SESSION) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session, "message": {}}


def file(path: str, *records: dict[str, Any], agent: str | None = None) -> TranscriptFile:
    return TranscriptFile(path, list(enumerate(records, 1)), agent)


def test_streamed_lines_without_request_id_count_once() -> None:
    # ccusage's daily view keyed (message.id, timestamp) without requestId: 3 lines → 3 charges
    records = [
        user("u1", None),
        assistant("a1", "u1", "msg_bdrk_01", 1, stamp="2026-03-14T09:00:01.000Z"),
        assistant("a2", "a1", "msg_bdrk_01", 1, stamp="2026-03-14T09:00:02.000Z"),
        assistant("a3", "a2", "msg_bdrk_01", 1662, stop="tool_use", stamp="2026-03-14T09:00:03.000Z"),
    ]
    ledger = build_ledger([file("s.jsonl", *records)])
    (response,) = ledger.responses
    assert response.request_id is None and response.line == 4
    assert (ledger.totals().input_tokens, ledger.totals().output_tokens) == (3, 1662)
    assert ledger.totals().cache_read_input_tokens == 1000  # not 3000


def test_bedrock_scenario_is_not_counted_per_line(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "bedrock")
    (item,) = entry["files"]
    ledger = build_ledger([transcript(tmp_path, item)])
    # 5 streamed lines (2 + 2 + 1); per line the cache reads would be 6311 + 2 * 7013 + ... = 26648
    assert len(ledger.responses) == 3
    assert ledger.totals().cache_read_input_tokens == 13324
    assert ledger.totals().output_tokens == 549


def test_the_final_line_is_kept_not_the_first() -> None:
    records = [
        user("u1", None),
        assistant("a1", "u1", "msg_01", 3, request="req_1"),
        assistant("a2", "a1", "msg_01", 3, request="req_1"),
        assistant("a3", "a2", "msg_01", 1662, request="req_1", stop="end_turn"),
    ]
    (response,) = build_ledger([file("s.jsonl", *records)]).responses
    assert (response.tokens.output_tokens, response.line, response.stop_reason) == (1662, 4, "end_turn")
    assert response.lines == (("s.jsonl", 2), ("s.jsonl", 3), ("s.jsonl", 4))
    assert response.placeholder is False


def test_lines_of_one_response_apart_by_a_tool_result_stay_one_response() -> None:
    records = [
        user("u1", None),
        assistant("a1", "u1", "msg_01", 5, request="req_1"),
        user("r1", "a1"),  # the first call's result, written before the second call's line
        assistant("a2", "r1", "msg_01", 240, request="req_1", stop="tool_use"),
    ]
    (response,) = build_ledger([file("s.jsonl", *records)]).responses
    assert response.tokens.output_tokens == 240


def test_a_resumed_copy_counts_once(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "resumed")
    first, second = (transcript(tmp_path, item) for item in entry["files"])
    both = build_ledger([first, second])
    assert len(both.responses) == 3 and both.totals().output_tokens == 168
    copied = next(r for r in both.responses if r.tokens.output_tokens == 48)
    assert copied.file == first.path and [path for path, _ in copied.copies] == [second.path]
    # the resumed session alone, told of the session it came from: the copy is not its usage
    alone = build_ledger([second], [first])
    assert len(alone.responses) == 2 and alone.totals().output_tokens == 120
    assert [r.session_id for r in alone.elsewhere] == [entry["files"][0]["session_id"]]


def test_a_copy_is_attributed_to_the_earlier_file_whatever_the_order_given() -> None:
    original = file(
        "a.jsonl", user("u1", None), assistant("a1", "u1", "msg_01", 48, request="req_1", stop="end_turn")
    )
    later = file(
        "b.jsonl",
        user("u1", None, session=OTHER),
        assistant("a1", "u1", "msg_01", 48, request="req_1", stop="end_turn", session=OTHER),
        user("u2", "a1", session=OTHER) | {"timestamp": "2026-03-14T10:00:00.000Z"},
    )
    (response,) = build_ledger([later, original]).responses
    assert (response.file, response.session_id, response.copies) == ("a.jsonl", SESSION, (("b.jsonl", 2),))


def test_old_layout_sub_agent_files_are_attributed_to_their_session(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "subagent_beside")
    main, agent = entry["files"]
    assert agent["path"].endswith(f"-home-dev-subagent-beside/agent-{agent['agent_id']}.jsonl")
    ledger = build_ledger([transcript(tmp_path, main), transcript(tmp_path, agent)])
    assert {r.session_id for r in ledger.responses} == {main["session_id"]}
    assert [r.agent_id for r in ledger.responses].count(agent["agent_id"]) == 3
    assert [r.sidechain for r in ledger.responses] == [False, True, True, True, False]
    assert ledger.totals().output_tokens == 936


def test_a_sidechain_replay_with_a_new_request_id_counts_once_for_the_parent() -> None:
    trunk = file(
        "s.jsonl", user("u1", None), assistant("a1", "u1", "msg_01", 90, request="req_1", stop="end_turn")
    )
    btw = file(
        "s/subagents/agent-b1.jsonl",
        user("x1", None),
        assistant("x2", "x1", "msg_01", 90, request="req_9", stop="end_turn", sidechain=True),
        agent="b1",
    )
    ledger = build_ledger([btw, trunk])
    (response,) = ledger.responses
    assert (response.file, response.request_id, response.sidechain) == ("s.jsonl", "req_1", False)
    assert response.copies == (("s/subagents/agent-b1.jsonl", 2),)


def test_a_constant_gateway_message_id_keeps_requests_apart_and_flags_them() -> None:
    # ccusage #1635: one constant message.id, no requestId, on every request behind a relay
    records = [
        user("u1", None),
        assistant("a1", "u1", "chatcmpl-0", 20, stop="end_turn", read=1000),
        user("u2", "a1"),
        assistant("a2", "u2", "chatcmpl-0", 30, stop="end_turn", read=1200),
        user("u3", "a2"),
        assistant("a3", "u3", "chatcmpl-0", 1, read=1500, stamp="2026-03-14T09:01:00.000Z"),
        assistant("a4", "a3", "chatcmpl-0", 45, stop="end_turn", read=1500, stamp="2026-03-14T09:01:02.000Z"),
    ]
    ledger = build_ledger([file("s.jsonl", *records)])
    assert [(r.line, r.tokens.output_tokens, r.shared_id) for r in ledger.responses] == [
        (2, 20, True),
        (4, 30, True),
        (7, 45, True),
    ]
    assert ledger.totals().cache_read_input_tokens == 3700
    assert not ledger.responses[0].anthropic_id


def test_synthetic_lines_are_never_billed() -> None:
    synthetic = assistant("a1", "u1", "0391d507-c858-4852-8249-4641b98a9060", 0, stop="stop_sequence")
    synthetic["message"]["model"] = "<synthetic>"
    ledger = build_ledger([file("s.jsonl", user("u1", None), synthetic)])
    assert ledger.responses == () and ledger.synthetic == (("s.jsonl", 2),)
