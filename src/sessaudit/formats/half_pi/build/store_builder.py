"""The project's own Half-Pi store builder: seeded, byte-reproducible, any schema generation, crash images.

    with StoreBuilder(tmp_path / "db" / "half-pi.db", seed=1) as store:
        chat = store.session("/home/dev/calc").user("fix add()")
        chat.assistant("", calls=[ToolCall("call_1", "bash", '{"command":"pytest"}')], results=["1 failed"])
        run = store.remote_run(chat).through("approved", "sent", "accepted", "running").progress("...")
        store.approval(chat, "bash", args={"command": "./deploy.sh"})
    # leaves half-pi.db checkpointed; `finish(keep_wal=True)` leaves db + -wal + -shm as a kill -9 would

The schema is `.sql` text (`builder_schema.schema_sql(generation)`, or any `sql=` given); rows are written
as Half-Pi's store code writes them (spec §4, §7), ids in production shape (§5) from the seed, times from
a seeded millisecond clock. Digests come from the caller or an injectable `Digests` (builder_parts).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Final

from sessaudit.formats.half_pi.build.audit_rows import (
    FACE_SCOPES,
    Approval,
    face_token,
    hand_credential,
    hand_token,
    management_audit,
    security_decision,
    tool_display,
)
from sessaudit.formats.half_pi.build.parts import (
    DEFAULT_START_MS,
    BackgroundStart,
    BuiltStore,
    Credential,
    Digests,
    JsonValue,
    RecoveryChange,
    group_id,
)
from sessaudit.formats.half_pi.build.remote_runs import RemoteRun, graceful_shutdown, startup_recovery
from sessaudit.formats.half_pi.build.sessions import Session
from sessaudit.formats.half_pi.build.store_core import StoreCore
from sessaudit.formats.half_pi.spec.schema_generations import HEAD, Generation

DEFAULT_WORK_DIR: Final = "/home/dev/project"


class StoreBuilder(StoreCore):
    """Builds one Half-Pi store at `path`; as a context manager it finishes (checkpointed) on success."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        seed: int = 0,
        generation: Generation = HEAD,
        start_ms: int = DEFAULT_START_MS,
        digests: Digests | None = None,
        sql: str | None = None,
    ) -> None:
        self.path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        # the working copy lives beside the target (in a hidden private folder removed by finish/discard)
        super().__init__(
            seed=seed, generation=generation, start_ms=start_ms, digests=digests, sql=sql, work_root=folder
        )
        self.sessions: list[Session] = []
        self.finished = False

    def __enter__(self) -> StoreBuilder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.finished:
            return
        if kind is None:
            self.finish()
        else:
            self.discard()

    # --- sessions ------------------------------------------------------------------------------------
    def group(self, work_dir: str = DEFAULT_WORK_DIR, *, name: str = "", soul_path: str = "") -> str:
        """Upsert the workspace's group (id = SHA-256(work_dir)[:8] as hex); returns its id."""
        identifier = group_id(work_dir)
        stamp = self.ids.text_time()
        with self.transaction():
            exists = self.connection.execute(
                "SELECT 1 FROM session_groups WHERE id = ?", (identifier,)
            ).fetchone()
            if exists:
                self.update("session_groups", {"id": identifier}, {"work_dir": work_dir, "updated_at": stamp})
            else:
                values = {"id": identifier, "name": name, "work_dir": work_dir, "soul_path": soul_path}
                self.insert("session_groups", {**values, "created_at": stamp, "updated_at": stamp})
        return identifier

    def session(
        self,
        work_dir: str = DEFAULT_WORK_DIR,
        *,
        session_id: str | None = None,
        name: str = "",
        description: str = "",
        mode: str = "normal",
        active_hand: str = "",
    ) -> Session:
        """A new conversation (UUIDv7 id) in the workspace's group, with its runtime row in the same tx."""
        group = self.group(work_dir)
        identifier = session_id if session_id is not None else self.ids.uuid7(self.ids.tick())
        stamp = self.ids.text_time()
        values = {"id": identifier, "group_id": group, "name": name, "description": description}
        values.update(mode=mode, active_hand=active_hand, created_at=stamp, updated_at=stamp)
        with self.transaction():
            self.insert("sessions", values)
            if self.columns("session_runtime"):
                self.insert("session_runtime", {"session_id": identifier, "updated_at": self.ids.now_ms})
        session = Session(self, identifier, group, named=bool(name))
        self.sessions.append(session)
        return session

    # --- remote execution ----------------------------------------------------------------------------
    def remote_run(self, session: Session | None, **options: Any) -> RemoteRun:
        """A remote run (status created + its first event); see `RemoteRun.create` for the options."""
        return RemoteRun.create(self, session, **options)

    def background_run(
        self, session: Session | None, *, max_runtime_ms: int = 600_000, **options: Any
    ) -> RemoteRun:
        """A background start run with its remote_tasks row (pending, stale=1), in one transaction."""
        return RemoteRun.create(self, session, background=BackgroundStart(max_runtime_ms), **options)

    # --- audits and credentials ----------------------------------------------------------------------
    def approval(self, session: Session, tool: str, **options: Any) -> Approval:
        """A pending approval; see `Approval.create` (`remote=True` for a use_hand approval)."""
        return Approval.create(self, session, tool, **options)

    def security_decision(self, session: Session, *, action_kind: str, decision: str, **options: Any) -> str:
        """A security decision with its outbox row; returns the shared id."""
        return security_decision(self, session, action_kind=action_kind, decision=decision, **options)

    def admitted(self, session: Session, text: str) -> str:
        """The `message_admitted` decision for a user message (input digest = sha256 of the text, §6.4)."""
        return security_decision(
            self,
            session,
            action_kind="message",
            decision="allow",
            reason_code="message_admitted",
            resource_name=session.id,
            input_digest=self.digests.text(text),
        )

    def local_tool(
        self, session: Session, tool: str, args: Mapping[str, JsonValue], *, outcome: str = ""
    ) -> str:
        """An authorised local tool (`allow`/`normal_policy`) and, with `outcome`, its finished row."""
        digest = self.digests.local_args(tool, args)
        options: dict[str, Any] = {"resource_name": tool, "input_digest": digest, "policy_version": "v1"}
        first = security_decision(
            self, session, action_kind="tool", decision="allow", reason_code="normal_policy", **options
        )
        if outcome:
            details = {"execution_outcome": outcome}
            security_decision(
                self, session, action_kind="tool", decision=outcome, details=details, span_of=first, **options
            )
        return first

    def hand_credential(self, label: str) -> Credential:
        return hand_credential(self, label)

    def face_token(self, label: str, scopes: Sequence[str] = FACE_SCOPES) -> Credential:
        return face_token(self, label, scopes)

    def hand_token(self, label: str, *, hand_id: str = "") -> Credential:
        return hand_token(self, label, hand_id=hand_id)

    def management_audit(self, operation: str, *, target_label: str, **options: Any) -> int:
        return management_audit(self, operation, target_label=target_label, **options)

    def tool_display(
        self, session: Session, ordinal: int, tool: str, *, args_digest: str, **options: Any
    ) -> None:
        tool_display(self, session, ordinal, tool, args_digest=args_digest, **options)

    # --- process lifecycle ---------------------------------------------------------------------------
    def recover(self, now_ms: int | None = None) -> tuple[RecoveryChange, ...]:
        """Startup recovery as a restarted Mind runs it (spec §8); returns the rows it changed."""
        return startup_recovery(self, now_ms)

    def shutdown(self, now_ms: int | None = None) -> None:
        """A graceful stop (spec §8): sent-or-later runs lost (`service_shutdown`), approvals cancelled."""
        graceful_shutdown(self, now_ms)

    # --- files ---------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], *, keep_wal: bool = False) -> BuiltStore:
        """Copy the store as it is now to `path` and keep building (e.g. a pre-recovery image)."""
        return BuiltStore(os.fspath(path), self.export(path, keep_wal=keep_wal))

    def finish(self, *, keep_wal: bool = False) -> BuiltStore:
        """Leave the store at `path` (checkpointed, or as a crash leaves it) and drop the working copy."""
        built = self.save(self.path, keep_wal=keep_wal)
        self.discard()
        self.finished = True
        return built
