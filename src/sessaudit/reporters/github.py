"""GitHub Actions (`--format github`): workflow-command annotations and a Markdown step summary."""

from __future__ import annotations

import re

from sessaudit.model import Finding, Report
from sessaudit.outputsafety import safe
from sessaudit.reporters.junit import details, owns, place
from sessaudit.verdicts import Severity

# GitHub shows at most 10 annotations of each level per step
ANNOTATIONS_PER_LEVEL = 10
COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}
LEVELS = (Severity.ERROR, Severity.WARNING, Severity.NOTE)


def escape_data(text: str) -> str:
    """A command's message, escaped as the Actions runner unescapes it (`%`, CR, LF); any other control
    character, bidi override or lone surrogate from a log is shown escaped (`\\x1b`), never raw in the
    job log (which renders ANSI sequences)."""
    return safe(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """A command property's value: like the message, plus `:` and `,`, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def in_source_order(report: Report) -> list[Finding]:
    """Findings grouped by the order of their sources (input order), sorted within; unowned ones last."""
    ranked = []
    for item in sorted(report.findings, key=Finding.sort_key):
        owners = [index for index, source in enumerate(report.sources) if owns(source, item.location.path)]
        ranked.append((owners[0] if owners else len(report.sources), item))
    ranked.sort(key=lambda pair: pair[0])  # stable: the sort key's order survives inside a source
    return [item for _, item in ranked]


def annotation(item: Finding) -> str:
    properties = []
    if item.location.path is not None:
        properties.append(f"file={escape_property(item.location.path)}")
    if item.location.line is not None:
        properties.append(f"line={item.location.line}")
    properties.append(f"title={escape_property(f'{item.rule} {item.name}')}")
    where = details(item)
    message = f"{item.message} {where}" if where else item.message
    return f"::{COMMANDS[item.severity]} {','.join(properties)}::{escape_data(message)}"


def render_github(report: Report) -> str:
    """At most 10 annotations per level (errors first, each level in source order), then one plain line
    with the full counts; the full list is in the step summary."""
    ordered = in_source_order(report)
    lines = []
    for level in LEVELS:
        lines += [annotation(item) for item in ordered if item.severity is level][:ANNOTATIONS_PER_LEVEL]
    counts = report.summary.findings
    shown = ", ".join(f"{counts.get(level.value, 0)} {level.value}" for level in LEVELS)
    hidden = sum(max(0, counts.get(level.value, 0) - ANNOTATIONS_PER_LEVEL) for level in LEVELS)
    tail = f"; {hidden} not annotated (GitHub shows 10 per level), see the step summary" if hidden else ""
    if report.baseline is not None:
        tail += f"; {len(report.baseline.matched)} baselined, not annotated"
    lines.append(f"sessaudit: {len(report.sources)} sources, findings: {shown}{tail}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipes, no line breaks, no HTML, no control characters,
    and no link or image syntax (an image from a log would make the reader's browser fetch a URL)."""
    escaped = safe(" ".join(text.split()))
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\\[\]|])", r"\\\1", escaped)  # `[`, `]`: no link or image; `\\`: no unescaping


def render_github_summary(report: Report) -> str:
    """The step summary (Markdown): counts per level, a verdict per source, and every finding."""
    counts = report.summary.findings
    lines = [
        "## sessaudit",
        "",
        "| level | findings |",
        "|---|---:|",
        *(f"| {level.value} | {counts.get(level.value, 0)} |" for level in LEVELS),
        "",
        "| source | format | verdict | sessions |",
        "|---|---|---|---:|",
        *(
            f"| {_cell(source.path)} | {_cell(source.format or '-')} | {source.verdict.value} "
            f"| {len(source.sessions)} |"
            for source in report.sources
        ),
        "",
    ]
    ordered = in_source_order(report)
    if ordered:
        lines += ["| level | rule | location | message |", "|---|---|---|---|"]
        for level in LEVELS:
            lines += [
                f"| {level.value} | {item.rule} `{item.name}` "
                f"| {_cell(place(item))} | {_cell(item.message)} |"
                for item in ordered
                if item.severity is level
            ]
    else:
        lines.append("No findings.")
    return "\n".join(lines) + "\n\n"
