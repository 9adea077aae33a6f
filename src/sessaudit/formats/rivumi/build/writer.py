"""The builder's writer: a Rivumi run directory's files and the write discipline of spec §2.1/§3.1.

Every event first saves the manifest (atomically, with `last_event_sequence` = the event's sequence) and
then appends the event line. A `Crash` stops the writer at a chosen event in one of the windows that
discipline leaves open. The loop's steps (model turns, approvals, tools, verification) are run_builder.py's.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from sessaudit.formats.rivumi.build.parts import (
    BuiltEvent,
    Crash,
    CrashMode,
    JsonObject,
    Killed,
    UsageCounters,
)
from sessaudit.formats.rivumi.spec.encoding import (
    FILE_MODE,
    append_bytes,
    dump_sorted,
    format_datetime,
    write_atomic,
)
from sessaudit.formats.rivumi.spec.manifest_fields import manifest_defaults

DEFAULT_START: Final = datetime(2026, 11, 29, 20, 28, 9, 427347, tzinfo=UTC)
_TEMP_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz0123456789_"


class RunWriter:
    """The files of one Rivumi run directory under `run_root`, and the routine every event goes through."""

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
