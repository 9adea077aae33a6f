"""Each session's timeline (`sessaudit show`, the HTML report): what its verified records say happened, in
time order. Runs are spans; a person's messages, model requests and answers, the format's own marks
(compactions, aborts, resumes) and every tool call with its outcome are events at their record's place
(line, byte offset, seq); each finding is an event at the record it names; the end of the log is the last
event, the crash point when runs are left open.

It is built from the rows `sessaudit load` writes (sessaudit.warehouse: the same extraction, kept in memory
here), and a fact is named by its format's plugin (FormatPlugin.timeline_kind), so every format that loads
has a timeline and nothing here names one. The evidence is read again read-only and must hash as verified;
a source that changed since, or could not be read again, has a timeline of its findings and a `note` that
says why its records are not drawn."""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import Any, Final, TypeVar

from sessaudit.limits import DEFAULT_MAX_LINE_BYTES
from sessaudit.model import Finding, Report, Session, Source
from sessaudit.registry import registry
from sessaudit.reporters.console.sections import owned_findings
from sessaudit.times import iso_from_micros
from sessaudit.warehouse.assemble import Stamp, source_batch, source_id_of
from sessaudit.warehouse.drafts import UNKNOWN
from sessaudit.warehouse.extract import EXTRACTION_ERRORS, EvidenceChanged, extract
from sessaudit.warehouse.rows import Batch, FactRow, LedgerRow, RunRow, ToolCallRow

TIMELINE_SCHEMA: Final = "https://sessaudit.dev/schemas/timeline.v1.json"
DETAIL_LIMIT: Final = 2000  # characters of a tool call's arguments kept on its event
END: Final = "end"
FINDING: Final = "finding"
TOOL: Final = "tool"


@dataclass(frozen=True, slots=True)
class Event:
    """One thing on a timeline. `at` and `until` are epoch µs (UTC); `until` is a tool call's finish."""

    at: int | None
    kind: str  # FormatPlugin.timeline_kind's words, "tool", "finding" or "end"
    label: str
    run_id: str | None = None
    line: int | None = None
    byte_offset: int | None = None
    seq: int | None = None
    rowid: int | None = None
    status: str | None = None  # a tool call's status (tool_calls.status), a finding's severity
    until: int | None = None
    unknown: bool = False  # an effect of unknown outcome: started, no result, not safe to re-run
    detail: str | None = None  # a tool call's arguments (JSON, cut), a finding's message
    rule: str | None = None  # a finding's rule code
    placed: str | None = None  # a finding with no record of its own: "end" (drawn where the log ends)

    def as_json(self) -> dict[str, Any]:
        return {
            "at": iso_from_micros(self.at),
            "kind": self.kind,
            "label": self.label,
            "run_id": self.run_id,
            "line": self.line,
            "byte_offset": self.byte_offset,
            "seq": self.seq,
            "rowid": self.rowid,
            "status": self.status,
            "until": iso_from_micros(self.until),
            "unknown": self.unknown,
            "detail": self.detail,
            "rule": self.rule,
            "placed": self.placed,
        }


@dataclass(frozen=True, slots=True)
class RunSpan:
    run_id: str
    kind: str
    state: str
    condition: str | None
    started_at: int | None
    last_at: int | None
    first_seq: int | None
    last_seq: int | None
    pending_effects: int
    last_written_at: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "state": self.state,
            "condition": self.condition,
            "started_at": iso_from_micros(self.started_at),
            "last_at": iso_from_micros(self.last_at),
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "pending_effects": self.pending_effects,
            "last_written_at": self.last_written_at,
        }


@dataclass(frozen=True, slots=True)
class UsagePoint:
    """One ledger row: tokens of one model answer (or another scope's count) at its time."""

    at: int | None
    model: str | None
    input_total: int
    output: int
    cache_read: int
    cache_write: int


@dataclass(frozen=True, slots=True)
class SessionTimeline:
    path: str  # its source, as the report names it
    format: str | None
    session_id: str | None
    verdict: str
    runs: list[RunSpan]
    events: list[Event]
    usage: list[UsagePoint] = field(default_factory=list)
    facts: int = 0  # the session's facts drawn from (its verified records)
    complete: bool = True  # False: a cut left verified records out, or `note` says none were read
    note: str | None = None  # why its records are not drawn

    @property
    def started_at(self) -> int | None:
        return min((item.at for item in self.events if item.at is not None), default=None)

    @property
    def ended_at(self) -> int | None:
        return max((item.until or item.at for item in self.events if item.at is not None), default=None)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "verdict": self.verdict,
            "started_at": iso_from_micros(self.started_at),
            "ended_at": iso_from_micros(self.ended_at),
            "facts": self.facts,
            "complete": self.complete,
            "note": self.note,
            "runs": [item.as_json() for item in self.runs],
            "events": [item.as_json() for item in self.events],
            "usage": [
                {
                    "at": iso_from_micros(item.at),
                    "model": item.model,
                    "input_total": item.input_total,
                    "output": item.output,
                    "cache_read": item.cache_read,
                    "cache_write": item.cache_write,
                }
                for item in self.usage
            ],
        }


def build_timelines(
    report: Report, verified: Report | None = None, *, max_line_bytes: int | None = None
) -> list[SessionTimeline]:
    """The timeline of every session of `report`, in its order. `verified`: the report as the audit made it,
    before filters (its findings decide which records are verified history, as for `load`); `report`'s
    own findings are the ones drawn."""
    drawn = owned_findings(report)
    cutting = owned_findings(report, (verified or report).findings)
    timelines: list[SessionTimeline] = []
    for source in report.sources:
        batch, note = _rows(source, cutting[source.path], max_line_bytes)
        timelines.extend(_source_timelines(source, batch, note, drawn[source.path]))
    return timelines


def timelines_json(timelines: Sequence[SessionTimeline]) -> dict[str, Any]:
    return {"schema": TIMELINE_SCHEMA, "sessions": [item.as_json() for item in timelines]}


def _rows(
    source: Source, findings: list[Finding], max_line_bytes: int | None
) -> tuple[Batch | None, str | None]:
    """The source's rows, or None and why they are not drawn."""
    if not source.sessions or source.sha256 is None:
        return None, None
    real_path = os.path.realpath(source.path)
    limit = DEFAULT_MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    try:
        extraction = extract(source, real_path, findings, source_id_of(real_path), max_line_bytes=limit)
    except EvidenceChanged as error:
        return None, f"records not drawn: {error}"
    except OSError as error:
        return None, f"records not drawn: cannot read {source.path} again: {error.strerror or error}"
    except EXTRACTION_ERRORS as error:  # bytes that are not what was verified (the hash did not say)
        return None, f"records not drawn: {type(error).__name__}: {error}"
    return source_batch(source, real_path, findings, extraction, Stamp("", 0)), None


def _source_timelines(
    source: Source, batch: Batch | None, note: str | None, findings: list[Finding]
) -> list[SessionTimeline]:
    plugin = registry().get(source.format)
    sessions = source.sessions
    timelines = []
    facts_of = _by_session(batch.facts if batch is not None else [])
    calls_of = _by_session(batch.tool_calls if batch is not None else [])
    usage_of = _by_session(batch.usage if batch is not None else [])
    runs_of = _by_session(batch.runs if batch is not None else [])
    for session in sessions:
        mine = [
            item
            for item in findings
            if item.location.session_id in (None, session.session_id) or len(sessions) == 1
        ]
        if batch is None:
            timelines.append(_timeline(source, session, [], [], [], mine, plugin, note))
            continue
        key = session.session_id
        facts, calls, usage = facts_of.get(key, []), calls_of.get(key, []), usage_of.get(key, [])
        timeline = _timeline(source, session, facts, calls, usage, mine, plugin, None)
        spans = {row.run_id: row for row in runs_of.get(key, [])}
        runs = [
            replace(
                run,
                started_at=row.started_at,
                last_at=row.last_at,
                first_seq=row.first_seq,
                last_seq=row.last_seq,
            )
            if (row := spans.get(run.run_id)) is not None
            else run
            for run in timeline.runs
        ]
        holder = _RunsBySeq(runs)
        timeline = replace(timeline, runs=runs, events=[holder.given(item) for item in timeline.events])
        timelines.append(timeline)
    if not sessions and findings:  # a source of no session (unreadable, unsupported): its findings alone
        empty = Session(session_id=None, verdict=source.verdict, facts=0, last_seq=None)
        timelines.append(_timeline(source, empty, [], [], [], findings, plugin, note))
    return timelines


Row = TypeVar("Row", FactRow, ToolCallRow, LedgerRow, RunRow)


def _by_session(rows: Sequence[Row]) -> dict[str | None, list[Row]]:
    """A source's rows of one table, by session, in order."""
    grouped: dict[str | None, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.session_id, []).append(row)
    return grouped


class _RunsBySeq:
    """The run whose records' seq range holds a seq: for an event whose record names no run, as a format
    that keeps run ids only on its run rows has it (the latest-starting such run)."""

    def __init__(self, runs: list[RunSpan]) -> None:
        spans = sorted(
            (run.first_seq, run.last_seq, run.run_id)
            for run in runs
            if run.first_seq is not None and run.last_seq is not None
        )
        self.starts = [first for first, _, _ in spans]
        self.spans = spans
        # the furthest any run starting at or before each index reaches: the backward scan stops there
        self.reach = list(accumulate((last for _, last, _ in spans), max))

    def given(self, item: Event) -> Event:
        if item.run_id is not None or item.seq is None:
            return item
        index = bisect_right(self.starts, item.seq) - 1
        while index >= 0 and self.reach[index] >= item.seq:
            _, last, run_id = self.spans[index]
            if last >= item.seq:
                return replace(item, run_id=run_id)
            index -= 1
        return item


class _Places:
    """Where a session's records lie and when they were written: by line, by seq, by rowid."""

    def __init__(self, facts: list[FactRow]) -> None:
        self.by_line: dict[int, FactRow] = {}
        self.by_seq: dict[int, FactRow] = {}
        for row in facts:
            if row.line is not None:
                self.by_line.setdefault(row.line, row)
            if row.seq is not None:
                self.by_seq.setdefault(row.seq, row)

    def of_seq(self, seq: int | None) -> FactRow | None:
        return self.by_seq.get(seq) if seq is not None else None

    def of_finding(self, item: Finding) -> FactRow | None:
        place = item.location
        found = self.by_line.get(place.line) if place.line is not None else None
        return found if found is not None else self.of_seq(place.seq)


def _timeline(
    source: Source,
    session: Session,
    facts: list[FactRow],
    calls: list[ToolCallRow],
    usage: list[LedgerRow],
    findings: list[Finding],
    plugin: Any,
    note: str | None,
) -> SessionTimeline:
    places = _Places(facts)
    events: list[Event] = []
    answers = {(row.line, row.seq): row for row in usage if row.scope != "tool"}
    for row in facts:
        kind = plugin.timeline_kind(row.kind, row.type, row.role) if plugin is not None else None
        if kind is None:
            continue
        label = _fact_label(kind, row, answers.get((row.line, row.seq)))
        events.append(
            Event(row.timestamp, kind, label, row.run_id, row.line, row.byte_offset, row.seq, row.rowid)
        )
    for call in calls:
        events.append(_call_event(call, places))
    last = max((row.timestamp for row in facts if row.timestamp is not None), default=None)
    for item in findings:
        found = places.of_finding(item)
        place = item.location
        events.append(
            Event(
                found.timestamp if found is not None and found.timestamp is not None else last,
                FINDING,
                f"{item.rule} {item.name}",
                found.run_id if found is not None else None,
                place.line,
                place.byte_offset,
                place.seq,
                place.rowid,
                status=item.severity.value,
                detail=item.message,
                rule=item.rule,
                placed=None if found is not None and found.timestamp is not None else END,
            )
        )
    runs = [
        RunSpan(
            run.run_id,
            run.kind,
            run.state,
            run.recovery.condition if run.recovery is not None else None,
            None,
            None,
            None,
            None,
            len(run.recovery.pending_effects) if run.recovery is not None else 0,
            run.last_written_at,
        )
        for run in session.runs
    ]
    if facts:
        events.append(_end_event(facts, session, runs, last))
    events.sort(key=_order)
    return SessionTimeline(
        source.path,
        source.format,
        session.session_id,
        session.verdict.value,
        runs,
        events,
        [
            UsagePoint(row.timestamp, row.model, row.input_total, row.output, row.cache_read, row.cache_write)
            for row in usage
        ],
        len(facts),
        note is None,
        note,
    )


_WORDS: Final = {
    "user": "user message",
    "model-request": "model request",
    "model": "model answer",
    "compaction": "compaction",
    "abort": "abort requested",
    "resume": "resumed",
}


def _fact_label(kind: str, row: FactRow, answer: LedgerRow | None) -> str:
    label = _WORDS.get(kind, kind)
    # a message's part (tool_use, reasoning), not an event's name (model.completed)
    if (
        row.type
        and kind in ("model", "user")
        and row.type not in ("message", "text", row.role)
        and "." not in row.type
    ):
        label += f" ({row.type})"
    if answer is not None:
        model = f"{answer.model}, " if answer.model else ""
        label += f" · {model}{answer.input_total:,} in, {answer.output:,} out"
    return label


def _call_event(call: ToolCallRow, places: _Places) -> Event:
    seq = call.intent_seq if call.intent_seq is not None else call.call_seq
    row = places.of_seq(seq)
    at = call.requested_at
    if at is None and row is not None:
        at = row.timestamp
    finished = call.finished_at
    if finished is None and call.result_seq is not None:
        result = places.of_seq(call.result_seq)
        finished = result.timestamp if result is not None else None
    unknown = call.status == UNKNOWN and call.replay_policy != "safe"
    detail = call.arguments
    if detail is not None and len(detail) > DETAIL_LIMIT:
        detail = detail[:DETAIL_LIMIT] + "…"
    name = call.tool_name or "a tool"
    condition = f", {call.recovery_condition}" if call.recovery_condition else ""
    return Event(
        at,
        TOOL,
        f"{name}: {call.status}{condition}",
        call.run_id,
        row.line if row is not None else None,
        row.byte_offset if row is not None else None,
        seq,
        row.rowid if row is not None else None,
        status=call.status,
        until=finished,
        unknown=unknown,
        detail=detail,
    )


def _end_event(facts: list[FactRow], session: Session, runs: list[RunSpan], last: int | None) -> Event:
    """Where the log ends: its last verified record (the crash point when runs are left open)."""
    final = facts[-1]
    open_runs = sum(1 for run in runs if run.state == "open")
    words = ["log ends"]
    if open_runs:
        words = [f"crash point: the log ends with {open_runs} run(s) open"]
    if session.torn_tail_bytes:
        words.append(f"a torn tail of {session.torn_tail_bytes:,} bytes after it")
    return Event(
        last,
        END,
        "; ".join(words),
        final.run_id,
        final.line,
        final.byte_offset,
        final.seq,
        final.rowid,
        status="open" if open_runs else None,
    )


def _order(item: Event) -> tuple[int, int, int, int]:
    """Time first; within one moment (or none) the record's order; the end last."""
    last = 1 if item.kind == END else 0
    at = item.at if item.at is not None else (1 << 62)
    return (at, last, item.seq if item.seq is not None else (1 << 62), item.line or 0)


def only_run(timelines: Sequence[SessionTimeline], run_id: str) -> list[SessionTimeline]:
    """The sessions that have the run `run_id`, each with that run and its events alone (and the end)."""
    chosen = []
    for timeline in timelines:
        runs = [run for run in timeline.runs if run.run_id == run_id]
        if runs:
            events = [item for item in timeline.events if item.run_id == run_id or item.kind == END]
            chosen.append(replace(timeline, runs=runs, events=events))
    return chosen


def redact_timelines(timelines: Sequence[SessionTimeline], report: Report) -> list[SessionTimeline]:
    """Tool arguments masked, findings' messages as `--redact` writes them (ids, names, places kept)."""
    from sessaudit.redact import mask, redact_text

    def masked(item: Event) -> Event:
        if item.detail is None:
            return item
        detail = mask(item.detail) if item.kind == TOOL else redact_text(item.detail, report)
        return replace(item, detail=detail)

    return [replace(timeline, events=[masked(item) for item in timeline.events]) for timeline in timelines]
