"""A JSONL file of objects read once, whole and read-only: every complete line decoded as strict JSON, the
framing problems as findings, the hash of what was read. Shared by the formats whose files are one JSON
object per LF-terminated line and are read whole into memory; each format names its own rule codes
(`Codes`) and says what its own program does with a torn line.

Findings: a complete line that is not strict JSON (`codes.invalid`), a torn last line (`codes.torn`), a
last line that is whole but lacks its LF (`codes.no_newline`, kept as a record), a value that is not an
object (`codes.not_object`), a line over the line limit (SA010), nested too deep (SA011); a file over
`--max-file-bytes` is refused at open (SA012, `TooLarge`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Generic, TypeVar

from sessaudit.evidence import open_evidence
from sessaudit.framing import LineReader
from sessaudit.limits import FILE_TOO_LARGE, Limits, size_text
from sessaudit.model import Finding
from sessaudit.plugin import FileRead
from sessaudit.rules import finding
from sessaudit.strictjson import NESTING_TOO_DEEP, LineProblem, decode_line


@dataclass(frozen=True, slots=True)
class Codes:
    """A format's rule codes for the framing problems, and what its program does with a torn last line
    (the end of the torn-line message, e.g. "<the agent> skips it on resume")."""

    invalid: str
    torn: str
    no_newline: str
    not_object: str
    torn_fate: str


@dataclass(slots=True)
class JsonRecord:
    """One decoded object line of a file."""

    path: str  # the file as reported
    line: int
    offset: int
    value: dict[str, Any]

    def where(self, pointer: str | None = None) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "byte_offset": self.offset, "pointer": pointer}


R = TypeVar("R", bound=JsonRecord)


@dataclass(slots=True)
class RecordFile(Generic[R]):
    path: str
    real_path: str
    kind: str  # what the format calls the file ("session", "subagent", "rollout" …)
    read: FileRead
    records: list[R] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    lines: int = 0
    torn_tail_bytes: int = 0


class TooLarge(Exception):
    """A file over `--max-file-bytes`: refused by its size at open, never read (SA012)."""

    def __init__(self, problem: Finding) -> None:
        super().__init__(problem.message)
        self.finding = problem


def read_records(
    path: str,
    real_path: str,
    kind: str,
    limits: Limits,
    codes: Codes,
    make: Callable[[str, int, int, dict[str, Any]], R],
) -> RecordFile[R]:
    """Read `real_path` (reported as `path`), each object line made a record by `make(path, line, offset,
    value)`; OSError when it cannot be opened, TooLarge when it is over `--max-file-bytes` (its records are
    all held in memory)."""
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
        records: list[R] = []
        findings: list[Finding] = []
        for line in reader:
            if line.over_limit:
                limit = limits.max_line_bytes
                message = f"line {line.number} is {line.over_limit} bytes, over the {limit}-byte limit"
                findings.append(
                    finding("SA010", message, path=path, line=line.number, byte_offset=line.offset)
                )
                continue
            value = _decoded(path, line.number, line.offset, line.data, codes, findings)
            if value is not None:
                records.append(make(path, line.number, line.offset, value))
        tail = reader.torn_tail_bytes
        if tail:
            value = _torn(path, stream, reader, limits, codes, findings)
            if value is not None:
                records.append(make(path, reader.line_count + 1, reader.torn_tail_offset, value))
        read = FileRead(path, real_path, reader.bytes_read, reader.sha256, opened_bytes=size)
    return RecordFile(path, real_path, kind, read, records, findings, reader.line_count, tail)


def _decoded(
    path: str, number: int, offset: int, data: bytes, codes: Codes, findings: list[Finding]
) -> dict[str, Any] | None:
    try:
        value = decode_line(data)
    except LineProblem as problem:
        findings.append(_problem(path, number, offset, problem, codes))
        return None
    if not isinstance(value, dict):
        findings.append(
            finding(
                codes.not_object,
                f"line {number} holds a JSON {type(value).__name__.replace('dict', 'object')}, not an object",
                path=path,
                line=number,
                byte_offset=offset,
            )
        )
        return None
    return value


def _problem(path: str, number: int, offset: int, problem: LineProblem, codes: Codes) -> Finding:
    column = problem.column if problem.column is not None else 0
    code = "SA011" if problem.rule == NESTING_TOO_DEEP else codes.invalid
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
    path: str, stream: BinaryIO, reader: LineReader, limits: Limits, codes: Codes, findings: list[Finding]
) -> dict[str, Any] | None:
    """The bytes after the last LF: a whole object without its LF (`codes.no_newline`, returned to be kept
    as a record) or a torn line (`codes.torn`)."""
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
                codes.no_newline,
                f"the last line ({number}) is a whole record but has no LF; "
                "the next append would join two lines",
                path=path,
                line=number,
                byte_offset=offset,
            )
        )
        return value
    findings.append(
        finding(
            codes.torn,
            f"the last line ({number}) was cut off: {length} bytes without LF that are not a JSON object "
            f"(a crash while writing); {codes.torn_fate}",
            path=path,
            line=number,
            byte_offset=offset,
            evidence={"torn_tail_bytes": length},
        )
    )
    return None
