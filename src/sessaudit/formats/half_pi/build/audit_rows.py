"""Audit rows: approvals (spec §4.11, §7.3), security decisions with their outbox rows (§4.14, §4.15, §6.7),
credentials with fake secrets (§4.6, §4.7), management audits (§4.13) and tool display cards (§4.12)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from sessaudit.formats.half_pi.build.parts import BackgroundStart, Credential, JsonValue, go_json
from sessaudit.formats.half_pi.build.remote_runs import RemoteRun
from sessaudit.formats.half_pi.build.sessions import Session
from sessaudit.formats.half_pi.build.store_core import StoreCore
from sessaudit.formats.half_pi.spec.schema_generations import Feature

DEFAULT_TTL_MS: Final = 120_000
FACE_SCOPES: Final = (
    "face:approve",
    "face:chat",
    "face:hands:read",
    "face:runs:cancel",
    "face:runs:output",
    "face:runs:read",
    "face:sessions:read",
    "face:sessions:write",
    "face:tasks:cancel",
    "face:tasks:read",
)


class Approval:
    """One approval_audits row: created pending, then resolved, expired or cancelled exactly once."""

    def __init__(
        self, store: StoreCore, session: Session, approval_id: str, values: Mapping[str, Any]
    ) -> None:
        self.store = store
        self.session = session
        self.id = approval_id
        self.values = dict(values)
        self.hand_id = ""
        self.background: BackgroundStart | None = None

    @classmethod
    def create(
        cls,
        store: StoreCore,
        session: Session,
        tool: str,
        *,
        reason: str = "the tool needs a human decision",
        args: Mapping[str, JsonValue] | None = None,
        args_digest: str | None = None,
        remote: bool = False,
        hand_id: str = "hand-1",
        background: BackgroundStart | None = None,
        ttl_ms: int = DEFAULT_TTL_MS,
    ) -> Approval:
        """A pending approval; `remote=True` is a use_hand approval for a run id chosen now (§6.3 digest)."""
        ids = store.ids
        approval_id = ids.hex(8)
        run_id = ids.hex(8) if remote else ""
        digest = args_digest
        if digest is None and remote:
            digest = store.digests.remote_args(run_id, hand_id, tool, args or {}, background)
        elif digest is None:
            digest = store.digests.local_args(tool, args or {})
        created = ids.tick()
        values: dict[str, Any] = {
            "approval_id": approval_id,
            "conversation_id": session.id,
            "request_id": session.request_id,
            "run_id": run_id,
            "tool": tool,
            "reason": reason,
            "args_digest": digest,
            "status": "pending",
            "created_at": created,
            "expires_at": created + ttl_ms,
        }
        if store.has(Feature.LIFECYCLE):
            values.update(trace_id=ids.hex(16), span_id=ids.hex(16), parent_span_id=ids.hex(16))
            values.update(group_id=session.group_id, lifecycle_source="mind", node_id="mind")
        with store.transaction():
            store.insert("approval_audits", values)
        approval = cls(store, session, approval_id, values)
        approval.hand_id, approval.background = hand_id, background
        return approval

    @property
    def run_id(self) -> str:
        return str(self.values["run_id"])

    @property
    def args_digest(self) -> str:
        return str(self.values["args_digest"])

    def _finish(self, values: Mapping[str, Any]) -> Approval:
        with self.store.transaction():
            changed = self.store.update(
                "approval_audits", {"approval_id": self.id, "status": "pending"}, values
            )
            if changed != 1:
                raise RuntimeError(f"approval {self.id} is not pending")
        self.values.update(values)
        return self

    def resolve(
        self,
        decision: str = "allow_once",
        *,
        actor_id: str = "repl",
        actor_label: str = "REPL",
        source: str = "repl",
        reason: str = "",
        at: int | None = None,
    ) -> Approval:
        """A human decision (allow_once, deny_once, allow_session, deny_session) before expiry."""
        when = at if at is not None else self.store.ids.tick()
        values = {
            "status": "resolved",
            "decision": decision,
            "actor_id": actor_id,
            "actor_label": actor_label,
        }
        return self._finish({**values, "source": source, "resolution_reason": reason, "resolved_at": when})

    def expire(self, *, at: int | None = None) -> Approval:
        return self._finish(
            {"status": "expired", "resolved_at": at if at is not None else int(self.values["expires_at"])}
        )

    def cancel(self, *, at: int | None = None) -> Approval:
        return self._finish(
            {"status": "cancelled", "resolved_at": at if at is not None else self.store.ids.tick()}
        )

    def remote_run(self, **options: Any) -> RemoteRun:
        """The run a resolved or expired remote approval is followed by: same id and digest (§7.3)."""
        trace = None
        if self.store.has(Feature.LIFECYCLE):
            trace = (str(self.values["trace_id"]), str(self.values["parent_span_id"]), self.store.ids.hex(16))
        source = str(self.values.get("source") or "mind")
        return RemoteRun.create(
            self.store,
            self.session,
            tool=str(self.values["tool"]),
            hand_id=self.hand_id,
            args_digest=self.args_digest,
            background=self.background,
            run_id=self.run_id,
            trace=trace,
            approval_source=source,
            **options,
        )

    def tool_decision(self) -> str:
        """The security decision a resolved approval is followed by (§7.3 linkage); returns its id."""
        decision = str(self.values.get("decision", ""))
        allowed = decision.startswith("allow")
        session_wide = decision.endswith("_session")
        return security_decision(
            self.store,
            self.session,
            action_kind="tool",
            decision="require_approval" if allowed else "deny",
            reason_code=("user_allow_session" if session_wide else "user_allow_once")
            if allowed
            else "user_denied",
            resource_name=str(self.values["tool"]),
            target_node=self.hand_id if self.run_id else "",
            input_digest=self.args_digest,
            approval_id=self.id if allowed else "",
            run_id=self.run_id,
            policy_version="v1",
        )


def security_decision(
    store: StoreCore,
    session: Session,
    *,
    action_kind: str,
    decision: str,
    reason_code: str = "",
    resource_name: str = "",
    target_node: str = "",
    input_digest: str = "",
    risk_labels: Sequence[str] = (),
    rule_id: str = "",
    policy_version: str = "",
    approval_id: str = "",
    run_id: str = "",
    details: Mapping[str, JsonValue] | None = None,
    principal_id: str = "",
    span_of: str = "",
) -> str:
    """A security_decisions row and, in the same transaction, its `security.decision` outbox row.

    `span_of`: the id of an earlier decision about the same action (an outcome after its admission),
    whose trace and span this row shares."""
    ids = store.ids
    event_id, trace_id, span_id = ids.hex(16), ids.hex(16), ids.hex(16)
    if span_of:
        trace_id, span_id = store.connection.execute(
            "SELECT trace_id, span_id FROM security_decisions WHERE id = ?", (span_of,)
        ).fetchone()
    created = ids.tick()
    row = {
        "id": event_id,
        "trace_id": trace_id,
        "span_id": span_id,
        "request_id": session.request_id,
        "conversation_id": session.id,
        "group_id": session.group_id,
        "principal_id": principal_id,
        "node_id": "mind",
        "action_kind": action_kind,
        "resource_name": resource_name,
        "target_node": target_node,
        "input_digest": input_digest,
        "risk_labels": go_json(list(risk_labels)),
        "decision": decision,
        "reason_code": reason_code,
        "rule_id": rule_id,
        "policy_version": policy_version,
        "approval_id": approval_id,
        "run_id": run_id,
        "details_redacted": go_json(dict(details or {})),
        "created_at": created,
    }
    payload = {name: value for name, value in row.items() if name not in ("id", "created_at")}
    payload.update(event_id=event_id, details=dict(details or {}), risk_labels=list(risk_labels))
    del payload["details_redacted"]
    outbox = {
        "id": event_id,
        "event_type": "security.decision",
        "schema_version": 1,
        "trace_id": trace_id,
        "span_id": span_id,
        "subject_id": session.id,
        "payload_redacted": go_json(payload),
        "available_at": created,
        "created_at": created,
    }
    with store.transaction():
        store.insert("security_decisions", row)
        store.insert("lifecycle_outbox", outbox)
    return event_id


def hand_credential(store: StoreCore, label: str) -> Credential:
    """A Hand credential with fake 32-hex token and application key (distinct, from the seed)."""
    token, key = store.ids.hex(16), store.ids.hex(16)
    with store.transaction():
        values = {"label": label, "token": token, "application_key": key, "created_at": store.ids.text_time()}
        rowid = store.insert("hand_credentials", values)
    return Credential(rowid, label, token, key)


def face_token(store: StoreCore, label: str, scopes: Sequence[str] = FACE_SCOPES) -> Credential:
    """A Face token; scopes stored as a canonical (sorted, deduplicated) JSON array."""
    token, key = store.ids.hex(16), store.ids.hex(16)
    with store.transaction():
        values = {"label": label, "token": token, "application_key": key, "created_at": store.ids.text_time()}
        rowid = store.insert("face_tokens", {**values, "scopes": go_json(sorted(set(scopes)))})
    return Credential(rowid, label, token, key)


def hand_token(store: StoreCore, label: str, *, hand_id: str = "") -> Credential:
    """A legacy hand_tokens row (never written at HEAD; only older Minds wrote them)."""
    token = store.ids.hex(16)
    with store.transaction():
        values = {"label": label, "token": token, "hand_id": hand_id, "created_at": store.ids.text_time()}
        rowid = store.insert("hand_tokens", values)
    return Credential(rowid, label, token, "")


def management_audit(
    store: StoreCore,
    operation: str,
    *,
    target_label: str,
    target_id: str = "",
    source: str = "offline_cli",
    actor: str = "local-user",
    status: str = "succeeded",
    code: str = "",
    message: str = "",
) -> int:
    """An append-only management audit row (request id: a UUID v4 shape from the seed)."""
    raw = store.ids.hex(16)
    request_id = f"{raw[:8]}-{raw[8:12]}-4{raw[13:16]}-{'89ab'[int(raw[16], 16) % 4]}{raw[17:20]}-{raw[20:]}"
    values = {"request_id": request_id, "source": source, "actor": actor, "operation": operation}
    values.update(target_type=operation.split(".")[0], target_id=target_id, target_label=target_label)
    with store.transaction():
        return store.insert(
            "management_audits",
            {**values, "status": status, "code": code, "message": message, "created_at": store.ids.tick()},
        )


def tool_display(
    store: StoreCore,
    session: Session,
    ordinal: int,
    tool: str,
    *,
    args_digest: str,
    output: str | None = "ok",
    error: str = "",
) -> None:
    """A summary-mode tool card; `output=None` leaves it incomplete (a crash before the tool finished)."""
    created = store.ids.tick()
    values: dict[str, Any] = {
        "conversation_id": session.id,
        "request_id": session.request_id,
        "ordinal": ordinal,
        "tool": tool,
        "detail_mode": "summary",
        "args_digest": args_digest,
        "scan_warnings": "null",
        "created_at": created,
    }
    if output is not None:
        shown = "" if output == error else output
        data = (shown + error).encode("utf-8")
        values.update(output_bytes=len(data), output_digest=store.digests.text(shown + error), complete=1)
        values.update(
            success=int(not error), error_category="tool_error" if error else "", scan_warnings="[]"
        )
        values.update(completed_at=store.ids.tick())
    with store.transaction():
        store.insert("tool_display_projections", values)
