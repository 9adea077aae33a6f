"""verify_events: one Rivumi events.jsonl checked against spec §2, with its usage ledger (CONTRACT §4)."""

from __future__ import annotations

import re
from typing import Any, BinaryIO, Final

from sessaudit.formats.rivumi.read.envelope import (
    envelope_type_problems,
    parse_datetime,
    pointer_token,
    short,
    text_or_none,
    value_problem,
)
from sessaudit.formats.rivumi.read.eventlog import Event, EventLog
from sessaudit.formats.rivumi.read.ledger import LedgerPlace, usage_row
from sessaudit.formats.rivumi.read.ordering import LoopOrder
from sessaudit.formats.rivumi.spec.eventtypes import (
    DATA_KEYS,
    ENVELOPE_KEYS,
    REQUIRED_ENVELOPE_KEYS,
)
from sessaudit.framing import LineReader
from sessaudit.limits import (
    DEFAULT_MAX_FINDINGS,
    DEFAULT_MAX_LINE_BYTES,
    LINE_TOO_LONG,
    TOO_MANY_FINDINGS,
    line_too_long_message,
    too_many_findings_message,
)
from sessaudit.rules import finding
from sessaudit.strictjson import NESTING_TOO_DEEP, LineProblem, decode_line

CANONICAL_CREATED_AT: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z")
# Raw in a valid line (the JSON encoder escapes only controls below U+0020), yet line breaks to
# Python's `str.splitlines`, which Rivumi's resume reader uses (spec §4.1).
RESUME_LINE_BREAKS: Final = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_BLANK_BYTES: Final = b" \t\r\n\f\v"


def verify_events(
    path: str,
    stream: BinaryIO,
    size: int,
    *,
    run_id: str | None = None,
    task_id: str | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_findings: int = DEFAULT_MAX_FINDINGS,
) -> EventLog:
    """Verify the first `size` bytes of an events.jsonl; `run_id`/`task_id` are the expected ids, if known."""
    return _Verification(path, stream, size, run_id, task_id, max_line_bytes, max_findings).run()


class _Verification:
    def __init__(
        self,
        path: str,
        stream: BinaryIO,
        size: int,
        run_id: str | None,
        task_id: str | None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_findings: int = DEFAULT_MAX_FINDINGS,
    ) -> None:
        self.log = EventLog(path)
        self.max_line_bytes = max_line_bytes
        self.max_findings = max_findings
        self.capped_at: int | None = None  # the line where --max-findings stopped checking
        self.stream = stream
        self.size = size
        self.expected_run_id = run_id
        self.expected_task_id = task_id
        self.next_sequence = 0
        self.seen: set[int] = set()
        self.order = LoopOrder()
        self.provider: str | None = None
        self.model: str | None = None
        # where the finding being built points
        self.line = 0
        self.offset = 0
        self.sequence: int | None = None

    def report(self, code: str, message: str, pointer: str | None = None, **evidence: Any) -> None:
        if len(self.log.findings) >= self.max_findings:  # --max-findings: checking stops (SA014 at the end)
            if self.capped_at is None:
                self.capped_at = self.line
            return
        self.log.findings.append(
            finding(
                code,
                message,
                path=self.log.path,
                line=self.line,
                byte_offset=self.offset,
                seq=self.sequence,
                pointer=pointer,
                evidence=evidence,
            )
        )

    def run(self) -> EventLog:
        start = self.stream.tell()
        reader = LineReader(self.stream, self.size, max_line_bytes=self.max_line_bytes)
        for line in reader:
            if self.capped_at is not None:  # the rest is only hashed and counted
                continue
            if line.over_limit:
                self.over_limit(line.number, line.offset, line.over_limit)
                continue
            self.check_line(line.number, line.offset, line.data, terminated=True)
        log = self.log
        log.bytes_read, log.sha256, log.line_count = reader.bytes_read, reader.sha256, reader.line_count
        if self.capped_at is None and reader.torn_tail_bytes > self.max_line_bytes:
            # a torn tail over the limit is never held: reported, not read
            log.torn_tail_bytes, log.torn_tail_offset = reader.torn_tail_bytes, reader.torn_tail_offset
            self.over_limit(reader.line_count + 1, reader.torn_tail_offset, reader.torn_tail_bytes)
        elif self.capped_at is None and reader.torn_tail_bytes:
            self.stream.seek(start + reader.torn_tail_offset)
            tail = self.stream.read(reader.torn_tail_bytes)
            self.check_line(reader.line_count + 1, reader.torn_tail_offset, tail, terminated=False)
        if self.capped_at is not None:
            self.log.findings.append(
                finding(
                    TOO_MANY_FINDINGS,
                    too_many_findings_message(self.max_findings, self.capped_at),
                    path=log.path,
                    line=self.capped_at,
                    evidence={"max_findings": self.max_findings},
                )
            )
        return log

    def over_limit(self, number: int, offset: int, length: int) -> None:
        """SA010: a line too long to hold; it still takes a sequence slot, as an unparseable line does."""
        self.line, self.offset, self.sequence = number, offset, None
        self.next_sequence += 1
        self.report(
            LINE_TOO_LONG,
            line_too_long_message(number, length, self.max_line_bytes),
            line_bytes=length,
            max_line_bytes=self.max_line_bytes,
        )

    # --- one physical line ------------------------------------------------------------------------
    def check_line(self, number: int, offset: int, data: bytes, *, terminated: bool) -> None:
        self.line, self.offset, self.sequence = number, offset, None
        if not data.strip(_BLANK_BYTES):
            self.report(
                "SA505", f"line {number} is blank; Rivumi never writes one (both its readers skip it)"
            )
            return
        if terminated and data.endswith(b"\r"):
            self.report("SA506", f"line {number} ends in CR LF; Rivumi ends every event with a bare LF")
            data = data[:-1]
        try:
            record = decode_line(data)
        except LineProblem as problem:
            self.next_sequence += 1  # the line still takes a slot, so later sequences are not all blamed
            if problem.rule == NESTING_TOO_DEEP:  # a limit of sessaudit's: not judged, not verified
                if not terminated:
                    self.log.torn_tail_bytes, self.log.torn_tail_offset = len(data), offset
                self.report(
                    problem.rule, f"line {number}: {problem.message}", problem.pointer, column=problem.column
                )
                return
            if not terminated:
                self.log.torn_tail_bytes = len(data)
                self.log.torn_tail_offset = offset
                self.report(
                    "SA503",
                    f"the last {len(data)} bytes (line {number}) are an unterminated, unparseable event: "
                    f"a torn append ({problem.message}); Rivumi never repairs it",
                    torn_bytes=len(data),
                )
            else:
                self.report(
                    "SA501",
                    f"line {number} is not a strict JSON event: {problem.message}",
                    problem.pointer,
                    strict_rule=problem.rule,
                    column=problem.column,
                )
            return
        if not isinstance(record, dict):
            self.next_sequence += 1
            self.report("SA502", f"line {number} holds a JSON {type(record).__name__}, not an event object")
            return
        if not terminated:
            self.log.missing_final_newline = True
            self.report(
                "SA504",
                f"the last event (line {number}) has no trailing LF; the next append would merge two events",
            )
        for marker in RESUME_LINE_BREAKS:
            if marker in data:
                character = f"U+{ord(marker.decode('utf-8')):04X}"
                self.report(
                    "SA519",
                    f"line {number} holds a raw {character}; Rivumi's resume reader splits the line there "
                    "and rejects this valid log (its replay reader accepts it)",
                    character=character,
                )
        self.check_event(number, offset, record, terminated)

    # --- one event object -------------------------------------------------------------------------
    def check_event(self, number: int, offset: int, record: dict[str, Any], terminated: bool) -> None:
        sequence = record.get("sequence")
        valid_sequence = isinstance(sequence, int) and not isinstance(sequence, bool) and sequence >= 0
        self.sequence = sequence if valid_sequence else None
        self.check_envelope(record)
        event_type = record.get("event_type")
        event_type = event_type if isinstance(event_type, str) and event_type else None
        data = record.get("data", {})
        data = data if isinstance(data, dict) else {}
        self.check_sequence(sequence if valid_sequence else None)
        self.check_ids(record)
        event = Event(number, offset, self.sequence, event_type, data, record, terminated)
        self.log.events.append(event)
        if event_type is None:
            return
        self.check_data(event_type, data)
        self.track_model(event_type, data)
        if event_type in ("model.completed", "role_lane.completed"):
            self.ledger(event, record)
        for message, evidence in self.order.observe(event_type, data):
            self.report("SA517", message, **evidence)

    def check_envelope(self, record: dict[str, Any]) -> None:
        for key in record:
            if key not in ENVELOPE_KEYS:
                self.report(
                    "SA507",
                    f"top-level key {key!r} is not part of the event envelope; Rivumi's resume reader "
                    "rejects the event",
                    f"/{key}",
                    key=key,
                )
        for key in ENVELOPE_KEYS:
            if key not in record:
                code = "SA508" if key in REQUIRED_ENVELOPE_KEYS else "SA509"
                self.report(
                    code, f"the event has no {key!r}; Rivumi's writer always writes it", f"/{key}", key=key
                )
        for key, problem in envelope_type_problems(record):
            self.report("SA510", f"{key} {problem}", f"/{key}", key=key, found=short(record[key]))
        created_at = record.get("created_at")
        if (
            isinstance(created_at, str)
            and parse_datetime(created_at)
            and not CANONICAL_CREATED_AT.fullmatch(created_at)
        ):
            self.report(
                "SA518",
                f"created_at {created_at!r} is not Rivumi's UTC form YYYY-MM-DDTHH:MM:SS[.ffffff]Z",
                "/created_at",
            )

    def check_sequence(self, sequence: int | None) -> None:
        expected = self.next_sequence
        if sequence is None:
            self.next_sequence += 1
            return
        if sequence != expected:
            if sequence in self.seen:
                message = f"sequence {sequence} repeats an earlier event (expected {expected})"
            elif sequence < expected:
                message = f"sequence {sequence} appears after {expected - 1}: out of file order"
            elif expected == 0:
                message = f"the log starts at sequence {sequence}, not 0"
            else:
                message = f"sequence {sequence} follows {expected - 1}: {sequence - expected} missing"
            self.report("SA511", message, "/sequence", expected=expected, found=sequence)
        self.seen.add(sequence)
        # resynchronise on a forward jump; a step back (duplicate, out of order) keeps the expectation, so
        # one displaced line is one or two findings, not one per later line
        self.next_sequence = sequence + 1 if sequence >= expected else expected

    def check_ids(self, record: dict[str, Any]) -> None:
        run_id = record.get("run_id")
        if isinstance(run_id, str) and run_id:
            self.log.run_id = self._check_owner(
                "run_id", "SA512", run_id, self.expected_run_id, self.log.run_id
            )
        task_id = record.get("task_id")
        if isinstance(task_id, str):
            self.log.task_id = self._check_owner(
                "task_id", "SA513", task_id, self.expected_task_id, self.log.task_id
            )

    def _check_owner(self, key: str, code: str, found: str, given: str | None, seen: str | None) -> str:
        """One run/task id against the one given or first seen; returns the id the log is now owned by."""
        expected = given or seen
        if expected is not None and found != expected:
            self.report(
                code,
                f"{key} {found!r} differs from the run's {expected!r}",
                f"/{key}",
                expected=expected,
                found=found,
            )
        return seen or found

    def check_data(self, event_type: str, data: dict[str, Any]) -> None:
        keys = DATA_KEYS.get(event_type)
        if keys is None:
            self.report(
                "SA514",
                f"event type {event_type!r} is not one the native loop is known to write",
                "/event_type",
                event_type=event_type,
            )
            return
        required, optional = keys
        for key in required:
            if key not in data:
                self.report(
                    "SA515",
                    f"{event_type} has no data key {key!r}",
                    f"/data/{key}",
                    event_type=event_type,
                    key=key,
                )
        for key, value in data.items():
            problem = value_problem(event_type, key, value)
            if problem is not None:
                self.report(
                    "SA521",
                    f"{event_type} data.{key} {problem}",
                    f"/data/{pointer_token(key)}",
                    event_type=event_type,
                    key=key,
                    found=short(value),
                )
            if key not in required and key not in optional:
                self.report(
                    "SA516",
                    f"{event_type} carries data key {key!r}, which the spec does not list",
                    f"/data/{pointer_token(key)}",
                    event_type=event_type,
                    key=key,
                )

    def track_model(self, event_type: str, data: dict[str, Any]) -> None:
        if event_type in ("run.created", "session.resumed"):
            self.provider, self.model = text_or_none(data.get("provider")), text_or_none(data.get("model"))
        elif event_type == "model.fallback":
            self.provider, self.model = (
                text_or_none(data.get("to_provider")),
                text_or_none(data.get("to_model")),
            )

    def ledger(self, event: Event, record: dict[str, Any]) -> None:
        data = event.data
        if event.event_type == "role_lane.completed":
            lane = str(data.get("role") or "reviewer")
            provider, model = text_or_none(data.get("provider")), text_or_none(data.get("model"))
        else:
            lane, provider, model = "primary", self.provider, self.model
        created_at = record.get("created_at")
        where = LedgerPlace(event.sequence, event.line, created_at if isinstance(created_at, str) else None)
        row, problem = usage_row(data, where, lane, provider, model)
        if row is not None:
            self.log.usage_rows.append(row)
        elif problem is not None:
            message, pointer = problem
            self.report("SA520", f"{event.event_type} {message}; not counted", pointer)
