"""The legacy tiny-agent v1 verifier: what the `tiny-ts` CLI writes today (spec §15.1), line by line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO

from sessaudit.formats.tiny_agent.v1.lines import (
    HEADER,
    MAX_SAFE_INTEGER,
    AssistantMessage,
    Compaction,
    Tokens,
    instant,
    read_header,
    read_line,
)
from sessaudit.formats.tiny_agent.v1.recovery import Note
from sessaudit.formats.tiny_agent.v1.seed import v1_context, v1_seed
from sessaudit.formats.tiny_agent.v1.turns import Turns
from sessaudit.framing import BYTE_ORDER_MARK, Line, LineReader
from sessaudit.limits import (
    DEFAULT_LIMITS,
    LINE_TOO_LONG,
    TOO_MANY_FINDINGS,
    Limits,
    line_too_long_message,
    too_many_findings_message,
)
from sessaudit.model import Finding, Run, SeedSource, Session, Usage
from sessaudit.plugin import FileRead, SourceOutcome
from sessaudit.rules import finding, verdict_of
from sessaudit.strictjson import LineProblem, decode_line
from sessaudit.verdicts import Verdict
from sessaudit.withheld import first_corrupting, withheld_reason

BLANK_LINE, TORN_TAIL, MISSING_HEADER, UTF8_BOM = "SA159", "SA109", "SA101", "SA110"
MALFORMED_JSON = "SA106"
USAGE, ID_TIME, BACKWARDS, BEFORE_CREATION = "SA156", "SA402", "SA403", "SA404"
# How tiny-agent's v2 reducer names a problem of line 1 (spec §3); encoding problems are handled apart.
_FIRST_LINE_CODES = {
    "SA104": "MISSING_HEADER",
    "SA105": "CRLF_NOT_ALLOWED",
    "SA106": "MALFORMED_JSON",
    "SA107": "MALFORMED_JSON",
    "SA108": "MALFORMED_JSON",
}


def verify_tiny_agent_v1(
    path: str, real_path: str, stream: BinaryIO, size: int, limits: Limits = DEFAULT_LIMITS
) -> SourceOutcome:
    """Verify one legacy v1 session file: the first `size` bytes of `stream`, read once, never written."""
    reader = LineReader(stream, size, max_line_bytes=limits.max_line_bytes)
    verifier = _Verifier(limits=limits)
    for line in reader:
        verifier.take(line, bom=line.number == 1 and reader.has_bom)
    return verifier.outcome(path, real_path, reader, stream)


@dataclass(slots=True)
class _Native:
    """Enough of the framing to answer as tiny-agent's v2 reducer does (spec §3, CONTRACT §6)."""

    first_surrogate_line: int | None = None
    invalid_utf8: bool = False
    first_line_code: str | None = None

    def answer(self, reader: LineReader) -> dict[str, Any]:
        # Checked in the reducer's order; a v1 line 1 that frames well fails on its unknown `type` key.
        code, line = "INVALID_HEADER", 1
        if reader.line_count == 0:
            code = "MISSING_HEADER"
        elif self.first_surrogate_line is not None:
            code, line = "MALFORMED_JSON", self.first_surrogate_line
        elif self.invalid_utf8:
            code = "INVALID_UTF8"
        elif self.first_line_code is not None:
            code = self.first_line_code
        return {
            "ok": False,
            "code": code,
            "line": line,
            "seq": None,
            "repaired_length": None,
            "operation": None,
        }


@dataclass(slots=True)
class _Totals:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    overflowed: bool = False

    def add(self, tokens: Tokens) -> bool:
        """Add one usage; True when this addition first takes a running total past 2^53−1."""
        self.input += tokens.input
        self.output += tokens.output
        self.cache_read += tokens.cache_read
        self.cache_write += tokens.cache_write
        over = max(self.input, self.output, self.cache_read, self.cache_write) > MAX_SAFE_INTEGER
        first, self.overflowed = over and not self.overflowed, self.overflowed or over
        return first

    def usage(self) -> Usage:
        return Usage.of(
            input=self.input, output=self.output, cache_read=self.cache_read, cache_write=self.cache_write
        )


@dataclass(slots=True)
class _Verifier:
    notes: list[Note] = field(default_factory=list)
    native: _Native = field(default_factory=_Native)
    turns: Turns = field(init=False)
    header_seen: bool = False
    session_id: str | None = None
    created_at: int | None = None
    facts: int = 0
    last_fact_line: int | None = None
    previous_time: int | None = None
    early: list[Line] = field(default_factory=list)  # lines stamped before createdAt
    totals: _Totals = field(default_factory=_Totals)
    limits: Limits = DEFAULT_LIMITS
    capped_at: int | None = None  # the line where --max-findings stopped checking

    def __post_init__(self) -> None:
        self.turns = Turns(self.notes)

    def note(self, code: str, message: str, line: Line, pointer: str | None = None, **evidence: Any) -> None:
        self.notes.append(Note(code, message, line.number, line.offset, pointer, evidence or None))

    def take(self, line: Line, *, bom: bool) -> None:
        if self.capped_at is not None or len(self.notes) >= self.limits.max_findings:
            # --max-findings: the rest is only hashed and counted (SA014 in the outcome)
            self.capped_at = self.capped_at or line.number
            return
        if bom:
            self.note(
                UTF8_BOM,
                "the file starts with a UTF-8 byte order mark; tiny-agent v1's reader trims "
                "it, but its writer never writes one",
                line,
            )
        if line.over_limit:  # hashed and counted, never held: a fact (or the header) that is not verified
            is_header, self.header_seen = not self.header_seen, True
            if not is_header:
                self.facts, self.last_fact_line = self.facts + 1, line.number
                self.turns.unusable(line)
            self.note(
                LINE_TOO_LONG,
                line_too_long_message(line.number, line.over_limit, self.limits.max_line_bytes),
                line,
                line_bytes=line.over_limit,
                max_line_bytes=self.limits.max_line_bytes,
            )
            return
        if not line.data or (bom and line.data == BYTE_ORDER_MARK):
            # tiny-agent v1 reads with trim/split/filter(Boolean), so it skips empty lines; v2 rejects them.
            if line.number == 1:
                self.native.first_line_code = "MISSING_HEADER"
            self.note(
                BLANK_LINE,
                "an empty line; tiny-agent v1's reader skips it, but its writer never writes one",
                line,
            )
            return
        is_header, self.header_seen = not self.header_seen, True
        if not is_header:
            self.facts, self.last_fact_line = self.facts + 1, line.number
        try:
            value = decode_line(line.data, strip_bom=bom)
        except LineProblem as problem:
            self._framing_problem(line, problem)
            if not is_header:
                self.turns.unusable(line)
            return
        if is_header:
            self._header(value, line)
        else:
            self._line(value, line)

    def _framing_problem(self, line: Line, problem: LineProblem) -> None:
        if problem.rule == "SA103" and self.native.first_surrogate_line is None:
            self.native.first_surrogate_line = line.number
        self.native.invalid_utf8 = self.native.invalid_utf8 or problem.rule == "SA102"
        if line.number == 1:
            self.native.first_line_code = _FIRST_LINE_CODES.get(problem.rule)
        offset = line.offset + (problem.column or 0)
        self.notes.append(Note(problem.rule, problem.message, line.number, offset, problem.pointer))

    def _header(self, value: Any, line: Line) -> None:
        header = read_header(value)
        self.session_id, self.created_at = header.session_id, header.created_at
        for issue in header.issues:
            self.note(issue.code, issue.message, line, issue.pointer)
        created_at, id_time = header.created_at, header.id_time
        if created_at is not None and id_time is not None and id_time != created_at:
            differs = f"the header id's UUIDv7 time ({id_time} ms) differs from createdAt ({created_at} ms)"
            self.note(
                ID_TIME,
                f"{differs}; the v1 CLI derives both from one clock reading",
                line,
                "/id",
                id_time=id_time,
                created_at=created_at,
            )
        if isinstance(value, dict):
            self.previous_time = instant(value.get("timestamp"))

    def _line(self, value: Any, line: Line) -> None:
        reading = read_line(value)
        for issue in reading.issues:
            self.note(issue.code, issue.message, line, issue.pointer)
        self._timestamp(reading.timestamp, line)
        event = reading.event
        if event is None:
            self.turns.unusable(line, counts_as_message=reading.is_message)
            return
        tokens = event.usage if isinstance(event, AssistantMessage | Compaction) else None
        if tokens is not None and self.totals.add(tokens):
            self.note(
                USAGE,
                "a running usage total passes 2^53−1 here; JavaScript can no longer add it exactly",
                line,
                "/usage",
            )
        self.turns.apply(event, line)
        if reading.timestamp is not None:
            self.turns.written(reading.timestamp)

    def _timestamp(self, moment: int | None, line: Line) -> None:
        if moment is None:
            return
        if self.previous_time is not None and moment < self.previous_time:
            earlier = f"the timestamp is {self.previous_time - moment} ms earlier than the previous line's"
            self.note(
                BACKWARDS,
                f"{earlier}; the v1 CLI stamps lines from one clock as it appends them",
                line,
                "/timestamp",
            )
        if self.created_at is not None and moment < self.created_at:
            self.early.append(line)
        self.previous_time = moment

    def _file_notes(self, reader: LineReader) -> None:
        """What only the end of the file tells: a missing header, a torn tail, early timestamps."""
        end = Line(reader.line_count + 1, reader.torn_tail_offset, b"")
        if reader.line_count == 0:
            what = f"its {reader.bytes_read} bytes hold no LF" if reader.bytes_read else "it is empty"
            self.note(MISSING_HEADER, f"the file has no complete header line: {what}", Line(1, 0, b""))
        elif not self.header_seen:
            self.note(HEADER, "every line is empty: the file has no session header", Line(1, 0, b""))
        elif reader.torn_tail_bytes:
            torn, kept = reader.torn_tail_bytes, reader.repaired_length
            self.note(
                TORN_TAIL,
                f"{torn} bytes after the last LF are an unterminated (torn) write; the committed "
                f"prefix is {kept} bytes. tiny-agent v1 does not truncate them when it opens the file (v2 "
                "does): remove them before resuming",
                end,
                torn_tail_bytes=torn,
                repaired_length=kept,
            )
        if self.early:
            first = self.early[0]
            self.note(
                BEFORE_CREATION,
                f"{len(self.early)} line(s) are stamped before the header's createdAt, "
                f"first line {first.number}",
                first,
                "/timestamp",
                lines=len(self.early),
            )

    def outcome(self, path: str, real_path: str, reader: LineReader, stream: BinaryIO) -> SourceOutcome:
        self._file_notes(reader)
        if self.capped_at is not None:
            limit = self.limits.max_findings
            message = too_many_findings_message(limit, self.capped_at)
            self.notes.append(
                Note(TOO_MANY_FINDINGS, message, self.capped_at, None, None, {"max_findings": limit})
            )
        turns = self.turns.finish()
        findings = sorted((self._finding(note, path) for note in self.notes), key=Finding.sort_key)
        runs = self._with_seeds(turns, path, reader, stream, _withheld(findings, self.turns.untrusted))
        committed = reader.line_count > 0
        session = Session(
            session_id=self.session_id,
            verdict=verdict_of(findings, open_work=any(run.recovery is not None for run in runs)),
            facts=self.facts,
            last_seq=self.last_fact_line,
            repaired_length=reader.repaired_length if committed else None,
            torn_tail_bytes=reader.torn_tail_bytes if committed else 0,
            usage=self.totals.usage(),
            native={},
            runs=runs,
        )
        return SourceOutcome(
            format="tiny-agent",
            format_version="1",
            files=[FileRead(path, real_path, reader.bytes_read, reader.sha256, opened_bytes=reader.size)],
            sessions=[session],
            findings=findings,
            native={"reducer": self.native.answer(reader)},
        )

    def _with_seeds(
        self, runs: list[Run], path: str, reader: LineReader, stream: BinaryIO, withheld: str | None
    ) -> list[Run]:
        """Attach a seed to every run with a recovery (CONTRACT §5), built from the committed prefix; of a
        corrupt session (`withheld`: why) none."""
        turns = {turn.run_id: turn for turn in self.turns.turns}
        source = SeedSource(path=path, format="tiny-agent", format_version="1", sha256=reader.sha256)
        seeded: list[Run] = []
        for run in runs:
            turn = turns.get(run.run_id)
            if run.recovery is None or turn is None:
                seeded.append(run)
                continue
            if withheld is not None:
                seeded.append(run.model_copy(update={"recovery": run.recovery.withheld(withheld)}))
                continue
            context = v1_context(stream, reader.repaired_length, turn.last_line)
            seed = v1_seed(
                run.recovery,
                source=source,
                session_id=self.session_id,
                run_id=run.run_id,
                fork_line=turn.last_line,
                fork_offset=turn.last_offset,
                context=context,
            )
            seeded.append(run.model_copy(update={"recovery": run.recovery.model_copy(update={"seed": seed})}))
        return seeded

    def _finding(self, note: Note, path: str) -> Finding:
        return finding(
            note.code,
            note.message,
            path=path,
            session_id=self.session_id,
            line=note.line,
            byte_offset=note.offset,
            pointer=note.pointer,
            evidence=note.evidence,
        )


def _withheld(findings: list[Finding], untrusted: int | None) -> str | None:
    """Why the runs of a corrupt v1 session get no seed (None: it is not corrupt)."""
    if verdict_of(findings) is not Verdict.CORRUPT:
        return None
    unparsable = next((item for item in findings if item.rule == MALFORMED_JSON), None)
    native = (
        f"tiny-agent v1's reader cannot parse line {unparsable.location.line} (it JSON.parses every line)"
        if unparsable is not None
        else None
    )
    known = (
        f"the open state shown is known only through line {untrusted - 1}; later turns are reconstructed"
        if untrusted is not None and untrusted > 1
        else None
    )
    return withheld_reason(first_corrupting(findings), native=native, known=known, in_file=False)
