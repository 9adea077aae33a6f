"""Half-Pi invariants 7–21 (remote runs, tasks, approvals, security decisions, digests): a clean store built
by the project's own builder has no violation; one damaged store per rule shows exactly that rule."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.half_pi.build.parts import BackgroundStart, ToolCall
from sessaudit.formats.half_pi.build.spec_digests import SpecDigests
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.check.runs import (
    PYTHON_REQUIREMENTS,
    check_runs,
    run_sql_checks,
    skipped_run_checks,
    step_problem,
)
from sessaudit.formats.half_pi.check.runs_args import MIN_RAW_VALUE_CHARS, RawValue, find_raw_values
from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.read.snapshot import SnapshotOptions, open_snapshot
from sessaudit.formats.half_pi.rules.runs import RUNS_RULE_CODES, RUNS_RULES
from sessaudit.formats.half_pi.spec import approval_digests as digests
from sessaudit.formats.half_pi.spec.schema_generations import (
    BY_FEATURE,
    HEAD,
    Feature,
    Generation,
    detect_generation,
)
from sessaudit.verdicts import Severity, Verdict

LOCAL_RAW = '{"command":"make test && ./run.sh < input.txt","timeout":1.50}'
# §6.2 by hand: sorted keys, Go's escapes of & and <, the float64 1.50 written as 1.5.
LOCAL_PREIMAGE = '{"command":"make test \\u0026\\u0026 ./run.sh \\u003c input.txt","timeout":1.5}'
DEPLOY = "./deploy.sh --env=prod && echo done"
DEPLOY_RAW = json.dumps(
    {"tool": "exec_command", "args": {"command": DEPLOY, "retries": 2.5}, "hand_id": "hand-1"}
)
BACKGROUND_RAW = json.dumps(
    {
        "tool": "exec_command",
        "args": {"command": "make long-build"},
        "background": True,
        "task_timeout_ms": 600000,
    }
)
EXPIRED_RAW = '{"tool":"exec_command","args":{"command":"reboot now"}}'
DENIED_RAW = json.dumps(
    {"tool": "exec_command", "args": {"command": "rm -rf /srv/data"}, "hand_id": "hand-1"}
)


@dataclass
class Scenario:
    """Ids of the rows a damage targets."""

    session: str = ""
    local_allowed: str = ""  # approval ids
    local_denied: str = ""
    local_cancelled: str = ""
    remote_allowed: str = ""
    remote_denied: str = ""
    remote_expired: str = ""
    background: str = ""
    foreground_run: str = ""  # run ids
    denied_run: str = ""
    background_run: str = ""
    disconnected_run: str = ""
    in_flight_run: str = ""
    admitted: str = ""  # security decision ids
    inner_finished: str = ""
    denied_decision: str = ""


def build_scenario(builder: StoreBuilder) -> Scenario:
    """Every kind of row invariants 7–21 judge, each as Half-Pi writes it."""
    ids = Scenario()
    chat = builder.session("/home/dev/calc", active_hand="hand-1").user("fix add() in calc.py")
    ids.session = chat.id
    ids.admitted = builder.admitted(chat, "fix add() in calc.py")
    # a local approval, allowed; the call is saved with its result afterwards
    local = builder.approval(chat, "bash", args=json.loads(LOCAL_RAW))
    local.resolve("allow_once")
    local.tool_decision()
    builder.security_decision(
        chat,
        action_kind="tool",
        decision="succeeded",
        resource_name="bash",
        input_digest=local.args_digest,
        policy_version="v1",
        details={"execution_outcome": "succeeded", "duration_ms": 12},
        risk_labels=["shell"],
    )
    chat.assistant("", calls=[ToolCall("call_1", "bash", LOCAL_RAW)], results=["2 passed"])
    ids.local_allowed = local.id
    # a local approval denied for the session, and one cancelled
    chat.user("clean up")
    denied = builder.approval(chat, "bash", args={"command": "rm -rf build/cache"})
    denied.resolve("deny_session", actor_id="1", actor_label="phone", source="face", reason="not now")
    ids.denied_decision = denied.tool_decision()
    chat.assistant(
        "", calls=[ToolCall("call_2", "bash", '{"command":"rm -rf build/cache"}')], results=["denied"]
    )
    ids.local_denied = denied.id
    ids.local_cancelled = builder.approval(chat, "write_file", args={"path": "notes.txt"}).cancel().id
    # a remote foreground run: approved, streamed, succeeded, with its inner-tool outcome
    chat.user("deploy it")
    remote = builder.approval(chat, "exec_command", remote=True, args={"command": DEPLOY, "retries": 2.5})
    remote.resolve("allow_once", actor_id="1", actor_label="phone", source="face")
    remote.tool_decision()
    run = remote.remote_run().through("approved", "sent", "accepted", "running")
    run.progress("deploying\n").progress("warning\n", kind="stderr", skip=1).to("succeeded")
    ids.inner_finished = builder.security_decision(
        chat,
        action_kind="tool",
        decision="succeeded",
        resource_name="exec_command",
        target_node="hand-1",
        input_digest=remote.args_digest,
        run_id=remote.run_id,
        policy_version="v1",
        details={"execution_outcome": "succeeded"},
    )
    chat.assistant("", calls=[ToolCall("call_3", "use_hand", DEPLOY_RAW)], results=["done"])
    builder.tool_display(chat, 1, "use_hand", args_digest=digests.display_args_digest("use_hand", DEPLOY_RAW))
    ids.remote_allowed, ids.foreground_run = remote.id, remote.run_id
    # a background start run with its task
    chat.user("build in the background")
    background = builder.approval(
        chat,
        "exec_command",
        remote=True,
        args={"command": "make long-build"},
        background=BackgroundStart(600000),
    )
    background.resolve("allow_session", actor_id="repl", actor_label="REPL", source="repl")
    background.tool_decision()
    started = background.remote_run().through("approved", "sent", "accepted", "succeeded")
    started.task.update("running", started_at=builder.ids.now_ms)
    chat.assistant("", calls=[ToolCall("call_4", "use_hand", BACKGROUND_RAW)], results=["task started"])
    ids.background, ids.background_run = background.id, background.run_id
    # a remote approval denied (the run is still created, then rejected locally) and one expired
    chat.user("wipe the data")
    refused = builder.approval(chat, "exec_command", remote=True, args={"command": "rm -rf /srv/data"})
    refused.resolve("deny_once", actor_id="1", actor_label="phone", source="face")
    refused.tool_decision()
    refused.remote_run().reject_locally("denied by the user")
    chat.assistant("", calls=[ToolCall("call_5", "use_hand", DENIED_RAW)], results=["denied"])
    ids.remote_denied, ids.denied_run = refused.id, refused.run_id
    chat.user("restart the box")
    expired = builder.approval(chat, "exec_command", remote=True, args={"command": "reboot now"})
    builder.ids.now_ms = int(expired.values["expires_at"])
    expired.expire()
    expired.tool_decision()
    expired.remote_run().reject_locally("approval expired")
    chat.assistant("", calls=[ToolCall("call_6", "use_hand", EXPIRED_RAW)], results=["approval expired"])
    ids.remote_expired = expired.id
    # runs without approvals: one lost on a Hand disconnect, one cancelled after the Hand accepted late
    builder.remote_run(chat, args={"command": "uptime"}).through(
        "approved", "sent", "accepted", "running"
    ).to("lost", kind="hand_disconnect")
    ids.disconnected_run = str(
        builder.connection.execute("SELECT max(rowid), id FROM remote_runs").fetchone()[1]
    )
    late = builder.remote_run(chat, args={"command": "sleep 100"}).through(
        "approved", "sent", "cancel_requested"
    )
    late.audit("accepted_after_cancel").audit("cancel_failed", "busy").to("cancelled")
    # in flight at the crash: a run approved but not sent, a running one, a pending approval
    flight = builder.remote_run(chat, args={"command": "ls -la /srv"}).to("approved")
    ids.in_flight_run = flight.id
    builder.remote_run(chat, args={"command": "tail -f log"}).through(
        "approved", "sent", "accepted"
    ).progress("a\n")
    builder.approval(chat, "bash", args={"command": "git push --force"})
    # compaction rows in the outbox and a management audit
    chat.request_compaction()
    chat.compact()
    builder.management_audit("hand.add", target_label="hand-1", target_id="1")
    return ids


Damage = Callable[[StoreBuilder, Scenario], object]


def built_store(
    tmp_path: Path, *, recovered: bool = True, damage: Damage | None = None, generation: Generation = HEAD
) -> tuple[Path, Scenario]:
    builder = StoreBuilder(
        tmp_path / "db" / "half-pi.db", seed=11, digests=SpecDigests(), generation=generation
    )
    scenario = build_scenario(builder)
    if recovered:
        builder.recover()
    if damage is not None:
        damage(builder, scenario)
    return Path(builder.finish().path), scenario


def violations_of(path: Path, tmp_path: Path) -> list[Violation]:
    root = tmp_path / "private"
    root.mkdir(exist_ok=True)
    with open_snapshot(str(path), SnapshotOptions(temp_root=str(root))) as snap:
        return check_runs(snap.connection, detect_generation(snap.connection))


def rowid(builder: StoreBuilder, sql: str, parameters: Sequence[Any] = ()) -> int:
    found = builder.connection.execute(sql, tuple(parameters)).fetchone()
    assert found is not None, sql
    return int(found[0])


def one(builder: StoreBuilder, sql: str, parameters: Sequence[Any] = ()) -> Any:
    found = builder.connection.execute(sql, tuple(parameters)).fetchone()
    assert found is not None, sql
    return found[0]


# --- clean stores -------------------------------------------------------------------------------------


@pytest.mark.parametrize("recovered", [False, True], ids=["crash-image", "recovered"])
def test_a_store_half_pi_wrote_has_no_violation(tmp_path: Path, recovered: bool) -> None:
    path, _ = built_store(tmp_path, recovered=recovered)
    assert violations_of(path, tmp_path) == []


def test_the_clean_store_has_every_kind_of_row(tmp_path: Path) -> None:
    path, _ = built_store(tmp_path)
    with sqlite3.connect(path) as connection:
        approvals = {row[0] for row in connection.execute("SELECT DISTINCT status FROM approval_audits")}
        runs = {row[0] for row in connection.execute("SELECT DISTINCT status FROM remote_runs")}
        types = {row[0] for row in connection.execute("SELECT DISTINCT type FROM remote_run_events")}
        outbox = {row[0] for row in connection.execute("SELECT DISTINCT event_type FROM lifecycle_outbox")}
    assert approvals == {"resolved", "expired", "cancelled"}
    assert runs == {"succeeded", "rejected", "lost", "cancelled"}
    assert {
        "progress",
        "local_rejection",
        "hand_disconnect",
        "startup_recovery",
        "accepted_after_cancel",
    } <= types
    assert {"security.decision", "compact.requested", "compact.completed"} <= outbox


# --- one damaged store per rule -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    rule: str
    table: str
    damage: Callable[[StoreBuilder, Scenario], int]  # applies the damage, returns the rowid to be named
    also: frozenset[str] = frozenset()  # rules the same damage unavoidably breaks too
    recovered: bool = True


def _event(builder: StoreBuilder, run_id: str, where: str) -> int:
    return rowid(builder, f"SELECT rowid FROM remote_run_events WHERE run_id = ? AND {where}", (run_id,))


def _run(builder: StoreBuilder, run_id: str) -> int:
    return rowid(builder, "SELECT rowid FROM remote_runs WHERE id = ?", (run_id,))


def _approval(builder: StoreBuilder, approval_id: str) -> int:
    return rowid(builder, "SELECT rowid FROM approval_audits WHERE approval_id = ?", (approval_id,))


def _outbox(builder: StoreBuilder, event_id: str) -> int:
    return rowid(builder, "SELECT rowid FROM lifecycle_outbox WHERE id = ?", (event_id,))


def _decision(builder: StoreBuilder, event_id: str) -> int:
    return rowid(builder, "SELECT rowid FROM security_decisions WHERE id = ?", (event_id,))


def _replace_digest(builder: StoreBuilder, event_id: str, new: str) -> None:
    """Change a decision's input_digest and its outbox copy alike (so only the digest rule is broken)."""
    old = one(builder, "SELECT input_digest FROM security_decisions WHERE id = ?", (event_id,))
    builder.execute("UPDATE security_decisions SET input_digest = ? WHERE id = ?", (new, event_id))
    builder.execute(
        "UPDATE lifecycle_outbox SET payload_redacted = replace(payload_redacted, ?, ?) WHERE id = ?",
        (f'"input_digest":"{old}"', f'"input_digest":"{new}"', event_id),
    )


def seq_gap(builder: StoreBuilder, ids: Scenario) -> int:
    target = _event(builder, ids.foreground_run, "type = 'succeeded'")
    builder.execute("UPDATE remote_run_events SET seq = seq + 10 WHERE rowid = ?", (target,))
    return target


def creation_time(builder: StoreBuilder, ids: Scenario) -> int:
    target = _event(builder, ids.foreground_run, "seq = 1")
    builder.execute("UPDATE remote_run_events SET created_at = created_at + 1 WHERE rowid = ?", (target,))
    return target


def from_status(builder: StoreBuilder, ids: Scenario) -> int:
    target = _event(builder, ids.foreground_run, "type = 'succeeded'")
    builder.execute("UPDATE remote_run_events SET from_status = 'accepted' WHERE rowid = ?", (target,))
    return target


def illegal_jump(builder: StoreBuilder, ids: Scenario) -> int:
    # the denied run now claims created -> succeeded, consistently in its event and its row
    target = _event(builder, ids.denied_run, "type = 'local_rejection'")
    builder.execute(
        "UPDATE remote_run_events SET to_status = 'succeeded', type = 'succeeded' WHERE rowid = ?", (target,)
    )
    builder.execute("UPDATE remote_runs SET status = 'succeeded' WHERE id = ?", (ids.denied_run,))
    return target


def after_terminal(builder: StoreBuilder, ids: Scenario) -> int:
    last, at = builder.connection.execute(
        "SELECT max(seq), max(created_at) FROM remote_run_events WHERE run_id = ?", (ids.foreground_run,)
    ).fetchone()
    builder.execute(
        "INSERT INTO remote_run_events (run_id, seq, from_status, to_status, type, message, created_at)"
        " VALUES (?, ?, 'succeeded', 'succeeded', 'cancel_failed', '', ?)",
        (ids.foreground_run, last + 1, at + 1),
    )
    return _event(builder, ids.foreground_run, f"seq = {last + 1}")


def status_edited(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE remote_runs SET status = 'failed' WHERE id = ?", (ids.foreground_run,))
    return _run(builder, ids.foreground_run)


def duration_edited(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE remote_runs SET duration_ms = duration_ms + 5 WHERE id = ?", (ids.foreground_run,)
    )
    return _run(builder, ids.foreground_run)


def sent_at_edited(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE remote_runs SET sent_at = sent_at + 1 WHERE id = ?", (ids.foreground_run,))
    return _run(builder, ids.foreground_run)


def progress_kind(builder: StoreBuilder, ids: Scenario) -> int:
    target = _event(builder, ids.foreground_run, "progress_seq = 1")
    builder.execute("UPDATE remote_run_events SET kind = 'stdin' WHERE rowid = ?", (target,))
    return target


def progress_early(builder: StoreBuilder, ids: Scenario) -> int:
    # the run in flight was approved, never sent: the Hand cannot have streamed output
    last = one(builder, "SELECT max(seq) FROM remote_run_events WHERE run_id = ?", (ids.in_flight_run,))
    builder.execute(
        "INSERT INTO remote_run_events (run_id, seq, from_status, to_status, type, message, created_at,"
        " progress_seq, kind) VALUES (?, ?, '', '', 'progress', 'early', ?, 1, 'stdout')",
        (ids.in_flight_run, last + 1, builder.ids.tick()),
    )
    return _event(builder, ids.in_flight_run, "type = 'progress'")


def task_tool(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE remote_tasks SET tool = 'exec_other' WHERE task_id = ?", (ids.background_run,))
    return rowid(builder, "SELECT rowid FROM remote_tasks WHERE task_id = ?", (ids.background_run,))


def task_stale(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE remote_tasks SET stale = 2 WHERE task_id = ?", (ids.background_run,))
    return rowid(builder, "SELECT rowid FROM remote_tasks WHERE task_id = ?", (ids.background_run,))


def task_created(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE remote_tasks SET created_at = created_at - 1 WHERE task_id = ?", (ids.background_run,)
    )
    return rowid(builder, "SELECT rowid FROM remote_tasks WHERE task_id = ?", (ids.background_run,))


def actor_removed(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE approval_audits SET actor_id = '' WHERE approval_id = ?", (ids.remote_allowed,))
    return _approval(builder, ids.remote_allowed)


def expiry_at_creation(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE approval_audits SET expires_at = created_at WHERE approval_id = ?", (ids.local_cancelled,)
    )
    return _approval(builder, ids.local_cancelled)


def resolved_late(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE approval_audits SET resolved_at = expires_at WHERE approval_id = ?", (ids.local_allowed,)
    )
    return _approval(builder, ids.local_allowed)


def expired_early(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE approval_audits SET resolved_at = expires_at - 1 WHERE approval_id = ?", (ids.remote_expired,)
    )
    return _approval(builder, ids.remote_expired)


def approval_digest_raw(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE approval_audits SET args_digest = upper(args_digest) WHERE approval_id = ?",
        (ids.local_cancelled,),
    )
    return _approval(builder, ids.local_cancelled)


def run_digest_prefixed(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE remote_runs SET args_digest = 'sha256:' || args_digest WHERE id = ?", (ids.disconnected_run,)
    )
    return _run(builder, ids.disconnected_run)


def decision_digest_text(builder: StoreBuilder, ids: Scenario) -> int:
    _replace_digest(builder, ids.admitted, "md5:0123")
    return _decision(builder, ids.admitted)


def display_digest(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE tool_display_projections SET args_digest = substr(args_digest, 8)")
    return rowid(builder, "SELECT rowid FROM tool_display_projections")


def run_digest_swapped(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE remote_runs SET args_digest = ? WHERE id = ?", ("ab" * 32, ids.foreground_run))
    return _approval(builder, ids.remote_allowed)


def inner_digest_swapped(builder: StoreBuilder, ids: Scenario) -> int:
    _replace_digest(builder, ids.inner_finished, "cd" * 32)
    return _decision(builder, ids.inner_finished)


def allow_decision_deleted(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("DELETE FROM security_decisions WHERE approval_id = ?", (ids.local_allowed,))
    builder.execute(
        "DELETE FROM lifecycle_outbox WHERE event_type = 'security.decision'"
        " AND id NOT IN (SELECT id FROM security_decisions)"
    )
    return _approval(builder, ids.local_allowed)


def run_deleted(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("DELETE FROM remote_runs WHERE id = ?", (ids.denied_run,))
    return _approval(builder, ids.remote_denied)


def approval_resolved_after_run(builder: StoreBuilder, ids: Scenario) -> int:
    created = one(builder, "SELECT created_at FROM remote_runs WHERE id = ?", (ids.foreground_run,))
    builder.execute(
        "UPDATE approval_audits SET resolved_at = ? WHERE approval_id = ?", (created + 1, ids.remote_allowed)
    )
    return _run(builder, ids.foreground_run)


def run_trace(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE remote_runs SET trace_id = ? WHERE id = ?", ("0f" * 16, ids.foreground_run))
    return _run(builder, ids.foreground_run)


def outbox_deleted(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("DELETE FROM lifecycle_outbox WHERE id = ?", (ids.admitted,))
    return _decision(builder, ids.admitted)


def outbox_subject(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE lifecycle_outbox SET subject_id = 'another' WHERE id = ?", (ids.admitted,))
    return _outbox(builder, ids.admitted)


def payload_decision(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        'UPDATE lifecycle_outbox SET payload_redacted = replace(payload_redacted, \'"decision":"deny"\','
        ' \'"decision":"allow"\') WHERE id = ?',
        (ids.denied_decision,),
    )
    return _outbox(builder, ids.denied_decision)


def decision_deleted(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("DELETE FROM security_decisions WHERE id = ?", (ids.admitted,))
    return _outbox(builder, ids.admitted)


def payload_array(builder: StoreBuilder, ids: Scenario) -> int:
    target = rowid(builder, "SELECT rowid FROM lifecycle_outbox WHERE event_type = 'compact.requested'")
    builder.execute("UPDATE lifecycle_outbox SET payload_redacted = '[]' WHERE rowid = ?", (target,))
    return target


def delivered_and_dead(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE lifecycle_outbox SET delivered_at = 5, dead_letter_at = 6 WHERE id = ?", (ids.admitted,)
    )
    return _outbox(builder, ids.admitted)


def attempted(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE lifecycle_outbox SET attempts = 1 WHERE id = ?", (ids.admitted,))
    return _outbox(builder, ids.admitted)


def details_key(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        'UPDATE security_decisions SET details_redacted = \'{"command":"rm"}\' WHERE id = ?', (ids.admitted,)
    )
    return _decision(builder, ids.admitted)


def labels_object(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute("UPDATE security_decisions SET risk_labels = '{}' WHERE id = ?", (ids.admitted,))
    return _decision(builder, ids.admitted)


def message_args(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE messages SET tool_calls = replace(tool_calls, 'make test', 'make prod')"
        " WHERE tool_calls LIKE ?",
        ('%"call_1"%',),
    )
    return _approval(builder, ids.local_allowed)


def raw_in_reason(builder: StoreBuilder, ids: Scenario) -> int:
    builder.execute(
        "UPDATE approval_audits SET reason = ? WHERE approval_id = ?",
        ("approve: make test && ./run.sh < input.txt", ids.local_allowed),
    )
    return _approval(builder, ids.local_allowed)


CASES = (
    Case("SA630", "remote_run_events", seq_gap),
    Case("SA631", "remote_run_events", creation_time),
    Case("SA632", "remote_run_events", from_status),
    Case("SA633", "remote_run_events", illegal_jump),
    Case("SA634", "remote_run_events", after_terminal),
    Case("SA635", "remote_runs", status_edited),
    Case("SA636", "remote_runs", duration_edited),
    Case("SA637", "remote_runs", sent_at_edited),
    Case("SA638", "remote_run_events", progress_kind),
    Case("SA639", "remote_run_events", progress_early, recovered=False),
    Case("SA640", "remote_tasks", task_tool),
    Case("SA641", "remote_tasks", task_stale),
    Case("SA642", "remote_tasks", task_created),
    Case("SA643", "approval_audits", actor_removed),
    Case("SA644", "approval_audits", expiry_at_creation),
    Case("SA645", "approval_audits", resolved_late),
    Case("SA646", "approval_audits", expired_early),
    Case("SA647", "approval_audits", approval_digest_raw),
    Case("SA648", "remote_runs", run_digest_prefixed),
    Case("SA649", "security_decisions", decision_digest_text),
    Case("SA650", "tool_display_projections", display_digest),
    Case("SA651", "approval_audits", run_digest_swapped),
    Case("SA652", "security_decisions", inner_digest_swapped),
    Case("SA653", "approval_audits", allow_decision_deleted),
    Case("SA654", "approval_audits", run_deleted),
    Case("SA655", "remote_runs", approval_resolved_after_run),
    Case("SA656", "remote_runs", run_trace),
    Case("SA657", "security_decisions", outbox_deleted),
    Case("SA658", "lifecycle_outbox", outbox_subject),
    Case("SA659", "lifecycle_outbox", payload_decision),
    Case("SA660", "lifecycle_outbox", decision_deleted),
    Case("SA661", "lifecycle_outbox", payload_array),
    # delivered and dead-lettered is also dispatched, which Mind at HEAD never does
    Case("SA662", "lifecycle_outbox", delivered_and_dead, also=frozenset({"SA663"})),
    Case("SA663", "lifecycle_outbox", attempted),
    Case("SA664", "security_decisions", details_key),
    Case("SA665", "security_decisions", labels_object),
    Case("SA666", "approval_audits", message_args),
    Case("SA667", "approval_audits", raw_in_reason),
)


def test_every_rule_has_a_damaged_store() -> None:
    assert sorted(case.rule for case in CASES) == sorted(RUNS_RULE_CODES)


@pytest.mark.parametrize("case", CASES, ids=[f"{case.rule}-{case.damage.__name__}" for case in CASES])
def test_a_damaged_store_breaks_exactly_its_rule(tmp_path: Path, case: Case) -> None:
    located: list[int] = []

    def damage(builder: StoreBuilder, ids: Scenario) -> None:
        located.append(case.damage(builder, ids))

    path, ids = built_store(tmp_path, recovered=case.recovered, damage=damage)
    found = violations_of(path, tmp_path)
    assert {violation.rule for violation in found} == {case.rule} | case.also, [v.message for v in found]
    mine = [violation for violation in found if violation.rule == case.rule]
    assert [(violation.table, violation.rowid) for violation in mine] == [(case.table, located[0])]
    assert mine[0].message and mine[0].session_id == ids.session


def test_findings_name_the_ids(tmp_path: Path) -> None:
    path, ids = built_store(tmp_path, damage=status_edited)
    (finding,) = violations_of(path, tmp_path)
    assert ids.foreground_run in finding.message and "'failed'" in finding.message
    assert finding.evidence["run_id"] == ids.foreground_run


def test_a_leaked_value_is_named_by_origin_never_echoed(tmp_path: Path) -> None:
    path, _ = built_store(tmp_path, damage=raw_in_reason)
    (finding,) = violations_of(path, tmp_path)
    assert "make test" not in finding.message and "make test" not in json.dumps(finding.evidence)
    assert "call_1" in finding.message and finding.evidence["values"][0]["pointer"] == "/command"


def test_a_raw_value_inside_a_json_column_is_found_in_its_go_escaped_form(tmp_path: Path) -> None:
    def leak(builder: StoreBuilder, ids: Scenario) -> None:
        go_escaped = "make test \\u0026\\u0026 ./run.sh \\u003c input.txt"
        builder.execute(
            "UPDATE lifecycle_outbox SET last_error = ? WHERE id = ?",
            (f'{{"cmd":"{go_escaped}"}}', ids.admitted),
        )

    path, _ = built_store(tmp_path, damage=leak)
    found = violations_of(path, tmp_path)
    assert {violation.rule for violation in found} == {"SA663", "SA667"}


def test_claimed_values_can_be_looked_for_too(tmp_path: Path) -> None:
    path, _ = built_store(tmp_path)
    root = tmp_path / "private"
    root.mkdir()
    with open_snapshot(str(path), SnapshotOptions(temp_root=str(root))) as snap:
        generation = detect_generation(snap.connection)
        claimed = [
            RawValue("denied by the user", "claimed value"),  # remote_runs.error/approval_reason
            RawValue("exec_command", "claimed tool"),  # a name the audit tables hold by design
            RawValue("short", "too short"),
        ]
        found = find_raw_values(snap.connection, generation, claimed)
    assert {violation.table for violation in found} == {"remote_runs"}
    assert all("claimed value" in violation.message for violation in found)
    assert len("short") < MIN_RAW_VALUE_CHARS


# --- known digest vectors --------------------------------------------------------------------------------


def test_known_vectors_local_digest_with_ampersands_a_float_and_less_than(tmp_path: Path) -> None:
    expected = "sha256:" + hashlib.sha256(LOCAL_PREIMAGE.encode()).hexdigest()
    assert digests.local_approval_digest_from_raw("bash", LOCAL_RAW) == expected
    path, ids = built_store(tmp_path)
    with sqlite3.connect(path) as connection:
        stored = connection.execute(
            "SELECT args_digest FROM approval_audits WHERE approval_id = ?", (ids.local_allowed,)
        ).fetchone()[0]
    assert stored == expected


def test_known_vectors_remote_digest_over_the_use_hand_call(tmp_path: Path) -> None:
    path, ids = built_store(tmp_path)
    preimage = (
        f'{{"run_id":"{ids.foreground_run}","hand_id":"hand-1","tool":"exec_command",'
        '"args":{"command":"./deploy.sh --env=prod \\u0026\\u0026 echo done","retries":2.5}}'
    )
    background = (
        f'{{"run_id":"{ids.background_run}","hand_id":"hand-1","tool":"exec_command",'
        f'"args":{{"command":"make long-build"}},"background":true,"task_id":"{ids.background_run}",'
        '"max_runtime_ms":600000}'
    )
    with sqlite3.connect(path) as connection:
        rows = dict(connection.execute("SELECT approval_id, args_digest FROM approval_audits").fetchall())
    assert rows[ids.remote_allowed] == hashlib.sha256(preimage.encode()).hexdigest()
    assert rows[ids.background] == hashlib.sha256(background.encode()).hexdigest()


def test_a_digest_without_go_escapes_does_not_match_the_call(tmp_path: Path) -> None:
    # Python's json.dumps escapes neither & nor <: a verifier that used it would miss every such command
    naive = (
        "sha256:"
        + hashlib.sha256(
            json.dumps(json.loads(LOCAL_RAW), sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()
    )

    def swap(builder: StoreBuilder, ids: Scenario) -> None:
        builder.execute(
            "UPDATE approval_audits SET args_digest = ? WHERE approval_id = ?", (naive, ids.local_allowed)
        )
        builder.execute(
            "UPDATE security_decisions SET input_digest = ? WHERE approval_id = ?", (naive, ids.local_allowed)
        )

    path, ids = built_store(tmp_path, damage=swap)
    found = [violation for violation in violations_of(path, tmp_path) if violation.rule == "SA666"]
    assert [violation.evidence["approval_id"] for violation in found] == [ids.local_allowed]
    assert (
        found[0].evidence["calls"][0]["digest"]
        == "sha256:" + hashlib.sha256(LOCAL_PREIMAGE.encode()).hexdigest()
    )


# --- schema generations ----------------------------------------------------------------------------------


def _legacy_damage(builder: StoreBuilder, ids: Scenario) -> None:
    """Rows written before the lifecycle columns whose linkage invariants 15/16 would fail."""
    chat = builder.sessions[0]
    approval = builder.approval(chat, "exec_command", remote=True, args={"command": "make legacy-release"})
    approval.resolve("allow_once", actor_id="repl", actor_label="REPL", source="repl")
    # a run with another digest than the approval's, no tool decision, trace ''
    builder.remote_run(chat, run_id=approval.run_id, args_digest="ef" * 32, approval_source="repl").to(
        "approved"
    )


def test_pre_lifecycle_rows_are_not_judged_by_checks_15_16_17(tmp_path: Path) -> None:
    builder = StoreBuilder(
        tmp_path / "db" / "half-pi.db",
        seed=5,
        digests=SpecDigests(),
        generation=BY_FEATURE[Feature.MESSAGE_REQUEST_IDS],
    )
    chat = builder.session(active_hand="hand-1").user("release")
    _legacy_damage(builder, Scenario(session=chat.id))
    builder.upgrade(HEAD)
    with sqlite3.connect(builder.work_path) as connection:
        assert {row[0] for row in connection.execute("SELECT trace_id FROM approval_audits")} == {""}
    path = Path(builder.finish().path)
    assert violations_of(path, tmp_path) == []


def test_checks_are_skipped_on_a_generation_without_their_tables(tmp_path: Path) -> None:
    generation = BY_FEATURE[Feature.MESSAGE_REQUEST_IDS]
    builder = StoreBuilder(
        tmp_path / "db" / "half-pi.db", seed=5, digests=SpecDigests(), generation=generation
    )
    chat = builder.session(active_hand="hand-1").user("release")
    _legacy_damage(builder, Scenario(session=chat.id))
    path = Path(builder.finish().path)
    root = tmp_path / "private"
    root.mkdir()
    with open_snapshot(str(path), SnapshotOptions(temp_root=str(root))) as snap:
        detected = detect_generation(snap.connection)
        found = check_runs(snap.connection, detected)
        skipped = skipped_run_checks(detected)
    assert found == []  # the digest mismatch is SA651, which needs the lifecycle columns
    assert {"SA651", "SA652", "SA653", "SA654", "SA655", "SA656", "SA657", "SA659", "SA664"} <= set(skipped)
    assert "SA631" not in skipped and "SA666" not in skipped and "SA650" in skipped


def test_a_store_before_remote_runs_skips_the_run_checks(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=5, generation=BY_FEATURE[Feature.ACTIVE_HAND])
    builder.session().user("hello").assistant("hi")
    path = Path(builder.finish().path)
    assert violations_of(path, tmp_path) == []
    root = tmp_path / "private2"
    root.mkdir()
    with open_snapshot(str(path), SnapshotOptions(temp_root=str(root))) as snap:
        skipped = set(skipped_run_checks(detect_generation(snap.connection)))
    assert skipped == RUNS_RULE_CODES - {"SA667"}


# --- the state machine and the rule table ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "legal"),
    [
        (("created", "approved", "approved"), True),
        (("approved", "rejected", "local_rejection"), True),
        (("running", "lost", "hand_disconnect"), True),
        (("accepted", "lost", "service_shutdown"), True),
        (("sent", "cancel_requested", "cancel_request_recovered"), True),
        (("cancel_requested", "cancel_requested", "accepted_after_cancel"), True),
        (("running", "running", "cancel_failed"), True),
        (("created", "lost", "startup_recovery"), True),  # bypasses the edge table
        (("approved", "lost", "startup_recovery"), True),
        (("created", "lost", "lost"), False),
        (("succeeded", "lost", "startup_recovery"), False),
        (("running", "failed", "startup_recovery"), False),
        (("running", "running", "running"), False),
        (("succeeded", "succeeded", "cancel_failed"), False),
        (("created", "succeeded", "succeeded"), False),
        (("running", "succeeded", "failed"), False),
        (("running", "paused", "paused"), False),
    ],
)
def test_steps_of_the_run_state_machine(step: tuple[str, str, str], legal: bool) -> None:
    assert (step_problem(*step) is None) is legal


def test_the_rule_table_is_documented() -> None:
    sql_rules = {check.rule for check in run_sql_checks()}
    assert sql_rules | set(PYTHON_REQUIREMENTS) == RUNS_RULE_CODES
    assert not sql_rules & set(PYTHON_REQUIREMENTS)
    for rule in RUNS_RULES:
        assert rule.formats == ("half-pi",) and rule.summary.endswith(".")
        assert len(rule.doc) > 40 and "§" in rule.doc
        levels = set(re.findall(r"\((H|P|S)\)", rule.doc))
        assert len(levels) == 1, rule.code
        if levels == {"S"}:
            assert (rule.severity, rule.verdict) == (Severity.WARNING, None), rule.code
        else:
            assert (rule.severity, rule.verdict) == (Severity.ERROR, Verdict.CORRUPT), rule.code
    assert len({rule.name for rule in RUNS_RULES}) == len(RUNS_RULES)


def test_checks_leave_the_verified_store_alone(tmp_path: Path) -> None:
    path, _ = built_store(tmp_path)
    before = path.read_bytes()
    violations_of(path, tmp_path)
    assert path.read_bytes() == before
