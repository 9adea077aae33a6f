"""One transcript file, read once and read-only: its lines decoded as strict JSON (spec §2), its hash.

Framing problems are findings here: a complete line that is not strict JSON (SA701), a torn last line
(SA702), a last line that is whole but lacks its LF (SA703), a value that is not an object (SA704), a line
over the line limit (SA010) or nested too deep (SA011)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessaudit.evidence import open_evidence
from sessaudit.framing import LineReader
from sessaudit.limits import FILE_TOO_LARGE, Limits, size_text
from sessaudit.model import Finding
from sessaudit.plugin import FileRead
from sessaudit.rules import finding
from sessaudit.strictjson import NESTING_TOO_DEEP, LineProblem, decode_line


@dataclass(slots=True)
class Record:
    """One decoded object line of a file."""

    path: str  # the file as reported
    line: int
    offset: int
    value: dict[str, Any]

    @property
    def kind(self) -> str | None:
        kind = self.value.get("type")
        return kind if isinstance(kind, str) else None

    @property
    def uuid(self) -> str | None:
        uuid = self.value.get("uuid")
        return uuid if isinstance(uuid, str) else None

    def where(self, pointer: str | None = None) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "byte_offset": self.offset, "pointer": pointer}


@dataclass(slots=True)
class TranscriptFile:
    path: str
    real_path: str
    kind: str  # "session" or "subagent"
    read: FileRead
    records: list[Record] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    lines: int = 0
    torn_tail_bytes: int = 0


class TooLarge(Exception):
    """A transcript over `--max-file-bytes`: refused by its size at open, never read (SA012)."""

    def __init__(self, problem: Finding) -> None:
        super().__init__(problem.message)
        self.finding = problem


def read_transcript(path: str, real_path: str, kind: str, limits: Limits) -> TranscriptFile:
    """Read `real_path` (reported as `path`); OSError when it cannot be opened, TooLarge when it is over
    `--max-file-bytes` (its records are all held in memory, with the session's other files)."""
    stream, size = open_evidence(real_path)
    if size > limits.max_file_bytes:
        stream.close()
        message = (
            f"{path} is {size} bytes, over the --max-file-bytes limit of {size_text(limits.max_file_bytes)} "
            "for a file read whole; it was not verified"
        )
        evidence = {"bytes": size, "max_file_bytes": limits.max_file_bytes}
        raise TooLarge(finding(FILE_TOO_LARGE, message, path=path, evidence=evidence))
    with stream:
        reader = LineReader(stream, size, max_line_bytes=limits.max_line_bytes)
        records: list[Record] = []
        findings: list[Finding] = []
        for line in reader:
            if line.over_limit:
                limit = limits.max_line_bytes
                message = f"line {line.number} is {line.over_limit} bytes, over the {limit}-byte limit"
                findings.append(
                    finding("SA010", message, path=path, line=line.number, byte_offset=line.offset)
                )
                continue
            _decode(path, line.number, line.offset, line.data, records, findings)
        tail = reader.torn_tail_bytes
        if tail:
            _torn(path, stream, reader, limits, records, findings)
        read = FileRead(path, real_path, reader.bytes_read, reader.sha256, opened_bytes=size)
    result = TranscriptFile(path, real_path, kind, read, records, findings, reader.line_count, tail)
    return result


def _decode(
    path: str, number: int, offset: int, data: bytes, records: list[Record], findings: list[Finding]
) -> None:
    try:
        value = decode_line(data)
    except LineProblem as problem:
        findings.append(_problem(path, number, offset, problem))
        return
    if not isinstance(value, dict):
        findings.append(
            finding(
                "SA704",
                f"line {number} holds a JSON {type(value).__name__.replace('dict', 'object')}, not an object",
                path=path,
                line=number,
                byte_offset=offset,
            )
        )
        return
    records.append(Record(path, number, offset, value))


def _problem(path: str, number: int, offset: int, problem: LineProblem) -> Finding:
    column = problem.column if problem.column is not None else 0
    code = "SA011" if problem.rule == NESTING_TOO_DEEP else "SA701"
    return finding(
        code,
        f"line {number} is not strict JSON: {problem.message}",
        path=path,
        line=number,
        byte_offset=offset + column,
        pointer=problem.pointer,
        evidence={"problem": problem.rule},
    )


def _torn(
    path: str, stream: Any, reader: LineReader, limits: Limits, records: list[Record], findings: list[Finding]
) -> None:
    """The bytes after the last LF: a whole object without its LF (SA703, kept as a record) or a torn line
    (SA702)."""
    number = reader.line_count + 1
    offset, length = reader.torn_tail_offset, reader.torn_tail_bytes
    value: Any = None
    if length <= limits.max_line_bytes:
        stream.seek(offset)
        data = stream.read(length)
        try:
            value = decode_line(data)
        except LineProblem:
            value = None
    if isinstance(value, dict):
        findings.append(
            finding(
                "SA703",
                f"the last line ({number}) is a whole record but has no LF; "
                "the next append would join two lines",
                path=path,
                line=number,
                byte_offset=offset,
            )
        )
        records.append(Record(path, number, offset, value))
        return
    findings.append(
        finding(
            "SA702",
            f"the last line ({number}) was cut off: {length} bytes without LF that are not a JSON object "
            "(a crash while writing); Claude Code skips it on resume",
            path=path,
            line=number,
            byte_offset=offset,
            evidence={"torn_tail_bytes": length},
        )
    )
