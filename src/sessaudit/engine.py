"""audit(paths) → AuditResult: discover sources, verify each, re-check the evidence, collect."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sessaudit import __version__
from sessaudit.discovery import Candidate, Discovery, Problem, discover
from sessaudit.evidence import Recheck, open_evidence, recheck
from sessaudit.limits import TOO_MANY_FILES, incomplete_reason
from sessaudit.model import FileEvidence, Finding, Report, Settings, Source, Summary, Tool
from sessaudit.parallel import ordered_map
from sessaudit.plugin import (
    DEFAULT_OPTIONS,
    FileRead,
    LineTap,
    SourceOutcome,
    VerifyOptions,
    source_sha256,
)
from sessaudit.progress import Tracker, estimated_bytes
from sessaudit.registry import Registry, ask, registry, said
from sessaudit.rules import finding, verdict_of
from sessaudit.verdicts import Severity, Verdict, worst
from sessaudit.withheld import first_corrupting, withhold_corrupt


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
    cluster: str | None = None,
) -> AuditResult:
    """Verify every source found under `paths`; in `jobs` processes, or on the Dask cluster at `cluster`
    (sessaudit.cluster), results in input order (the same report either way)."""
    check_extras(options, registry())
    discovery = discover(paths, max_files=options.limits.max_files)
    sources: list[Source] = []
    findings: list[Finding] = []
    incomplete: list[str] = []
    carried: dict[str, list[Mapping[str, Any]]] = {}
    corrupt: dict[str, Finding] = {}
    candidates = discovery.candidates
    sizes = [estimated_bytes(item.real_path) for item in candidates]
    if cluster is not None:
        from sessaudit.cluster import cluster_map

        verified = cluster_map(
            partial(verify_candidate, options=options),
            candidates,
            address=cluster,
            sizes=sizes,
            paths=[(item.real_path,) if item.problem is None else () for item in candidates],
            crashed=crashed_outcome,
            tracker=tracker,
        )
    else:
        verified = ordered_map(
            partial(verify_candidate, options=options), candidates, jobs=jobs, sizes=sizes, tracker=tracker
        )
    for candidate, (source, source_findings, carry) in zip(candidates, verified, strict=True):
        sources.append(source)
        findings.extend(source_findings)
        if source.format is not None:
            carried.setdefault(source.format, []).append(carry)
        first = first_corrupting(source_findings) if source.verdict is Verdict.CORRUPT else None
        if first is not None:
            corrupt[source.path] = first
        incomplete.extend(source_incomplete(source, source_findings, named=candidate.named))
    walked_findings, walked_incomplete = discovery_outcome(discovery, allow_empty=options.allow_empty)
    findings.extend(walked_findings)
    incomplete.extend(walked_incomplete)
    for plugin in registry().plugins:  # after the last source: what each format says of the audit as a whole
        findings.extend(ask(plugin, "conclude", options, carried.get(plugin.name, [])) or [])
    incomplete[:0] = broken_plugins(registry())  # loading, or a hook that raised while it worked
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


def check_extras(options: VerifyOptions, installed: Registry) -> None:
    """Refuse VerifyOptions extras no installed format declares: a misspelt option is never ignored."""
    known = {name for plugin in installed.plugins for name in plugin.extras}
    unknown = sorted(set(options.extras) - known)
    if unknown:
        raise TypeError(f"VerifyOptions: no installed format takes {', '.join(unknown)}")


def broken_plugins(installed: Registry) -> list[str]:
    """Why the audit is incomplete because of the plugins: each one that is installed but set aside
    (the files of its format can no longer be recognised, so their absence proves nothing)."""
    return [
        f"format plugin {item.name} ({item.target}) {item.reason}; files of its format were not recognised"
        for item in installed.broken
    ]


def verify_candidate(
    candidate: Candidate, options: VerifyOptions = DEFAULT_OPTIONS, tap: LineTap | None = None
) -> tuple[Source, list[Finding], dict[str, Any]]:
    """One source: its model entry, its findings, and what it carries to its plugin's `conclude`. A `tap`
    sees the checked lines of a file-reading plugin's source as they are read (LineTap); the plugins that
    read a directory or a store have no lines to show."""
    if candidate.problem is not None:
        return (*_unverifiable(candidate), {})
    plugin = registry().get(candidate.format)
    if plugin is None:
        message = f"{candidate.format} sources are recognised but not verified by sessaudit {__version__}"
        problem = finding("SA003", message, path=candidate.path)
        return _source(candidate, SourceOutcome(str(candidate.format), None, []), [problem]), [problem], {}
    try:
        if plugin.reads == "path":
            outcome = plugin.verify_path(candidate.path, candidate.real_path, options)
        else:
            try:
                stream, size = open_evidence(candidate.real_path)
            except OSError as error:
                message = f"cannot open {candidate.path}: {error.strerror or error}"
                problem = finding("SA001", message, path=candidate.path)
                return _source(candidate, SourceOutcome(plugin.name, None, []), [problem]), [problem], {}
            with stream:
                outcome = plugin.verify_file(candidate.path, candidate.real_path, stream, size, options, tap)
    except Exception as error:
        if plugin.name in registry().builtin:
            raise  # sessaudit's own: an internal error (exit 4), as ever
        # a third-party plugin that fails on one source does not stop the audit: that source is unverified
        message = (
            f"{candidate.path}: the {plugin.name} format plugin failed while verifying it: {said(error)}"
        )
        problem = finding("SA001", message, path=candidate.path)
        return _source(candidate, SourceOutcome(plugin.name, None, []), [problem]), [problem], {}
    return _checked(candidate, outcome)


def _checked(candidate: Candidate, outcome: SourceOutcome) -> tuple[Source, list[Finding], dict[str, Any]]:
    """The outcome with its files re-hashed (SA004/SA005) and turned into the report's source."""
    all_findings = outcome.findings + _recheck_files(outcome.files)
    all_findings.sort(key=Finding.sort_key)
    return _source(candidate, outcome, all_findings), all_findings, outcome.carry


def crashed_outcome(candidate: Candidate, reason: str) -> tuple[Source, list[Finding], dict[str, Any]]:
    """A source whose verification ended the processes that ran it (a cluster's workers, twice): not
    verified, unreadable, said with the reason (the audit is then incomplete)."""
    message = f"{candidate.path}: not verified: {reason}"
    problem = finding("SA001", message, path=candidate.path)
    return _source(candidate, SourceOutcome(candidate.format or "", None, []), [problem]), [problem], {}


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
