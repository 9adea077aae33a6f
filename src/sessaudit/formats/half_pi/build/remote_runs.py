"""Remote runs with their transition events (spec §7.1), remote tasks (§7.2), startup recovery (§8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sessaudit.formats.half_pi.build.parts import BackgroundStart, JsonValue, RecoveryChange
from sessaudit.formats.half_pi.build.sessions import Session
from sessaudit.formats.half_pi.build.store_core import StoreCore
from sessaudit.formats.half_pi.spec.schema_generations import Feature
from sessaudit.formats.half_pi.spec.state_machines import (
    RECOVERY_MESSAGE,
    RUN_EDGES,
    RUN_TERMINAL,
    TASK_TERMINAL,
)


class RemoteRun:
    """One remote_runs row; every status change is one transaction with its event (`MAX(seq)+1`)."""

    def __init__(self, store: StoreCore, run_id: str, created_at: int) -> None:
        self.store = store
        self.id = run_id
        self.created_at = created_at
        self.status = "created"
        self.accepted = False
        self.progress_seq = 0

    @classmethod
    def create(
        cls,
        store: StoreCore,
        session: Session | None,
        *,
        tool: str = "exec_command",
        hand_id: str = "hand-1",
        args: Mapping[str, JsonValue] | None = None,
        args_digest: str | None = None,
        background: BackgroundStart | None = None,
        detail_mode: str = "summary",
        run_id: str | None = None,
        trace: tuple[str, str, str] | None = None,
        approval_source: str = "mind",
        approval_reason: str = "",
    ) -> RemoteRun:
        """Insert the run (status created) and its first event; with `background`, its task too."""
        ids = store.ids
        identifier = run_id if run_id is not None else ids.hex(8)
        digest = args_digest
        if digest is None:
            digest = store.digests.remote_args(identifier, hand_id, tool, args or {}, background)
        created_at = ids.tick()
        trace_id, span_id, parent_span_id = (
            trace if trace is not None else (ids.hex(16), ids.hex(16), ids.hex(16))
        )
        row: dict[str, Any] = {
            "id": identifier,
            "session_id": session.id if session is not None else "",
            "request_id": session.request_id if session is not None else "",
            "hand_id": hand_id,
            "tool": tool,
            "args_digest": digest,
            "approval_source": approval_source,
            "approval_mode": _session_mode(store, session),
            "approval_reason": approval_reason,
            "status": "created",
            "created_at": created_at,
        }
        if store.has(Feature.LIFECYCLE):
            row.update(trace_id=trace_id, span_id=span_id, parent_span_id=parent_span_id)
            row.update(group_id=session.group_id if session is not None else "", lifecycle_source="mind")
            row.update(node_id="mind")
        run = cls(store, identifier, created_at)
        with store.transaction():
            store.insert("remote_runs", row)
            run._event("", "created", "created", "", created_at)
            if background is not None:
                store.insert(
                    "remote_tasks",
                    {
                        "task_id": identifier,
                        "session_id": row["session_id"],
                        "hand_id": hand_id,
                        "tool": tool,
                        "args_digest": digest,
                        "detail_mode": detail_mode,
                        "status": "pending",
                        "created_at": created_at,
                        "updated_at": created_at,
                        "stale": 1,
                    },
                )
        return run

    @property
    def task(self) -> RemoteTask:
        return RemoteTask(self.store, self.id)

    def _event(
        self, source: str, target: str, event_type: str, message: str, at: int, **progress: Any
    ) -> None:
        (last,) = self.store.connection.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM remote_run_events WHERE run_id = ?", (self.id,)
        ).fetchone()
        values = {"run_id": self.id, "seq": int(last) + 1, "from_status": source, "to_status": target}
        self.store.insert(
            "remote_run_events",
            {**values, "type": event_type, "message": message, "created_at": at, **progress},
        )

    def to(
        self,
        status: str,
        *,
        kind: str | None = None,
        message: str = "",
        error: str = "",
        reject_code: str = "",
        at: int | None = None,
        force: bool = False,
    ) -> RemoteRun:
        """A status change (`kind`: the event type, default the new status). `force` skips the edge table."""
        if not force and status not in RUN_EDGES.get(self.status, frozenset()):
            raise ValueError(f"illegal run transition {self.status} -> {status}")
        when = at if at is not None else self.store.ids.tick()
        current = self.store.row("remote_runs", {"id": self.id})
        values: dict[str, Any] = {"status": status}
        if status == "sent":
            values["sent_at"] = when
        if status in ("accepted", "running") and not int(current["accepted_at"]):
            values["accepted_at"] = when  # the Hand's clock
        if status in RUN_TERMINAL:
            values.update(finished_at=when, duration_ms=max(0, when - self.created_at))
        if reject_code and not current["reject_code"]:
            values["reject_code"] = reject_code
        if error:
            values["error"] = error
        with self.store.transaction():
            changed = self.store.update("remote_runs", {"id": self.id, "status": self.status}, values)
            if changed != 1:
                raise RuntimeError(f"run {self.id} is not in status {self.status}")
            self._event(self.status, status, kind or status, message or error, when)
        self.accepted = self.accepted or status in ("accepted", "running")
        self.status = status
        return self

    def through(self, *statuses: str) -> RemoteRun:
        """Ordinary transitions in a row, e.g. `through("approved", "sent", "accepted", "running")`."""
        for status in statuses:
            self.to(status)
        return self

    def reject_locally(self, reason: str, *, code: str = "check_failed") -> RemoteRun:
        """A Mind-local policy rejection (created/approved -> rejected, `local_rejection`)."""
        return self.to("rejected", kind="local_rejection", message=reason, error=reason, reject_code=code)

    def audit(self, kind: str, message: str = "", *, at: int | None = None) -> RemoteRun:
        """A same-status audited event (`accepted_after_cancel`, `cancel_failed`)."""
        when = at if at is not None else self.store.ids.tick()
        with self.store.transaction():
            if kind == "accepted_after_cancel":
                self.store.update("remote_runs", {"id": self.id}, {"accepted_at": when})
            self._event(self.status, self.status, kind, message, when)
        return self

    def progress(self, data: str, *, kind: str = "stdout", skip: int = 0) -> RemoteRun:
        """A progress row after acceptance; `skip` leaves a gap in progress_seq (gap flag set)."""
        if not self.accepted:
            raise ValueError("progress only after acceptance")
        self.progress_seq += 1 + skip
        with self.store.transaction():
            self._event(
                "",
                "",
                "progress",
                data,
                self.store.ids.tick(),
                progress_seq=self.progress_seq,
                kind=kind,
                gap=int(skip > 0),
            )
        return self


class RemoteTask:
    """The remote_tasks row of a background run (the Hand is authoritative; the Mind keeps a snapshot)."""

    def __init__(self, store: StoreCore, task_id: str) -> None:
        self.store = store
        self.id = task_id

    def update(self, status: str, *, stale: int = 0, at: int | None = None, **values: Any) -> RemoteTask:
        """Copy a Hand answer (status, started_at, finished_at, log_bytes, truncated, error) into the row."""
        current = self.store.row("remote_tasks", {"task_id": self.id})
        if current["status"] in TASK_TERMINAL and status != current["status"]:
            raise ValueError(f"task {self.id} is terminal ({current['status']})")
        when = at if at is not None else self.store.ids.tick()
        with self.store.transaction():
            self.store.update(
                "remote_tasks",
                {"task_id": self.id},
                {"status": status, "stale": stale, "updated_at": when, **values},
            )
        return self


def _session_mode(store: StoreCore, session: Session | None) -> str:
    if session is None or "mode" not in store.columns("sessions"):
        return ""
    return str(store.row("sessions", {"id": session.id})["mode"])


def _changes(
    table: str, rowid: int, identifier: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> RecoveryChange:
    return RecoveryChange(
        table, rowid, identifier, {name: (before.get(name), value) for name, value in after.items()}
    )


def startup_recovery(store: StoreCore, now_ms: int | None = None) -> tuple[RecoveryChange, ...]:
    """What a Mind start does (spec §8, in order): runs -> lost, tasks -> stale, approvals -> cancelled."""
    now = now_ms if now_ms is not None else store.ids.tick()
    changes: list[RecoveryChange] = []
    if store.columns("remote_runs"):
        with store.transaction():
            rows = store.connection.execute(
                "SELECT rowid, id, status, error, finished_at, duration_ms, created_at FROM remote_runs"
                " ORDER BY rowid"
            ).fetchall()
            for rowid, run_id, status, error, finished, duration, created in rows:
                if status in RUN_TERMINAL:
                    continue
                after = {"status": "lost", "error": "startup_recovery", "finished_at": now}
                after["duration_ms"] = max(0, now - int(created))
                before = {"status": status, "error": error, "finished_at": finished, "duration_ms": duration}
                store.update("remote_runs", {"id": run_id}, after)
                run = RemoteRun(store, str(run_id), int(created))
                run._event(str(status), "lost", "startup_recovery", RECOVERY_MESSAGE, now)
                changes.append(_changes("remote_runs", int(rowid), str(run_id), before, after))
    if store.columns("remote_tasks"):
        with store.transaction():
            rows = store.connection.execute(
                "SELECT rowid, task_id, status, updated_at FROM remote_tasks WHERE stale = 0 ORDER BY rowid"
            ).fetchall()
            for rowid, task_id, status, updated in rows:
                if status in TASK_TERMINAL:
                    continue
                store.update("remote_tasks", {"task_id": task_id}, {"stale": 1, "updated_at": now})
                changes.append(
                    _changes(
                        "remote_tasks",
                        int(rowid),
                        str(task_id),
                        {"stale": 0, "updated_at": updated},
                        {"stale": 1, "updated_at": now},
                    )
                )
    if store.columns("approval_audits"):
        with store.transaction():
            rows = store.connection.execute(
                "SELECT rowid, approval_id, resolved_at FROM approval_audits WHERE status = 'pending'"
                " ORDER BY rowid"
            ).fetchall()
            for rowid, approval_id, resolved in rows:
                after = {"status": "cancelled", "resolved_at": now}
                store.update("approval_audits", {"approval_id": approval_id}, after)
                before = {"status": "pending", "resolved_at": resolved}
                changes.append(_changes("approval_audits", int(rowid), str(approval_id), before, after))
    return tuple(changes)


def graceful_shutdown(store: StoreCore, now_ms: int | None = None) -> None:
    """A clean stop (spec §8): runs sent or later -> lost (`service_shutdown`); approvals cancelled."""
    now = now_ms if now_ms is not None else store.ids.tick()
    if store.columns("remote_runs"):
        rows = store.connection.execute(
            "SELECT id, status, created_at FROM remote_runs WHERE status IN"
            " ('sent', 'accepted', 'running', 'cancel_requested') ORDER BY rowid"
        ).fetchall()
        for run_id, status, created in rows:
            run = RemoteRun(store, str(run_id), int(created))
            run.status = str(status)
            run.to("lost", kind="service_shutdown", error="service_shutdown", at=now)
    if store.columns("approval_audits"):
        with store.transaction():
            store.connection.execute(
                "UPDATE approval_audits SET status = 'cancelled', resolved_at = ? WHERE status = 'pending'",
                (now,),
            )
