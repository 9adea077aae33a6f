"""Half-Pi invariants 7–21 (remote runs, tasks, approvals, security decisions, digests): SQL and Python.

The set-based checks are the `SA630`–`SA679` files of `queries/checks/half-pi/`; what SQL cannot say is
here: the walk of each run's events through the state machine of spec §7.1 (invariants 8–11), and, in
`check/runs_audit.py` and `check/runs_args.py`, the outbox payload rebuilt byte for byte (17), the JSON
shapes (18, 19), the raw tool-call arguments against the approval digests (20) and raw values in audit
tables (21).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from sessaudit.formats.half_pi.check.runs_args import check_message_args, check_raw_values
from sessaudit.formats.half_pi.check.runs_audit import (
    check_decisions,
    check_outbox_objects,
    fetch_rows,
    utf8_bytes,
)
from sessaudit.formats.half_pi.check.sql_checks import SqlCheck, Violation, load_checks, run_checks
from sessaudit.formats.half_pi.rules.runs import RUNS_RULE_CODES
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration
from sessaudit.formats.half_pi.spec.state_machines import RUN_EDGES, RUN_NON_TERMINAL, RUN_TERMINAL

TERMINAL: Final = RUN_TERMINAL
NON_TERMINAL: Final = RUN_NON_TERMINAL
EDGES: Final = RUN_EDGES
# Event types other than the new status, and the only status each may lead to (spec §7.1 event shapes).
SPECIAL_TYPES: Final[Mapping[str, str]] = {
    "local_rejection": "rejected",
    "hand_disconnect": "lost",
    "service_shutdown": "lost",
    "cancel_request_recovered": "cancel_requested",
}
SAME_STATUS_TYPES: Final = frozenset({"accepted_after_cancel", "cancel_failed"})
RECOVERY_TYPE: Final = "startup_recovery"
PROGRESS_TYPE: Final = "progress"
PROGRESS_KINDS: Final = frozenset({"stdout", "stderr"})
PROGRESS_DATA_LIMIT: Final = 4096  # protocol.MaxRPCProgressChunkBytes
# Statuses in which the registry admits progress (cancel_requested only once the Hand accepted the run).
PROGRESS_STATUSES: Final = frozenset({"accepted", "running"})
FIRST_CODE, LAST_CODE = "SA630", "SA679"
# The Python checks and the tables and columns each needs (a store lacking one skips the check).
PYTHON_REQUIREMENTS: Final[Mapping[str, tuple[str, ...]]] = {
    **dict.fromkeys(
        ("SA632", "SA633", "SA634", "SA635", "SA636", "SA637"), ("remote_runs", "remote_run_events")
    ),
    **dict.fromkeys(
        ("SA638", "SA639"),
        ("remote_runs", "remote_run_events", "remote_run_events.progress_seq", "remote_run_events.kind"),
    ),
    **dict.fromkeys(("SA659", "SA664", "SA665"), ("security_decisions", "lifecycle_outbox")),
    "SA661": ("lifecycle_outbox",),
    "SA666": ("approval_audits", "messages.request_id", "messages.tool_calls"),
    "SA667": ("messages.tool_calls",),
}


def run_sql_checks() -> tuple[SqlCheck, ...]:
    """The shipped SQL checks of this family (rule codes SA630–SA679)."""
    return tuple(check for check in load_checks() if FIRST_CODE <= check.rule <= LAST_CODE)


def check_runs(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """Every violation of invariants 7–21 in the store behind `connection` (a private snapshot), sorted.

    Checks whose tables or columns the store's generation lacks are skipped (`skipped_run_checks`).
    """
    found, _skipped = run_checks(connection, run_sql_checks(), _columns(generation))
    if _applies("SA632", generation):
        found.extend(walk_runs(connection, generation))
    if _applies("SA659", generation):
        found.extend(check_decisions(connection))
    if _applies("SA661", generation):
        found.extend(check_outbox_objects(connection))
    if _applies("SA666", generation):
        found.extend(check_message_args(connection, generation))
    if _applies("SA667", generation):
        found.extend(check_raw_values(connection, generation))
    return sorted(found, key=_order)


def skipped_run_checks(generation: SchemaGeneration) -> tuple[str, ...]:
    """The rule codes of this family not checked on a store of `generation` (features absent)."""
    columns = _columns(generation)
    skipped = {check.rule for check in run_sql_checks() if not check.applies(columns)}
    skipped.update(code for code in PYTHON_REQUIREMENTS if not _applies(code, generation))
    return tuple(sorted(skipped & RUNS_RULE_CODES))


# --- the walk of invariants 8–11 --------------------------------------------------------------------------


@dataclass(slots=True)
class _Walk:
    """Where the walk of one run stands."""

    run: Mapping[str, Any]
    status: str = ""
    accepted: bool = False
    terminal: Mapping[str, Any] | None = None
    sent: Mapping[str, Any] | None = None
    last: Mapping[str, Any] | None = None
    progress_seq: int = 0
    found: list[Violation] = field(default_factory=list)

    def report(self, rule: str, event: Mapping[str, Any] | None, message: str, **evidence: Any) -> None:
        table, rowid = ("remote_run_events", event["row_id"]) if event is not None else ("remote_runs", None)
        self.found.append(
            Violation(
                rule=rule,
                message=f"run {self.run['id']}: {message}",
                table=table,
                rowid=int(rowid) if rowid is not None else int(self.run["row_id"]),
                session_id=str(self.run["session_id"]) or None,
                evidence={"run_id": self.run["id"], **evidence},
            )
        )


def walk_runs(connection: sqlite3.Connection, generation: SchemaGeneration) -> list[Violation]:
    """Invariants 8–11 for every run: the event walk, the status, the finish and sent times, progress."""
    progress = generation.has_column("remote_run_events", "progress_seq") and generation.has_column(
        "remote_run_events", "kind"
    )
    extra = ", progress_seq, kind, gap" if progress else ""
    events: dict[str, list[dict[str, Any]]] = {}
    for event in fetch_rows(
        connection,
        "SELECT rowid AS row_id, run_id, seq, from_status, to_status, type, message, created_at"
        f"{extra} FROM remote_run_events ORDER BY run_id, seq, rowid",
    ):
        events.setdefault(str(event["run_id"]), []).append(event)
    found: list[Violation] = []
    for run in fetch_rows(
        connection,
        "SELECT rowid AS row_id, id, session_id, status, created_at, sent_at, finished_at, duration_ms"
        " FROM remote_runs ORDER BY rowid",
    ):
        walk = _Walk(run)
        _walk_events(walk, events.get(str(run["id"]), []), progress)
        _check_status_and_times(walk)
        found.extend(walk.found)
    return found


def _walk_events(walk: _Walk, events: Iterable[Mapping[str, Any]], progress: bool) -> None:
    first = True
    for event in events:
        if walk.terminal is not None:
            walk.report(
                "SA634",
                event,
                f"event {event['seq']} ({event['type']}) follows the terminal step to"
                f" {walk.terminal['to_status']} at seq {walk.terminal['seq']}",
                seq=event["seq"],
                terminal_seq=walk.terminal["seq"],
            )
            continue
        if event["type"] == PROGRESS_TYPE:
            if progress:
                _check_progress(walk, event)
            continue
        if first:
            first = False
            # the creation event is SA631's (SQL); a walk without one starts where the first event does
            if event["from_status"] == "" and "created" in (event["type"], event["to_status"]):
                _advance(walk, event)
                continue
            walk.status = str(event["from_status"])
        _step(walk, event)


def _step(walk: _Walk, event: Mapping[str, Any]) -> None:
    source, target, kind = str(event["from_status"]), str(event["to_status"]), str(event["type"])
    seq = event["seq"]
    if source != walk.status:
        walk.report(
            "SA632",
            event,
            f"event {seq} ({kind}) starts from {source!r}, but the run was {walk.status!r}",
            seq=seq,
            expected=walk.status,
            found=source,
        )
    problem = step_problem(source, target, kind)
    if problem is not None:
        walk.report("SA633", event, f"event {seq}: {problem}", seq=seq, step=[source, target, kind])
    _advance(walk, event)


def step_problem(source: str, target: str, kind: str) -> str | None:
    """Why (from, to, type) is not a step Half-Pi writes (spec §7.1), or None when it is one."""
    if kind == RECOVERY_TYPE:
        if source in TERMINAL or target != "lost":
            return f"startup_recovery goes from a non-terminal status to lost, not {source!r} -> {target!r}"
        return None
    if source == target:
        if kind not in SAME_STATUS_TYPES:
            return (
                f"same-status event {source!r} -> {target!r} of type {kind!r}"
                " (only accepted_after_cancel and cancel_failed keep the status)"
            )
        if source not in NON_TERMINAL:
            return f"audited event {kind!r} in status {source!r}"
        return None
    if target not in EDGES.get(source, frozenset()):
        return f"{source!r} -> {target!r} ({kind}) is not an edge of the run state machine"
    if kind != target and SPECIAL_TYPES.get(kind) != target:
        return f"event type {kind!r} does not fit the step {source!r} -> {target!r}"
    return None


def _advance(walk: _Walk, event: Mapping[str, Any]) -> None:
    target = str(event["to_status"])
    walk.status = target
    walk.last = event
    if target in PROGRESS_STATUSES or event["type"] == "accepted_after_cancel":
        walk.accepted = True
    if target == "sent" and walk.sent is None:
        walk.sent = event
    if target in TERMINAL:
        walk.terminal = event


def _check_progress(walk: _Walk, event: Mapping[str, Any]) -> None:
    seq = event["seq"]
    problems = []
    if event["from_status"] != "" or event["to_status"] != "":
        problems.append(f"statuses {event['from_status']!r} -> {event['to_status']!r} instead of '' -> ''")
    number = event["progress_seq"]
    if not isinstance(number, int) or number <= 0:
        problems.append(f"progress_seq {number!r} is not positive")
    elif number <= walk.progress_seq:
        problems.append(f"progress_seq {number} does not increase (previous {walk.progress_seq})")
    if isinstance(number, int) and number > walk.progress_seq:
        walk.progress_seq = number
    if event["kind"] not in PROGRESS_KINDS:
        problems.append(f"kind {event['kind']!r} is not stdout or stderr")
    if event["gap"] not in (0, 1):
        problems.append(f"gap {event['gap']!r} is not 0/1")
    data = event["message"]
    size = len(utf8_bytes(data)) if isinstance(data, str | bytes) else None
    if size is not None and size > PROGRESS_DATA_LIMIT:
        problems.append(f"{size} bytes of data, over the {PROGRESS_DATA_LIMIT}-byte limit")
    if problems:
        walk.report(
            "SA638",
            event,
            f"progress event {seq}: " + "; ".join(problems),
            seq=seq,
            progress_seq=number,
        )
    allowed = walk.status in PROGRESS_STATUSES or (walk.status == "cancel_requested" and walk.accepted)
    if not allowed:
        walk.report(
            "SA639",
            event,
            f"progress event {seq} while the run was {walk.status or 'not yet created'!r}"
            + (" (never accepted)" if walk.status == "cancel_requested" else ""),
            seq=seq,
            status=walk.status,
        )


def _check_status_and_times(walk: _Walk) -> None:
    run = walk.run
    status = str(run["status"])
    if walk.last is not None and walk.last["to_status"] != status:
        walk.report(
            "SA635",
            None,
            f"status is {status!r} but its last event ({walk.last['seq']}, {walk.last['type']}) set"
            f" {walk.last['to_status']!r}",
            status=status,
            last_seq=walk.last["seq"],
            last_to_status=walk.last["to_status"],
        )
    created, finished, duration = (
        _integer(run[name]) for name in ("created_at", "finished_at", "duration_ms")
    )
    problem = None
    if status in TERMINAL and not (finished is not None and finished > 0):
        problem = f"status {status} is terminal but finished_at is {run['finished_at']!r}"
    elif status not in TERMINAL and finished != 0:
        problem = f"status {status!r} is not terminal but finished_at is {run['finished_at']!r}"
    elif status in TERMINAL and (created is None or duration != max(0, (finished or 0) - created)):
        problem = (
            f"duration_ms {run['duration_ms']!r} is not max(0, finished_at {finished} - created_at"
            f" {run['created_at']!r})"
        )
    elif status in TERMINAL and walk.terminal is not None and walk.terminal["created_at"] != finished:
        problem = (
            f"finished_at {finished} is not the time {walk.terminal['created_at']} of its terminal event"
            f" {walk.terminal['seq']} ({walk.terminal['type']})"
        )
    if problem is not None:
        walk.report(
            "SA636",
            None,
            problem,
            status=status,
            finished_at=run["finished_at"],
            duration_ms=run["duration_ms"],
            created_at=run["created_at"],
        )
    sent_at = run["sent_at"]
    if walk.sent is not None and sent_at != walk.sent["created_at"]:
        walk.report(
            "SA637",
            None,
            f"sent_at is {sent_at!r} but the sent event {walk.sent['seq']} is at {walk.sent['created_at']}",
            sent_at=sent_at,
            sent_event_seq=walk.sent["seq"],
        )
    elif walk.sent is None and sent_at != 0:
        walk.report("SA637", None, f"sent_at is {sent_at!r} but the run has no sent event", sent_at=sent_at)


# --- plumbing ---------------------------------------------------------------------------------------------


def _columns(generation: SchemaGeneration) -> dict[str, frozenset[str]]:
    return {table: frozenset(names) for table, names in generation.columns.items()}


def _applies(code: str, generation: SchemaGeneration) -> bool:
    for need in PYTHON_REQUIREMENTS[code]:
        table, _, column = need.partition(".")
        if table not in generation.columns or (column and not generation.has_column(table, column)):
            return False
    return True


def _integer(value: Any) -> int | None:
    """An INTEGER column's value, or None when the row holds something else (text, real, NULL)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _order(violation: Violation) -> tuple[str, str, int, str]:
    return (violation.rule, violation.table or "", violation.rowid or 0, violation.message)
