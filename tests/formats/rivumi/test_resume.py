"""native_resume answers as Rivumi's resume validation would, for every row of the spec's §4 branch table."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.parts import Crash, CrashMode
from sessaudit.formats.rivumi.build.scenarios import (
    KILLED_AFTER_TOOL_STARTED,
    MANIFEST_AHEAD_AT_TERMINAL,
    MANIFEST_AHEAD_OVER_TOOL_STARTED,
    PENDING_APPROVAL,
    TORN_LAST_LINE,
    build_run,
)
from sessaudit.formats.rivumi.native.resume import ResumeAnswer, native_resume
from sessaudit.formats.rivumi.spec.encoding import dump_sorted

NAMES = ("session.json", "request.json", "events.jsonl")
SIDE_EFFECT = (
    "session stopped during a side effect; automatic resume cannot prove whether the action completed"
)


def answer(run_dir: Path, **overrides: bytes | None) -> ResumeAnswer:
    contents: dict[str, bytes | None] = {}
    for name in NAMES:
        path = run_dir / name
        contents[name] = path.read_bytes() if path.exists() else None
    contents.update({key.replace("_", "."): value for key, value in overrides.items()})
    return native_resume(str(run_dir), contents)


@pytest.mark.parametrize(
    ("crash", "expected"),
    [
        (None, ResumeAnswer(False, "terminal sessions cannot be resumed", None)),
        (KILLED_AFTER_TOOL_STARTED, ResumeAnswer(False, SIDE_EFFECT, None)),
        (MANIFEST_AHEAD_AT_TERMINAL, ResumeAnswer(False, "terminal sessions cannot be resumed", 21)),
        (MANIFEST_AHEAD_OVER_TOOL_STARTED, ResumeAnswer(True, None, 14)),
        (PENDING_APPROVAL, ResumeAnswer(True, None, None)),
        (TORN_LAST_LINE, ResumeAnswer(False, "events.jsonl contains an invalid event", None)),
        (Crash(event_type="model.completed", mode=CrashMode.NO_NEWLINE), ResumeAnswer(True, None, None)),
    ],
)
def test_built_runs(tmp_path: Path, crash: Crash | None, expected: ResumeAnswer) -> None:
    assert answer(build_run(tmp_path, crash=crash).run_dir) == expected


@pytest.fixture
def pending(tmp_path: Path) -> Path:
    return build_run(tmp_path, crash=PENDING_APPROVAL).run_dir


def _events(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_bytes().splitlines()]


def _encode(events: list[dict[str, Any]]) -> bytes:
    return b"".join(dump_sorted(event).encode() + b"\n" for event in events)


def _mutated(run_dir: Path, mutate: Callable[[list[dict[str, Any]]], None]) -> bytes:
    events = _events(run_dir)
    mutate(events)
    return _encode(events)


def _manifest(run_dir: Path, **changes: Any) -> bytes:
    return dump_sorted({**json.loads((run_dir / "session.json").read_bytes()), **changes}).encode()


def test_event_traps(pending: Path) -> None:
    def put(index: int, key: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
        return lambda events: events[index].__setitem__(key, value)

    def message(data: bytes) -> str | None:
        return answer(pending, events_jsonl=data).message

    assert message(_mutated(pending, put(3, "sequence", "3"))) is None  # lax coercion
    assert message(_mutated(pending, put(3, "sequence", 4))) == "event sequence is not contiguous"
    assert message(_mutated(pending, put(3, "run_id", "x"))) == "event run_id does not match session"
    assert message(_mutated(pending, put(3, "task_id", "x"))) == "event task_id does not match session"
    assert message(_mutated(pending, put(3, "task_id", None))) is None
    assert message(_mutated(pending, put(3, "extra", 1))) == "events.jsonl contains an invalid event"
    assert message(_mutated(pending, lambda events: events[3]["data"].update(content="a\u2028b"))) == (
        "events.jsonl contains an invalid event"
    )
    swapped = _events(pending)
    swapped[3], swapped[4] = swapped[4], swapped[3]
    assert message(_encode(swapped)) == "event sequence is not contiguous"
    assert message(_encode(_events(pending)).replace(b"\n", b"\n\n", 1)) is None  # blank pieces skipped


def test_manifest_sequence_branches(pending: Path) -> None:
    last = _events(pending)[-1]["sequence"]
    mismatch = "manifest event sequence does not match events.jsonl"
    assert answer(pending, session_json=_manifest(pending, last_event_sequence=last - 1)).message == mismatch
    assert answer(pending, session_json=_manifest(pending, last_event_sequence=last + 2)).message == mismatch
    assert answer(pending, session_json=_manifest(pending, last_event_sequence=last + 1)) == ResumeAnswer(
        True, None, last
    )
    fresh = _manifest(pending, last_event_sequence=-1)
    assert answer(pending, session_json=fresh, events_jsonl=None) == ResumeAnswer(True, None, None)
    assert answer(pending, events_jsonl=None).message == "events.jsonl is missing"
    zero = _manifest(pending, last_event_sequence=0)
    assert answer(pending, session_json=zero, events_jsonl=b"") == ResumeAnswer(True, None, -1)


def test_artifacts(pending: Path) -> None:
    assert answer(pending, session_json=None).message == "missing session artifact: session.json"
    assert answer(pending, session_json=b"{").message == "invalid JSON session artifact: session.json"
    assert answer(pending, session_json=_manifest(pending, surprise=1)).message == (
        "session.json does not match the supported schema"
    )
    assert answer(pending, request_json=None).message == "missing session artifact: request.json"
    request = json.loads((pending / "request.json").read_bytes())
    assert answer(pending, request_json=dump_sorted({**request, "task_id": "x"}).encode()).message == (
        "request task_id does not match session"
    )
    assert answer(pending, request_json=dump_sorted({**request, "base_sha": None}).encode()).message == (
        "request base_sha does not match session"
    )
    upper = dump_sorted({**request, "base_sha": request["base_sha"].upper()}).encode()
    assert answer(pending, request_json=upper).ok
    assert (
        native_resume(str(pending), {}, writer_active=True).message == "session already has an active writer"
    )


def test_workspace(pending: Path) -> None:
    git = pending / "workspace" / ".git"
    sha = (git / "HEAD").read_text().strip()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    assert answer(pending).message == "session workspace is not a valid Git worktree"
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{sha} refs/heads/main\n")
    assert answer(pending).ok
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    assert answer(pending).message == "workspace HEAD does not match the recorded base_sha"
    (pending / "workspace").rename(pending / "elsewhere")
    assert answer(pending).message == "session workspace is missing or is a symlink"
    (pending / "workspace").symlink_to(pending / "elsewhere")
    assert answer(pending).message == "session workspace is missing or is a symlink"


def test_fork_run_is_refused_by_rivumi(tmp_path: Path) -> None:
    fork = build_fork_run(build_run(tmp_path).run_dir, 3)
    assert answer(fork).message == "session.json does not match the supported schema"
