"""The loop's event order (spec §2.4) as warnings: what Rivumi writes, though no reader checks it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessaudit.formats.rivumi.spec.eventtypes import TERMINAL_EVENT_TYPES

Complaint = tuple[str, dict[str, Any]]
ALLOWED = frozenset({"allow_once", "allow_session"})


@dataclass(slots=True)
class LoopOrder:
    """Feed events in file order; each `observe` returns the ordering complaints that event raises."""

    index: int = 0
    previous_type: str | None = None
    open_step: int | None = None
    terminal_type: str | None = None
    after_terminal_reported: bool = False
    pending_requests: dict[str, str] = field(default_factory=dict)  # request_id → action_id
    tools: dict[str, str] = field(default_factory=dict)  # tool_call_id → requested|started|completed
    decisions: dict[str, str] = field(default_factory=dict)  # action_id → latest decision
    verifications: set[str] = field(default_factory=set)  # names started, not yet completed
    cancelled: bool = False  # the previous event resolved an approval with `cancel`

    def observe(self, event_type: str, data: dict[str, Any]) -> list[Complaint]:
        complaints: list[Complaint] = []
        self._position(event_type, complaints)
        handler = _HANDLERS.get(event_type)
        if handler is not None:
            handler(self, data, complaints)
        if event_type in TERMINAL_EVENT_TYPES:
            self.terminal_type = event_type
        self.previous_type = event_type
        self.index += 1
        return complaints

    def _position(self, event_type: str, complaints: list[Complaint]) -> None:
        if self.cancelled and event_type != "run.cancelled":
            complaints.append(
                (
                    f"{event_type} follows a cancelled approval; the loop ends with run.cancelled",
                    {"found": event_type},
                )
            )
        self.cancelled = False
        if self.index == 0 and event_type not in ("run.created", "run.forked"):
            complaints.append(
                (
                    f"the log starts with {event_type}; a fresh run starts with run.created",
                    {"found": event_type},
                )
            )
        if self.previous_type == "run.created" and self.index == 1 and event_type != "workspace.prepared":
            complaints.append(
                (f"run.created is followed by {event_type}, not workspace.prepared", {"found": event_type})
            )
        if self.terminal_type is not None and not self.after_terminal_reported:
            self.after_terminal_reported = True
            complaints.append(
                (
                    f"{event_type} follows the terminal event {self.terminal_type}",
                    {"terminal": self.terminal_type, "found": event_type},
                )
            )

    # --- per type -------------------------------------------------------------------------------
    def _model_requested(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        if self.open_step is not None:
            complaints.append(
                (
                    f"model.requested while step {self.open_step} has no model.completed",
                    {"open_step": self.open_step, "step": data.get("step")},
                )
            )
        step = data.get("step")
        self.open_step = step if isinstance(step, int) else -1

    def _model_completed(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        step = data.get("step")
        if self.open_step is None:
            complaints.append((f"model.completed (step {step}) with no model.requested", {"step": step}))
        elif self.open_step != step:
            complaints.append(
                (
                    f"model.completed for step {step} answers model.requested of step {self.open_step}",
                    {"requested_step": self.open_step, "step": step},
                )
            )
        self.open_step = None

    def _tool_requested(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        call = str(data.get("tool_call_id"))
        if call in self.tools:
            complaints.append((f"tool call {call} is requested twice", {"tool_call_id": call}))
        self.tools[call] = "requested"

    def _approval_requested(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        self.pending_requests[str(data.get("request_id"))] = str(data.get("action_id"))

    def _approval_resolved(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        request = str(data.get("request_id"))
        action = self.pending_requests.pop(request, None)
        if action is None:
            complaints.append(
                (
                    f"approval.resolved for request {request} with no approval.requested",
                    {"request_id": request},
                )
            )
        self.decisions[str(data.get("action_id"))] = str(data.get("decision"))
        self.cancelled = data.get("decision") == "cancel"

    def _approval_reused(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        self.decisions[str(data.get("action_id"))] = "reused"

    def _approval_abandoned(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        self.pending_requests.pop(str(data.get("request_id")), None)

    def _approved(self, action: str) -> bool:
        return self.decisions.get(action) in (*ALLOWED, "reused")

    def _tool_started(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        call = str(data.get("tool_call_id"))
        if self.tools.get(call) != "requested":
            complaints.append((f"tool.started for {call} with no tool.requested", {"tool_call_id": call}))
        if not self._approved(call):
            complaints.append(
                (
                    f"tool.started for {call} without an allowing approval",
                    {"tool_call_id": call, "decision": self.decisions.get(call)},
                )
            )
        self.tools[call] = "started"

    def _tool_completed(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        call = str(data.get("tool_call_id"))
        state = self.tools.get(call)
        denied = self.decisions.get(call) == "deny" and state == "requested"
        if state != "started" and not denied:
            complaints.append(
                (f"tool.completed for {call} with no tool.started", {"tool_call_id": call, "state": state})
            )
        if denied and data.get("ok") is not False:
            complaints.append(
                (f"tool.completed for denied call {call} is not ok false", {"tool_call_id": call})
            )
        self.tools[call] = "completed"

    def _verification_started(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        name = str(data.get("name"))
        if not self._approved(f"verification:{name}"):
            complaints.append(
                (f"verification.started for {name} without an allowing approval", {"name": name})
            )
        self.verifications.add(name)

    def _verification_completed(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        name = str(data.get("name"))
        denied = self.decisions.get(f"verification:{name}") == "deny"
        if name not in self.verifications and not denied:
            complaints.append(
                (f"verification.completed for {name} with no verification.started", {"name": name})
            )
        self.verifications.discard(name)

    def _session_resumed(self, data: dict[str, Any], complaints: list[Complaint]) -> None:
        # a lost model.completed is expected across a crash; the resumed writer starts a new step
        self.open_step = None


_HANDLERS = {
    "model.requested": LoopOrder._model_requested,
    "model.completed": LoopOrder._model_completed,
    "tool.requested": LoopOrder._tool_requested,
    "approval.requested": LoopOrder._approval_requested,
    "approval.resolved": LoopOrder._approval_resolved,
    "approval.reused": LoopOrder._approval_reused,
    "approval.abandoned": LoopOrder._approval_abandoned,
    "tool.started": LoopOrder._tool_started,
    "tool.completed": LoopOrder._tool_completed,
    "verification.started": LoopOrder._verification_started,
    "verification.completed": LoopOrder._verification_completed,
    "session.resumed": LoopOrder._session_resumed,
}
