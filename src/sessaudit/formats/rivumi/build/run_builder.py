"""The project's own Rivumi run-directory builder: seeded, deterministic, with the spec's crash windows.

It follows the write discipline of spec §2.1/§3.1 (writer.py: every event first saves the manifest, then
appends the event line); approvals save `waiting_approval` + `pending_action` before `approval.requested`,
and a non-read approved action's `pending_action` is cleared by an extra save right after
`tool.started`/`verification.started`. A `Crash` stops the writer at a chosen event in one of the windows
that discipline leaves open.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final

from sessaudit.formats.rivumi.build.parts import JsonObject, TokenCounts, ToolCall
from sessaudit.formats.rivumi.build.writer import RunWriter
from sessaudit.formats.rivumi.spec.encoding import dump_sorted, format_datetime
from sessaudit.formats.rivumi.spec.manifest_fields import usage_record

TERMINAL_PHASES: Final = {"run.completed": "completed", "run.failed": "failed", "run.cancelled": "cancelled"}


class RunBuilder(RunWriter):
    """Writes one Rivumi run directory under `run_root` as Rivumi's loop would."""

    # --- the loop's steps -----------------------------------------------------------------------
    def model_turn(
        self, *, tool_calls: Sequence[ToolCall] = (), content: str = "", usage: TokenCounts | None = None
    ) -> list[ToolCall]:
        """`model.requested` then `model.completed`; tool calls get ids; the manifest learns the answer."""
        counts = usage or TokenCounts(input_tokens=600 + 40 * self.step, output_tokens=20)
        self.step += 1
        self.emit("model.requested", {"step": self.step})
        calls = list(tool_calls)
        for index, call in enumerate(calls, 1):
            call.tool_call_id = call.tool_call_id or f"call_{self.step}_{index}"
        self.manifest["messages"].append(
            {
                "content": content or None,
                "role": "assistant",
                "tool_calls": [
                    {
                        "arguments": call.arguments,
                        "name": call.name,
                        "provider_metadata": {},
                        "tool_call_id": call.tool_call_id,
                    }
                    for call in calls
                ],
            }
        )
        self._usage.add(counts)
        self.manifest["usage"] = self._usage.as_manifest()
        self.manifest["model_usage"] = [
            usage_record("primary", self.provider, self.model, self._usage.as_manifest())
        ]
        if not calls:
            self.manifest["final_summary"] = content
        data = {
            "content": content,
            "finish_reason": "tool_calls" if calls else "stop",
            "step": self.step,
            "tool_calls": [call.name for call in calls],
            "usage": counts.as_event(),
        }
        self.emit("model.completed", data)
        return calls

    def _approve(self, request: JsonObject, decision: str, preview: str) -> bool:
        """The approval step: reuse a session grant, or ask and record the decision. True when allowed."""
        effect = request["effect"]
        fields = {
            key: request[key] for key in ("action_id", "effect", "policy_reason", "reason", "request_id")
        }
        if effect in self.manifest["granted_effects"]:
            self.emit("approval.reused", fields)
            return True
        self.manifest["phase"] = "waiting_approval"
        self.manifest["pending_action"] = request
        self.save()
        self.emit("approval.requested", {**fields, "preview": preview})
        self.manifest["phase"] = "running"
        self.manifest["approval_history"].append(
            {"decided_at": format_datetime(self._now), "decision": decision, "request": request}
        )
        if decision == "allow_session":
            self.manifest["granted_effects"] = sorted({*self.manifest["granted_effects"], effect})
        allowed = decision in ("allow_once", "allow_session")
        if not allowed or effect == "read":
            self.manifest["pending_action"] = None
        self.emit("approval.resolved", {**fields, "decision": decision})
        return allowed

    def _approval_request(self, action_id: str, effect: str, reason: str, **extra: Any) -> JsonObject:
        request: JsonObject = {
            "action_id": action_id,
            "command": None,
            "effect": effect,
            "policy_reason": "",
            "preview": "",
            "reason": reason,
            "request_id": self.hex32(),
            "run_id": self.run_id,
            "tool_call": None,
        }
        request.update(extra)
        return request

    def _clear_pending(self) -> None:
        if self.manifest["pending_action"] is not None:
            self.manifest["pending_action"] = None
            self.save()

    def tool_call(
        self, call: ToolCall, *, decision: str = "allow_once", ok: bool = True, output: str = ""
    ) -> None:
        """One tool call of the last model answer, through its approval, as §2.4 orders it."""
        self.emit(
            "tool.requested",
            {
                "arguments": call.arguments,
                "effect": call.effect,
                "name": call.name,
                "tool_call_id": call.tool_call_id,
            },
        )
        fingerprint = hashlib.sha256(
            dump_sorted({"arguments": call.arguments, "name": call.name}).encode()
        ).hexdigest()
        same = fingerprint == self.manifest["last_action_fingerprint"]
        self.manifest["repeat_count"] = self.manifest["repeat_count"] + 1 if same else 1
        self.manifest["last_action_fingerprint"] = fingerprint
        tool_call = {
            "arguments": call.arguments,
            "name": call.name,
            "provider_metadata": {},
            "tool_call_id": call.tool_call_id,
        }
        preview = json.dumps(call.arguments, indent=2, ensure_ascii=False)
        request = self._approval_request(call.tool_call_id, call.effect, "model_tool", tool_call=tool_call)
        request["preview"] = preview
        if not self._approve(request, decision, preview):
            if decision == "cancel":
                self.finish("run.cancelled", "approval_cancelled")
                return
            denied = "action denied by user"
            self._observe(call, ok=False, content="", error=denied)
            data = {"error": denied, "name": call.name, "ok": False, "tool_call_id": call.tool_call_id}
            self.emit("tool.completed", data)
            return
        self.emit(
            "tool.started",
            {"effect": call.effect, "name": call.name, "tool_call_id": call.tool_call_id},
            then=self._clear_pending,
        )
        error = None if ok else "tool failed"
        self._observe(call, ok=ok, content=output, error=error)
        data = {
            "error": error,
            "name": call.name,
            "ok": ok,
            "preview": output,
            "tool_call_id": call.tool_call_id,
        }
        self.emit("tool.completed", data)

    def _observe(self, call: ToolCall, *, ok: bool, content: str, error: str | None) -> None:
        self.manifest["messages"].append(
            {
                "content": content,
                "error": error,
                "name": call.name,
                "ok": ok,
                "tool_call_id": call.tool_call_id,
            }
        )

    def verify(self, *, decision: str = "allow_once", ok: bool = True) -> None:
        """Final verification: per command an approval, then `verification.started`/`.completed`."""
        for command in self.verification:
            name = command["name"]
            request = self._approval_request(
                f"verification:{name}", "execute", "final_verification", command=dict(command)
            )
            request["preview"] = " ".join(command["argv"])
            if not self._approve(request, decision, request["preview"]):
                data = {"duration_seconds": 0.0, "error": "approval denied", "exit_code": None, "name": name}
                self.emit("verification.completed", {**data, "ok": False})
                continue
            self.manifest["phase"] = "verifying"
            self.emit(
                "verification.started", {"argv": command["argv"], "name": name}, then=self._clear_pending
            )
            exit_code = 0 if ok else 1
            outcome = {
                "argv": command["argv"],
                "duration_seconds": 0.25,
                "exit_code": exit_code,
                "name": name,
                "ok": ok,
                "output": "1 passed" if ok else "1 failed",
            }
            self.manifest["verification"].append(outcome)
            data = {"duration_seconds": 0.25, "exit_code": exit_code, "name": name, "ok": ok}
            self.emit("verification.completed", data)

    def finish(self, event_type: str = "run.completed", terminal_reason: str = "verified") -> None:
        """The terminal event (saved with the terminal phase), then the run's `finally` save."""
        self.manifest["phase"] = TERMINAL_PHASES[event_type]
        self.manifest["terminal"] = True
        changed = ["calc.py"] if self.manifest["verification"] else []
        self.emit(event_type, {"changed_files": changed, "terminal_reason": terminal_reason})
        elapsed = (self._now - self._started).total_seconds()
        self.manifest["active_wall_time_seconds"] = round(
            self.manifest["active_wall_time_seconds"] + elapsed, 6
        )
        self.manifest["active_started_at"] = None
        self.save()
