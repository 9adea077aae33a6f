"""`sessaudit show` in a terminal: each session's timeline (the JSON of sessaudit.timeline, `show --format
json`) as the events before the crash, with UTC times and the time since the event before ("+0.4 s"), the
call of unknown outcome highlighted and its arguments under it. Every string from a log goes through
`safe` (no control character or bidi override reaches the terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.text import Text

from sessaudit.outputsafety import safe
from sessaudit.reporters.console.page import Page
from sessaudit.reporters.console.text import parse_time

ARGUMENT_LINES = 3  # lines of a tool call's arguments shown under it


def delta(seconds: float | None) -> str:
    """The time since the event before: `+0.004 s`, `+4.2 s`, `+3 min 4 s`, `+2 h 3 min`, `+3 d 4 h`
    (`-` when the clock went back); empty when either time is unknown."""
    if seconds is None:
        return ""
    sign = "-" if seconds < 0 else "+"
    value = abs(seconds)
    if value == 0:
        return "+0 s"
    if value < 1:
        return f"{sign}{value:.3f} s"
    if value < 60:
        return f"{sign}{value:.1f} s"
    whole = int(value)
    if whole < 3600:
        return f"{sign}{whole // 60} min {whole % 60} s"
    if whole < 86400:
        return f"{sign}{whole // 3600} h {whole % 3600 // 60} min"
    return f"{sign}{whole // 86400} d {whole % 86400 // 3600} h"


def choose(events: Sequence[Mapping[str, Any]], *, last: int, around: int | None) -> tuple[int, int]:
    """The slice of `events` shown: the `last` ones, or `last` centred on the first event at or after seq
    `around` (the end of the log when none is)."""
    if around is None:
        return max(0, len(events) - last), len(events)
    centre = next(
        (index for index, item in enumerate(events) if item.get("seq") is not None and item["seq"] >= around),
        len(events) - 1,
    )
    start = max(0, min(centre - last // 2, len(events) - last))
    return start, min(len(events), start + last)


def render_timelines(
    document: Mapping[str, Any], *, width: int, color: bool, last: int, around: int | None = None
) -> str:
    page = Page(width, color)
    sessions = document.get("sessions", [])
    if not sessions:
        page.line("No session to show: no source with records was found.")
    for number, session in enumerate(sessions):
        if number:
            page.line()
        _session(page, session, last, around)
    return page.text()


def _session(page: Page, session: Mapping[str, Any], last: int, around: int | None) -> None:
    page.line(Text(safe(session["source"]), style="bold"), hang=4)
    span = " → ".join(
        item.replace("T", " ").rstrip("Z") for item in (session["started_at"], session["ended_at"]) if item
    )
    facts = f"{session['facts']:,} record(s)"
    page.line(
        f"{session['format'] or 'unknown format'} session {safe(session['session_id'] or '(none)')} · "
        f"{session['verdict']} · {facts}" + (f" · {span} UTC" if span else ""),
        indent=2,
        hang=4,
    )
    if session.get("note"):
        page.line(Text(safe(session["note"]), style="yellow"), indent=2, hang=4)
    for run in session["runs"]:
        if run["state"] != "open":
            continue
        effects = run["pending_effects"]
        page.line(
            Text(
                f"run {safe(run['run_id'])} ({run['kind']}) is open: "
                f"{run['condition'] or 'condition unknown'}"
                + (f", {effects} pending effect(s)" if effects else "")
                + (f"; last wrote {run['last_written_at']}" if run.get("last_written_at") else ""),
                style="bold",
            ),
            indent=2,
            hang=4,
        )
    events = session["events"]
    start, stop = choose(events, last=last, around=around)
    if not events:
        page.line("no events", indent=2)
        return
    shown = events[start:stop]
    where = f" around seq {around}" if around is not None else ""
    page.line(
        f"events {start + 1}–{stop} of {len(events)}{where} (time UTC, + since the one before):", indent=2
    )
    cells = []
    previous = _seconds(events[start - 1]["at"]) if start > 0 else None
    for item in shown:
        moment = _seconds(item["at"])
        since = moment - previous if moment is not None and previous is not None else None
        previous = moment if moment is not None else previous
        cells.append(
            (
                item["at"][11:23] if item["at"] else "(no time)",
                delta(since),
                "" if item["seq"] is None else str(item["seq"]),
                "" if item["line"] is None else str(item["line"]),
            )
        )
    headers = ("time", "since", "seq", "line")
    widths = [max(len(headers[index]), *(len(row[index]) for row in cells)) for index in range(4)]

    def prefix(values: Sequence[str]) -> str:
        time, since, seq, line = values
        return f"{time:<{widths[0]}}  {since:>{widths[1]}}  {seq:>{widths[2]}}  {line:>{widths[3]}}  "

    page.line(Text(prefix(headers) + "event", style="bold"), indent=2)
    day = None
    for item, row in zip(shown, cells, strict=True):
        if item["at"] is not None and item["at"][:10] != day:
            day = item["at"][:10]
            page.line(Text(day, style="bold"), indent=2)  # the date above the times of that day
        start_text = prefix(row)
        page.line(Text(start_text) + _what(item), indent=2, hang=len(start_text))
    for item in shown:
        if item["unknown"]:
            page.line(
                Text(f"open call ({place(item)}): ", style="bold yellow")
                + Text(safe(_short(item.get("detail") or "arguments not recorded"))),
                indent=2,
                hang=4,
            )


def place(item: Mapping[str, Any]) -> str:
    """An event's record: `line 16, byte 11661, seq 16` (the parts it has), or `no recorded place`."""
    parts = [
        f"{word} {item[key]}"
        for word, key in (("line", "line"), ("byte", "byte_offset"), ("seq", "seq"), ("row", "rowid"))
        if item.get(key) is not None
    ]
    return ", ".join(parts) if parts else "no recorded place"


def _what(item: Mapping[str, Any]) -> Text:
    label = safe(item["label"])
    if item["kind"] == "finding":
        return Text(f"{item['status']}: {label}", style="red" if item["status"] == "error" else "yellow")
    if item["unknown"]:
        return Text(f"{label}  ◀ UNKNOWN: may or may not have run", style="bold yellow")
    if item["kind"] == "end":
        return Text(label, style="bold red" if item.get("status") == "open" else "bold")
    if item["kind"] == "tool" and item["status"] == "failed":
        return Text(label, style="red")
    return Text(label)


def _short(text: str, limit: int = 80 * ARGUMENT_LINES) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _seconds(text: str | None) -> float | None:
    moment = parse_time(text) if text else None
    return moment.timestamp() if isinstance(moment, datetime) else None
