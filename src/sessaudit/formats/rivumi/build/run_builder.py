"""The project's own Rivumi run-directory builder: seeded, deterministic, with the spec's crash windows.

It follows the write discipline of spec §2.1/§3.1: every event first saves the manifest (atomically, with
`last_event_sequence` = the event's sequence) and then appends the event line; approvals save
`waiting_approval` + `pending_action` before `approval.requested`, and a non-read approved action's
`pending_action` is cleared by an extra save right after `tool.started`/`verification.started`. A `Crash`
stops the writer at a chosen event in one of the windows that discipline leaves open.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from sessaudit.formats.rivumi.build.parts import (
    BuiltEvent,
    Crash,
    CrashMode,
    JsonObject,
    Killed,
    TokenCounts,
    ToolCall,
    UsageCounters,
)
from sessaudit.formats.rivumi.spec.encoding import (
    FILE_MODE,
    append_bytes,
    dump_sorted,
    format_datetime,
    write_atomic,
)
from sessaudit.formats.rivumi.spec.manifest_fields import manifest_defaults, usage_record

DEFAULT_START: Final = datetime(2026, 11, 29, 20, 28, 9, 427347, tzinfo=UTC)
TERMINAL_PHASES: Final = {"run.completed": "completed", "run.failed": "failed", "run.cancelled": "cancelled"}
_TEMP_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz0123456789_"


class RunBuilder:
    """Writes one Rivumi run directory under `run_root` as Rivumi's loop would."""

    def __init__(
        self,
        run_root: Path,
        *,
        seed: int = 0,
        run_id: str | None = None,
        task_id: str = "task-fix-add",
        provider: str = "scripted",
        model: str = "scripted",
        protocol: str = "scripted",
        prompt_version: str = "m3-exact-edit-v4",
        repository: str = "/home/dev/calc",
        instruction: str = "Fix add() in calc.py so that the tests pass.",
        verification: Sequence[JsonObject] = (
            {"name": "check", "argv": ["python", "-m", "pytest", "-q"], "timeout_seconds": 300},
        ),
        start: datetime = DEFAULT_START,
        pid: int = 4242,
        crash: Crash | None = None,
    ) -> None:
        self._random = random.Random(seed)
        self.run_id = run_id or self.hex32()
        self.run_dir = run_root / self.run_id
        self.task_id = task_id
        self.provider, self.model, self.protocol = provider, model, protocol
        self.prompt_version = prompt_version
        self.base_sha = f"{self._random.getrandbits(160):040x}"
        self.repository, self.instruction = repository, instruction
        self.verification = [dict(command) for command in verification]
        self._now = start
        self._started = start
        self.pid = pid
        self.crash = crash
        self._seen: dict[str, int] = {}
        self.events: list[BuiltEvent] = []
        self.dead = False
        self._sequence = 0
        self.step = 0
        self._usage = UsageCounters()
        self.manifest: JsonObject = {}

    # --- ids and time ---------------------------------------------------------------------------
    def hex32(self) -> str:
        return f"{self._random.getrandbits(128):032x}"

    def tick(self) -> str:
        self._now += timedelta(microseconds=self._random.randint(1_000, 40_000))
        return format_datetime(self._now)

    # --- files ------------------------------------------------------------------------------------
    def save(self) -> None:
        """An atomic, fenced manifest save: heartbeat and updated_at refreshed."""
        stamp = format_datetime(self._now)
        self.manifest["writer_heartbeat_at"] = stamp
        self.manifest["updated_at"] = stamp
        self._write_json("session.json", self.manifest)

    def _write_json(self, name: str, value: JsonObject) -> None:
        suffix = "".join(self._random.choice(_TEMP_ALPHABET) for _ in range(8))
        write_atomic(self.run_dir, name, dump_sorted(value).encode("utf-8"), suffix)

    def start(self) -> None:
        """Claim the lease, write request.json and the manifest, then `run.created`, `workspace.prepared`."""
        self.run_dir.mkdir(mode=0o700, parents=True)
        token = self.hex32()
        lock = os.open(self.run_dir / ".writer.lock", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            os.write(lock, f"pid={self.pid} token={token}\n".encode("ascii"))
        finally:
            os.close(lock)
        stamp = format_datetime(self._now)
        self.manifest = manifest_defaults(
            run_id=self.run_id,
            task_id=self.task_id,
            provider_name=self.provider,
            model_id=self.model,
            protocol=self.protocol,
            prompt_version=self.prompt_version,
            base_sha=self.base_sha,
        )
        self.manifest.update(
            active_writer_token=token,
            writer_claimed_at=stamp,
            active_started_at=stamp,
            messages=[
                {"content": "You are a careful coding agent.", "role": "system", "tool_calls": []},
                {"content": self.instruction, "role": "user", "tool_calls": []},
            ],
        )
        self.save()
        self._write_json("request.json", self.request())
        (self.run_dir / "workspace" / ".git").mkdir(parents=True)
        # a stand-in for the detached clone at base_sha: what a file-reading HEAD check needs
        (self.run_dir / "workspace" / ".git" / "HEAD").write_text(self.base_sha + "\n", encoding="ascii")
        self.manifest["phase"] = "preparing"
        data = {"base_sha": self.base_sha, "model": self.model, "prompt_version": self.prompt_version}
        self.emit("run.created", {**data, "provider": self.provider})
        self.manifest["phase"] = "running"
        self.emit("workspace.prepared", {"base_sha": self.base_sha, "workspace": "workspace"})

    def request(self) -> JsonObject:
        return {
            "allowed_paths": ["calc.py"],
            "base_sha": self.base_sha,
            "instruction": self.instruction,
            "limits": {
                "max_patch_bytes": 100_000,
                "max_steps": 12,
                "max_tool_output_bytes": 200_000,
                "max_total_tokens": None,
                "wall_time_seconds": 900,
            },
            "repository": self.repository,
            "task_id": self.task_id,
            "verification": self.verification,
        }

    # --- the one routine every event goes through -----------------------------------------------
    def emit(self, event_type: str, data: JsonObject, *, then: Callable[[], None] | None = None) -> None:
        if self.dead:
            raise Killed("the writer is dead")
        sequence = self._sequence
        event = {
            "created_at": self.tick(),
            "data": data,
            "event_id": self.hex32(),
            "event_type": event_type,
            "run_id": self.run_id,
            "sequence": sequence,
            "task_id": self.task_id,
        }
        self.manifest["last_event_sequence"] = sequence
        self.manifest["step"] = self.step
        self.save()
        line = (dump_sorted(event) + "\n").encode("utf-8")
        built = BuiltEvent(event, line)
        self.events.append(built)
        mode = self._crash_mode(event_type, sequence)
        if mode is CrashMode.BEFORE_APPEND:
            built.written = "none"
        elif mode is CrashMode.TORN:
            assert self.crash is not None
            keep = self.crash.torn_bytes if self.crash.torn_bytes is not None else len(line) // 2
            append_bytes(self.run_dir / "events.jsonl", line[:keep])
            built.written = "torn"
        elif mode is CrashMode.NO_NEWLINE:
            append_bytes(self.run_dir / "events.jsonl", line[:-1])
            built.written = "no-newline"
        else:
            append_bytes(self.run_dir / "events.jsonl", line)
            self._sequence += 1
            if then is not None:
                then()
        if mode is not None:
            self.dead = True
            raise Killed(f"killed at {event_type} (sequence {sequence}, {mode})")

    def _crash_mode(self, event_type: str, sequence: int) -> CrashMode | None:
        crash = self.crash
        if crash is None:
            return None
        if crash.sequence is not None:
            return crash.mode if crash.sequence == sequence else None
        if crash.event_type != event_type:
            return None
        self._seen[event_type] = self._seen.get(event_type, 0) + 1
        return crash.mode if self._seen[event_type] == crash.occurrence else None

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
