"""The Rivumi builder writes run directories as the spec describes (§1, §2.1, §2.2, §3.1, §5.3, §6)."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.parts import Crash, CrashMode
from sessaudit.formats.rivumi.build.scenarios import (
    KILLED_AFTER_TOOL_STARTED,
    MANIFEST_AHEAD_AT_TERMINAL,
    MANIFEST_AHEAD_OVER_TOOL_STARTED,
    NO_FINAL_NEWLINE,
    PENDING_APPROVAL,
    TORN_LAST_LINE,
    build_run,
)
from sessaudit.formats.rivumi.spec.encoding import dump_sorted
from sessaudit.formats.rivumi.spec.eventtypes import ENVELOPE_KEYS
from sessaudit.formats.rivumi.spec.manifest_fields import MANIFEST_FIELDS

HEX32 = re.compile(r"[0-9a-f]{32}")
CREATED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z")
COMPLETED_ORDER = [
    "run.created",
    "workspace.prepared",
    "model.requested",
    "model.completed",
    "tool.requested",
    "approval.requested",
    "approval.resolved",
    "tool.started",
    "tool.completed",
    "model.requested",
    "model.completed",
    "tool.requested",
    "approval.requested",
    "approval.resolved",
    "tool.started",
    "tool.completed",
    "model.requested",
    "model.completed",
    "approval.requested",
    "approval.resolved",
    "verification.started",
    "verification.completed",
    "run.completed",
]


def committed(run_dir: Path) -> list[dict[str, Any]]:
    data = (run_dir / "events.jsonl").read_bytes()
    return [json.loads(line) for line in data.split(b"\n")[:-1]]


def manifest(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "session.json").read_bytes()))


def test_completed_run_files_follow_the_write_discipline(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path).run_dir
    assert HEX32.fullmatch(run_dir.name)
    names = sorted(entry.name for entry in run_dir.iterdir())
    assert names == [".writer.lock", "events.jsonl", "request.json", "session.json", "workspace"]
    for name in (".writer.lock", "events.jsonl", "request.json", "session.json"):
        assert stat.S_IMODE((run_dir / name).stat().st_mode) == 0o600
    data = (run_dir / "events.jsonl").read_bytes()
    assert data.endswith(b"\n")
    events = committed(run_dir)
    for line, event in zip(data.split(b"\n")[:-1], events, strict=True):
        assert line == dump_sorted(event).encode("utf-8")  # sorted, compact, raw non-ASCII
        assert set(event) == set(ENVELOPE_KEYS)
        assert event["run_id"] == run_dir.name and event["task_id"] == "task-fix-add"
        assert HEX32.fullmatch(event["event_id"]) and CREATED_AT.fullmatch(event["created_at"])
    assert [event["sequence"] for event in events] == list(range(len(events)))
    assert [event["event_type"] for event in events] == COMPLETED_ORDER
    for name in ("session.json", "request.json"):
        raw = (run_dir / name).read_bytes()
        assert not raw.endswith(b"\n") and raw == dump_sorted(json.loads(raw)).encode("utf-8")
    state = manifest(run_dir)
    assert set(state) == set(MANIFEST_FIELDS)
    assert state["last_event_sequence"] == events[-1]["sequence"]
    assert state["phase"] == "completed" and state["terminal"] is True
    assert state["active_started_at"] is None and state["pending_action"] is None
    assert "total_tokens" not in state["usage"]
    assert state["usage"]["input_tokens"] == sum(
        event["data"]["usage"]["input_tokens"] for event in events if event["event_type"] == "model.completed"
    )
    request = json.loads((run_dir / "request.json").read_bytes())
    assert request["base_sha"] == state["base_sha"] == events[0]["data"]["base_sha"]
    lock = (run_dir / ".writer.lock").read_text("ascii")
    match = re.fullmatch(r"pid=(\d+) token=([0-9a-f]{32})\n", lock)
    assert match and match.group(2) == state["active_writer_token"]
    assert (run_dir / "workspace" / ".git" / "HEAD").read_text() == state["base_sha"] + "\n"


def test_builds_are_deterministic_per_seed(tmp_path: Path) -> None:
    first = build_run(tmp_path / "a", seed=7).run_dir
    second = build_run(tmp_path / "b", seed=7).run_dir
    other = build_run(tmp_path / "c", seed=8).run_dir
    for name in ("events.jsonl", "session.json", "request.json", ".writer.lock"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    assert first.name == second.name != other.name


def test_killed_after_tool_started(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, crash=KILLED_AFTER_TOOL_STARTED).run_dir
    events = committed(run_dir)
    last = events[-1]
    assert last["event_type"] == "tool.started" and last["data"]["effect"] == "modify"
    state = manifest(run_dir)
    assert state["last_event_sequence"] == last["sequence"]
    # the extra save after tool.started cleared pending_action before the process died
    assert state["pending_action"] is None and state["phase"] == "running"
    assert state["active_started_at"] is not None and state["terminal"] is False


@pytest.mark.parametrize(
    ("crash", "last_type", "terminal"),
    [
        (MANIFEST_AHEAD_AT_TERMINAL, "verification.completed", True),
        (MANIFEST_AHEAD_OVER_TOOL_STARTED, "tool.started", False),
    ],
)
def test_manifest_ahead_by_one(tmp_path: Path, crash: Crash, last_type: str, terminal: bool) -> None:
    builder = build_run(tmp_path, crash=crash)
    events = committed(builder.run_dir)
    assert events[-1]["event_type"] == last_type
    assert (builder.run_dir / "events.jsonl").read_bytes().endswith(b"\n")
    state = manifest(builder.run_dir)
    assert state["last_event_sequence"] == events[-1]["sequence"] + 1
    assert state["terminal"] is terminal
    assert builder.events[-1].written == "none"


def test_torn_last_line(tmp_path: Path) -> None:
    builder = build_run(tmp_path, crash=TORN_LAST_LINE)
    data = (builder.run_dir / "events.jsonl").read_bytes()
    head, _, tail = data.rpartition(b"\n")
    intended = builder.events[-1].line
    assert tail and intended.startswith(tail) and len(tail) == len(intended) // 2
    with pytest.raises(json.JSONDecodeError):
        json.loads(tail)
    last = json.loads(head.rsplit(b"\n", 1)[-1])
    assert manifest(builder.run_dir)["last_event_sequence"] == last["sequence"] + 1


def test_complete_last_line_without_newline(tmp_path: Path) -> None:
    builder = build_run(tmp_path, crash=NO_FINAL_NEWLINE)
    data = (builder.run_dir / "events.jsonl").read_bytes()
    assert not data.endswith(b"\n")
    last = json.loads(data.rsplit(b"\n", 1)[-1])
    assert last["event_type"] == "run.completed"
    assert manifest(builder.run_dir)["last_event_sequence"] == last["sequence"]


def test_pending_approval(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, crash=PENDING_APPROVAL).run_dir
    last = committed(run_dir)[-1]
    state = manifest(run_dir)
    assert last["event_type"] == "approval.requested"
    assert state["phase"] == "waiting_approval" and state["terminal"] is False
    pending = state["pending_action"]
    assert pending["request_id"] == last["data"]["request_id"]
    assert pending["action_id"] == "verification:check" and pending["run_id"] == state["run_id"]
    assert pending["reason"] == "final_verification" and pending["command"]["name"] == "check"
    assert state["last_event_sequence"] == last["sequence"]


@pytest.mark.parametrize("sequence", range(len(COMPLETED_ORDER)))
def test_every_save_then_append_window(tmp_path: Path, sequence: int) -> None:
    run_dir = build_run(tmp_path, crash=Crash(sequence=sequence, mode=CrashMode.BEFORE_APPEND)).run_dir
    lines = (run_dir / "events.jsonl").read_bytes().count(b"\n") if sequence else 0
    assert lines == sequence
    assert manifest(run_dir)["last_event_sequence"] == sequence


def test_fork_run_is_written_as_rivumi_writes_it(tmp_path: Path) -> None:
    source = build_run(tmp_path, crash=KILLED_AFTER_TOOL_STARTED).run_dir
    fork = build_fork_run(source, 9, seed=3)
    assert fork.parent == source.parent and re.fullmatch(r"fork-[0-9a-f]{32}", fork.name)
    raw_events = (fork / "events.jsonl").read_bytes()
    assert raw_events.endswith(b"\n") and raw_events.count(b"\n") == 1
    event = json.loads(raw_events)
    assert list(event) == list(ENVELOPE_KEYS)  # declaration order, not sorted
    assert event["event_type"] == "run.forked" and event["sequence"] == 0 and event["run_id"] == fork.name
    assert event["data"]["fork_point_event_type"] == "model.requested"
    assert event["data"]["events_included"] == 10 and event["data"]["side_effects_replayed"] is False
    raw_manifest = (fork / "session.json").read_bytes()
    assert raw_manifest.endswith(b"\n")
    state = json.loads(raw_manifest)
    assert list(state) == list(MANIFEST_FIELDS)
    assert state["usage"]["total_tokens"] == 0
    assert (state["provider_name"], state["model_id"], state["protocol"]) == (
        "fork",
        "side-effect-free",
        "replay-fork",
    )
    assert state["last_event_sequence"] == 0 and state["active_writer_token"] is None
    request = json.loads((fork / "request.json").read_bytes())
    assert re.fullmatch(r"task-fix-add-fork-[0-9a-f]{8}", request["task_id"])
    assert request["task_id"] == state["task_id"] == event["task_id"]
    assert list(request)[:2] == ["repository", "instruction"]
    assert not (fork / ".writer.lock").exists()
