"""audit(paths) → AuditResult: discover sources, verify each, re-check the evidence, collect."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO

from sessaudit import __version__
from sessaudit.discovery import Candidate, Discovery, Format, Problem, discover
from sessaudit.evidence import Recheck, open_evidence, recheck
from sessaudit.formats.interface import (
    DEFAULT_OPTIONS,
    FileRead,
    LineTap,
    SourceOutcome,
    VerifyOptions,
    source_sha256,
)
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent_file
from sessaudit.limits import TOO_MANY_FILES, incomplete_reason
from sessaudit.model import FileEvidence, Finding, Report, Settings, Source, Summary, Tool
from sessaudit.parallel import ordered_map
from sessaudit.progress import Tracker, estimated_bytes
from sessaudit.rules import finding, verdict_of
from sessaudit.verdicts import Severity, Verdict, worst
from sessaudit.withheld import first_corrupting, withhold_corrupt

# (path, real path, stream, size, options, tap): a tap sees each checked line (formats.interface.LineTap)
FileVerifier = Callable[[str, str, BinaryIO, int, VerifyOptions, LineTap | None], SourceOutcome]
PathVerifier = Callable[[str, str, VerifyOptions], SourceOutcome]

# Formats verified from one regular file; the explicit registry of CONTRACT §1's formats.
FILE_VERIFIERS: dict[Format, FileVerifier] = {
    Format.TINY_AGENT: verify_tiny_agent_file,
}


def verify_rivumi(path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
    """formats.rivumi.verifier's, imported when a Rivumi source is first verified (not at every start)."""
    from sessaudit.formats.rivumi.verifier import verify_rivumi as verify

    return verify(path, real_path, options)


def verify_half_pi(path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
    """formats.half_pi.verifier's, imported when a Half-Pi source is first verified (not at every start)."""
    from sessaudit.formats.half_pi.verifier import verify_half_pi as verify

    return verify(path, real_path, options)


# Formats verified from several files the verifier reads itself (read-only, no locks): a Rivumi run
# directory; a Half-Pi store with its -wal and -shm, copied before SQLite opens it.
PATH_VERIFIERS: dict[Format, PathVerifier] = {
    Format.RIVUMI: verify_rivumi,
    Format.HALF_PI: verify_half_pi,
}


@dataclass(frozen=True, slots=True)
class AuditResult:
    """The report plus what the CLI needs to choose an exit code (the core never exits)."""

    report: Report
    incomplete: list[str] = field(default_factory=list)  # why the audit is incomplete (exit 3), one line each
    # each corrupt source's first corrupting finding, by source path (`seed` names it: no seed from it)
    corrupt: dict[str, Finding] = field(default_factory=dict)


def audit(
    paths: list[str],
    *,
    options: VerifyOptions = DEFAULT_OPTIONS,
    version: str = __version__,
    jobs: int = 1,
    tracker: Tracker | None = None,
) -> AuditResult:
    """Verify every source found under `paths`; in `jobs` processes, results in input order."""
    discovery = discover(paths, max_files=options.limits.max_files)
    sources: list[Source] = []
    findings: list[Finding] = []
    incomplete: list[str] = []
    answered: set[int] = set()
    corrupt: dict[str, Finding] = {}
    candidates = discovery.candidates
    verified = ordered_map(
        partial(verify_candidate, options=options),
        candidates,
        jobs=jobs,
        sizes=[estimated_bytes(item.real_path) for item in candidates],
        tracker=tracker,
    )
    for candidate, (source, source_findings, source_answered) in zip(candidates, verified, strict=True):
        sources.append(source)
        findings.extend(source_findings)
        answered.update(source_answered)
        first = first_corrupting(source_findings) if source.verdict is Verdict.CORRUPT else None
        if first is not None:
            corrupt[source.path] = first
        incomplete.extend(source_incomplete(source, source_findings, named=candidate.named))
    walked_findings, walked_incomplete = discovery_outcome(discovery, allow_empty=options.allow_empty)
    findings.extend(walked_findings)
    incomplete.extend(walked_incomplete)
    findings.extend(_unanswered_claims(options, answered))
    findings.sort(key=Finding.sort_key)
    report = Report(
        tool=Tool(version=version),
        sources=sources,
        skipped=discovery.skipped,
        findings=findings,
        summary=summarise(sources, findings),
        settings=Settings(allow_empty=options.allow_empty),
    )
    return AuditResult(report=report, incomplete=incomplete, corrupt=corrupt)


def source_incomplete(source: Source, findings: list[Finding], *, named: bool) -> list[str]:
    """Why one verified source makes the audit incomplete (CONTRACT §3), one line each: over a limit, not
    read (named or walked: what may be a session log and could not be read is never a pass), named and
    unsupported, or changed while it was read."""
    reasons = []
    over = incomplete_reason(source.path, findings)  # over a limit, named or walked
    if over is not None:
        reasons.append(over)
    elif source.verdict is Verdict.UNREADABLE or (named and source.verdict is Verdict.UNSUPPORTED):
        reasons.append(f"{source.path}: {source.verdict.value}")
    if not source.evidence_unchanged:
        reasons.append(f"{source.path}: evidence changed while it was read")
    return reasons


def discovery_outcome(discovery: Discovery, *, allow_empty: bool = False) -> tuple[list[Finding], list[str]]:
    """What the walks themselves found: an SA006 note for each named directory without a session log, and
    why the audit is incomplete — a walked entry that could not be read (it is listed in `skipped` with the
    OS error), and, unless `allow_empty`, a named directory where nothing was verified."""
    findings = [
        finding(
            "SA006",
            f"{path}: no session log was found in this directory; nothing was verified",
            path=path,
        )
        for path in discovery.empty
    ]
    incomplete = list(discovery.unread)
    if not allow_empty:
        incomplete += [
            f"{path}: no session log found, nothing was verified (--allow-empty accepts this)"
            for path in discovery.empty
        ]
    return findings, incomplete


def _unanswered_claims(options: VerifyOptions, answered: set[int]) -> list[Finding]:
    """SA695 for every `--claims` entry whose approval no verified store holds."""
    return [
        finding(
            "SA695",
            f"claim {claim.pointer}: approval {claim.approval_id} ({claim.tool}) is in no Half-Pi store "
            "of this audit",
            path=options.claims_path,
            pointer=claim.pointer,
            evidence={"approval_id": claim.approval_id},
        )
        for index, claim in enumerate(options.claims)
        if index not in answered
    ]


def verify_candidate(
    candidate: Candidate, options: VerifyOptions = DEFAULT_OPTIONS, tap: LineTap | None = None
) -> tuple[Source, list[Finding], list[int]]:
    """One source: its model entry, its findings, and the `--claims` indices it answered. A `tap` sees
    the checked lines of a file verifier's source as they are read (sessaudit.formats.interface.LineTap):
    today a tiny-agent v2 session's; the verifiers that read a directory have no lines to show."""
    if candidate.problem is not None:
        return (*_unverifiable(candidate), [])
    path_verifier = PATH_VERIFIERS.get(candidate.format) if candidate.format else None
    if path_verifier is not None:
        return _checked(candidate, path_verifier(candidate.path, candidate.real_path, options))
    verifier = FILE_VERIFIERS.get(candidate.format) if candidate.format else None
    if verifier is None:
        message = f"{candidate.format} sources are recognised but not verified by sessaudit {__version__}"
        problem = finding("SA003", message, path=candidate.path)
        return _source(candidate, SourceOutcome(str(candidate.format), None, []), [problem]), [problem], []
    try:
        stream, size = open_evidence(candidate.real_path)
    except OSError as error:
        problem = finding(
            "SA001", f"cannot open {candidate.path}: {error.strerror or error}", path=candidate.path
        )
        return _source(candidate, SourceOutcome(str(candidate.format), None, []), [problem]), [problem], []
    with stream:
        outcome = verifier(candidate.path, candidate.real_path, stream, size, options, tap)
    return _checked(candidate, outcome)


def _checked(candidate: Candidate, outcome: SourceOutcome) -> tuple[Source, list[Finding], list[int]]:
    """The outcome with its files re-hashed (SA004/SA005) and turned into the report's source."""
    all_findings = outcome.findings + _recheck_files(outcome.files)
    all_findings.sort(key=Finding.sort_key)
    return _source(candidate, outcome, all_findings), all_findings, outcome.answered_claims


def _unverifiable(candidate: Candidate) -> tuple[Source, list[Finding]]:
    if candidate.problem is Problem.UNRECOGNISED:
        problem = finding("SA002", f"{candidate.path}: {candidate.detail}", path=candidate.path)
    elif candidate.problem is Problem.TOO_MANY_FILES:
        problem = finding(TOO_MANY_FILES, f"{candidate.path}: {candidate.detail}", path=candidate.path)
    else:
        problem = finding("SA001", f"{candidate.path}: {candidate.detail}", path=candidate.path)
    return _source(candidate, SourceOutcome("", None, []), [problem]), [problem]


def _recheck_files(files: list[FileRead]) -> list[Finding]:
    """Re-hash each verified byte range; a changed range is SA004, an appended log SA005."""
    found: list[Finding] = []
    for item in files:
        state = recheck(item.real_path, item.bytes, item.sha256)
        if item.opened_bytes is not None and item.bytes < item.opened_bytes:
            # a short read: the file lost bytes between open and read (the re-hash alone cannot see it)
            detail = f"the file shrank from {item.opened_bytes} bytes while it was read ({item.bytes} read)"
            state = Recheck(False, False, detail)
        if not state.unchanged:
            found.append(
                finding(
                    "SA004",
                    f"{item.path}: {state.detail}; the report describes the bytes as first read",
                    path=item.path,
                    evidence={"bytes": item.bytes, "sha256": item.sha256},
                )
            )
        elif state.grew:
            found.append(finding("SA005", f"{item.path}: {state.detail}", path=item.path))
    return found


def _source(candidate: Candidate, outcome: SourceOutcome, findings: list[Finding]) -> Source:
    changed = {item.location.path for item in findings if item.rule == "SA004"}
    files = [
        FileEvidence(path=item.path, bytes=item.bytes, sha256=item.sha256, unchanged=item.path not in changed)
        for item in outcome.files
    ]
    verdict = worst(verdict_of(findings), *(session.verdict for session in outcome.sessions))
    sessions = outcome.sessions
    if (
        verdict is Verdict.CORRUPT
    ):  # fail closed: no plan and no seed from a corrupt source, whatever the format
        sessions = withhold_corrupt(sessions, findings)
    return Source(
        path=candidate.path,
        format=outcome.format or (str(candidate.format) if candidate.format else None),
        format_version=outcome.format_version,
        files=files,
        sha256=source_sha256(outcome.files),
        evidence_unchanged=all(item.unchanged for item in files),
        verdict=verdict,
        native=outcome.native,
        sessions=sessions,
    )


def summarise(sources: list[Source], findings: list[Finding]) -> Summary:
    severities = Counter(item.severity for item in findings)
    return Summary(
        sources=len(sources),
        verdicts=dict(sorted(Counter(source.verdict.value for source in sources).items())),
        session_verdicts=dict(
            sorted(
                Counter(session.verdict.value for source in sources for session in source.sessions).items()
            )
        ),
        findings={severity.value: severities.get(severity, 0) for severity in Severity},
    )
