"""The "tally" format: a plugin written only against the public plugin interface (FormatPlugin, SourceOutcome,
WarehousePart), to prove a new format needs no change to sessaudit itself.

A tally file is JSON lines, each ended by LF. Its first line is the header `{"tally": 1, "session": "<id>"}`;
every other line is `{"seq": n, "kind": "step" | "done", "tokens": k}`, seq counting from 1 by one. The
session has one run, `<id>/run`: completed by its "done" line, open (SA301, step-pending) while there is
none. Rules SA901–SA904 are the format's own; bytes after the last LF are a torn tail (SA904, never
verified)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any, BinaryIO, Final

from sessaudit.framing import Line
from sessaudit.model import (
    Finding,
    ForkPoint,
    Recovery,
    Run,
    RunState,
    Seed,
    SeedContext,
    SeedSource,
    Session,
    Source,
    Usage,
)
from sessaudit.plugin import FileRead, FormatPlugin, LineTap, SourceOutcome, VerifyOptions
from sessaudit.rulebase import CORRUPT, REPAIRABLE, E, Rule, W, _rule
from sessaudit.warehouse.drafts import Extraction

NAME: Final = "tally"
VERSION: Final = "1"
_HEADER = re.compile(rb'^\s*\{\s*"tally"\s*:')
_KINDS: Final = ("step", "done")
_CHUNK: Final = 1 << 16
CORRUPTING: Final = frozenset({"SA901", "SA902"})  # the rules whose line ends the verified history

TALLY_RULES: tuple[Rule, ...] = (
    _rule(
        "SA901",
        "tally-seq-gap",
        E,
        CORRUPT,
        "A tally line's seq is not the previous line's plus one.",
        """Every tally line after the header carries `seq`, counting from 1 by one. A missing, repeated or
          reordered seq means lines were lost or rewritten: the history after it is not trusted.""",
        fix="Restore the tally file from a copy made before the damage; the lines before it stand.",
        example='{"seq": 1, "kind": "step", "tokens": 3}\n{"seq": 3, "kind": "step", "tokens": 4}',
    ),
    _rule(
        "SA902",
        "tally-bad-line",
        E,
        CORRUPT,
        "A tally line is not the JSON object the format defines.",
        """The header must be `{"tally": 1, "session": "<id>"}`; every other line an object with an
          integer `seq`, a `kind` of "step" or "done" and a non-negative integer `tokens`. Anything else
          is damage.""",
        fix="Restore the tally file from a copy; a writer that produced the line has a bug.",
        example='{"seq": 1, "kind": "jump", "tokens": 3}',
    ),
    _rule(
        "SA903",
        "tally-line-after-done",
        W,
        None,
        "The tally run has lines after its done line.",
        """A run ends with its "done" line; later lines are counted but belong to no run.""",
        fix="Check the writer: it should start a new tally file for new work.",
    ),
    _rule(
        "SA904",
        "tally-torn-tail",
        W,
        REPAIRABLE,
        "The tally file ends in bytes without their LF.",
        """The writer was cut off mid-line (or is still writing). The torn bytes are hashed but not
          verified; the lines before them stand, and cutting the file at `repaired_length` repairs it.""",
        fix="Truncate the file to the session's repaired_length, or let the writer finish the line.",
    ),
)


class Tally(FormatPlugin):
    name = NAME
    title = "Tally"
    versions = (VERSION,)
    recognises = 'a JSON-lines file whose first line is {"tally": 1, "session": ...}'
    shared_rules = ("SA301",)
    reads = "file"

    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        return (TALLY_RULES,)

    def sniff(self, head: bytes, real_path: str) -> bool:
        return _HEADER.match(head.split(b"\n", 1)[0]) is not None

    def verify_file(
        self,
        path: str,
        real_path: str,
        stream: BinaryIO,
        size: int,
        options: VerifyOptions,
        tap: LineTap | None,
    ) -> SourceOutcome:
        data, digest = _read(stream, size)
        return check(path, real_path, data, digest, size, tap)

    def warehouse(self) -> Any:
        from sessaudit.warehouse.parts import WarehousePart

        return WarehousePart(extract_source)


def _read(stream: BinaryIO, size: int) -> tuple[bytes, str]:
    """The first `size` bytes of the stream (fewer if it shrank) and their sha256."""
    hasher = hashlib.sha256()
    pieces = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(min(_CHUNK, remaining))
        if not chunk:
            break
        hasher.update(chunk)
        pieces.append(chunk)
        remaining -= len(chunk)
    return b"".join(pieces), hasher.hexdigest()


def lines_of(data: bytes) -> tuple[list[Line], int]:
    """The committed lines (1-based numbers, byte offsets) and the length of the torn tail after them."""
    lines: list[Line] = []
    offset = 0
    number = 0
    while True:
        end = data.find(b"\n", offset)
        if end < 0:
            return lines, len(data) - offset
        number += 1
        lines.append(Line(number, offset, data[offset:end]))
        offset = end + 1


def _decode(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check(
    path: str, real_path: str, data: bytes, digest: str, size: int, tap: LineTap | None = None
) -> SourceOutcome:
    """The verified outcome of a tally file's bytes `data` (hashing to `digest`; `size` at open)."""
    from sessaudit.rules import finding, verdict_of  # the catalogue holds this plugin's rules once registered

    files = [FileRead(path, real_path, len(data), digest, opened_bytes=size)]
    lines, torn = lines_of(data)
    findings: list[Finding] = []

    def bad(line: Line, code: str, message: str) -> None:
        findings.append(
            finding(
                code, message, path=path, session_id=session_id, line=line.number, byte_offset=line.offset
            )
        )

    session_id: str | None = None
    header = _decode(lines[0].data) if lines else None
    if isinstance(header, dict) and header.get("tally") == 1 and isinstance(header.get("session"), str):
        session_id = header["session"]
    elif lines:
        bad(lines[0], "SA902", 'line 1 is not a tally header {"tally": 1, "session": "<id>"}')
    else:
        findings.append(finding("SA902", "the file has no complete header line", path=path))
    if tap is not None and lines:
        tap(lines[0], header, session_id, findings)
    facts, tokens, last_seq, done_line = 0, 0, None, None
    last_line = lines[0] if lines else None  # the last verified line
    for line in lines[1:]:
        value = _decode(line.data)
        if not (
            isinstance(value, dict)
            and _integer(value.get("seq"))
            and value.get("kind") in _KINDS
            and _integer(value.get("tokens"))
            and value["tokens"] >= 0
        ):
            bad(line, "SA902", f"line {line.number} is not a tally line of seq, kind and tokens")
        elif value["seq"] != (expected := 1 if last_seq is None else last_seq + 1):
            bad(line, "SA901", f"line {line.number} has seq {value['seq']}, expected {expected}")
        else:
            if done_line is not None:
                bad(line, "SA903", f"line {line.number} comes after the done line {done_line}")
            last_seq = value["seq"]
            last_line = line
            facts += 1
            tokens += value["tokens"]
            if value["kind"] == "done" and done_line is None:
                done_line = line.number
        if tap is not None:
            tap(line, value, session_id, findings)
        if any(item.rule in CORRUPTING for item in findings):
            break  # the history from the first corrupting line on is not verified
    sessions: list[Session] = []
    if session_id is not None:
        run_id = f"{session_id}/run"
        if torn:
            findings.append(
                finding(
                    "SA904",
                    f"{torn} bytes after the last LF (a line being written when the file was read); "
                    "not verified",
                    path=path,
                    session_id=session_id,
                    byte_offset=len(data) - torn,
                    evidence={"torn_tail_bytes": torn},
                )
            )
        if done_line is None and last_line is not None:
            last = last_line
            findings.append(
                finding(
                    "SA301",
                    f"run {run_id} was left open: the tally has no done line (last seq {last_seq}); "
                    "condition step-pending",
                    path=path,
                    session_id=session_id,
                    line=last.number,
                    byte_offset=last.offset,
                    seq=last_seq,
                    evidence={"condition": "step-pending"},
                )
            )
        recovery = None
        if done_line is None:
            recovery = Recovery(
                condition="step-pending",
                conditions=["step-pending"],
                seed_kind="replay",
                seed=_seed(path, digest, session_id, run_id, last_line, last_seq),
            )
        state: RunState = "open" if done_line is None else "completed"
        run = Run(run_id=run_id, kind="run", state=state, recovery=recovery)
        sessions.append(
            Session(
                session_id=session_id,
                verdict=verdict_of(findings, open_work=done_line is None),
                facts=facts,
                last_seq=last_seq,
                repaired_length=len(data) - torn if torn else None,
                torn_tail_bytes=torn,
                usage=Usage.of(input=0, output=tokens, cache_read=0, cache_write=0),
                runs=[run],
            )
        )
    findings.sort(key=Finding.sort_key)
    return SourceOutcome(NAME, VERSION if session_id is not None else None, files, sessions, findings)


def _seed(
    path: str, digest: str, session_id: str, run_id: str, last: Line | None, last_seq: int | None
) -> Seed:
    """A replay seed: continue the open run after its last verified line, with the next seq."""
    return Seed(
        seed_kind="replay",
        source=SeedSource(path=path, format=NAME, format_version=VERSION, sha256=digest),
        session_id=session_id,
        run_id=run_id,
        condition="step-pending",
        fork_point=ForkPoint(
            seq=last_seq,
            line=last.number if last is not None else None,
            byte_offset=last.offset if last is not None else None,
            fact_id=None,
        ),
        pending_effects=[],
        replay={"next_seq": (last_seq or 0) + 1},
        context=SeedContext(messages=[]),
        next_facts=[],
    )


def extract_source(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction,
    max_line_bytes: int,
) -> None:
    """The verified lines (before the first corrupting one) as `facts` rows of kind "tally"."""
    from sessaudit.warehouse.extract import cut_line, read_verified
    from sessaudit.warehouse.rows import FactRow

    evidence = source.files[0]
    data = read_verified(real_path, evidence.bytes, evidence.sha256)
    cut = cut_line(findings, source.path)
    into.complete = cut is None
    session = source.sessions[0]
    run_id = session.runs[0].run_id if session.runs else None
    lines, _ = lines_of(data)
    for line in lines[1:]:
        if cut is not None and line.number >= cut:
            break
        value = json.loads(line.data)
        if run_id is not None:
            into.span(session.session_id, run_id).add(value["seq"], None)
        into.add_fact(
            FactRow(
                source_id,
                session.session_id,
                run_id,
                value["seq"],
                line.number,
                line.offset,
                None,
                "tally",
                value["kind"],
                None,
                None,
                None,
                line.data.decode("utf-8"),
            )
        )


PLUGIN: Final = Tally()
