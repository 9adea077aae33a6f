"""The console report's parts after the verdict line: unknown effects, corrupt sources, the sources
table, findings, other open runs and skipped files."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from rich.text import Text

from sessaudit.model import SKIPPED_UNREAD, Finding, Report, Run, Source
from sessaudit.outputsafety import safe
from sessaudit.reporters.console.page import Column, Page
from sessaudit.reporters.console.text import shorten_path, when
from sessaudit.reporters.console.words import (
    describe_effect,
    describe_native,
    describe_recovery,
    location,
    outcome_unknown,
)
from sessaudit.rules import find_rule
from sessaudit.verdicts import Severity, Verdict

VERDICT_STYLE = {
    Verdict.CLEAN: "green",
    Verdict.REPAIRABLE: "cyan",
    Verdict.NEEDS_RECOVERY: "yellow",
    Verdict.UNSUPPORTED: "magenta",
    Verdict.UNREADABLE: "red",
    Verdict.CORRUPT: "bold red",
}
_SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "blue"}
_MIN_SOURCE_COLUMN = 60  # a layout is good enough when the source column gets this much


class Places:
    """Paths as shown: relative to the folder named once in the title, shortened to fit a room."""

    def __init__(self, base: str) -> None:
        self.base = base

    def show(self, path: str, room: int) -> str:
        relative = os.path.relpath(path, self.base) if self.base else path
        return safe(shorten_path(relative, room))


def open_runs(report: Report) -> list[tuple[Source, Run]]:
    return [
        (source, run)
        for source in report.sources
        for session in source.sessions
        for run in session.runs
        if run.recovery is not None
    ]


def has_unknown(run: Run) -> bool:
    return run.recovery is not None and any(outcome_unknown(item) for item in run.recovery.pending_effects)


def print_unknown_effects(
    page: Page,
    report: Report,
    places: Places,
    now: datetime | None,
    seed_paths: dict[tuple[str, str], str],
    said: dict[str, set[str]],
) -> None:
    entries = [(source, run) for source, run in open_runs(report) if has_unknown(run)]
    if not entries:
        return
    page.heading("Unknown outcome: may or may not have happened; never re-run blindly")
    for source, run in entries:
        assert run.recovery is not None
        page.line()
        for effect in run.recovery.pending_effects:
            if outcome_unknown(effect):
                page.line(Text(safe(describe_effect(effect)), style="bold yellow"), indent=2, hang=4)
                page.line(f"intent {safe(effect.intent_id)} recorded, no result", indent=4)
        _run_lines(
            page, source, run, places, now, seed_paths, said.setdefault(source.path, set()), effects=False
        )


def _run_lines(
    page: Page,
    source: Source,
    run: Run,
    places: Places,
    now: datetime | None,
    seed_paths: dict[tuple[str, str], str],
    said: set[str],
    *,
    effects: bool,
) -> None:
    """A run's where and when, then its recovery in words; warnings already in `said` (this source's
    earlier runs) are counted, not repeated."""
    page.line(
        f"{run.kind} {safe(run.run_id)} is {run.state}; last wrote: {when(run.last_written_at, now)}", 4
    )
    page.line(f"in {places.show(source.path, page.width - 7)}", 4)
    repeated = 0
    for line in describe_recovery(run, effects=effects, source_format=source.format) + describe_native(
        source, run
    ):
        if "warning: " in line and line in said:
            repeated += 1
            continue
        said.add(line)
        page.line(safe(line), 4)
    if repeated:
        page.line(f"({repeated} warning(s) as for an earlier run of this source, not repeated)", 4)
    written = seed_paths.get((source.path, run.run_id))
    if written is not None:
        page.line(f"seed: {safe(written)}", 4)


def owned_findings(report: Report, findings: Iterable[Finding] | None = None) -> dict[str, list[Finding]]:
    """Each source's findings (of `findings`, the report's by default): those on its file, inside its
    folder, or on its companion files (`-wal`)."""
    owned: dict[str, list[Finding]] = {source.path: [] for source in report.sources}
    for item in report.findings if findings is None else findings:
        path = item.location.path or ""
        for source in report.sources:
            if path == source.path or path.startswith((source.path + "/", source.path + "-")):
                owned[source.path].append(item)
                break
    return owned


def print_corrupt(page: Page, report: Report, places: Places) -> None:
    broken = [source for source in report.sources if source.verdict in (Verdict.CORRUPT, Verdict.UNREADABLE)]
    if not broken:
        return
    page.heading("Corrupt or unreadable: the first finding that made it so")
    owned = owned_findings(report)
    for source in broken:
        line = Text("  ")
        line.append(f"{source.verdict.value:<10}", style=VERDICT_STYLE[source.verdict])
        line.append(" " + places.show(source.path, page.width - 13))
        page.console.print(line)
        first = _first_cause(source, owned[source.path])
        if first is None:
            page.line("no finding names the cause (it may have been filtered out)", 4)
        else:
            page.line(_finding_text(first), 4, hang=4)


def _first_cause(source: Source, findings: list[Finding]) -> Finding | None:
    for item in findings:
        rule = find_rule(item.rule)
        if rule is not None and rule.verdict is source.verdict:
            return item
    errors = [item for item in findings if item.severity is Severity.ERROR]
    return errors[0] if errors else None


def _finding_text(item: Finding) -> Text:
    line = Text()
    line.append(f"{item.severity.value:<7}", style=_SEVERITY_STYLE[item.severity])
    line.append(f" {item.rule} {item.name}")
    where = location(item, shorten=True)
    if where:
        line.append(f" [{safe(where)}]", style="dim")
    line.append(f": {safe(item.message)}")
    return line


def print_sources(page: Page, report: Report, places: Places) -> None:
    page.heading(f"Sources ({len(report.sources)})")
    layouts = (
        ("verdict", "format", "sessions", "facts", "tokens in / out", "open runs"),
        ("verdict", "format", "open runs"),
        ("verdict", "kind", "open"),
    )
    for names in layouts:
        rows = [_source_cells(source, names) for source in report.sources]
        used = sum(
            max(len(name), *(row[index].cell_len for row in rows)) + 2 for index, name in enumerate(names)
        )
        room = page.width - 2 - used
        if room >= _MIN_SOURCE_COLUMN or names is layouts[-1]:
            break
    columns = [Column(name, right=name not in ("verdict", "format", "kind")) for name in names]
    for row, source in zip(rows, report.sources, strict=True):
        row.append(Text(places.show(source.path, room)))
    page.table([*columns, Column("source")], rows, indent=2)


def _source_cells(source: Source, names: tuple[str, ...]) -> list[Text]:
    tokens_in = sum(session.usage.input_total for session in source.sessions)
    tokens_out = sum(session.usage.output for session in source.sessions)
    version = f" v{source.format_version}" if source.format_version else ""
    values = {
        "verdict": Text(source.verdict.value, style=VERDICT_STYLE[source.verdict]),
        "format": Text(safe(f"{source.format or '-'}{version}")),  # a version is read from the log
        "kind": Text(safe(source.format or "-")),
        "sessions": Text(str(len(source.sessions))),
        "facts": Text(str(sum(session.facts for session in source.sessions))),
        "tokens in / out": Text(f"{tokens_in:,} / {tokens_out:,}"),
        "open runs": Text(str(_open_count(source))),
        "open": Text(str(_open_count(source))),
    }
    return [values[name] for name in names]


def _open_count(source: Source) -> int:
    return sum(1 for session in source.sessions for run in session.runs if run.recovery is not None)


def print_findings(page: Page, report: Report, places: Places) -> None:
    if not report.findings:
        return
    page.heading("Findings (errors first in each file)")
    grouped: dict[str, list[Finding]] = {}
    for item in report.findings:
        grouped.setdefault(item.location.path or "", []).append(item)
    for path, items in grouped.items():
        shown = places.show(path, page.width - 2) if path else "(no file)"
        page.console.print(Text(f"  {shown}", style="bold"))
        for item in sorted(items, key=lambda finding: -finding.severity.rank):
            page.line(_finding_text(item), 4, hang=4)


def print_other_runs(
    page: Page,
    report: Report,
    places: Places,
    now: datetime | None,
    seed_paths: dict[tuple[str, str], str],
    said: dict[str, set[str]],
) -> None:
    entries = [(source, run) for source, run in open_runs(report) if not has_unknown(run)]
    if not entries:
        return
    others = "Other open runs" if len(entries) < len(open_runs(report)) else "Open runs"
    page.heading(f"{others} (what is known, what is not)")
    for source, run in entries:
        page.line()
        _run_lines(
            page, source, run, places, now, seed_paths, said.setdefault(source.path, set()), effects=True
        )


def print_skipped(page: Page, report: Report, show_skipped: bool) -> None:
    """Skipped paths: those that could not be read made the audit incomplete and are always listed, each
    with its OS error; the rest (not session logs, links, devices) are a count unless --show-skipped."""
    if not report.skipped:
        return
    unread = [item for item in report.skipped if SKIPPED_UNREAD in item.reason]
    others = [item for item in report.skipped if SKIPPED_UNREAD not in item.reason]
    page.line()
    if unread:
        page.line(Text(f"Could not be read ({len(unread)}): the audit is incomplete", style="bold"))
        for item in unread:
            page.line(f"{safe(item.path)}: {safe(item.reason)}", 2)
    if not others:
        return
    if not show_skipped:
        reasons = Counter(item.reason for item in others).most_common()
        count = f"{len(others)} {'other ' if unread else ''}file{'' if len(others) == 1 else 's'} skipped"
        if len(reasons) == 1:
            why = f"{count}: {safe(reasons[0][0])} (--show-skipped lists them)"
        else:
            each = "; ".join(f"{n} {safe(reason)}" for reason, n in reasons)
            why = f"{count} ({each}); --show-skipped lists them"
        page.line(Text(why, style="dim"))
        return
    page.line(Text(f"Skipped {len(others)} path(s), each with the reason:", style="bold"))
    for item in others:
        page.line(f"{safe(item.path)}: {safe(item.reason)}", 2)
