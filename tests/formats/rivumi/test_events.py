"""verify_events against built run directories and hand-mutated logs (spec §2, CONTRACT §4 usage)."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.parts import Crash, ToolCall
from sessaudit.formats.rivumi.build.run_builder import RunBuilder
from sessaudit.formats.rivumi.build.scenarios import (
    KILLED_AFTER_TOOL_STARTED,
    MANIFEST_AHEAD_AT_TERMINAL,
    MANIFEST_AHEAD_OVER_TOOL_STARTED,
    NO_FINAL_NEWLINE,
    PENDING_APPROVAL,
    TORN_LAST_LINE,
    Script,
    build_run,
)
from sessaudit.formats.rivumi.read.eventlog import EventLog
from sessaudit.formats.rivumi.read.events import verify_events
from sessaudit.formats.rivumi.spec.encoding import dump_sorted
from sessaudit.model import Usage
from sessaudit.rules import verdict_of
from sessaudit.verdicts import Verdict

Mutation = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def verify_file(path: Path, **expected: str) -> EventLog:
    data = path.read_bytes()
    return verify_events(str(path), io.BytesIO(data), len(data), **expected)


def verify_bytes(data: bytes, **expected: str) -> EventLog:
    return verify_events("events.jsonl", io.BytesIO(data), len(data), **expected)


def codes(log: EventLog) -> list[str]:
    return [item.rule for item in log.findings]


@pytest.fixture(scope="module")
def completed(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    run_dir = build_run(tmp_path_factory.mktemp("completed")).run_dir
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_bytes().splitlines()]


def encode(events: list[dict[str, Any]]) -> bytes:
    return b"".join(dump_sorted(event).encode("utf-8") + b"\n" for event in events)


def test_completed_run_is_clean_and_its_ledger_follows_the_contract(tmp_path: Path) -> None:
    builder = build_run(tmp_path)
    log = verify_file(builder.run_dir / "events.jsonl", run_id=builder.run_id, task_id="task-fix-add")
    assert log.findings == []
    assert log.last_sequence == 22 and len(log.events) == 23
    assert log.run_id == builder.run_id and log.task_id == "task-fix-add"
    assert log.torn_tail_bytes == 0 and not log.missing_final_newline
    assert [
        (row.sequence, row.input, row.cache_read, row.output, row.input_total) for row in log.usage_rows
    ] == [
        (3, 600, 0, 20, 600),
        (10, 188, 512, 30, 700),
        (17, 120, 640, 12, 760),
    ]
    assert {(row.lane, row.provider, row.model) for row in log.usage_rows} == {
        ("primary", "scripted", "scripted")
    }
    assert log.usage == Usage(input=908, output=62, cache_read=1152, cache_write=0, input_total=2060)


@pytest.mark.parametrize(
    "crash",
    [
        KILLED_AFTER_TOOL_STARTED,
        MANIFEST_AHEAD_AT_TERMINAL,
        MANIFEST_AHEAD_OVER_TOOL_STARTED,
        PENDING_APPROVAL,
    ],
)
def test_crash_windows_leave_a_valid_log(tmp_path: Path, crash: Crash) -> None:
    log = verify_file(build_run(tmp_path, crash=crash).run_dir / "events.jsonl")
    assert log.findings == []


def test_torn_last_line_is_corrupt_and_located(tmp_path: Path) -> None:
    builder = build_run(tmp_path, crash=TORN_LAST_LINE)
    data = (builder.run_dir / "events.jsonl").read_bytes()
    log = verify_file(builder.run_dir / "events.jsonl")
    assert codes(log) == ["SA503"]
    (torn,) = log.findings
    tail_offset = data.rindex(b"\n") + 1
    assert torn.location.byte_offset == tail_offset == log.torn_tail_offset
    assert torn.location.line == data.count(b"\n") + 1
    assert log.torn_tail_bytes == len(data) - tail_offset
    assert log.last_sequence == builder.events[-1].event["sequence"] - 1
    assert verdict_of(log.findings) is Verdict.CORRUPT


def test_complete_last_line_without_newline_is_a_warning_and_counted(tmp_path: Path) -> None:
    log = verify_file(build_run(tmp_path, crash=NO_FINAL_NEWLINE).run_dir / "events.jsonl")
    assert codes(log) == ["SA504"]
    assert log.missing_final_newline and log.last_sequence == 22 and log.torn_tail_bytes == 0
    assert verdict_of(log.findings) is Verdict.CLEAN


def test_fork_run_log_is_clean(tmp_path: Path) -> None:
    fork = build_fork_run(build_run(tmp_path).run_dir, 5)
    log = verify_file(fork / "events.jsonl", run_id=fork.name)
    assert log.findings == [] and log.last_sequence == 0


def test_denied_tool_and_verification_follow_the_loop_order(tmp_path: Path) -> None:
    builder = RunBuilder(tmp_path)
    builder.start()
    (call,) = builder.model_turn(tool_calls=[ToolCall("run_shell", {"cmd": "rm -rf /"}, "execute")])
    builder.tool_call(call, decision="deny")
    builder.model_turn(content="ok")
    builder.verify(decision="deny")
    builder.finish("run.failed", "no_changes")
    log = verify_file(builder.run_dir / "events.jsonl")
    assert log.findings == []


def _drop(event_type: str) -> Mutation:
    return lambda events: [event for event in events if event["event_type"] != event_type]


def _set(index: int, key: str, value: Any) -> Mutation:
    def mutate(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        events[index][key] = value
        return events

    return mutate


def _set_data(index: int, key: str, value: Any) -> Mutation:
    def mutate(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        events[index]["data"][key] = value
        return events

    return mutate


def _delete(index: int, key: str) -> Mutation:
    def mutate(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        del events[index][key]
        return events

    return mutate


def _swap(first: int, second: int) -> Mutation:
    def mutate(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        events[first], events[second] = events[second], events[first]
        return events

    return mutate


def _resequence(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for index, event in enumerate(events):
        event["sequence"] = index
    return events


@pytest.mark.parametrize(
    ("mutation", "expected"),
    [
        (_set(4, "extra", 1), [("SA507", 5, "/extra")]),
        (_delete(4, "event_id"), [("SA509", 5, "/event_id")]),
        (_delete(4, "run_id"), [("SA508", 5, "/run_id")]),
        (_set(4, "sequence", "4"), [("SA510", 5, "/sequence")]),
        (_set(4, "sequence", True), [("SA510", 5, "/sequence")]),
        (
            _set(4, "data", []),
            [("SA510", 5, "/data"), ("SA515", 5, "/data/tool_call_id")]
            + [("SA515", 5, None)] * 3
            + [("SA517", 8, None)],
        ),
        (_set(4, "created_at", "yesterday"), [("SA510", 5, "/created_at")]),
        (_set(4, "created_at", "2026-11-29T22:28:09.5+02:00"), [("SA518", 5, "/created_at")]),
        (_set(4, "sequence", 5), [("SA511", 5, "/sequence"), ("SA511", 6, "/sequence")]),
        (_set(0, "sequence", 1), [("SA511", 1, "/sequence"), ("SA511", 2, "/sequence")]),
        (_swap(4, 5), [("SA511", 5, "/sequence"), ("SA511", 6, "/sequence")]),
        (_set(4, "run_id", "other"), [("SA512", 5, "/run_id")]),
        (_set(4, "task_id", "other"), [("SA513", 5, "/task_id")]),
        (_set(4, "task_id", None), []),
        (_set(4, "event_type", "tool.mystery"), [("SA514", 5, "/event_type"), ("SA517", 8, None)]),
        (_set_data(4, "surprise", 1), [("SA516", 5, "/data/surprise")]),
        (_set_data(3, "content", "line\u2028break"), [("SA519", 4, None)]),
        (_set_data(4, "effect", "write"), [("SA521", 5, "/data/effect")]),
        (_set_data(6, "decision", "maybe"), [("SA521", 7, "/data/decision"), ("SA517", 8, None)]),
        (_set_data(5, "reason", "whim"), [("SA521", 6, "/data/reason")]),
        (_set_data(2, "step", "1"), [("SA521", 3, "/data/step"), ("SA517", 4, None)]),
        (_set_data(8, "ok", "yes"), [("SA521", 9, "/data/ok")]),
        (_set_data(22, "changed_files", "calc.py"), [("SA521", 23, "/data/changed_files")]),
        (_set_data(3, "usage", {"input_tokens": 1, "cached_input_tokens": 2}), [("SA520", 4, None)]),
        (
            lambda events: _resequence(_drop("tool.started")(events)),
            [("SA517", 8, None), ("SA517", 14, None)],
        ),
        (lambda events: _resequence(_drop("approval.requested")(events)), [("SA517", None, None)] * 3),
        (lambda events: _resequence(_drop("model.requested")(events)), [("SA517", None, None)] * 3),
    ],
)
def test_mutations(
    completed: list[dict[str, Any]], mutation: Mutation, expected: list[tuple[str, Any, Any]]
) -> None:
    events = mutation(copy.deepcopy(completed))
    log = verify_bytes(encode(events), run_id=completed[0]["run_id"])
    found = [(item.rule, item.location.line, item.location.pointer) for item in log.findings]
    assert [rule for rule, _, _ in found] == [rule for rule, _, _ in expected]
    for (_, line, pointer), (_, want_line, want_pointer) in zip(found, expected, strict=True):
        if want_line is not None:
            assert line == want_line
        if want_pointer is not None:
            assert pointer == want_pointer


def test_framing_problems_are_located_and_do_not_cascade(completed: list[dict[str, Any]]) -> None:
    lines = encode(completed).split(b"\n")
    lines[2] = b'{"event_type": oops}'
    lines[5] = lines[5] + b"\r"
    lines.insert(7, b"")
    lines[9] = b"[1, 2]"
    data = b"\n".join(lines)
    log = verify_bytes(data)
    found = [(item.rule, item.location.line) for item in log.findings]
    # the lost model.requested makes line 4 an ordering warning; no sequence finding cascades
    assert found == [("SA501", 3), ("SA517", 4), ("SA506", 6), ("SA505", 8), ("SA502", 10)]
    offsets = [0]
    for line in data.split(b"\n")[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    for item in log.findings:
        assert item.location.line is not None
        assert item.location.byte_offset == offsets[item.location.line - 1]
    invalid = next(item for item in log.findings if item.rule == "SA501")
    assert invalid.location.line == 3 and invalid.evidence["strict_rule"] == "SA106"
    assert verdict_of(log.findings) is Verdict.CORRUPT


def test_wrong_expected_run_id(completed: list[dict[str, Any]]) -> None:
    log = verify_bytes(encode(completed[:2]), run_id="not-this-run")
    assert codes(log) == ["SA512", "SA512"]


def test_empty_log() -> None:
    log = verify_bytes(b"")
    assert log.findings == [] and log.events == [] and log.last_sequence is None


def test_invalid_utf8_line(completed: list[dict[str, Any]]) -> None:
    data = encode(completed[:1]) + b'{"a":"\xff"}\n'
    log = verify_bytes(data)
    assert codes(log) == ["SA501"] and log.findings[0].evidence["strict_rule"] == "SA102"


def test_script_with_reviewer_usage_lane(tmp_path: Path) -> None:
    builder = build_run(tmp_path, script=Script())
    data = (builder.run_dir / "events.jsonl").read_bytes()
    reviewer = {
        "created_at": "2026-11-29T20:30:00Z",
        "data": {
            "cost": None,
            "model": "rev-model",
            "preview": "looks fine",
            "provider": "rev",
            "role": "reviewer",
            "usage": {
                "cached_input_tokens": 10,
                "input_tokens": 50,
                "output_tokens": 5,
                "reasoning_tokens": 0,
            },
        },
        "event_id": "0" * 32,
        "event_type": "role_lane.completed",
        "run_id": builder.run_id,
        "sequence": 23,
        "task_id": "task-fix-add",
    }
    log = verify_bytes(data + encode([reviewer]))
    assert log.findings[0].rule == "SA517"  # after the terminal event
    row = log.usage_rows[-1]
    assert (row.lane, row.provider, row.model, row.input, row.cache_read) == (
        "reviewer",
        "rev",
        "rev-model",
        40,
        10,
    )


def test_cancelled_approval_ends_the_run(tmp_path: Path) -> None:
    builder = RunBuilder(tmp_path)
    builder.start()
    (call,) = builder.model_turn(tool_calls=[ToolCall("run_shell", {"cmd": "make"}, "execute")])
    builder.tool_call(call, decision="cancel")
    log = verify_file(builder.run_dir / "events.jsonl")
    assert log.findings == [] and log.events[-1].event_type == "run.cancelled"
    events = [event.record for event in log.events]
    events[-1]["event_type"], events[-1]["data"] = "model.requested", {"step": 2}
    found = verify_bytes(encode(events)).findings
    assert [item.rule for item in found] == ["SA517"] and "cancelled approval" in found[0].message


def test_denied_completion_must_not_be_ok(tmp_path: Path) -> None:
    builder = RunBuilder(tmp_path)
    builder.start()
    (call,) = builder.model_turn(tool_calls=[ToolCall("run_shell", {"cmd": "make"}, "execute")])
    builder.tool_call(call, decision="deny")
    events = [event.record for event in verify_file(builder.run_dir / "events.jsonl").events]
    events[-1]["data"]["ok"] = True
    found = verify_bytes(encode(events)).findings
    assert [item.rule for item in found] == ["SA517"] and "denied" in found[0].message
