"""reconcile: every row of spec §4's branch table and of CONTRACT §4.1, on runs the builder crashed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.parts import Crash, CrashMode, ToolCall
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
from sessaudit.formats.rivumi.native.resume import native_resume
from sessaudit.formats.rivumi.read.reader import RunCheck, check_run_directory
from sessaudit.formats.rivumi.spec.encoding import dump_sorted
from sessaudit.formats.rivumi.verify.reconcile import Reconciliation, reconcile
from sessaudit.model import Recovery
from sessaudit.rules import verdict_of
from sessaudit.verdicts import Verdict, worst
from tests.formats.rivumi.runs import append, manifest_of, set_manifest

CLEAN, REPAIRABLE, RECOVER, CORRUPT = (
    Verdict.CLEAN,
    Verdict.REPAIRABLE,
    Verdict.NEEDS_RECOVERY,
    Verdict.CORRUPT,
)


@dataclass(slots=True)
class Audit:
    check: RunCheck
    result: Reconciliation

    @property
    def codes(self) -> list[str]:
        return sorted(item.rule for item in self.result.findings)

    @property
    def verdict(self) -> Verdict:
        """The source verdict the per-file checks and the reconciliation give together."""
        return worst(verdict_of(self.check.findings), self.result.verdict)

    @property
    def recovery(self) -> Recovery:
        assert self.result.run.recovery is not None
        return self.result.run.recovery


def audit(run_dir: Path) -> Audit:
    check = check_run_directory(str(run_dir), str(run_dir))
    return Audit(check, reconcile(check.log, check.manifest, events_path=str(run_dir / "events.jsonl")))


def built(tmp_path: Path, crash: Crash | None = None, script: Script | None = None) -> Path:
    return build_run(tmp_path, crash=crash, script=script).run_dir


class ReusedRead(Script):
    """Two reads; the first is allowed for the session, so the second is an `approval.reused`."""

    def run(self, builder: RunBuilder) -> None:
        builder.start()
        for _ in range(2):
            (read,) = builder.model_turn(tool_calls=[ToolCall("read_file", {"path": "calc.py"}, "read")])
            builder.tool_call(read, decision="allow_session", output="def add(a, b): ...\n")


# --- spec §4: the branch table ------------------------------------------------------------------


def test_manifest_equals_last_and_terminal_is_clean(tmp_path: Path) -> None:
    result = audit(built(tmp_path))
    assert (result.codes, result.result.run.state, result.result.run.recovery) == ([], "completed", None)
    assert result.verdict is CLEAN and result.result.repaired_to is None


def test_manifest_equals_last_ordinary_event(tmp_path: Path) -> None:
    result = audit(built(tmp_path, Crash(event_type="tool.completed")))
    assert result.codes == [] and result.recovery.condition == "step-pending"
    assert result.verdict is RECOVER


def test_manifest_equals_last_over_tool_started(tmp_path: Path) -> None:
    result = audit(built(tmp_path, KILLED_AFTER_TOOL_STARTED))
    assert result.codes == ["SA554"] and result.result.run.state == "open"
    recovery = result.recovery
    assert (recovery.condition, recovery.conditions, recovery.seed_kind) == (
        "effect-unknown",
        ["effect-unknown"],
        "fork",
    )
    (effect,) = recovery.pending_effects
    assert (effect.tool_call_id, effect.tool_name, effect.replay_policy) == (
        "call_2_1",
        "replace_text",
        "never",
    )
    assert effect.arguments == {"new": "a + b", "old": "a - b", "path": "calc.py"}
    assert result.verdict is RECOVER and result.result.repaired_to is None


def test_manifest_equals_last_over_verification_started(tmp_path: Path) -> None:
    result = audit(built(tmp_path, Crash(event_type="verification.started")))
    assert result.codes == ["SA554"] and result.recovery.condition == "effect-unknown"
    (effect,) = result.recovery.pending_effects
    assert (effect.tool_call_id, effect.arguments) == (
        "verification:check",
        {"argv": ["python", "-m", "pytest", "-q"]},
    )
    assert result.verdict is RECOVER


def test_manifest_ahead_in_a_terminal_run_is_repairable(tmp_path: Path) -> None:
    result = audit(built(tmp_path, MANIFEST_AHEAD_AT_TERMINAL))
    assert result.codes == ["SA550"] and result.result.run.state == "completed"
    assert result.result.run.recovery is None and result.result.repaired_to == 21
    assert result.verdict is REPAIRABLE
    (repair,) = result.result.findings
    assert repair.location.pointer == "/last_event_sequence"
    assert repair.evidence == {"manifest_last_event_sequence": 22, "log_last_sequence": 21}


def test_manifest_ahead_in_an_open_run_needs_recovery(tmp_path: Path) -> None:
    result = audit(built(tmp_path, Crash(event_type="model.completed", mode=CrashMode.BEFORE_APPEND)))
    assert result.codes == ["SA550"] and result.recovery.condition == "model-request-open"
    assert result.recovery.seed_kind == "replay" and result.verdict is RECOVER


def test_manifest_ahead_over_tool_started(tmp_path: Path) -> None:
    result = audit(built(tmp_path, MANIFEST_AHEAD_OVER_TOOL_STARTED))
    assert result.codes == ["SA550", "SA551"] and result.result.repaired_to == 14
    assert (result.recovery.condition, result.recovery.seed_kind) == ("effect-unknown", "fork")
    assert result.verdict is RECOVER


def test_manifest_ahead_over_a_read_tool_started(tmp_path: Path) -> None:
    result = audit(built(tmp_path, Crash(event_type="tool.completed", mode=CrashMode.BEFORE_APPEND)))
    assert result.codes == ["SA550"] and result.recovery.condition == "effect-replayable"
    assert result.recovery.pending_effects[0].replay_policy == "safe" and result.verdict is RECOVER


@pytest.mark.parametrize("delta", [-1, -5, 2, 3])
def test_manifest_behind_or_two_ahead_is_corrupt(tmp_path: Path, delta: int) -> None:
    run_dir = built(tmp_path, PENDING_APPROVAL)
    set_manifest(run_dir, last_event_sequence=manifest_of(run_dir)["last_event_sequence"] + delta)
    result = audit(run_dir)
    assert result.codes == ["SA552"] and result.verdict is CORRUPT
    assert result.recovery.condition == "approval-pending"


def test_torn_line_is_corrupt_and_not_reconciled(tmp_path: Path) -> None:
    result = audit(built(tmp_path, TORN_LAST_LINE))
    assert "SA503" in [item.rule for item in result.check.findings]
    assert result.codes == [] and result.verdict is CORRUPT
    assert result.recovery.condition == "model-request-open"


@pytest.mark.parametrize(("edit", "code"), [("gap", "SA511"), ("duplicate", "SA511"), ("run_id", "SA512")])
def test_gap_duplicate_and_id_drift_are_corrupt(tmp_path: Path, edit: str, code: str) -> None:
    run_dir = built(tmp_path, PENDING_APPROVAL)
    path = run_dir / "events.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    if edit == "gap":
        del lines[5]
    elif edit == "duplicate":
        lines.insert(5, lines[5])
    else:
        event = json.loads(lines[5])
        lines[5] = (dump_sorted({**event, "run_id": "f" * 32}) + "\n").encode()
    path.write_bytes(b"".join(lines))
    result = audit(run_dir)
    assert code in [item.rule for item in result.check.findings]
    assert "SA552" not in result.codes and result.verdict is CORRUPT


def test_no_final_newline_is_accepted(tmp_path: Path) -> None:
    result = audit(built(tmp_path, NO_FINAL_NEWLINE))
    assert result.codes == [] and result.result.run.state == "completed" and result.verdict is CLEAN


def test_events_missing_with_manifest_recording_events(tmp_path: Path) -> None:
    run_dir = built(tmp_path, Crash(event_type="run.created", mode=CrashMode.BEFORE_APPEND))
    assert not (run_dir / "events.jsonl").exists()
    result = audit(run_dir)
    assert result.codes == ["SA553"] and result.verdict is CORRUPT
    assert result.recovery.condition == "step-pending"


def test_events_absent_with_manifest_minus_one(tmp_path: Path) -> None:
    run_dir = built(tmp_path, Crash(event_type="run.created", mode=CrashMode.BEFORE_APPEND))
    set_manifest(run_dir, last_event_sequence=-1)
    result = audit(run_dir)
    assert result.codes == ["SA555"] and result.recovery.condition == "step-pending"
    assert result.verdict is RECOVER and result.result.run.run_id == manifest_of(run_dir)["run_id"]


@pytest.mark.parametrize(("recorded", "codes", "repaired"), [(-1, [], None), (0, ["SA550"], -1)])
def test_empty_events_file(tmp_path: Path, recorded: int, codes: list[str], repaired: int | None) -> None:
    run_dir = built(tmp_path, Crash(event_type="run.created", mode=CrashMode.BEFORE_APPEND))
    (run_dir / "events.jsonl").write_bytes(b"")
    set_manifest(run_dir, last_event_sequence=recorded)
    result = audit(run_dir)
    assert result.codes == codes and result.result.repaired_to == repaired
    assert result.recovery.condition == "step-pending" and result.verdict is RECOVER


# --- CONTRACT §4.1: the open state from the last event -------------------------------------------


@pytest.mark.parametrize(
    ("crash", "script", "condition", "seed_kind", "codes"),
    [
        (Crash(event_type="tool.started"), None, "effect-replayable", "replay", ["SA554"]),
        (KILLED_AFTER_TOOL_STARTED, None, "effect-unknown", "fork", ["SA554"]),
        (Crash(event_type="verification.started"), None, "effect-unknown", "fork", ["SA554"]),
        (Crash(event_type="model.requested"), None, "model-request-open", "replay", []),
        (PENDING_APPROVAL, None, "approval-pending", "replay", []),
        (Crash(event_type="tool.requested"), None, "tool-not-started", "replay", []),
        (Crash(event_type="approval.resolved"), None, "tool-not-started", "replay", []),
        (Crash(event_type="approval.reused"), ReusedRead(), "tool-not-started", "replay", []),
        (Crash(event_type="model.completed"), None, "tool-not-started", "replay", []),
        (Crash(event_type="model.completed", occurrence=3), None, "awaiting-terminal", "replay", []),
        (Crash(event_type="verification.completed"), None, "awaiting-terminal", "replay", []),
        (
            Crash(event_type="approval.resolved"),
            Script(decisions=("cancel", "allow_once")),
            "awaiting-terminal",
            "replay",
            [],
        ),
        (Crash(event_type="tool.completed"), None, "step-pending", "replay", []),
        (
            Crash(event_type="approval.resolved"),
            Script(decisions=("deny", "allow_once")),
            "step-pending",
            "replay",
            [],
        ),
        (Crash(event_type="run.created"), None, "step-pending", "replay", []),
        (Crash(event_type="workspace.prepared"), None, "step-pending", "replay", []),
    ],
)
def test_open_state_of_built_crashes(
    tmp_path: Path,
    crash: Crash,
    script: Script | None,
    condition: str,
    seed_kind: str,
    codes: list[str],
) -> None:
    result = audit(built(tmp_path, crash, script))
    assert result.result.run.kind == "run" and result.result.run.state == "open"
    assert (result.recovery.condition, result.recovery.conditions) == (condition, [condition])
    assert result.recovery.seed_kind == seed_kind
    assert result.codes == codes and result.verdict is RECOVER
    assert result.result.repaired_to is None


def _step() -> dict[str, Any]:
    return {"step": 3}


@pytest.mark.parametrize(
    ("event_type", "data", "condition", "codes"),
    [
        (
            "model.retry",
            {"attempt": 1, "delay_seconds": 1.0, "error": "timeout", "provider": "scripted"},
            "model-request-open",
            [],
        ),
        (
            "model.fallback",
            {
                "failure_codes": None,
                "from_model": "a",
                "from_provider": "a",
                "to_model": "b",
                "to_provider": "b",
            },
            "model-request-open",
            [],
        ),
        (
            "tool.batch_started",
            {"count": 2, "mode": "read_only_parallel", "tool_call_ids": ["c1", "c2"]},
            "tool-not-started",
            [],
        ),
        (
            "model.failed",
            {"error": "boom", "kind": "provider", "provider": "scripted", "retryable": False},
            "awaiting-terminal",
            [],
        ),
        ("run.error", {"error": "boom", "error_type": "RuntimeError"}, "awaiting-terminal", []),
        (
            "session.resumed",
            {"base_sha": "0" * 40, "model": "scripted", "provider": "scripted", "resumed_step": 3},
            "step-pending",
            [],
        ),
        (
            "approval.abandoned",
            {
                "action_id": "x",
                "effect": "execute",
                "reason": "process_interrupted_before_decision",
                "request_id": "r",
            },
            "step-pending",
            [],
        ),
        (
            "context_pressure.reminder_injected",
            {"max_total_tokens": 10, "total_tokens": 9},
            "step-pending",
            [],
        ),
        (
            "hook.completed",
            {"decision": "allow", "hook": "h", "hook_event": "e", "reason": ""},
            "step-pending",
            ["SA556"],
        ),
        ("custom.unknown", {}, "step-pending", ["SA556"]),
    ],
)
def test_open_state_of_appended_events(
    tmp_path: Path, event_type: str, data: dict[str, Any], condition: str, codes: list[str]
) -> None:
    run_dir = built(tmp_path, Crash(event_type="tool.completed", occurrence=2))
    append(run_dir, event_type, data)
    result = audit(run_dir)
    assert result.result.run.state == "open" and result.recovery.condition == condition
    assert result.codes == codes and result.verdict is RECOVER
    if codes:
        (note,) = result.result.findings
        assert event_type in note.message and note.location.seq == result.check.log.last_sequence  # type: ignore[union-attr]


def test_approval_requested_outside_waiting_approval_is_step_pending_with_a_note(tmp_path: Path) -> None:
    run_dir = built(tmp_path, PENDING_APPROVAL)
    set_manifest(run_dir, phase="running", pending_action=None)
    result = audit(run_dir)
    assert result.recovery.condition == "step-pending" and result.codes == ["SA556"]


def test_phase_paused_is_step_pending(tmp_path: Path) -> None:
    run_dir = built(tmp_path, Crash(event_type="model.requested"))
    set_manifest(run_dir, phase="paused")
    result = audit(run_dir)
    assert result.recovery.condition == "step-pending" and result.codes == [] and result.verdict is RECOVER


def test_phase_paused_never_hides_an_unknown_effect(tmp_path: Path) -> None:
    run_dir = built(tmp_path, KILLED_AFTER_TOOL_STARTED)
    set_manifest(run_dir, phase="paused")
    assert audit(run_dir).recovery.condition == "effect-unknown"


def test_fork_run_is_step_pending(tmp_path: Path) -> None:
    source = built(tmp_path / "src", Crash(event_type="tool.completed"))
    result = audit(build_fork_run(source, 5))
    assert result.result.run.state == "open" and result.recovery.condition == "step-pending"
    assert result.codes == []


class CancelFirst(Script):
    """The user cancels the first approval: the loop writes `run.cancelled` and stops."""

    def run(self, builder: RunBuilder) -> None:
        builder.start()
        (read,) = builder.model_turn(tool_calls=[ToolCall("read_file", {"path": "calc.py"}, "read")])
        builder.tool_call(read, decision="cancel")


@pytest.mark.parametrize(("script", "state"), [(Script(), "completed"), (CancelFirst(), "cancelled")])
def test_terminal_event_states(tmp_path: Path, script: Script, state: str) -> None:
    run_dir = built(tmp_path, script=script)
    result = audit(run_dir)
    assert result.result.run.state == state and result.result.run.recovery is None
    assert result.result.run.run_id == manifest_of(run_dir)["run_id"]
    assert result.codes == [] and result.verdict is CLEAN


def test_failed_run_from_an_appended_terminal_event(tmp_path: Path) -> None:
    run_dir = built(tmp_path, Crash(event_type="model.completed", occurrence=3))
    append(
        run_dir,
        "run.failed",
        {"changed_files": [], "terminal_reason": "error_RuntimeError"},
        phase="failed",
        terminal=True,
    )
    result = audit(run_dir)
    assert result.result.run.state == "failed" and result.result.run.recovery is None
    assert result.verdict is CLEAN


# --- agreement with native_resume ----------------------------------------------------------------


@pytest.mark.parametrize(
    "crash",
    [
        None,
        KILLED_AFTER_TOOL_STARTED,
        MANIFEST_AHEAD_AT_TERMINAL,
        MANIFEST_AHEAD_OVER_TOOL_STARTED,
        PENDING_APPROVAL,
        Crash(event_type="model.completed", mode=CrashMode.BEFORE_APPEND),
        Crash(event_type="run.created", mode=CrashMode.BEFORE_APPEND),
    ],
)
def test_agrees_with_native_resume(tmp_path: Path, crash: Crash | None) -> None:
    run_dir = built(tmp_path, crash)
    result = audit(run_dir)
    native = native_resume(str(run_dir), result.check.contents)
    assert result.result.repaired_to == native.repaired_to
    refusals = {
        "SA552": "manifest event sequence does not match events.jsonl",
        "SA553": "events.jsonl is missing",
        "SA554": "session stopped during a side effect",
    }
    for code, message in refusals.items():
        assert (code in result.codes) == (native.message or "").startswith(message)
    assert ("SA550" in result.codes) == (native.repaired_to is not None)
