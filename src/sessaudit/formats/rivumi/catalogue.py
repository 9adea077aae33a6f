"""Rivumi's rules (SA5xx), kept local until the lead moves them into `sessaudit.rules`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessaudit.model import Finding, Location
from sessaudit.verdicts import Severity, Verdict

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE
CORRUPT = Verdict.CORRUPT


@dataclass(frozen=True, slots=True)
class RivumiRule:
    code: str
    name: str
    severity: Severity
    verdict: Verdict | None
    summary: str


RULES: tuple[RivumiRule, ...] = (
    RivumiRule("SA501", "event-line-invalid", E, CORRUPT, "An events.jsonl line is not strict UTF-8 JSON."),
    RivumiRule(
        "SA502", "event-not-object", E, CORRUPT, "An events.jsonl line holds JSON that is not an object."
    ),
    RivumiRule(
        "SA503", "event-torn-tail", E, CORRUPT, "events.jsonl ends in an unterminated, unparseable line."
    ),
    RivumiRule(
        "SA504", "event-final-newline-missing", W, None, "The last event is complete but lacks its LF."
    ),
    RivumiRule(
        "SA505", "event-blank-line", W, None, "events.jsonl holds a blank line (both Rivumi readers skip it)."
    ),
    RivumiRule(
        "SA506", "event-line-crlf", W, None, "An events.jsonl line ends in CR LF; Rivumi writes a bare LF."
    ),
    RivumiRule(
        "SA507", "envelope-key-unknown", E, CORRUPT, "An event has a top-level key outside the envelope."
    ),
    RivumiRule("SA508", "envelope-key-missing", E, CORRUPT, "An event lacks event_type, run_id or sequence."),
    RivumiRule(
        "SA509", "envelope-key-defaulted", W, None, "An event lacks task_id, data, event_id or created_at."
    ),
    RivumiRule(
        "SA510", "envelope-type-invalid", E, CORRUPT, "An envelope field has the wrong JSON type or value."
    ),
    RivumiRule("SA511", "sequence-not-contiguous", E, CORRUPT, "Sequences are not 0, 1, 2, … in file order."),
    RivumiRule("SA512", "run-id-mismatch", E, CORRUPT, "An event's run_id differs from the run's."),
    RivumiRule(
        "SA513", "task-id-mismatch", E, CORRUPT, "An event's non-null task_id differs from the run's."
    ),
    RivumiRule(
        "SA514", "event-type-unknown", N, None, "An event type the native loop is not known to write."
    ),
    RivumiRule(
        "SA515", "event-data-key-missing", W, None, "A known event lacks a data key its type carries."
    ),
    RivumiRule(
        "SA516", "event-data-key-unknown", N, None, "A known event carries a data key not in the spec."
    ),
    RivumiRule(
        "SA517", "event-order-unexpected", W, None, "Events are not in the order Rivumi's loop writes."
    ),
    RivumiRule(
        "SA518",
        "created-at-noncanonical",
        N,
        None,
        "created_at is a datetime, but not Rivumi's UTC `Z` form.",
    ),
    RivumiRule(
        "SA519",
        "event-resume-line-split",
        W,
        None,
        "A raw U+0085/U+2028/U+2029 makes Rivumi's resume reject the log.",
    ),
    RivumiRule("SA520", "event-usage-invalid", W, None, "A usage object in an event is malformed."),
    RivumiRule(
        "SA521",
        "event-data-value-invalid",
        W,
        None,
        "A data value has a type or value the loop never writes.",
    ),
    RivumiRule("SA530", "manifest-missing", E, CORRUPT, "The run directory has no session.json."),
    RivumiRule("SA531", "manifest-not-json", E, CORRUPT, "session.json is not a strict UTF-8 JSON object."),
    RivumiRule(
        "SA532", "manifest-schema", E, CORRUPT, "session.json violates the SessionManifest v1 schema."
    ),
    RivumiRule(
        "SA533", "manifest-cross-field", E, CORRUPT, "session.json breaks a cross-field rule of §3.2."
    ),
    RivumiRule(
        "SA534",
        "manifest-fork-total-tokens",
        E,
        CORRUPT,
        "session.json stores usage.total_tokens, as Rivumi's fork command writes it; Rivumi rejects it.",
    ),
    RivumiRule("SA535", "artifact-too-large", W, None, "A run file is over Rivumi's 16 MiB resume limit."),
    RivumiRule(
        "SA536", "request-invalid", E, CORRUPT, "request.json is missing or not a valid TaskContract."
    ),
    RivumiRule(
        "SA537",
        "request-mismatch",
        E,
        CORRUPT,
        "request.json's task_id or base_sha differs from the manifest.",
    ),
    RivumiRule("SA538", "lock-malformed", W, None, ".writer.lock is not `pid=<n> token=<32 hex>` + LF."),
    RivumiRule(
        "SA539", "lock-token-mismatch", W, None, ".writer.lock's token is not the manifest's writer token."
    ),
    RivumiRule("SA540", "lock-missing", N, None, "A run with a writer token has no .writer.lock."),
    RivumiRule(
        "SA541",
        "manifest-usage-mismatch",
        W,
        None,
        "The manifest's primary-lane model_usage disagrees with the log.",
    ),
    RivumiRule(
        "SA542", "temp-file-left", N, None, "A temp file of an atomic write survived (a killed writer)."
    ),
    RivumiRule(
        "SA543",
        "run-file-unreadable",
        E,
        Verdict.UNREADABLE,
        "A run file is not a regular file or unreadable.",
    ),
    RivumiRule(
        "SA550",
        "manifest-ahead-repaired",
        W,
        Verdict.REPAIRABLE,
        "session.json is one event ahead of events.jsonl; Rivumi's resume sets it back to the log.",
    ),
    RivumiRule(
        "SA551",
        "manifest-ahead-over-side-effect",
        W,
        Verdict.NEEDS_RECOVERY,
        "The manifest is one ahead over a last side-effect start; Rivumi resumes without its outcome.",
    ),
    RivumiRule(
        "SA552",
        "manifest-sequence-mismatch",
        E,
        CORRUPT,
        "session.json's last_event_sequence is behind the log or two or more ahead of it.",
    ),
    RivumiRule(
        "SA553",
        "events-missing",
        E,
        CORRUPT,
        "events.jsonl is missing although the manifest records committed events.",
    ),
    RivumiRule(
        "SA554",
        "stopped-during-side-effect",
        W,
        Verdict.NEEDS_RECOVERY,
        "The log ends in tool.started or verification.started; Rivumi refuses to resume.",
    ),
    RivumiRule(
        "SA555",
        "events-not-yet-written",
        N,
        None,
        "events.jsonl is absent and the manifest records no event (Rivumi accepts this).",
    ),
    RivumiRule(
        "SA556",
        "last-event-unrecognised",
        N,
        None,
        "A non-terminal run ends in an event the open-state table does not name; step-pending assumed.",
    ),
)

_BY_CODE = {entry.code: entry for entry in RULES}


def rule(code: str) -> RivumiRule:
    return _BY_CODE[code]


def finding(
    code: str,
    message: str,
    *,
    path: str | None = None,
    session_id: str | None = None,
    line: int | None = None,
    byte_offset: int | None = None,
    seq: int | None = None,
    pointer: str | None = None,
    evidence: dict[str, Any] | None = None,
    native_code: str | None = None,
) -> Finding:
    """A finding of local rule `code` (severity and name from the table above)."""
    entry = _BY_CODE[code]
    return Finding(
        rule=entry.code,
        name=entry.name,
        severity=entry.severity,
        message=message,
        location=Location(
            path=path, session_id=session_id, line=line, byte_offset=byte_offset, seq=seq, pointer=pointer
        ),
        native_code=native_code,
        evidence=evidence or {},
    )


def verdict_of(findings: list[Finding]) -> Verdict:
    """The worst verdict effect among these findings (local rules only)."""
    result = Verdict.CLEAN
    for item in findings:
        effect = _BY_CODE[item.rule].verdict
        if effect is not None and effect.rank > result.rank:
            result = effect
    return result
