"""What Rivumi's `claim_and_validate_resume` would answer (spec §4), computed read-only from the files.

Rivumi's claim rewrites session.json and the lock; this module writes nothing and runs no `git` (the
workspace HEAD is read from `.git/HEAD`, loose refs and `packed-refs`). Rivumi loads session.json and
request.json with Python's `json` and validates them with pydantic models in lax Python mode, and reads
each event line with a pydantic model in lax JSON mode; this module does the same with its own models of
those shapes (models.py), so every coercion, default and strip is pydantic's. Every event line is parsed
before any is checked, as Rivumi parses the whole log first: an invalid line anywhere wins over an earlier
gap or id drift. A directory in place of one of the three files fails Rivumi's read with an OSError it
reports like bad JSON ("invalid JSON session artifact", "contains an invalid event"), not as missing.

Where Rivumi does not answer but crashes (an exception its resume does not catch), the answer says so
(`crash`, a message "Rivumi crashes: <name>: <detail>") rather than inventing a verdict: a `.writer.lock`
that is a symbolic link (O_NOFOLLOW: ELOOP) or a directory; an integer of more than 4,300 digits or
nesting that exhausts Python's recursion limit in session.json or request.json; and a manifest its claim
cannot write back (a lone surrogate escape in a string, or a value nested too deep for pydantic's
serializer).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from sessaudit.formats.rivumi.native.models import RunEvent, SessionManifest, TaskContract
from sessaudit.formats.rivumi.native.replay import CRASH_PREFIX, RivumiCrash, python_json
from sessaudit.formats.rivumi.read.manifest import RESUME_SIZE_LIMIT

SIDE_EFFECT_TYPES: Final = frozenset({"tool.started", "verification.started"})
_ARTIFACTS: Final = ("session.json", "request.json", "events.jsonl")
# session.json and request.json are parsed on a worker thread (asyncio.to_thread), whose stack leaves
# Python 3.11's json room for 989 nested containers (measured through Rivumi's SessionStore)
ARTIFACT_DEPTH_LIMIT: Final = 990
_HEX40: Final = re.compile(r"[0-9a-fA-F]{40}")
# a `.writer.lock` Rivumi cannot take: (file type, exception, errno, whether the message names the path);
# a FIFO opens and locks, but the truncation before the pid and token are written fails
_LOCK_FAILURES: Final[tuple[tuple[Callable[[int], bool], str, int, bool], ...]] = (
    (stat.S_ISLNK, "OSError", errno.ELOOP, True),
    (stat.S_ISDIR, "IsADirectoryError", errno.EISDIR, True),
    (stat.S_ISSOCK, "OSError", errno.ENXIO, True),
    (stat.S_ISFIFO, "OSError", errno.EINVAL, False),
)
# what a claim writes into the manifest: a fresh 32-hex lease token and the time (with microseconds)
_CLAIM: Final = {
    "active_writer_token": "0" * 32,
    "writer_claimed_at": datetime(2000, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    "writer_heartbeat_at": datetime(2000, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    "updated_at": datetime(2000, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
}


class ResumeRefused(Exception):
    """Rivumi's SessionValidationError / SessionBusyError, with its message and the check that refused."""

    def __init__(self, message: str, stage: str = "records") -> None:
        super().__init__(message)
        self.stage = stage


@dataclass(frozen=True, slots=True)
class ResumeAnswer:
    """`refused_by`: which check refused — "writer", "records", "workspace", "terminal", or "crash" when
    Rivumi crashes instead of answering (None when ok); `crash` then names the exception."""

    ok: bool
    message: str | None
    repaired_to: int | None
    refused_by: str | None = field(default=None, compare=False)
    crash: str | None = field(default=None, compare=False)

    def as_native(self) -> dict[str, Any]:
        native = {"ok": self.ok, "message": self.message, "repaired_to": self.repaired_to}
        return native if self.crash is None else {**native, "crash": self.crash}


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
    except RivumiCrash as crash:
        return ResumeAnswer(False, CRASH_PREFIX + str(crash), state["repaired_to"], "crash", crash.name)
    return ResumeAnswer(True, None, state["repaired_to"])


def _validate(
    run_dir: str,
    contents: dict[str, bytes | None],
    writer_active: bool,
    check_workspace: bool,
    state: dict[str, Any],
) -> None:
    _lock_file(os.path.join(run_dir, ".writer.lock"))
    if writer_active:
        raise ResumeRefused("session already has an active writer", "writer")
    # a directory where a file should be: Rivumi's read fails with an OSError, which it reports like bad JSON
    directories = {name for name in _ARTIFACTS if _is_directory(os.path.join(run_dir, name))}
    try:
        manifest = SessionManifest.model_validate(_load_artifact("session.json", contents, directories))
    except ValidationError:
        raise ResumeRefused("session.json does not match the supported schema") from None
    _claim(manifest)
    try:
        request = TaskContract.model_validate(_load_artifact("request.json", contents, directories))
    except ValidationError:
        raise ResumeRefused("request.json is not a valid task contract") from None
    if request.task_id != manifest.task_id:
        raise ResumeRefused("request task_id does not match session")
    if request.base_sha is None or request.base_sha.lower() != manifest.base_sha.lower():
        raise ResumeRefused("request base_sha does not match session")
    events = contents.get("events.jsonl")
    if events is None and "events.jsonl" in directories:
        raise ResumeRefused("events.jsonl contains an invalid event", "events")
    last, last_type = _events(events, manifest.run_id, manifest.task_id, manifest.last_event_sequence)
    recorded = manifest.last_event_sequence
    if recorded not in (last, last + 1):
        raise ResumeRefused("manifest event sequence does not match events.jsonl")
    if recorded == last + 1:
        state["repaired_to"] = last
    elif last_type in SIDE_EFFECT_TYPES:
        raise ResumeRefused(
            "session stopped during a side effect; automatic resume cannot prove whether the action completed"
        )
    if check_workspace:
        _workspace(os.path.join(run_dir, "workspace"), manifest.base_sha)
    if manifest.terminal:
        raise ResumeRefused("terminal sessions cannot be resumed", "terminal")


def _lock_file(path: str) -> None:
    """Rivumi opens `.writer.lock` with O_CREAT|O_RDWR|O_NOFOLLOW, locks it, truncates it and writes its pid
    and token; an OSError on the way is not caught."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # absent: Rivumi creates it
    for is_kind, name, number, named in _LOCK_FAILURES:
        if is_kind(mode):
            where = f": {path!r}" if named else ""
            raise RivumiCrash(name, f"[Errno {number}] {os.strerror(number)}{where}")


def _is_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _load_artifact(name: str, contents: dict[str, bytes | None], directories: set[str]) -> Any:
    """The JSON value of session.json or request.json, as Rivumi's `_read_json` loads it."""
    data = contents.get(name)
    if data is None and name in directories:
        raise ResumeRefused(f"invalid JSON session artifact: {name}")
    if data is None:
        raise ResumeRefused(f"missing session artifact: {name}")
    if len(data) > RESUME_SIZE_LIMIT:
        raise ResumeRefused(f"session artifact is too large: {name}")
    try:
        return python_json(data.decode("utf-8"), ARTIFACT_DEPTH_LIMIT)
    except ValueError:  # UnicodeDecodeError and json.JSONDecodeError are the two Rivumi catches
        raise ResumeRefused(f"invalid JSON session artifact: {name}") from None


def _claim(manifest: SessionManifest) -> None:
    """The claim writes the manifest back (pydantic's JSON dump, made JSON-able again by pydantic, then
    `json.dumps` and UTF-8); where that fails, Rivumi crashes. The placeholders have the length of the real
    token and time, so a position in the error is the one Rivumi's would name; pydantic's own messages are
    those of the installed pydantic (its serializer's depth error is worded differently across versions)."""
    try:
        payload = to_jsonable_python(manifest.model_copy(update=_CLAIM).model_dump(mode="json"))
        json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    except (ValueError, RecursionError) as error:  # UnicodeEncodeError is a ValueError
        raise RivumiCrash(type(error).__name__, str(error)) from None


def resume_log_problem(data: bytes, *, run_id: str, task_id: str | None) -> str | None:
    """What Rivumi's resume says about this events.jsonl alone (its step 4), for a run with these ids."""
    try:
        _events(data, run_id, task_id, None)
    except ResumeRefused as refusal:
        return str(refusal)
    return None


def _events(
    data: bytes | None, run_id: str, task_id: str | None, recorded: int | None
) -> tuple[int, str | None]:
    """The last sequence (−1 for none) and last event type, after Rivumi's per-event checks."""
    if data is None:
        if recorded not in (None, -1):
            raise ResumeRefused("events.jsonl is missing", "events")
        return -1, None
    if len(data) > RESUME_SIZE_LIMIT:
        raise ResumeRefused("events.jsonl is too large to resume safely", "events")
    events: list[RunEvent] = []
    try:
        # universal newlines, as Rivumi's reader splits (spec §4.1 trap); all lines parsed before any check
        for piece in data.decode("utf-8").splitlines():
            if piece.strip():
                events.append(RunEvent.model_validate_json(piece))
    except ValueError:  # UnicodeDecodeError or pydantic's ValidationError
        raise ResumeRefused("events.jsonl contains an invalid event", "events") from None
    for index, event in enumerate(events):
        if event.sequence != index:
            raise ResumeRefused("event sequence is not contiguous", "events")
        if event.run_id != run_id:
            raise ResumeRefused("event run_id does not match session", "events")
        if event.task_id is not None and event.task_id != task_id:
            raise ResumeRefused("event task_id does not match session", "events")
    return (events[-1].sequence, events[-1].event_type) if events else (-1, None)


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
