"""native_fork_seed reproduces `rivumi sessions --fork-from-event RUN --sequence N` byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, TORN_LAST_LINE, build_run
from sessaudit.formats.rivumi.native.replay import native_replay
from sessaudit.formats.rivumi.seed.forkseed import NativeSeed, native_fork_seed
from sessaudit.formats.rivumi.spec.encoding import dump_sorted


def line(record: dict[str, Any]) -> bytes:
    return dump_sorted(record).encode("utf-8") + b"\n"


def seed_of(data: bytes | None, sequence: int, run_id: str = "r1") -> NativeSeed:
    return native_fork_seed(data, None, None, run_id=run_id, sequence=sequence)


TWO = line(
    {"event_type": "run.created", "run_id": "r1", "sequence": 0, "data": {"model": "scripted"}}
) + line(
    {"event_type": "run.completed", "run_id": "r1", "sequence": 1, "data": {"terminal_reason": "verified"}}
)

RUN = "e3e70682c2094cac629f6fbed82c07cd"  # the standard run's id with seed 0
BASE = "82e2e662f728b4fa42485e3a0a5d2f346baa9455"


def test_small_log_byte_for_byte() -> None:
    expected = (
        '{"events_included":1,"fork_point_event_type":"run.created","fork_point_sequence":0,'
        '"replay_state":{"completed_turn_ids":[],"event_count":1,"first_sequence":0,"last_sequence":0,'
        '"run_id":"r1","schema_version":1,"timeline":[{"detail":"scripted","event_type":"run.created",'
        '"run_id":"r1","sequence":0}]},"run_started":false,"schema_version":1,'
        '"side_effects_replayed":false,"source_run_id":"r1"}\n'
    )
    seed = seed_of(TWO, 0)
    assert seed.ok and seed.exit_status == 0 and seed.stderr == ""
    assert seed.text == expected and seed.value == json.loads(expected)
    assert seed.as_native() == (json.loads(expected), expected)


def test_built_run_byte_for_byte(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path).run_dir
    assert run_dir.name == RUN
    data = (run_dir / "events.jsonl").read_bytes()
    expected = (
        '{"events_included":5,"fork_point_event_type":"tool.requested","fork_point_sequence":4,'
        '"replay_state":{"completed_turn_ids":[],"event_count":5,"first_sequence":0,"last_sequence":4,'
        f'"run_id":"{RUN}","schema_version":1,"timeline":['
        f'{{"detail":"scripted","event_type":"run.created","run_id":"{RUN}","sequence":0}},'
        f'{{"detail":"{BASE}","event_type":"workspace.prepared","run_id":"{RUN}","sequence":1}},'
        f'{{"event_type":"model.requested","run_id":"{RUN}","sequence":2}},'
        f'{{"event_type":"model.completed","run_id":"{RUN}","sequence":3}},'
        f'{{"detail":"read_file","event_type":"tool.requested","run_id":"{RUN}","sequence":4}}]}},'
        '"run_started":false,"schema_version":1,"side_effects_replayed":false,'
        f'"source_run_id":"{RUN}"}}\n'
    )
    assert seed_of(data, 4, RUN).text == expected


def test_last_event_seed_state_is_the_replay_state(tmp_path: Path) -> None:
    data = (build_run(tmp_path).run_dir / "events.jsonl").read_bytes()
    replay = native_replay(data)
    assert replay.state is not None
    last = replay.state["last_sequence"]
    seed = seed_of(data, last, RUN)
    assert seed.value is not None and seed.text is not None
    assert seed.value["replay_state"] == replay.state
    assert seed.text.endswith(',"source_run_id":"' + RUN + '"}\n') and seed.text.count("\n") == 1


@pytest.mark.parametrize("sequence", [0, 5, 9])
def test_consistent_with_the_written_fork_run(tmp_path: Path, sequence: int) -> None:
    source = build_run(tmp_path, crash=KILLED_AFTER_TOOL_STARTED).run_dir
    seed = seed_of((source / "events.jsonl").read_bytes(), sequence, source.name)
    forked = json.loads((build_fork_run(source, sequence) / "events.jsonl").read_bytes())["data"]
    assert seed.value is not None
    for key in ("source_run_id", "fork_point_sequence", "fork_point_event_type", "events_included"):
        assert seed.value[key] == forked[key]
    assert seed.value["side_effects_replayed"] is forked["side_effects_replayed"] is False
    assert seed.value["run_started"] is False


def test_gaps_order_turns_and_conversation() -> None:
    data = (
        line({"event_type": "turn.completed", "sequence": 9, "turn_id": "t1", "conversation_id": "c"})
        + line(
            {
                "event_type": " user.message ",
                "sequence": 4,
                "turn_id": "t1",
                "conversation_id": "c",
                "text": "hi",
            }
        )
        + line({"event_type": "conversation.created", "sequence": 2, "conversation_id": "c"})
    )
    expected = (
        '{"events_included":2,"fork_point_event_type":"user.message","fork_point_sequence":4,'
        '"replay_state":{"active_turn_id":"t1","completed_turn_ids":[],"conversation_id":"c",'
        '"event_count":2,"first_sequence":2,"last_sequence":4,"schema_version":1,"timeline":['
        '{"conversation_id":"c","event_type":"conversation.created","sequence":2},'
        '{"conversation_id":"c","event_type":"user.message","sequence":4,"text":"hi","turn_id":"t1"}]},'
        '"run_started":false,"schema_version":1,"side_effects_replayed":false,"source_conversation_id":"c"}\n'
    )
    assert seed_of(data, 4).text == expected


def test_prefix_ids_not_whole_log_ids() -> None:
    data = line({"event_type": "x", "sequence": 0}) + line({"event_type": "y", "sequence": 1, "run_id": "r9"})
    seed = seed_of(data, 0)
    assert seed.value is not None and "source_run_id" not in seed.value and seed.text is not None
    assert seed.text.startswith('{"events_included":1,"fork_point_event_type":"x",')


@pytest.mark.parametrize(
    ("data", "sequence", "message"),
    [
        (TWO, 2, "fork sequence 2 was not found"),
        (TWO, -1, "fork sequence must be a non-negative integer"),
        (TWO, True, "fork sequence must be a non-negative integer"),
        (TWO[:-1], 0, "event JSONL has a partial final line"),
        (TWO[:-1], -1, "event JSONL has a partial final line"),  # the file is loaded before n is checked
        (TWO + TWO.split(b"\n")[1] + b"\n", 0, "duplicate event sequence: 1"),  # after n: still refused
        (
            TWO + line({"event_type": "x", "sequence": 5, "run_id": "r2"}),
            0,
            "event log contains multiple run_id values",
        ),
        (
            TWO + line({"event_type": "x", "sequence": 5, "data": {"text": "\x00"}}),
            0,
            "data.text cannot contain NUL",
        ),
        (
            TWO + line({"event_type": "x", "sequence": "5"}),
            0,
            "event 2 requires a non-negative integer sequence",
        ),
        (b"", 0, "fork sequence 0 was not found"),
    ],
)
def test_refusals(data: bytes, sequence: int, message: str) -> None:
    seed = seed_of(data, sequence)
    assert (seed.ok, seed.text, seed.value, seed.message) == (False, None, None, message)
    assert seed.exit_status == 2 and seed.stderr == f"error: {message}\n"
    assert seed.as_native() == (None, None)


def test_torn_built_run_is_refused(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, crash=TORN_LAST_LINE).run_dir
    seed = seed_of((run_dir / "events.jsonl").read_bytes(), 0, run_dir.name)
    assert seed.message == "event JSONL has a partial final line"


def test_absent_events_file() -> None:
    seed = native_fork_seed(None, {}, {}, run_id="r1", sequence=0)
    assert (
        seed.message == "could not read event JSONL: [Errno 2] No such file or directory: 'r1/events.jsonl'"
    )
    seed = native_fork_seed(None, None, None, run_id="r1", sequence=0, events_path="/runs/r1/events.jsonl")
    assert (
        seed.stderr
        == "error: could not read event JSONL: [Errno 2] No such file or directory: '/runs/r1/events.jsonl'\n"
    )
