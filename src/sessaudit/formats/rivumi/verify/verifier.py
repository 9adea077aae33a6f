"""verify_rivumi: one Rivumi run directory → the engine's SourceOutcome (CONTRACT §4, §6).

Read once, read-only (read/reader.py), then: reconciliation and open state (reconcile.py), Rivumi's own
two answers (native/resume.py, native/replay.py) and where they part (agreement.py), the open-work findings
shared with the other formats (SA301–SA303), and a seed per open run (seed/seeding.py). Which findings
belong to the session (the run's records: events and reconciliation) and which to the source (manifest,
request, lock, temp files, workspace, live writer) follows CONTRACT §4's verdict rules.
"""

from __future__ import annotations

import os
from typing import Any, Final

from sessaudit.flocks import writer_active
from sessaudit.formats.rivumi.native.replay import native_replay
from sessaudit.formats.rivumi.native.resume import native_resume, resume_log_problem
from sessaudit.formats.rivumi.read.eventlog import Event
from sessaudit.formats.rivumi.read.reader import RunCheck, check_run_directory
from sessaudit.formats.rivumi.seed.seeding import RunRecords, rivumi_seed
from sessaudit.formats.rivumi.verify.agreement import (
    readers_disagreement,
    resume_context_findings,
    terminal_disagreement,
)
from sessaudit.formats.rivumi.verify.reconcile import Reconciliation, reconcile
from sessaudit.model import Finding, Location, SeedSource, Session, Usage
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome, VerifyOptions, source_sha256
from sessaudit.rules import finding, verdict_of
from sessaudit.times import iso_from_text
from sessaudit.verdicts import Verdict, worst
from sessaudit.withheld import first_corrupting, withheld_reason

FORMAT: Final = "rivumi"
MODEL_UNCHANGED: Final = (
    "provider, model and protocol unchanged (Rivumi's resume requires them to match session.json)"
)
# findings about the run's records; everything else (manifest, request, lock, temp files) is the source's
SESSION_RULES: Final = frozenset(
    [f"SA5{number:02d}" for number in range(1, 22)]
    + ["SA550", "SA551", "SA552", "SA553", "SA554", "SA555", "SA556", "SA557", "SA558"]
    + ["SA301", "SA302", "SA303"]
)


def verify_rivumi(path: str, real_path: str, options: VerifyOptions = DEFAULT_OPTIONS) -> SourceOutcome:
    """Verify the run directory `real_path` (reported as `path`); nothing in it is written or locked."""
    check = check_run_directory(path, real_path, options.limits)
    # over a limit (SA010–SA014), or a record that could not be read (SA543): the run is not verified whole,
    # so no session, no native answers and no seed
    if check.not_verified:
        document = check.manifest.document if check.manifest is not None else None
        findings = sorted(check.findings, key=Finding.sort_key)
        return SourceOutcome(FORMAT, _format_version(document), check.files, findings=findings)
    events_path = os.path.join(path, "events.jsonl")
    manifest = check.manifest
    document = manifest.document if manifest is not None else None
    rec = reconcile(check.log, manifest, events_path=events_path)
    events_bytes = check.contents.get("events.jsonl")
    active = _writer_active(real_path)
    resume = native_resume(real_path, check.contents, writer_active=active)
    records_resume = native_resume(real_path, check.contents, check_workspace=False)
    replay = native_replay(events_bytes, events_path=events_path)
    run_id, task_id = _ids(check, document, rec)
    findings = list(check.findings) + rec.findings
    findings += terminal_disagreement(
        check.log, document, rec.last_event, manifest.path if manifest else None
    )
    if events_bytes is not None:
        problem = resume_log_problem(events_bytes, run_id=run_id, task_id=task_id)
        findings += readers_disagreement(
            events_path, problem, replay, check.log.findings if check.log else []
        )
    findings += resume_context_findings(path, resume)
    corrupt = verdict_of(findings) is Verdict.CORRUPT
    findings += _open_work(rec, events_path, corrupt=corrupt)
    findings = [_in_session(item, run_id) for item in findings]
    findings.sort(key=Finding.sort_key)
    session_findings = [item for item in findings if item.rule in SESSION_RULES]
    run = rec.run
    if rec.last_event is not None:  # the event the open state is read from: the last by sequence
        run = run.model_copy(
            update={"last_written_at": iso_from_text(rec.last_event.record.get("created_at"))}
        )
    session_verdict = worst(verdict_of(session_findings), Verdict.NEEDS_RECOVERY if run.recovery else None)
    if run.recovery is not None:
        recovery = run.recovery.model_copy(update={"assumes": [*run.recovery.assumes, MODEL_UNCHANGED]})
        if corrupt:
            recovery = recovery.withheld(_withheld(findings, rec, replay.message if not replay.ok else None))
        else:
            records = RunRecords(
                run_id=run_id,
                task_id=task_id,
                events=[
                    event for event in (check.log.events if check.log else []) if event.sequence is not None
                ],
                manifest=document if manifest is not None and manifest.valid else None,
                events_bytes=events_bytes,
                events_path=events_path,
            )
            seed = rivumi_seed(
                run,
                recovery,
                records,
                source=SeedSource(
                    path=path,
                    format=FORMAT,
                    format_version=_format_version(document),
                    sha256=source_sha256(check.files),
                ),
                resume=records_resume,
                fork_sequence=options.fork_sequence if options.fork_run in (None, run.run_id) else None,
            )
            recovery = recovery.model_copy(update={"seed": seed})
        run = run.model_copy(update={"recovery": recovery})
    log = check.log
    session = Session(
        session_id=run_id,
        verdict=session_verdict,
        facts=len(log.events) if log is not None else 0,
        last_seq=rec.last_event.sequence if rec.last_event is not None else None,
        torn_tail_bytes=log.torn_tail_bytes if log is not None else 0,
        usage=log.usage if log is not None else Usage(),
        runs=[run],
    )
    return SourceOutcome(
        format=FORMAT,
        format_version=_format_version(document),
        files=check.files,
        sessions=[session],
        findings=findings,
        native={"resume": resume.as_native(), "replay": replay.as_native()},
    )


def _writer_active(real_path: str) -> bool:
    """A live writer per /proc/locks; where the lock table cannot be read, none is assumed (see decisions)."""
    try:
        return writer_active(os.path.join(real_path, ".writer.lock"))
    except OSError:
        return False


def _ids(check: RunCheck, document: dict[str, Any] | None, rec: Reconciliation) -> tuple[str, str | None]:
    task_id = document.get("task_id") if document is not None else None
    if not isinstance(task_id, str) and check.log is not None:
        task_id = check.log.task_id
    return rec.run.run_id, task_id.strip() if isinstance(task_id, str) else None


def _format_version(document: dict[str, Any] | None) -> str | None:
    version = document.get("schema_version") if document is not None else None
    return str(version) if isinstance(version, int) and not isinstance(version, bool) else None


def _withheld(findings: list[Finding], rec: Reconciliation, replay_refusal: str | None) -> str:
    """Why a corrupt run gets no seed, what Rivumi's replay says, and how far its open state is known."""
    native = f"Rivumi's replay refuses the log ({replay_refusal})" if replay_refusal is not None else None
    last = rec.last_event
    known = (
        f"the open state shown is known only through event sequence {last.sequence} (line {last.line})"
        if last is not None
        else "no event could be read: nothing of the open state shown is verified"
    )
    return withheld_reason(first_corrupting(findings), native=native, known=known)


def _open_work(rec: Reconciliation, events_path: str, *, corrupt: bool) -> list[Finding]:
    """SA301 for an open run; SA302/SA303 for a started effect whose outcome the log does not hold. Of a
    corrupt run only what the verified events say, and no seed kind (none is offered)."""
    recovery = rec.run.recovery
    if recovery is None:
        return []
    last = rec.last_event
    where = _location(last, events_path)
    if last is not None:
        ending = f"its last event is {last.event_type} (sequence {last.sequence}, line {last.line})"
        if corrupt:
            ending = (
                f"its last verified event is {last.event_type} (sequence {last.sequence}, line {last.line})"
            )
    else:
        ending = "no event could be read" if corrupt else "it has no event yet"
    kind = "no seed (the history is corrupt)" if corrupt else f"seed kind {recovery.seed_kind}"
    found = [
        finding(
            "SA301",
            f"run {rec.run.run_id} was left open: {ending}; condition {recovery.condition}, {kind}",
            **where,
            evidence={"condition": recovery.condition, "last_event_type": last.event_type if last else None},
        )
    ]
    for effect in recovery.pending_effects:
        code = "SA303" if effect.replay_policy == "safe" else "SA302"
        outcome = "it is a read and safe to re-run" if code == "SA303" else "its outcome is unknown"
        found.append(
            finding(
                code,
                f"run {rec.run.run_id}: {effect.tool_name} ({effect.tool_call_id}) was started and its "
                f"completion is not in the log; {outcome}",
                **where,
                evidence={"tool_name": effect.tool_name, "intent_id": effect.intent_id},
            )
        )
    return found


def _location(event: Event | None, events_path: str) -> dict[str, Any]:
    if event is None:
        return {"path": events_path}
    return {"path": events_path, "line": event.line, "byte_offset": event.byte_offset, "seq": event.sequence}


def _in_session(item: Finding, session_id: str) -> Finding:
    if item.rule not in SESSION_RULES or item.location.session_id is not None:
        return item
    location = Location(**{**item.location.model_dump(), "session_id": session_id})
    return item.model_copy(update={"location": location})
