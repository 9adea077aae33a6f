"""native_replay reproduces `rivumi sessions --replay-json` byte for byte (spec §5.1–§5.2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.scenarios import build_run
from sessaudit.formats.rivumi.native.replay import native_replay
from sessaudit.formats.rivumi.spec.encoding import dump_sorted


def line(record: dict[str, Any]) -> bytes:
    return dump_sorted(record).encode("utf-8") + b"\n"


TWO = line(
    {"event_type": "run.created", "run_id": "r1", "sequence": 0, "data": {"model": "scripted"}}
) + line(
    {"event_type": "run.completed", "run_id": "r1", "sequence": 1, "data": {"terminal_reason": "verified"}}
)


def test_spec_example_byte_for_byte() -> None:
    expected = (
        '{"completed_turn_ids":[],"event_count":2,"first_sequence":0,"last_sequence":1,"run_id":"r1",'
        '"schema_version":1,"terminal_event_type":"run.completed","timeline":[{"detail":"scripted",'
        '"event_type":"run.created","run_id":"r1","sequence":0},{"detail":"verified","event_type":'
        '"run.completed","run_id":"r1","sequence":1}]}\n'
    )
    answer = native_replay(TWO)
    assert answer.ok and answer.text == expected and answer.state == json.loads(expected)


def test_empty_log() -> None:
    assert (
        native_replay(b"").text
        == '{"completed_turn_ids":[],"event_count":0,"schema_version":1,"timeline":[]}\n'
    )


def test_out_of_order_and_gaps_are_accepted_blank_lines_skipped() -> None:
    first, second = TWO.split(b"\n")[:2]
    answer = native_replay(second.replace(b'"sequence":1', b'"sequence":7') + b"\n\n" + first + b"\n  ")
    assert answer.ok and answer.state is not None
    assert [item["sequence"] for item in answer.state["timeline"]] == [0, 7]
    assert answer.state["first_sequence"] == 0 and answer.state["last_sequence"] == 7


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (TWO[:-1], "event JSONL has a partial final line"),
        (TWO + b"{" + b" " * 131_072 + b"}\n", "event JSONL line 3 exceeds 131072 bytes"),
        (b"\n{oops}\n", "event JSONL line 2 is not valid JSON"),
        (b"[]\n", "event JSONL line 1 must contain an object"),
        (line({"event_type": "x", "sequence": "3"}), "event 0 requires a non-negative integer sequence"),
        (line({"event_type": "x", "sequence": True}), "event 0 requires a non-negative integer sequence"),
        (line({"event_type": " ", "sequence": 0}), "event 0 requires event_type"),
        (TWO + line({"event_type": "x", "sequence": 2, "run_id": ""}), "event 2 has invalid run_id"),
        (line({"event_type": "x", "sequence": 0, "data": []}), "event 0 data must be an object"),
        (line({"event_type": "x", "sequence": 0, "reason": 3}), "event 0 has invalid reason"),
        (line({"event_type": "x", "sequence": 0, "error": "a\x00b"}), "error cannot contain NUL"),
        (line({"event_type": "x", "sequence": 0, "data": {"name": "a\x00"}}), "name cannot contain NUL"),
        (TWO + TWO.split(b"\n")[0] + b"\n", "duplicate event sequence: 0"),
        (
            TWO + line({"event_type": "x", "sequence": 2, "run_id": "r2"}),
            "event log contains multiple run_id values",
        ),
    ],
)
def test_errors(data: bytes, message: str) -> None:
    answer = native_replay(data)
    assert not answer.ok and answer.message == message and answer.text is None


def test_turn_tracking_and_text() -> None:
    data = (
        line(
            {
                "event_type": "user.message",
                "sequence": 0,
                "turn_id": "t1",
                "text": "hi",
                "conversation_id": "c",
            }
        )
        + line({"event_type": "turn.completed", "sequence": 1, "turn_id": "t1", "data": {"text": "done"}})
        + line({"event_type": "user.message", "sequence": 2, "turn_id": "t2", "text": ""})
    )
    state = native_replay(data).state
    assert state is not None
    assert state["active_turn_id"] == "t2" and state["completed_turn_ids"] == ["t1"]
    assert state["terminal_event_type"] == "turn.completed" and state["conversation_id"] == "c"
    assert [item.get("text") for item in state["timeline"]] == ["hi", "done", None]


def test_built_run_details(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path).run_dir
    data = (run_dir / "events.jsonl").read_bytes().replace(b"Fixed add()", "Fixed\u2028add()".encode())
    state = native_replay(data).state
    assert (
        state is not None and state["terminal_event_type"] == "run.completed" and state["event_count"] == 23
    )
    details = {item["event_type"]: item.get("detail") for item in state["timeline"]}
    base_sha = json.loads((run_dir / "request.json").read_bytes())["base_sha"]
    assert details["run.created"] == "scripted" and details["workspace.prepared"] == base_sha
    assert details["tool.started"] == "replace_text" and details["approval.requested"] == "final_verification"
    assert details["run.completed"] == "verified" and details["model.requested"] is None
    assert all("text" not in item for item in state["timeline"])
