"""What Rivumi's `claim_and_validate_resume` would answer (spec §4), computed read-only from the files.

Rivumi's claim rewrites session.json and the lock; this module writes nothing and runs no `git` (the
workspace HEAD is read from `.git/HEAD`, loose refs and `packed-refs`). Rivumi reads its files with
pydantic models in lax mode; so does this module, through pydantic itself (lax.py): the manifest and
request are coerced against our strict v1 schemas and then validated, and each event's envelope is read
as the lax RunEvent model reads it. Known approximation: the JSON is decoded by Python's `json`, which
like pydantic's parser takes the last of duplicate keys, but also accepts NaN where pydantic may not.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

from sessaudit.formats.rivumi.eventtypes import ENVELOPE_KEYS
from sessaudit.formats.rivumi.lax import LaxCoercer, lax_integer, lax_value
from sessaudit.formats.rivumi.manifest import (
    REQUEST_SCHEMA,
    RESUME_SIZE_LIMIT,
    SESSION_SCHEMA,
    cross_field_problems,
)
from sessaudit.resources import load_schema

SIDE_EFFECT_TYPES: Final = frozenset({"tool.started", "verification.started"})
_HEX40: Final = re.compile(r"[0-9a-fA-F]{40}")


class ResumeRefused(Exception):
    """Rivumi's SessionValidationError / SessionBusyError, with its message and the check that refused."""

    def __init__(self, message: str, stage: str = "records") -> None:
        super().__init__(message)
        self.stage = stage


@dataclass(frozen=True, slots=True)
class ResumeAnswer:
    """`refused_by`: which check refused — "writer", "records", "workspace" or "terminal" (None when ok)."""

    ok: bool
    message: str | None
    repaired_to: int | None
    refused_by: str | None = field(default=None, compare=False)

    def as_native(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.message, "repaired_to": self.repaired_to}


def native_resume(
    run_dir: str,
    contents: dict[str, bytes | None],
    *,
    writer_active: bool = False,
    check_workspace: bool = True,
) -> ResumeAnswer:
    """`contents`: the bytes of session.json, request.json and events.jsonl (None when absent).

    `check_workspace` False skips step 7 (the records alone: what a resume in a restored workspace would
    answer)."""
    state: dict[str, Any] = {"repaired_to": None}
    try:
        _validate(run_dir, contents, writer_active, check_workspace, state)
    except ResumeRefused as refusal:
        return ResumeAnswer(False, str(refusal), state["repaired_to"], refusal.stage)
    return ResumeAnswer(True, None, state["repaired_to"])


def _validate(
    run_dir: str,
    contents: dict[str, bytes | None],
    writer_active: bool,
    check_workspace: bool,
    state: dict[str, Any],
) -> None:
    if writer_active:
        raise ResumeRefused("session already has an active writer", "writer")
    manifest = _lax_document(_load_artifact("session.json", contents.get("session.json")), SESSION_SCHEMA)
    if manifest is None or cross_field_problems("session.json", manifest, None):
        raise ResumeRefused("session.json does not match the supported schema")
    request = _lax_document(_load_artifact("request.json", contents.get("request.json")), REQUEST_SCHEMA)
    if request is None:
        raise ResumeRefused("request.json is not a valid task contract")
    run_id, task_id = manifest["run_id"].strip(), manifest["task_id"].strip()  # identifiers are stripped
    manifest = {**manifest, "run_id": run_id, "task_id": task_id}
    if request["task_id"].strip() != task_id:
        raise ResumeRefused("request task_id does not match session")
    base_sha = request.get("base_sha")
    if not isinstance(base_sha, str) or base_sha.lower() != manifest["base_sha"].lower():
        raise ResumeRefused("request base_sha does not match session")
    last, last_type = _events(contents.get("events.jsonl"), manifest)
    recorded = manifest.get("last_event_sequence", -1)
    if recorded not in (last, last + 1):
        raise ResumeRefused("manifest event sequence does not match events.jsonl")
    if recorded == last + 1:
        state["repaired_to"] = last
    elif last_type in SIDE_EFFECT_TYPES:
        raise ResumeRefused(
            "session stopped during a side effect; automatic resume cannot prove whether the action completed"
        )
    if check_workspace:
        _workspace(os.path.join(run_dir, "workspace"), manifest["base_sha"])
    if manifest.get("terminal", False):
        raise ResumeRefused("terminal sessions cannot be resumed", "terminal")


@cache
def _coercer(schema: str) -> LaxCoercer:
    return LaxCoercer(load_schema(schema))


def _lax_document(document: dict[str, Any], schema: str) -> dict[str, Any] | None:
    """The document as Rivumi's lax pydantic model reads it, or None when the model refuses it."""
    coercer = _coercer(schema)
    coerced = coercer.coerce(document)
    return coerced if isinstance(coerced, dict) and coercer.validator.is_valid(coerced) else None


def resume_log_problem(data: bytes, *, run_id: str, task_id: str | None) -> str | None:
    """What Rivumi's resume says about this events.jsonl alone (its step 4), for a run with these ids."""
    try:
        _events(data, {"run_id": run_id, "task_id": task_id})
    except ResumeRefused as refusal:
        return str(refusal)
    return None


def _load_artifact(name: str, data: bytes | None) -> dict[str, Any]:
    if data is None:
        raise ResumeRefused(f"missing session artifact: {name}")
    if len(data) > RESUME_SIZE_LIMIT:
        raise ResumeRefused(f"session artifact is too large: {name}")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ResumeRefused(f"invalid JSON session artifact: {name}") from None
    return document if isinstance(document, dict) else {}


def _events(data: bytes | None, manifest: dict[str, Any]) -> tuple[int, str | None]:
    """The last sequence (−1 for none) and last event type, after Rivumi's per-event checks."""
    if data is None:
        if manifest.get("last_event_sequence", -1) != -1:
            raise ResumeRefused("events.jsonl is missing", "events")
        return -1, None
    if len(data) > RESUME_SIZE_LIMIT:
        raise ResumeRefused("events.jsonl is too large to resume safely", "events")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ResumeRefused("events.jsonl contains an invalid event", "events") from None
    last, last_type = -1, None
    index = 0
    for piece in text.splitlines():  # universal newlines, as Rivumi's reader splits (spec §4.1 trap)
        if not piece.strip():
            continue
        event = _lax_event(piece)
        if event is None:
            raise ResumeRefused("events.jsonl contains an invalid event", "events")
        if event["sequence"] != index:
            raise ResumeRefused("event sequence is not contiguous", "events")
        if event["run_id"] != manifest["run_id"]:
            raise ResumeRefused("event run_id does not match session", "events")
        if event["task_id"] is not None and event["task_id"] != manifest["task_id"]:
            raise ResumeRefused("event task_id does not match session", "events")
        last, last_type = event["sequence"], event["event_type"]
        index += 1
    return last, last_type


def _lax_event(piece: str) -> dict[str, Any] | None:
    """A RunEvent as pydantic's lax JSON mode would accept it, or None."""
    try:
        record = json.loads(piece)
    except ValueError:
        return None
    if not isinstance(record, dict) or not set(record) <= set(ENVELOPE_KEYS):
        return None
    event_type, run_id, task_id = record.get("event_type"), record.get("run_id"), record.get("task_id")
    if not (isinstance(event_type, str) and event_type and isinstance(run_id, str) and run_id):
        return None
    if task_id is not None and not isinstance(task_id, str):
        return None
    if not isinstance(record.get("data", {}), dict) or not isinstance(record.get("event_id", ""), str):
        return None
    if "created_at" in record and not _lax_datetime(record["created_at"]):
        return None
    sequence = lax_integer(record.get("sequence"))
    if sequence is None or sequence < 0:
        return None
    return {"event_type": event_type, "run_id": run_id, "task_id": task_id, "sequence": sequence}


def _lax_datetime(value: Any) -> bool:
    return lax_value("date-time", value) is not None


def _workspace(workspace: str, base_sha: str) -> None:
    if os.path.islink(workspace) or not os.path.isdir(workspace):
        raise ResumeRefused("session workspace is missing or is a symlink", "workspace")
    git_dir = os.path.join(workspace, ".git")
    head = _read_text(os.path.join(git_dir, "HEAD")) if os.path.isdir(git_dir) else None
    if head is None:
        # without its own .git, `git rev-parse` fails or finds an enclosing repository: either way no match
        raise ResumeRefused("session workspace is not a valid Git worktree", "workspace")
    head = head.strip()
    if head.startswith("ref:"):
        resolved = _resolve_ref(git_dir, head[4:].strip())
        if resolved is None:
            raise ResumeRefused("session workspace is not a valid Git worktree", "workspace")
        head = resolved
    if not _HEX40.fullmatch(head):
        raise ResumeRefused("session workspace is not a valid Git worktree", "workspace")
    if head.lower() != base_sha.lower():
        raise ResumeRefused("workspace HEAD does not match the recorded base_sha", "workspace")


def _resolve_ref(git_dir: str, ref: str) -> str | None:
    loose = _read_text(os.path.join(git_dir, *ref.split("/")))
    if loose is not None:
        return loose.strip()
    packed = _read_text(os.path.join(git_dir, "packed-refs")) or ""
    for line in packed.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].strip() == ref:
            return parts[0]
    return None


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
