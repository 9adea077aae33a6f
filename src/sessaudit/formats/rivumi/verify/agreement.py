"""Where Rivumi's own records or readers disagree: terminal event vs manifest phase (SA557), resume vs
replay reader (SA558), and resume refusals that concern the run's workspace or a live writer."""

from __future__ import annotations

import os
from typing import Any, Final

from sessaudit.formats.rivumi.native.replay import ReplayAnswer
from sessaudit.formats.rivumi.native.resume import ResumeAnswer
from sessaudit.formats.rivumi.read.eventlog import Event, EventLog
from sessaudit.formats.rivumi.verify.reconcile import TERMINAL_EVENTS
from sessaudit.model import Finding
from sessaudit.rules import finding

# findings whose presence explains why the two readers part ways (spec §4.1)
DIVERGENCE_CAUSES: Final = {
    "SA519": "a raw U+0085/U+2028/U+2029 that resume's splitlines cuts the line at",
    "SA504": "a last line without its LF (resume accepts it, replay calls it partial)",
    "SA511": "sequences out of file order (resume reads file order, replay sorts)",
    "SA507": "extra envelope keys (resume parses strictly, replay ignores them)",
    "SA513": "task_id drift (replay does not read task_id)",
    "SA510": "envelope values of a lax type (resume coerces them, replay does not)",
    "SA535": "a log over 16 MiB (resume's size limit; replay has none)",
}


def terminal_disagreement(
    log: EventLog | None, document: dict[str, Any] | None, last_event: Event | None, manifest_path: str | None
) -> list[Finding]:
    """SA557 when manifest and log agree on the last sequence but not on how (or whether) the run ended."""
    if log is None or document is None or last_event is None:
        return []
    recorded = document.get("last_event_sequence", -1)
    if recorded != last_event.sequence:
        return []  # a manifest ahead by one (or worse) is reconciliation's business
    phase = document.get("phase", "created")
    terminal = document.get("terminal") is True
    ended = TERMINAL_EVENTS.get(last_event.event_type or "")
    if ended is not None and phase != ended:
        message = (
            f"the log ends in {last_event.event_type} (sequence {last_event.sequence}) but session.json, "
            f"saved for that same event, has phase {phase!r}; the run is taken as {ended}"
        )
    elif ended is None and terminal:
        message = (
            f"session.json is terminal (phase {phase!r}) at sequence {recorded}, but that event is "
            f"{last_event.event_type}, not a terminal event; the run is taken as {phase}"
        )
    else:
        return []
    return [
        finding(
            "SA557",
            message,
            path=manifest_path,
            pointer="/phase",
            evidence={"phase": phase, "terminal": terminal, "last_event_type": last_event.event_type},
        )
    ]


def readers_disagreement(
    events_path: str,
    resume_problem: str | None,
    replay: ReplayAnswer,
    log_findings: list[Finding],
) -> list[Finding]:
    """SA558 when Rivumi's resume reader and replay reader give different answers for the same log."""
    if (resume_problem is None) == replay.ok:
        return []
    resume_says = "accepts it" if resume_problem is None else f"refuses it ({resume_problem})"
    replay_says = "accepts it" if replay.ok else f"refuses it ({replay.message})"
    present = {item.rule for item in log_findings}
    causes = [text for code, text in DIVERGENCE_CAUSES.items() if code in present]
    because = f"; because of {'; '.join(causes)}" if causes else ""
    return [
        finding(
            "SA558",
            f"Rivumi's two readers disagree about events.jsonl: resume {resume_says}, replay "
            f"{replay_says}{because}",
            path=events_path,
            evidence={"resume": resume_problem, "replay": replay.message},
        )
    ]


def resume_context_findings(run_path: str, resume: ResumeAnswer) -> list[Finding]:
    """SA559 for a live writer; SA560 when only the workspace stands between the records and a resume."""
    if resume.refused_by == "writer":
        return [
            finding(
                "SA559",
                "a process holds the exclusive lock on .writer.lock: the run is being written right now; "
                "the files may change during or after this audit",
                path=os.path.join(run_path, ".writer.lock"),
            )
        ]
    if resume.refused_by == "workspace":
        return [
            finding(
                "SA560",
                f"Rivumi would refuse to resume: {resume.message}; the records themselves are judged "
                "without the workspace",
                path=os.path.join(run_path, "workspace"),
                evidence={"message": resume.message},
            )
        ]
    return []
