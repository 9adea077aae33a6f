"""Named Rivumi run directories: the builder's crash windows, every row of spec §4's branch table and
every §4.1 trap, as mutations of built runs (tests only). Each case builds under `root` and returns the
run directory."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from tests.formats.rivumi.runs import append, edit_event, edit_lines, manifest_of, set_manifest

Case = Callable[[Path], Path]


def built(crash: Crash | None = None) -> Case:
    return lambda root: build_run(root, crash=crash).run_dir


def _mutated(crash: Crash | None, mutate: Callable[[Path], None]) -> Case:
    def build(root: Path) -> Path:
        run_dir = build_run(root, crash=crash).run_dir
        mutate(run_dir)
        return run_dir

    return build


def _last_sequence(run_dir: Path) -> int:
    sequence: int = json.loads((run_dir / "events.jsonl").read_bytes().splitlines()[-1])["sequence"]
    return sequence


def _fork(root: Path) -> Path:
    return build_fork_run(build_run(root).run_dir, 10)


def _events_absent(recorded: int | None) -> Case:
    def build(root: Path) -> Path:
        run_dir = build_run(root, crash=Crash(event_type="run.created", mode=CrashMode.BEFORE_APPEND)).run_dir
        if recorded is not None:
            set_manifest(run_dir, last_event_sequence=recorded)
        return run_dir

    return build


def _empty_events(recorded: int) -> Case:
    def build(root: Path) -> Path:
        run_dir = _events_absent(recorded)(root)
        (run_dir / "events.jsonl").write_bytes(b"")
        return run_dir

    return build


def _swap(first: int, second: int) -> Callable[[list[bytes]], list[bytes]]:
    def edit(lines: list[bytes]) -> list[bytes]:
        lines[first], lines[second] = lines[second], lines[first]
        return lines

    return edit


def _renumber(run_dir: Path) -> None:
    """Every sequence one higher (the log starts at 1), the manifest following along."""
    count = len((run_dir / "events.jsonl").read_bytes().splitlines())
    for index in range(count):
        edit_event(run_dir, index, lambda event: {**event, "sequence": event["sequence"] + 1})
    set_manifest(run_dir, last_event_sequence=manifest_of(run_dir)["last_event_sequence"] + 1)


def _model_content(text: str) -> Callable[[Path], None]:
    """Put `text` into the first model.completed answer (line 4), written raw as Rivumi writes it."""
    return lambda run_dir: edit_event(
        run_dir, 3, lambda event: {**event, "data": {**event["data"], "content": text}}
    )


def _data(index: int, **values: Any) -> Callable[[Path], None]:
    return lambda run_dir: edit_event(
        run_dir, index, lambda event: {**event, "data": {**event["data"], **values}}
    )


def _envelope(index: int, **values: Any) -> Callable[[Path], None]:
    return lambda run_dir: edit_event(run_dir, index, lambda event: {**event, **values})


def _raw_manifest(**values: Any) -> Callable[[Path], None]:
    return lambda run_dir: set_manifest(run_dir, **values)


def _write(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda run_dir: (run_dir / name).write_bytes(data)


def _remove(name: str) -> Callable[[Path], None]:
    def remove(run_dir: Path) -> None:
        target = run_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()

    return remove


def _unknown_event(run_dir: Path) -> None:
    append(run_dir, "telemetry.sampled", {"cpu": 3})


def _terminal_phase_disagrees(run_dir: Path) -> None:
    set_manifest(run_dir, phase="failed")


def _terminal_manifest_without_event(run_dir: Path) -> None:
    set_manifest(run_dir, phase="completed", terminal=True, pending_action=None)


def _crlf(lines: list[bytes]) -> list[bytes]:
    lines[2] = lines[2][:-1] + b"\r\n"
    return lines


def _blank(lines: list[bytes]) -> list[bytes]:
    return [*lines[:3], b"\n", *lines[3:]]


CASES: dict[str, Case] = {
    # --- the builder's crash windows ---------------------------------------------------------------
    "clean": built(),
    "killed-after-tool-started": built(KILLED_AFTER_TOOL_STARTED),
    "killed-after-read-started": built(Crash(event_type="tool.started", occurrence=1)),
    "killed-after-verification-started": built(Crash(event_type="verification.started")),
    "killed-during-model-request": built(Crash(event_type="model.requested", occurrence=2)),
    "killed-after-model-tool-calls": built(Crash(event_type="model.completed", occurrence=2)),
    "killed-after-approval-allowed": built(Crash(event_type="approval.resolved", occurrence=2)),
    "killed-after-tool-completed": built(Crash(event_type="tool.completed", occurrence=1)),
    "killed-after-final-answer": built(Crash(event_type="model.completed", occurrence=3)),
    "killed-after-verification-completed": built(Crash(event_type="verification.completed")),
    "pending-approval": built(PENDING_APPROVAL),
    "manifest-ahead-at-terminal": built(MANIFEST_AHEAD_AT_TERMINAL),
    "manifest-ahead-over-tool-started": built(MANIFEST_AHEAD_OVER_TOOL_STARTED),
    "manifest-ahead-open-run": built(
        Crash(event_type="model.requested", occurrence=2, mode=CrashMode.BEFORE_APPEND)
    ),
    "torn-last-line": built(TORN_LAST_LINE),
    "fork-run": _fork,
    # --- spec §4's branch table ------------------------------------------------------------------------
    "manifest-behind": _mutated(None, lambda d: set_manifest(d, last_event_sequence=_last_sequence(d) - 1)),
    "manifest-two-ahead": _mutated(
        None, lambda d: set_manifest(d, last_event_sequence=_last_sequence(d) + 2)
    ),
    "gap": _mutated(PENDING_APPROVAL, lambda d: edit_lines(d, lambda lines: lines[:5] + lines[6:])),
    "duplicate": _mutated(
        PENDING_APPROVAL, lambda d: edit_lines(d, lambda lines: [*lines[:6], lines[5], *lines[6:]])
    ),
    "out-of-order": _mutated(PENDING_APPROVAL, lambda d: edit_lines(d, _swap(5, 6))),
    "first-sequence-not-zero": _mutated(PENDING_APPROVAL, _renumber),
    "run-id-drift": _mutated(PENDING_APPROVAL, _envelope(5, run_id="f" * 32)),
    "task-id-drift": _mutated(PENDING_APPROVAL, _envelope(5, task_id="task-other")),
    "events-missing": _events_absent(None),
    "events-absent-manifest-minus-one": _events_absent(-1),
    "events-empty-manifest-minus-one": _empty_events(-1),
    "events-empty-manifest-zero": _empty_events(0),
    "workspace-missing": _mutated(PENDING_APPROVAL, _remove("workspace")),
    "workspace-head-mismatch": _mutated(PENDING_APPROVAL, _write("workspace/.git/HEAD", b"0" * 40 + b"\n")),
    "wrong-type-line": _mutated(
        None, lambda d: edit_lines(d, lambda lines: [*lines[:4], b"[1, 2]\n", *lines[5:]])
    ),
    # --- spec §4.1's traps -----------------------------------------------------------------------------
    "u2028-in-model-text": _mutated(None, _model_content("first\u2028second")),
    "no-final-newline": built(NO_FINAL_NEWLINE),
    "extra-envelope-key": _mutated(None, _envelope(4, trace="abc")),
    "oversize-line": _mutated(None, _model_content("x" * 140_000)),
    "nul-in-detail": _mutated(None, _data(22, terminal_reason="verified\x00")),
    "string-sequence": _mutated(None, _envelope(4, sequence="4")),
    "manifest-string-step": _mutated(None, _raw_manifest(step="3")),
    "created-at-offset": _mutated(None, _envelope(4, created_at="2026-11-29T21:28:09.427347+01:00")),
    # --- other findings --------------------------------------------------------------------------------
    "crlf-line": _mutated(None, lambda d: edit_lines(d, _crlf)),
    "blank-line": _mutated(None, lambda d: edit_lines(d, _blank)),
    "unknown-event-type": _mutated(PENDING_APPROVAL, _unknown_event),
    "terminal-phase-disagrees": _mutated(None, _terminal_phase_disagrees),
    "terminal-manifest-without-event": _mutated(
        Crash(event_type="verification.completed"), _terminal_manifest_without_event
    ),
    "temp-file-left": _mutated(PENDING_APPROVAL, _write(".session.json.k2j4h1", b'{"schema_version": 1')),
    "lock-token-mismatch": _mutated(None, _write(".writer.lock", b"pid=4242 token=" + b"0" * 32 + b"\n")),
    "lock-malformed": _mutated(None, _write(".writer.lock", b"locked by 4242\n")),
    "lock-missing": _mutated(None, _remove(".writer.lock")),
    "manifest-missing": _mutated(PENDING_APPROVAL, _remove("session.json")),
    "manifest-not-json": _mutated(PENDING_APPROVAL, _write("session.json", b'{"schema_version": 1,')),
    "manifest-schema-version-2": _mutated(None, _raw_manifest(schema_version=2)),
    "request-missing": _mutated(PENDING_APPROVAL, _remove("request.json")),
    "usage-disagrees": _mutated(None, _data(3, usage={"input_tokens": 1, "output_tokens": 1})),
}
