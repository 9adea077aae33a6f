"""A fork run as Rivumi's `sessions --fork-from-event` (5dc5dc4 and later) creates it (spec §5.3)."""

from __future__ import annotations

import json
import os
import random
from datetime import datetime
from pathlib import Path
from typing import Any

from sessaudit.formats.rivumi.build.writer import DEFAULT_START
from sessaudit.formats.rivumi.spec.encoding import FILE_MODE, dump_declared, format_datetime
from sessaudit.formats.rivumi.spec.eventtypes import ENVELOPE_KEYS
from sessaudit.formats.rivumi.spec.manifest_fields import (
    LIMITS_FIELDS,
    MANIFEST_FIELDS,
    TASK_CONTRACT_FIELDS,
    USAGE_FIELDS,
    VERIFICATION_COMMAND_FIELDS,
    manifest_defaults,
)


def _write(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        os.write(descriptor, text.encode("utf-8"))
    finally:
        os.close(descriptor)


def _request_dump(request: dict[str, Any]) -> str:
    ordered = dict(request)
    ordered["limits"] = json.loads(dump_declared(request["limits"], LIMITS_FIELDS))
    ordered["verification"] = [
        json.loads(dump_declared(command, VERIFICATION_COMMAND_FIELDS)) for command in request["verification"]
    ]
    return dump_declared(ordered, TASK_CONTRACT_FIELDS)


def build_fork_run(source_dir: Path, sequence: int, *, seed: int = 0, now: datetime = DEFAULT_START) -> Path:
    """Create `fork-<32hex>` beside `source_dir`, forked at event `sequence`; returns its directory.

    Written as Rivumi writes it: request.json and session.json as model dumps (declaration order,
    compact, trailing LF; the manifest *with* `usage.total_tokens`, which Rivumi's own reader rejects),
    a workspace stand-in at base_sha, and a one-line events.jsonl holding `run.forked` (sequence 0).
    """
    generator = random.Random(seed)
    data = (source_dir / "events.jsonl").read_bytes()
    if not data.endswith(b"\n") and data.rsplit(b"\n", 1)[-1].strip():
        raise ValueError("event JSONL has a partial final line")  # Rivumi refuses such a source too
    events = [json.loads(line) for line in data.split(b"\n") if line.strip()]
    prefix = [event for event in events if event["sequence"] <= sequence]
    (point,) = [event for event in events if event["sequence"] == sequence]
    request = json.loads((source_dir / "request.json").read_bytes())
    # spec-silent: the fork keeps the source's prompt version (from its run.created)
    created = [event["data"] for event in events if event["event_type"] == "run.created"]
    prompt_version = created[0].get("prompt_version", "m3-exact-edit-v4") if created else "m3-exact-edit-v4"
    run_id = f"fork-{generator.getrandbits(128):032x}"
    task_id = f"{request['task_id']}-fork-{generator.getrandbits(32):08x}"
    fork_dir = source_dir.parent / run_id
    fork_dir.mkdir(mode=0o700)
    _write(fork_dir / "request.json", _request_dump({**request, "task_id": task_id}) + "\n")
    stamp = format_datetime(now)
    manifest = manifest_defaults(
        run_id=run_id,
        task_id=task_id,
        provider_name="fork",
        model_id="side-effect-free",
        protocol="replay-fork",
        prompt_version=prompt_version,
        base_sha=request["base_sha"],
    )
    manifest.update(last_event_sequence=0, updated_at=stamp)
    usage = {key: manifest["usage"][key] for key in USAGE_FIELDS}
    manifest["usage"] = {**usage, "total_tokens": 0}
    _write(fork_dir / "session.json", dump_declared(manifest, MANIFEST_FIELDS) + "\n")
    (fork_dir / "workspace" / ".git").mkdir(parents=True)
    (fork_dir / "workspace" / ".git" / "HEAD").write_text(request["base_sha"] + "\n", encoding="ascii")
    forked = {
        "event_type": "run.forked",
        "run_id": run_id,
        "task_id": task_id,
        "sequence": 0,
        "data": {
            "source_run_id": point["run_id"],
            "fork_point_sequence": sequence,
            "fork_point_event_type": point["event_type"],
            "events_included": len(prefix),
            "side_effects_replayed": False,
            "workspace": "workspace",
            "base_sha": request["base_sha"],
        },
        "event_id": f"{generator.getrandbits(128):032x}",
        "created_at": stamp,
    }
    _write(fork_dir / "events.jsonl", dump_declared(forked, ENVELOPE_KEYS) + "\n")
    return fork_dir
