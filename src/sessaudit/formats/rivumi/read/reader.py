"""Read one Rivumi run directory without changing it, and run the per-file checks (events, manifest, lock)."""

from __future__ import annotations

import hashlib
import io
import os
import stat
from dataclasses import dataclass, field
from typing import Final

from sessaudit import evidence
from sessaudit.evidence import NotRegularFile, open_evidence, read_chunks
from sessaudit.formats.rivumi.read.eventlog import EventLog
from sessaudit.formats.rivumi.read.events import verify_events
from sessaudit.formats.rivumi.read.manifest import JsonArtifact, check_lock, check_manifest, check_request
from sessaudit.formats.rivumi.read.usage import cross_check_usage
from sessaudit.limits import DEFAULT_LIMITS, FILE_TOO_LARGE, Limits, over_limit, size_text
from sessaudit.model import Finding
from sessaudit.plugin import FileRead
from sessaudit.rules import finding

RUN_FILES: Final = ("events.jsonl", "session.json", "request.json", ".writer.lock")
RECORDS: Final = ("events.jsonl", "session.json")  # the run's records: without them nothing is verified
TEMP_PREFIXES: Final = tuple(
    f".{name}."
    for name in ("session.json", "request.json", "checkpoint.json", "verification.json", "result.json")
)


@dataclass(slots=True)
class RunCheck:
    """The per-file verdicts of one run directory; reconciliation (§4) and replay (§5) build on this."""

    directory: str
    files: list[FileRead] = field(default_factory=list)
    contents: dict[str, bytes | None] = field(default_factory=dict)
    log: EventLog | None = None
    manifest: JsonArtifact | None = None
    request: JsonArtifact | None = None
    findings: list[Finding] = field(default_factory=list)
    # a record (events.jsonl, session.json) that exists but was not read: a symbolic link, or an OS error
    unread_records: list[str] = field(default_factory=list)

    @property
    def too_large(self) -> bool:
        """A run file was over `--max-file-bytes` and not read (SA012)."""
        return any(item.rule == FILE_TOO_LARGE for item in self.findings)

    @property
    def over_limit(self) -> bool:
        """A file was not read, or the event log not read whole, because of a limit (SA010–SA014): what
        depends on every event (reconciliation, Rivumi's answers, the usage cross-check) is not derived."""
        logged = self.log.findings if self.log is not None else []
        return self.too_large or bool(over_limit(self.findings)) or bool(over_limit(logged))

    @property
    def not_verified(self) -> bool:
        """Nothing about the run can be derived: a file was over a limit, or a record exists but could not
        be read (what Rivumi would find in it is unknown, so neither "missing" nor a seed is said)."""
        return self.over_limit or bool(self.unread_records)


def _read(shown: str, real: str, check: RunCheck, limits: Limits = DEFAULT_LIMITS) -> bytes | None:
    """A regular file's bytes (never following a symlink), or None when absent; problems become findings.

    Only the size at open is read, so a log appended to meanwhile is verified as the snapshot it was when
    opened (never half a line written after it); the engine's re-hash then notes the growth."""
    name = os.path.basename(real)
    record = name in RECORDS
    try:
        stream, size = open_evidence(real)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        check.findings.append(finding("SA543", f"{shown} is not a regular file", path=shown))
        return None
    except OSError as error:
        if _is_link(real):
            message = f"{shown} is a symbolic link; sessaudit follows no link inside a run directory"
        else:
            message = f"{shown} cannot be opened: {error.strerror}"
        if record:
            check.unread_records.append(name)
            message += "; the run was not verified (nothing is known of its events or open state)"
        check.findings.append(finding("SA543", message, path=shown))
        return None
    if size > limits.max_file_bytes:  # held whole below: refused by its size at open, never read
        stream.close()
        check.findings.append(
            finding(
                FILE_TOO_LARGE,
                f"{shown} is {size} bytes, over the --max-file-bytes limit of "
                f"{size_text(limits.max_file_bytes)} for a file read whole; the run was not verified",
                path=shown,
                evidence={"bytes": size, "max_file_bytes": limits.max_file_bytes},
            )
        )
        return None
    try:
        with stream:
            data = b"".join(read_chunks(stream, size))
    except OSError as error:
        message = f"{shown} cannot be read: {error.strerror}"
        if record:
            check.unread_records.append(name)
            message += "; the run was not verified (nothing is known of its events or open state)"
        check.findings.append(finding("SA543", message, path=shown))
        return None
    check.files.append(FileRead(shown, real, len(data), hashlib.sha256(data).hexdigest(), opened_bytes=size))
    return data


def _is_link(real: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(real).st_mode)
    except OSError:
        return False


def check_run_directory(shown: str, real: str, limits: Limits = DEFAULT_LIMITS) -> RunCheck:
    """Each file of the run read once (events.jsonl, session.json, request.json, .writer.lock) and checked.

    A file over `limits.max_file_bytes` is not read and nothing is checked (`too_large`): the run's
    answers depend on every file, so none is given from a part."""
    check = RunCheck(shown)
    for name in RUN_FILES:
        check.contents[name] = _read(os.path.join(shown, name), os.path.join(real, name), check, limits)
    if check.too_large or check.unread_records:
        return check
    try:
        with evidence.scan_directory(real) as iterator:
            names = sorted(entry.name for entry in iterator)
    except OSError as error:  # readable files in a folder that cannot be listed (mode 0o100)
        check.findings.append(finding("SA543", f"{shown} cannot be listed: {error.strerror}", path=shown))
        names = []
    for entry in names:
        if entry.startswith(TEMP_PREFIXES):
            check.findings.append(
                finding(
                    "SA542",
                    f"{entry} is a temp file of an atomic write left by a killed writer; ignored",
                    path=os.path.join(shown, entry),
                )
            )
    directory_name = os.path.basename(os.path.normpath(real))
    manifest = check_manifest(
        os.path.join(shown, "session.json"), check.contents["session.json"], directory_name=directory_name
    )
    check.manifest = manifest
    document = manifest.document
    check.request = check_request(
        os.path.join(shown, "request.json"), check.contents["request.json"], document
    )
    events_data = check.contents["events.jsonl"]
    events_path = os.path.join(shown, "events.jsonl")
    if events_data is not None:
        run_id = document.get("run_id") if document is not None else None
        task_id = document.get("task_id") if document is not None else None
        check.log = verify_events(
            events_path,
            io.BytesIO(events_data),
            len(events_data),
            run_id=run_id if isinstance(run_id, str) else directory_name,
            task_id=task_id if isinstance(task_id, str) else None,
            max_line_bytes=limits.max_line_bytes,
            max_findings=limits.max_findings,
        )
        if document is not None and not over_limit(check.log.findings):
            check.findings.extend(cross_check_usage(os.path.join(shown, "session.json"), document, check.log))
    unreadable = {item.location.path for item in check.findings if item.rule == "SA543"}
    # a file that exists but could not be read is reported once, not also as missing
    for artifact in (manifest, check.request):
        check.findings.extend(
            item
            for item in artifact.findings
            if not (item.location.path in unreadable and item.rule in ("SA530", "SA536"))
        )
    check.findings.extend(
        check_lock(os.path.join(shown, ".writer.lock"), check.contents[".writer.lock"], document)
    )
    if check.log is not None:
        check.findings.extend(check.log.findings)
    check.findings.sort(key=lambda item: (item.location.path or "", item.location.line or 0, item.rule))
    return check
