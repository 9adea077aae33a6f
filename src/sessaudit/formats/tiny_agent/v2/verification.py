"""The v2 pass: one tiny-agent session file, streamed once, verified exactly as tiny-agent's reducer."""

from __future__ import annotations

from typing import Any, BinaryIO

from sessaudit.formats.tiny_agent.check import header as headers
from sessaudit.formats.tiny_agent.check.compaction import Rereader
from sessaudit.formats.tiny_agent.check.observations import Observations
from sessaudit.formats.tiny_agent.check.reducer import Failure, Reducer
from sessaudit.formats.tiny_agent.check.state import Place
from sessaudit.formats.tiny_agent.read.shapes import Violation
from sessaudit.formats.tiny_agent.v2.outcome import session_outcome
from sessaudit.formats.tiny_agent.v2.precedence import Precedence
from sessaudit.framing import Line, LineReader
from sessaudit.limits import LINE_TOO_LONG, line_too_long_message
from sessaudit.model import Finding
from sessaudit.plugin import UNDECODED, LineTap, SourceOutcome, VerifyOptions
from sessaudit.rules import finding
from sessaudit.strictjson import NESTING_TOO_DEEP, LineProblem, decode_line

# What happens to the lines after the header.
REDUCE, TRACK, ENCODING_ONLY = "reduce", "track", "encoding-only"


class _Verification:
    def __init__(
        self,
        path: str,
        real_path: str,
        stream: BinaryIO,
        size: int,
        options: VerifyOptions,
        tap: LineTap | None = None,
        *,
        report_progress: bool = True,
        already_reported: int = 0,
        prefix_bytes: int = 0,
    ) -> None:
        """`report_progress`, `already_reported`, `prefix_bytes`: as LineReader's (a second read of the
        same evidence counts for the progress display only past what the first one counted, and hashes
        the part the first one read)."""
        self.path = path
        self.tap = tap
        self.options = options
        self.real_path = real_path
        self.stream = stream
        self.reader = LineReader(
            stream,
            size,
            max_line_bytes=options.limits.max_line_bytes,
            report_progress=report_progress,
            already_reported=already_reported,
            prefix_bytes=prefix_bytes,
        )
        self.findings: list[Finding] = []
        self.mode = TRACK
        self.header = headers.HeaderOutcome()
        self.observations = Observations(path, None)
        self.rereader = Rereader(stream)
        self.reducer = self._reducer(
            observations=self.observations,
            reread_digest=self.rereader.source_digest,
            line_at=self.rereader.line_at,
        )
        self.reducing = False
        self.stopped_at: int | None = None  # the line whose transaction ended reduction
        self.note_due = False
        self.precedence = Precedence()
        self.facts = 0
        self.last_seq: int | None = None
        self.line_end = 0
        self.last_offset = 0
        self.capped_at: int | None = None  # the line where --max-findings stopped checking

    def _reducer(self, **parts: Any) -> Reducer:
        """The reducer the pass applies transactions with (the fast path's is its own)."""
        return Reducer(**parts)

    # --- the pass -----------------------------------------------------------------------------
    def run(self) -> SourceOutcome:
        for line in self.reader:
            self.line_end = self.rereader.line_end = line.end
            if self.capped_at is not None:  # --max-findings reached: the rest is only hashed and counted
                continue
            if line.over_limit:
                self._over_limit(line)
                continue
            if line.number == 1:
                value = self._header(line)
            elif self.mode == ENCODING_ONLY:
                self.precedence.scan(line)
                continue
            else:
                if self.note_due:
                    self._note_stopped(line)
                value = self._transaction(line)
            if self.tap is not None:
                self.tap(line, value, self.header.session_id, self.findings)
        return self._outcome()

    def _header(self, line: Line) -> Any:
        """Check line 1; its value (UNDECODED when it has none)."""
        self.rereader.body_offset = self.line_end
        data = line.data[3:] if line.data[:3] == b"\xef\xbb\xbf" else line.data
        if not data:
            self._error(
                "SA101", "MISSING_HEADER", "line 1 is empty: the file has no header", line, line.offset
            )
            self._stop(line)
            return UNDECODED
        try:
            value = decode_line(line.data, strip_bom=True)
        except LineProblem as problem:
            self._line_problem(line, problem)
            self._stop(line)
            return UNDECODED
        outcome = headers.read_header(value)
        self.header = outcome
        self.observations.session_id = outcome.session_id
        if outcome.unsupported is not None:
            self.mode = ENCODING_ONLY
            self.precedence.error(outcome.native_code or "INVALID_HEADER", 1, None)
            self.findings.append(
                finding(
                    "SA003",
                    outcome.unsupported,
                    path=self.path,
                    session_id=outcome.session_id,
                    line=1,
                    byte_offset=line.offset,
                )
            )
            return value
        if outcome.violation is not None:
            violation = outcome.violation
            self._error(
                violation.rule,
                violation.code,
                violation.message,
                line,
                line.offset,
                pointer=violation.pointer,
                evidence=violation.evidence,
            )
            self._stop(line)
            return value
        self.mode = REDUCE
        self.reducing = True
        self.reducer.created_at = outcome.created_at
        self.reducer.environment = outcome.environment
        for item in headers.observations(outcome, value, line):
            self.observations.add_now(item)
        self.last_offset = line.offset
        return value

    def _transaction(self, line: Line) -> Any:
        """Check one transaction line; its value (UNDECODED when it has none)."""
        try:
            value = decode_line(line.data)
        except LineProblem as problem:
            self._line_problem(line, problem)
            self.reducer.next_seq = None  # an unreadable line: the next seq is the new base
            self._stop(line)
            return UNDECODED
        array = type(value) is list
        facts: list[Any] = value if array else [value]
        if not facts:
            self._error(
                "SA203", "EMPTY_TRANSACTION", "the line is an empty transaction []", line, line.offset
            )
            self._stop(line)
            return value
        self.facts += len(facts)
        reducer = self.reducer
        start = 0
        failure: Failure | None = None
        if self.reducing:
            failure = reducer.apply(facts, line.number, line.offset, array)
            if failure is None:
                self.last_offset = line.offset
                start = len(facts)
            else:
                violation = failure.violation
                prefix = f"/{failure.index}" if array and failure.index >= 0 else ""
                self._error(
                    violation.rule,
                    violation.code,
                    violation.message,
                    line,
                    line.offset,
                    seq=failure.seq,
                    pointer=prefix + violation.pointer,
                    evidence=violation.evidence,
                )
                self._stop(line)
                start = failure.index if failure.index >= 0 else len(facts)
        for index in range(start, len(facts)):
            if self.capped_at is not None:
                break
            prefix = f"/{index}" if array else ""
            place = Place(line.number, line.offset, index if array else -1, 0)
            for issue in reducer.track(facts[index], place):
                if failure is not None and index == failure.index and self._same(issue, failure):
                    continue
                self._error(
                    issue.rule,
                    issue.code,
                    issue.message,
                    line,
                    line.offset,
                    seq=place.seq or None,
                    pointer=(prefix + issue.pointer) or None,
                    evidence=issue.evidence,
                    native=False,
                )
        self.last_seq = reducer.last_seen_seq
        return value

    @staticmethod
    def _same(problem: Violation, failure: Failure) -> bool:
        return problem.rule == failure.violation.rule and problem.pointer == failure.violation.pointer

    # --- findings -----------------------------------------------------------------------------
    def _keep(self, item: Finding) -> None:
        """Record a finding; past --max-findings none is recorded and checking stops (SA014 at the end)."""
        if len(self.findings) < self.options.limits.max_findings:
            self.findings.append(item)
        elif self.capped_at is None:
            self.capped_at = item.location.line or 1

    def _over_limit(self, line: Line) -> None:
        """SA010: a line too long to hold; reduction stops as after an unreadable line."""
        limit = self.reader.max_line_bytes
        if line.number == 1:
            self.rereader.body_offset = self.line_end
        self._keep(
            finding(
                LINE_TOO_LONG,
                line_too_long_message(line.number, line.over_limit, limit),
                path=self.path,
                session_id=self.header.session_id,
                line=line.number,
                byte_offset=line.offset,
                evidence={"line_bytes": line.over_limit, "max_line_bytes": limit},
            )
        )
        if self.mode != ENCODING_ONLY:
            self.reducer.next_seq = None
            self._stop(line)

    def _line_problem(self, line: Line, problem: LineProblem) -> None:
        if problem.rule == NESTING_TOO_DEEP:
            # a limit of sessaudit's, not tiny-agent's answer: no native code
            self._keep(
                finding(
                    problem.rule,
                    f"line {line.number}: {problem.message}",
                    path=self.path,
                    session_id=self.header.session_id,
                    line=line.number,
                    byte_offset=line.offset + (problem.column or 0),
                    pointer=problem.pointer,
                )
            )
            return
        code = self.precedence.line_problem(line, problem.rule)
        offset = line.offset + (problem.column or 0)
        self._error(
            problem.rule,
            code,
            problem.message,
            line,
            offset,
            pointer=problem.pointer,
            native=problem.rule not in ("SA102", "SA103"),
        )

    def _error(
        self,
        rule: str,
        code: str,
        message: str,
        line: Line,
        offset: int,
        *,
        seq: int | None = None,
        pointer: str | None = None,
        evidence: dict[str, Any] | None = None,
        native: bool = True,
    ) -> None:
        """A finding; the first one that tiny-agent's reducer would meet becomes its answer."""
        if native:
            self.precedence.error(code, line.number, seq)
        self._keep(
            finding(
                rule,
                message,
                path=self.path,
                session_id=self.header.session_id,
                line=line.number,
                byte_offset=offset,
                seq=seq,
                pointer=pointer or None,
                evidence=evidence,
                native_code=code,
            )
        )

    def _stop(self, line: Line) -> None:
        if self.mode == REDUCE or line.number == 1:
            self.note_due = True
        self.mode = TRACK
        self.reducing = False
        if self.stopped_at is None:
            self.stopped_at = line.number

    def _note_stopped(self, line: Line) -> None:
        self.note_due = False
        self._keep(
            finding(
                "SA215",
                f"line {self.stopped_at} ended semantic reduction; from line {line.number} on only framing, "
                "JSON, seq continuity and fact ids are checked",
                path=self.path,
                session_id=self.header.session_id,
                line=line.number,
                byte_offset=line.offset,
                evidence={"stopped_at_line": self.stopped_at},
            )
        )

    # --- the outcome --------------------------------------------------------------------------
    def _outcome(self) -> SourceOutcome:
        return session_outcome(
            path=self.path,
            real_path=self.real_path,
            stream=self.stream,
            reader=self.reader,
            header=self.header,
            findings=self.findings,
            encoding_only=self.mode == ENCODING_ONLY,
            capped_at=self.capped_at,
            options=self.options,
            reducer=self.reducer,
            precedence=self.precedence,
            observations=self.observations,
            facts=self.facts,
            last_seq=self.last_seq,
            last_offset=self.last_offset,
        )
