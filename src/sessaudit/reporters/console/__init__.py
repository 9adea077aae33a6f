"""The console report for a person: the verdict first, then what may or may not have happened, what is
corrupt, and the rest (sources, findings, other open runs), fitted to the terminal's width."""

from __future__ import annotations

import os
from datetime import datetime

from rich.text import Text

from sessaudit.model import SKIPPED_UNREAD, Report, Settings
from sessaudit.outputsafety import safe
from sessaudit.reporters.console.page import Page
from sessaudit.reporters.console.sections import (
    Places,
    open_runs,
    print_corrupt,
    print_findings,
    print_other_runs,
    print_skipped,
    print_sources,
    print_unknown_effects,
)
from sessaudit.reporters.console.words import (
    describe_native,
    describe_recovery,
    location,
    outcome_unknown,
)
from sessaudit.verdicts import Severity, Verdict

__all__ = [
    "describe_native",
    "describe_recovery",
    "headline",
    "render_console",
    "safe",
    "settings_line",
]

_location = location  # the name the rules documentation's test compares with

_LEVELS = {level.value: level for level in Severity}
_STATUS_WORD = {0: ("ok", "bold green"), 1: ("FAIL", "bold red"), 3: ("INCOMPLETE", "bold magenta")}
_PHRASES = {
    Verdict.CORRUPT: ("corrupt", "corrupt"),
    Verdict.UNREADABLE: ("unreadable", "unreadable"),
    Verdict.UNSUPPORTED: ("unsupported", "unsupported"),
    Verdict.NEEDS_RECOVERY: ("needs recovery", "need recovery"),
    Verdict.REPAIRABLE: ("repairable", "repairable"),
    Verdict.CLEAN: ("clean", "clean"),
}


def render_console(
    report: Report,
    *,
    color: bool = False,
    width: int = 80,
    now: datetime | None = None,
    exit_status: int | None = None,
    show_skipped: bool = False,
    seed_paths: dict[tuple[str, str], str] | None = None,
) -> str:
    """`now` (UTC) turns recorded times into "3 h ago" as well; `exit_status` is the audit's exit code
    (worked out from the report's settings when not given)."""
    page = Page(width, color)
    seeds = seed_paths or {}
    base = _common_directory([source.path for source in report.sources])
    places = Places(base)
    title = Text(f"sessaudit {report.tool.version}", style="bold")
    if base:
        title.append(f" · {safe(base)}{os.sep}")
    page.console.print(title)
    settings = settings_line(report.settings)
    if settings:
        page.line(Text(settings, style="dim"), hang=4)
    page.line()
    page.line(headline(report, exit_status), hang=4)
    said: dict[str, set[str]] = {}  # per source: warnings already said (repeats are counted, not shown)
    print_unknown_effects(page, report, places, now, seeds, said)
    print_corrupt(page, report, places)
    if report.sources:
        print_sources(page, report, places)
    print_findings(page, report, places)
    print_other_runs(page, report, places, now, seeds, said)
    print_skipped(page, report, show_skipped)
    page.line()
    page.line(_summary_line(report))
    return page.text()


def headline(report: Report, exit_status: int | None = None) -> Text:
    """One line that answers "is it all right?": `FAIL — 1 corrupt, 4 need recovery: 3 effects of
    unknown outcome`, `ok — 3 sources clean`."""
    status = derived_exit_status(report) if exit_status is None else exit_status
    word, style = _STATUS_WORD.get(status, ("FAIL", "bold red"))
    verdicts = [Verdict(name) for name in report.summary.verdicts]
    attention = sorted(
        (item for item in verdicts if item.rank >= Verdict.NEEDS_RECOVERY.rank), key=_worst_first
    )
    if status == 0 and attention:
        word, style = "ATTENTION", "bold yellow"
    if status == 0 and not report.sources and not report.settings.allow_empty:
        word, style = "EMPTY", "bold yellow"  # never "ok" for an audit of nothing, unless allowed
    text = Text(word, style=style)
    unread = sum(1 for item in report.skipped if SKIPPED_UNREAD in item.reason)
    if unread:  # why the audit is incomplete comes first: what was never read cannot have passed
        text.append(f" — {_count(unread, 'path')} could not be read")
        if not report.sources:
            text.append("; no session log was verified")
            return text
    if not report.sources:
        skipped = f" ({_count(len(report.skipped), 'file')} skipped)" if report.skipped else ""
        text.append(f" — no session logs found{skipped}; nothing was audited")
        return text
    shown = attention or sorted(verdicts, key=lambda item: item.rank)
    parts = [_verdict_phrase(item, report.summary.verdicts[item.value]) for item in shown]
    if not attention and shown == [Verdict.CLEAN]:
        count = report.summary.sources
        parts = [f"{_count(count, 'source')} clean"]
    text.append(("; " if unread else " — ") + ", ".join(parts))
    unknown = sum(
        1
        for _, run in open_runs(report)
        if run.recovery is not None
        for effect in run.recovery.pending_effects
        if outcome_unknown(effect)
    )
    if unknown:
        text.append(f": {_count(unknown, 'effect')} of unknown outcome")
    failing = _failing_findings(report)
    if status == 1 and failing:
        text.append(f"; {failing}")
    return text


def _worst_first(verdict: Verdict) -> int:
    return -verdict.rank


def _verdict_phrase(verdict: Verdict, count: int) -> str:
    one, many = _PHRASES[verdict]
    return f"{count} {one if count == 1 else many}"


def _failing_findings(report: Report) -> str:
    """The findings at or above the fail-on level, counted (`1 error, 2 warnings`)."""
    level = _LEVELS.get(report.settings.fail_on)  # "never", or a value masked by --redact: nothing fails
    if level is None:
        return ""
    threshold = level.rank
    counts = report.summary.findings
    parts = [
        _count(counts[level.value], level.value)
        for level in (Severity.ERROR, Severity.WARNING, Severity.NOTE)
        if level.rank >= threshold and counts.get(level.value)
    ]
    return ", ".join(parts)


def derived_exit_status(report: Report) -> int:
    """The exit code the report's own settings give (CONTRACT §3), for a report rendered outside the CLI."""
    if any(
        source.verdict in (Verdict.UNREADABLE, Verdict.UNSUPPORTED) or not source.evidence_unchanged
        for source in report.sources
    ):
        return 3
    settings = report.settings
    if _failing_findings(report):
        return 1
    if any(name in settings.fail_on_verdict for name in report.summary.verdicts):
        return 1
    conditions = {
        condition for _, run in open_runs(report) if run.recovery for condition in run.recovery.conditions
    }
    return 1 if conditions & set(settings.fail_on_condition) else 0


def settings_line(settings: Settings) -> str:
    """The settings in force when any differs from the defaults (`settings: sessaudit.toml; ignore SA6`);
    empty when all are defaults."""
    parts = []
    if settings.select:
        parts.append("select " + ",".join(settings.select))
    if settings.ignore:
        parts.append("ignore " + ",".join(settings.ignore))
    if settings.severity:
        parts.append(
            "severity " + ",".join(f"{key}={value}" for key, value in sorted(settings.severity.items()))
        )
    if settings.fail_on != "error":
        parts.append(f"fail on {settings.fail_on}")
    if settings.fail_on_verdict:
        parts.append("fail on verdict " + ",".join(settings.fail_on_verdict))
    if settings.fail_on_condition:
        parts.append("fail on condition " + ",".join(settings.fail_on_condition))
    if settings.baseline is not None:
        parts.append(f"baseline {settings.baseline}")
    if settings.allow_empty:
        parts.append("empty allowed")
    if settings.config is None and not parts:
        return ""
    origin = settings.config if settings.config is not None else "no settings file"
    return safe("settings: " + "; ".join([origin, *parts]))


def _common_directory(paths: list[str]) -> str:
    """The deepest folder holding every path (shown once in the title, so rows stay short)."""
    folders = [os.path.dirname(path) for path in paths]
    if len(paths) < 2 or not all(folders):
        return ""
    try:
        return os.path.commonpath(folders)
    except ValueError:  # absolute and relative paths mixed
        return ""


def _summary_line(report: Report) -> Text:
    """The counts, last, for a report read from its end: `9 sources: 1 corrupt, …; 1 error, 14 warnings`."""
    order = sorted(report.summary.verdicts.items(), key=lambda item: -Verdict(item[0]).rank)
    verdicts = ", ".join(f"{count} {verdict}" for verdict, count in order)
    counts = report.summary.findings
    findings = ", ".join(_count(counts.get(level.value, 0), level.value) for level in Severity)
    text = Text(_count(report.summary.sources, "source") + (f": {verdicts}" if verdicts else ""))
    text.append(f"; findings: {findings}")
    if report.baseline is not None:  # baselined findings are not listed; say how many there were
        text.append(f"; {len(report.baseline.matched)} baselined in {safe(report.baseline.path)}")
    return text


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
