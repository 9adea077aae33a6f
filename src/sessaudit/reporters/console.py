"""The console report: a summary table per source, findings grouped by source, open runs in plain words."""

from __future__ import annotations

import io
import json
import os
import re
from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sessaudit.model import Finding, Report, Run, Source
from sessaudit.verdicts import Severity, Verdict

# C0, DEL, C1 (U+009B is a one-byte CSI), line/paragraph separators, bidi marks, overrides and isolates
# ("Trojan Source"), lone surrogates (a log's invalid bytes or escapes; unprintable as UTF-8)
_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_VERDICT_STYLE = {
    Verdict.CLEAN: "green",
    Verdict.REPAIRABLE: "cyan",
    Verdict.NEEDS_RECOVERY: "yellow",
    Verdict.UNSUPPORTED: "magenta",
    Verdict.UNREADABLE: "red",
    Verdict.CORRUPT: "bold red",
}
_SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "blue"}


def safe(value: object) -> str:
    """Text from a log made harmless for a terminal: control characters and bidi overrides escaped."""
    return _CONTROL.sub(
        lambda match: (
            f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else f"\\u{ord(match.group()):04x}"
        ),
        str(value),
    )


def render_console(
    report: Report,
    *,
    color: bool = False,
    width: int = 160,
    seed_paths: dict[tuple[str, str], str] | None = None,
) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=not color,
        highlight=False,
        emoji=False,
        soft_wrap=True,
    )
    console.print(Text(f"sessaudit {report.tool.version}", style="bold"))
    if report.sources:
        base = _common_directory([source.path for source in report.sources])
        if base:
            console.print(Text(f"in {safe(base)}{os.sep}", style="dim"))
        console.print(_sources_table(report.sources, base))
    else:
        console.print("No session logs found.")
    _print_findings(console, report.findings)
    _print_open_runs(console, report.sources, seed_paths or {})
    if report.skipped:
        console.print(Text(f"Skipped {len(report.skipped)} file(s) that are not session logs:", style="bold"))
        for item in report.skipped:
            console.print(Text(f"  {safe(item.path)}: {safe(item.reason)}"))
    console.print(_summary_line(report))
    return buffer.getvalue()


def _common_directory(paths: list[str]) -> str:
    """The deepest folder holding every path (shown once above the table, so rows stay short)."""
    folders = [os.path.dirname(path) for path in paths]
    if len(paths) < 2 or not all(folders):
        return ""
    try:
        return os.path.commonpath(folders)
    except ValueError:  # absolute and relative paths mixed
        return ""


def _relative(path: str, base: str) -> str:
    return os.path.relpath(path, base) if base else path


def _sources_table(sources: list[Source], base: str) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for name, justify in (
        ("verdict", "left"),
        ("format", "left"),
        ("sessions", "right"),
        ("facts", "right"),
        ("tokens in / out", "right"),
        ("open runs", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("source", overflow="fold")
    for source in sources:
        tokens_in = sum(session.usage.input_total for session in source.sessions)
        tokens_out = sum(session.usage.output for session in source.sessions)
        open_runs = sum(1 for session in source.sessions for run in session.runs if run.recovery is not None)
        version = f" v{source.format_version}" if source.format_version else ""
        table.add_row(
            Text(source.verdict.value, style=_VERDICT_STYLE[source.verdict]),
            Text(f"{source.format or '-'}{version}"),
            str(len(source.sessions)),
            str(sum(session.facts for session in source.sessions)),
            f"{tokens_in:,} / {tokens_out:,}",
            str(open_runs),
            Text(safe(_relative(source.path, base))),
        )
    return table


def _location(item: Finding) -> str:
    place = item.location
    parts = []
    if place.line is not None:
        parts.append(f"line {place.line}")
    if place.byte_offset is not None:
        parts.append(f"byte {place.byte_offset}")
    if place.seq is not None:
        parts.append(f"seq {place.seq}")
    if place.table is not None:
        parts.append(f"{place.table} row {place.rowid}")
    if place.pointer:
        parts.append(place.pointer)
    return ", ".join(parts)


def _print_findings(console: Console, findings: list[Finding]) -> None:
    if not findings:
        return
    console.print()
    console.print(Text("Findings", style="bold"))
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for item in findings:
        grouped[item.location.path or "(no file)"].append(item)
    for path, items in grouped.items():
        console.print(Text(f"  {safe(path)}", style="bold"))
        for item in items:
            line = Text("    ")
            line.append(f"{item.severity.value:<7}", style=_SEVERITY_STYLE[item.severity])
            line.append(f" {item.rule} {item.name}")
            where = _location(item)
            if where:
                line.append(f" [{safe(where)}]", style="dim")
            line.append(f": {safe(item.message)}")
            console.print(line)


def _print_open_runs(console: Console, sources: list[Source], seed_paths: dict[tuple[str, str], str]) -> None:
    entries = [
        (source, run)
        for source in sources
        for session in source.sessions
        for run in session.runs
        if run.recovery is not None
    ]
    if not entries:
        return
    console.print()
    console.print(Text("Open work (what is known, what is not)", style="bold"))
    for source, run in entries:
        console.print(Text(f"  {safe(source.path)}", style="bold"))
        console.print(Text(f"    {run.kind} {safe(run.run_id)} is {run.state}"))
        for line in describe_recovery(run) + describe_native(source, run):
            console.print(Text(f"    {safe(line)}"))
        written = seed_paths.get((source.path, run.run_id))
        if written is not None:
            console.print(Text(f"    seed: {safe(written)}"))


def describe_recovery(run: Run) -> list[str]:
    """Plain words for a run's recovery entry: which effects may or may not have happened, what comes next."""
    recovery = run.recovery
    if recovery is None:
        return []
    seed_kind = f" (seed: {recovery.seed_kind})" if recovery.seed_kind is not None else ""  # None: withheld
    lines = [f"condition: {recovery.condition}{seed_kind}"]
    for effect in recovery.pending_effects:
        arguments = "arguments not recorded" if effect.arguments is None else _short_json(effect.arguments)
        if effect.intent_id is None:
            lines.append(f"tool {effect.tool_name} ({effect.tool_call_id}) with {arguments} never started")
        elif effect.replay_policy == "never":
            lines.append(
                f"UNKNOWN: tool {effect.tool_name} ({effect.tool_call_id}) with {arguments} "
                "may or may not have run "
                f"(intent {effect.intent_id} recorded, no result; it must not be re-run blindly)"
            )
        else:
            lines.append(
                f"tool {effect.tool_name} ({effect.tool_call_id}) with {arguments} started, no result; "
                f"declared safe to re-run"
            )
    if recovery.native_plan is not None:
        lines.append("next (tiny-agent's own recovery): " + describe_plan(recovery.native_plan))
    for warning in recovery.warnings:
        lines.append(f"warning: {warning}")
    if recovery.assumes:
        lines.append("assumes: " + "; ".join(recovery.assumes))
    return lines


def describe_native(source: Source, run: Run) -> list[str]:
    """What the source system itself would do with the open run (Rivumi: its resume answer), and the
    seed's own warnings."""
    lines: list[str] = []
    resume = source.native.get("resume") if source.format == "rivumi" else None
    if isinstance(resume, dict):
        if resume.get("ok"):
            repaired = resume.get("repaired_to")
            repair = f" after setting last_event_sequence back to {repaired}" if repaired is not None else ""
            lines.append(f"Rivumi's own resume: accepts the run{repair}")
        elif resume.get("crash"):
            lines.append(f"Rivumi's own resume: crashes ({resume.get('message')})")
        else:
            lines.append(f"Rivumi's own resume: refuses ({resume.get('message')})")
    seed = run.recovery.seed if run.recovery is not None else None
    if seed is not None:
        shown = set(run.recovery.warnings) if run.recovery is not None else set()
        lines.extend(f"seed warning: {warning}" for warning in seed.warnings if warning not in shown)
    return lines


def describe_plan(plan: dict[str, Any]) -> str:
    """A native plan (tiny-agent's shape) in words."""
    kind = plan.get("type")
    if kind == "appendSynthetic":
        parts = [
            f"{item.get('reason')} result for {item.get('toolName')} ({item.get('toolCallId')})"
            for item in plan.get("results", [])
        ]
        return "append " + ", ".join(parts)
    if kind == "startStep":
        return f"start model step (attempt {plan.get('attempt')}, {plan.get('stepKind')})"
    if kind == "startTool":
        verb = "re-run" if plan.get("mode") == "replay" else "start"
        return f"{verb} tool {plan.get('toolName')} with {_short_json(plan.get('arguments'))}"
    if kind == "closeAttempt":
        return "close the open model attempt as aborted"
    if kind == "finish":
        detail = f"/{plan['completion']}" if "completion" in plan else ""
        error = f" ({plan['error'].get('code')})" if isinstance(plan.get("error"), dict) else ""
        return f"finish the run as {plan.get('outcome')}{detail}{error}"
    if kind == "blocked":
        return f"blocked: {plan.get('reason')} (nothing can be appended until the configuration is restored)"
    return str(kind)


def _short_json(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summary_line(report: Report) -> Text:
    order = sorted(report.summary.verdicts.items(), key=lambda item: -Verdict(item[0]).rank)
    verdicts = ", ".join(f"{count} {verdict}" for verdict, count in order)
    counts = report.summary.findings
    text = Text()
    text.append(f"\n{report.summary.sources} source(s)" + (f": {verdicts}" if verdicts else ""))
    text.append(
        f"; findings: {counts.get('error', 0)} error(s), {counts.get('warning', 0)} warning(s), "
        f"{counts.get('note', 0)} note(s)"
    )
    if report.baseline is not None:  # baselined findings are not listed; say how many there were
        text.append(f"; {len(report.baseline.matched)} baselined in {safe(report.baseline.path)}")
    return text
