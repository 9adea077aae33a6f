"""Half-Pi runs (CONTRACT §4): remote runs, approvals, tasks and requests, their states and open conditions,
and `native.startup_recovery`: exactly the row changes Half-Pi's next start would make (spec §8).

Decisions (docs/decisions.md): every remote run, approval and task is a run, and so is every request (its
user row and what followed); a request is finished when its last row is an assistant row without tool
calls. Runs already lost by `startup_recovery` are closed (a note says so); a non-terminal task stays
open whatever its stale flag, since only the Hand knows its state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from sessaudit.formats.half_pi.check.sql_checks import Violation
from sessaudit.formats.half_pi.read.rows import Request, Row, StoreRows, tool_calls_of
from sessaudit.formats.half_pi.spec.state_machines import RECOVERY_MESSAGE, RUN_TERMINAL, TASK_TERMINAL
from sessaudit.model import SEED_KIND, Condition, PendingEffect, Recovery, Run, RunState

NOW: Final = "$now"
RUN_STATES: Final[dict[str, RunState]] = {
    "succeeded": "completed",
    "failed": "failed",
    "rejected": "failed",
    "timed_out": "failed",
    "cancelled": "cancelled",
    "lost": "lost",
}
APPROVAL_STATES: Final[dict[str, RunState]] = {
    "resolved": "completed",
    "cancelled": "cancelled",
    "expired": "cancelled",
}
# security decisions that say a local tool was authorised or ran (spec §4.14)
TOOL_RAN: Final = frozenset(
    {"allow", "require_approval", "succeeded", "failed", "cancelled", "timed_out", "panicked"}
)
RESTART_WINDOW_MS: Final = 60_000


@dataclass(slots=True)
class OpenRun:
    """A run of the report plus what its seed needs."""

    run: Run
    session_id: str | None
    next_facts: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    table: str | None = None  # where the open run's row is
    rowid: int | None = None


@dataclass(slots=True)
class Recovered:
    runs: dict[str | None, list[OpenRun]] = field(default_factory=dict)  # by session id
    startup_recovery: list[dict[str, Any]] = field(default_factory=list)
    notes: list[Violation] = field(default_factory=list)

    def add(self, session_id: str | None, item: OpenRun) -> None:
        self.runs.setdefault(session_id, []).append(item)


def recover(rows: StoreRows) -> Recovered:
    """Every run with its state and recovery, the native startup_recovery list, and the notes."""
    result = Recovered()
    restarts = [
        int(event.get("created_at") or 0)
        for events in rows.run_events.values()
        for event in events
        if event.get("type") == "startup_recovery"
    ]
    for run in rows.runs:
        _remote_run(run, rows, result)
    for task in rows.tasks:
        _task(task, restarts, result)
    for approval in rows.approvals:
        _approval(approval, restarts, result)
    for session in rows.sessions:
        _requests(str(session.get("id")), rows, result)
    return result


def _recovery(
    condition: Condition, pending: list[PendingEffect] | None = None, assumes: list[str] | None = None
) -> Recovery:
    return Recovery(
        condition=condition,
        conditions=[condition],
        seed_kind=SEED_KIND[condition],
        assumes=assumes or [],
        pending_effects=pending or [],
    )


def _remote_run(run: Row, rows: StoreRows, result: Recovered) -> None:
    run_id, status = str(run.get("id")), str(run.get("status"))
    session_id = str(run.get("session_id") or "") or None
    events = rows.run_events.get(run_id, [])
    if status in RUN_TERMINAL:
        if status == "lost" and (
            run.get("error") == "startup_recovery" or any(e.get("type") == "startup_recovery" for e in events)
        ):
            result.notes.append(
                Violation(
                    "SA690",
                    f"remote run {run_id} ({run.get('tool')} on Hand {run.get('hand_id')}) was marked lost "
                    "by restart recovery; what the Hand did is unknown to the Mind",
                    "remote_runs",
                    run.get("_rowid"),
                    session_id,
                    {"run_id": run_id},
                )
            )
        result.add(
            session_id, OpenRun(Run(run_id=run_id, kind="remote-run", state=RUN_STATES[status]), session_id)
        )
        return
    progress = [event for event in events if event.get("type") == "progress"]
    effect = PendingEffect(
        tool_call_id=run_id,
        tool_name=str(run.get("tool")),
        arguments=_remote_arguments(run, rows),
        intent_id=run_id,
        result_slot=None,
        replay_policy="never",
    )
    changes = _run_changes(run, events)
    result.startup_recovery.extend(changes)
    item = OpenRun(
        Run(
            run_id=run_id,
            kind="remote-run",
            state="open",
            recovery=_recovery("remote-run-in-flight", [effect]),
        ),
        session_id,
        next_facts=changes,
        table="remote_runs",
        rowid=run.get("_rowid"),
        warnings=[
            f"remote run {run_id}: the Mind last saw status {status!r} for {run.get('tool')} on Hand "
            f"{run.get('hand_id')} (args digest {run.get('args_digest') or 'none'}; accepted_at "
            f"{run.get('accepted_at') or 0}; {len(progress)} progress events); only the Hand knows whether "
            "it ran and how it ended"
        ],
    )
    result.add(session_id, item)


def _run_changes(run: Row, events: list[Row]) -> list[dict[str, Any]]:
    """Spec §8 step 1 for one run: the row update and the `startup_recovery` event."""
    run_id = str(run.get("id"))
    created_at = int(run.get("created_at") or 0)
    last_seq = max((int(event.get("seq") or 0) for event in events), default=0)
    return [
        {
            "table": "remote_runs",
            "rowid": run.get("_rowid"),
            "id": run_id,
            "set": {
                "status": [run.get("status"), "lost"],
                "error": [run.get("error"), "startup_recovery"],
                "finished_at": [run.get("finished_at"), NOW],
                "duration_ms": [run.get("duration_ms"), f"max(0, {NOW} - {created_at})"],
            },
        },
        {
            "table": "remote_run_events",
            "rowid": None,
            "id": f"{run_id}#{last_seq + 1}",
            "set": {
                "run_id": [None, run_id],
                "seq": [None, last_seq + 1],
                "from_status": [None, run.get("status")],
                "to_status": [None, "lost"],
                "type": [None, "startup_recovery"],
                "message": [None, RECOVERY_MESSAGE],
                "created_at": [None, NOW],
            },
        },
    ]


def _remote_arguments(run: Row, rows: StoreRows) -> Any:
    """The inner args of the use_hand call that asked for this run, from the request's messages, or None."""
    request_id = run.get("request_id")
    session = rows.messages.get(str(run.get("session_id")), [])
    for row in session:
        if not request_id or row.get("request_id") != request_id:
            continue
        for call in tool_calls_of(row):
            if call.get("Name") != "use_hand" or not isinstance(call.get("Args"), str):
                continue
            try:
                outer = json.loads(call["Args"])
            except ValueError:
                continue
            if isinstance(outer, dict) and outer.get("tool") == run.get("tool"):
                return outer.get("args")
    return None


def _task(task: Row, restarts: list[int], result: Recovered) -> None:
    task_id, status = str(task.get("task_id")), str(task.get("status"))
    session_id = str(task.get("session_id") or "") or None
    run_id = f"task:{task_id}"
    if status in TASK_TERMINAL:
        result.add(session_id, OpenRun(Run(run_id=run_id, kind="task", state=RUN_STATES[status]), session_id))
        return
    changes: list[dict[str, Any]] = []
    if task.get("stale") == 0:
        changes.append(
            {
                "table": "remote_tasks",
                "rowid": task.get("_rowid"),
                "id": task_id,
                "set": {"stale": [0, 1], "updated_at": [task.get("updated_at"), NOW]},
            }
        )
        result.startup_recovery.extend(changes)
    elif _near(int(task.get("updated_at") or 0), restarts):
        result.notes.append(
            Violation(
                "SA690",
                f"task {task_id} ({status}) was marked stale at a Mind restart: the Mind's view of it is "
                "unconfirmed",
                "remote_tasks",
                task.get("_rowid"),
                session_id,
                {"task_id": task_id},
            )
        )
    item = OpenRun(
        Run(run_id=run_id, kind="task", state="open", recovery=_recovery("task-stale")),
        session_id,
        next_facts=changes,
        table="remote_tasks",
        rowid=task.get("_rowid"),
        warnings=[
            f"task {task_id}: the Mind last saw status {status!r} for {task.get('tool')} on Hand "
            f"{task.get('hand_id')} (stale {task.get('stale')}); the Hand alone knows its state"
        ],
    )
    result.add(session_id, item)


def _near(moment: int, restarts: list[int]) -> bool:
    """Whether a row's time lies within a minute of a restart's `startup_recovery` events: restart recovery
    marks tasks and approvals only by time (spec §8), so a restart is recognised by its run events."""
    return any(abs(moment - at) <= RESTART_WINDOW_MS for at in restarts)


def _approval(approval: Row, restarts: list[int], result: Recovered) -> None:
    approval_id, status = str(approval.get("approval_id")), str(approval.get("status"))
    session_id = str(approval.get("conversation_id") or "") or None
    run_id = f"approval:{approval_id}"
    if status != "pending":
        state = APPROVAL_STATES.get(status, "open")
        resolved_at = int(approval.get("resolved_at") or 0)
        if status == "cancelled" and _near(resolved_at, restarts):
            result.notes.append(
                Violation(
                    "SA690",
                    f"approval {approval_id} for {approval.get('tool')} was cancelled at a Mind restart",
                    "approval_audits",
                    approval.get("_rowid"),
                    session_id,
                    {"approval_id": approval_id},
                )
            )
        recovery = None if state != "open" else _recovery("approval-pending")
        result.add(
            session_id,
            OpenRun(Run(run_id=run_id, kind="approval", state=state, recovery=recovery), session_id),
        )
        return
    changes = [
        {
            "table": "approval_audits",
            "rowid": approval.get("_rowid"),
            "id": approval_id,
            "set": {"status": ["pending", "cancelled"], "resolved_at": [approval.get("resolved_at"), NOW]},
        }
    ]
    result.startup_recovery.extend(changes)
    item = OpenRun(
        Run(run_id=run_id, kind="approval", state="open", recovery=_recovery("approval-pending")),
        session_id,
        next_facts=changes,
        table="approval_audits",
        rowid=approval.get("_rowid"),
        warnings=[
            f"approval {approval_id} for {approval.get('tool')} (args digest {approval.get('args_digest')}) "
            "awaited a decision; Half-Pi's next start cancels it and nothing of it runs"
        ],
    )
    result.add(session_id, item)


def _requests(session_id: str, rows: StoreRows, result: Recovered) -> None:
    requests = rows.requests(session_id)
    for index, request in enumerate(requests):
        run_id = f"request:{request.request_id}"
        if request.finished:
            result.add(session_id, OpenRun(Run(run_id=run_id, kind="request", state="completed"), session_id))
            continue
        last = request.rows[-1]
        if index < len(requests) - 1:
            result.notes.append(
                Violation(
                    "SA691",
                    f"request {request.request_id} of session {session_id} ends at seq {last.get('seq')} "
                    f"({last.get('role')} row) without an answer; later requests continued",
                    "messages",
                    last.get("_rowid"),
                    session_id,
                    {"request_id": request.request_id, "seq": last.get("seq")},
                )
            )
            result.add(session_id, OpenRun(Run(run_id=run_id, kind="request", state="lost"), session_id))
            continue
        result.add(session_id, _open_request(session_id, request, rows, result))


def _open_request(session_id: str, request: Request, rows: StoreRows, result: Recovered) -> OpenRun:
    run_id = f"request:{request.request_id}"
    ran = [
        decision
        for decision in rows.decisions
        if decision.get("request_id") == request.request_id
        and decision.get("action_kind") == "tool"
        and not decision.get("target_node")
        and decision.get("decision") in TOOL_RAN
    ]
    last = request.rows[-1]
    condition: Condition
    warnings: list[str] = []
    if ran or not rows.has_decisions_table:
        condition = "effect-unknown"
        pending = [
            PendingEffect(
                tool_call_id=str(decision.get("approval_id") or decision.get("id")),
                tool_name=str(decision.get("resource_name")),
                arguments=None,
                intent_id=str(decision.get("id")),
                result_slot=None,
                replay_policy="never",
            )
            for decision in _latest_per_tool(ran)
        ]
        if not rows.has_decisions_table:
            result.notes.append(
                Violation(
                    "SA692",
                    f"request {request.request_id} of session {session_id} is unfinished and the store "
                    "predates security_decisions: local tools may have run",
                    "messages",
                    last.get("_rowid"),
                    session_id,
                    {"request_id": request.request_id},
                )
            )
        else:
            names = ", ".join(sorted({effect.tool_name for effect in pending}))
            warnings.append(
                f"security decisions show local tools authorised or run for this request: {names}"
            )
    else:
        condition = "model-request-open"
        pending = []
    recovery = _recovery(condition, pending)
    return OpenRun(
        Run(run_id=run_id, kind="request", state="open", recovery=recovery),
        session_id,
        warnings=warnings,
        table="messages",
        rowid=last.get("_rowid"),
    )


def _latest_per_tool(decisions: list[Row]) -> list[Row]:
    """One decision per tool span (the latest: a finished outcome supersedes its admission)."""
    by_span: dict[str, Row] = {}
    for decision in decisions:
        by_span[str(decision.get("span_id") or decision.get("id"))] = decision
    return list(by_span.values())
