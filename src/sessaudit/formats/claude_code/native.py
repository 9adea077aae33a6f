"""`sessaudit seed PATH --native --output FILE`: a repaired copy of a Claude Code session file that
`claude --resume` can continue (spec §8, "Repair"). The original is only read.

The new file holds every line of the original byte for byte up to and including the fork point's line (the
open turn's last record, or line `--sequence N`; when no record with a uuid follows the fork point, the
metadata lines after it too, and never a torn last line), then one user line per response whose calls the
chain at the fork point leaves unanswered, then Claude Code's interruption marker (seed/repair.py). A
repair line's uuid is derived from the source
file's sha256, the fork point's line and the calls' ids (a UUID v4 in form), and its timestamp is 1 ms
after the latest time already in the kept lines, so that the same input always gives the same bytes and
time never runs backwards in the file.

Exit status: 0 written; 1 nothing written because the history is corrupt or nothing is open; 2 a usage
error (the output exists, no such run, no such line, a folder named); 3 the source could not be read or
changed while it was read."""

from __future__ import annotations

import hashlib
import os
import uuid
from datetime import timedelta
from typing import Any, Final

from sessaudit.formats.claude_code.read.lines import Record, TranscriptFile, read_transcript
from sessaudit.formats.claude_code.recover.turns import turns_of
from sessaudit.formats.claude_code.seed.chain import Dangling, chain_at, dangling
from sessaudit.formats.claude_code.seed.repair import marker_line, repair_line
from sessaudit.formats.claude_code.verifier import verify_claude_code
from sessaudit.limits import DEFAULT_LIMITS
from sessaudit.model import Run
from sessaudit.plugin import SourceOutcome
from sessaudit.repairs import (
    NOT_WRITTEN,
    USAGE,
    Refused,
    json_line,
    run_repair,
    utc_ms,
    verified_bytes,
    verified_source,
    write_new,
)
from sessaudit.reporters.console import safe
from sessaudit.times import moment_from_text

NAMESPACE: Final = "sessaudit claude-code repair"


def native_repair(path: str, run: str | None, sequence: int | None, output: str) -> int:
    """Write the repaired copy of session file `path` to the new file `output`; the exit status. What was
    written (or why nothing was) is said on stderr."""
    return run_repair(lambda: _repair(path, run, sequence, output))


def _repair(path: str, run: str | None, sequence: int | None, output: str) -> str:
    real, outcome = verified_source(
        path, output, run, sequence, verify_claude_code, "the session file (<session-uuid>.jsonl)"
    )
    file = read_transcript(path, real, "session", DEFAULT_LIMITS)
    chosen = _chosen_run(outcome, file, run, sequence, path)
    seed = chosen.recovery.seed if chosen.recovery is not None else None
    if seed is None or seed.fork_point.line is None:
        at = f"line {sequence}" if sequence is not None else "its last record"
        raise Refused(USAGE, f"turn {safe(chosen.run_id)} has no record with a uuid at {at}")
    fork = next(record for record in file.records if record.line == seed.fork_point.line)
    groups = dangling(chain_at(file.records, fork))
    if not groups:
        raise Refused(
            NOT_WRITTEN,
            f"nothing to repair in {safe(path)}: no call on the chain at line {fork.line} lacks its result "
            f"(turn {safe(chosen.run_id)}, {seed.condition}); `claude --resume` continues it as it is",
        )
    data = verified_bytes(real, outcome.files[0], file.read)
    kept, end, total, torn = _kept(data, file, fork)
    lines = _repair_lines(groups, file, kept, fork.line, hashlib.sha256(data).hexdigest())
    body = data[:end] + (b"" if data[:end].endswith(b"\n") else b"\n")
    body += b"".join(json_line(line) + b"\n" for line in lines)
    write_new(output, body)
    calls = sum(len(group.calls) for group in groups)
    names = ", ".join(sorted({str(block.get("name")) for group in groups for _, block in group.calls}))
    dropped = []
    if torn:
        dropped.append("the torn last line dropped")
    if kept < total:
        dropped.append(f"the lines after {kept} left out")
    notes = f" ({'; '.join(dropped)})" if dropped else ""
    answers = len(lines) - 1
    return (
        f"wrote {safe(output)}: the first {kept} lines of {safe(path)} byte for byte{notes}, then "
        f"{answers} repair line{'s' if answers != 1 else ''} answering {calls} "
        f"call{'s' if calls != 1 else ''} ({safe(names)}) as errors, none run again, and the interruption "
        f"marker; put it in place of "
        f"{safe(os.path.basename(path))} (keep the original) and resume with `claude --resume`"
    )


def _chosen_run(
    outcome: SourceOutcome, file: TranscriptFile, run: str | None, sequence: int | None, path: str
) -> Run:
    """The open turn of the named file that `--run` names, or the one holding line `sequence`, or its
    latest one."""
    own = {turn.prompt.uuid or f"{file.path}:{turn.prompt.line}" for turn in turns_of(file)}
    open_runs = [
        item
        for session in outcome.sessions
        for item in session.runs
        if item.state == "open" and item.recovery is not None and item.run_id in own
    ]
    if run is not None:
        found = [item for item in open_runs if item.run_id == run]
        if not found:
            raise Refused(USAGE, f"no open turn {safe(run)!r} in {safe(path)} (see `sessaudit verify`)")
        return found[0]
    if not open_runs:
        raise Refused(NOT_WRITTEN, f"nothing to repair: {safe(path)} has no open turn")
    holding = [item for item in open_runs if _fork_line(item) == sequence]
    return holding[0] if sequence is not None and holding else open_runs[-1]


def _fork_line(run: Run) -> int | None:
    seed = run.recovery.seed if run.recovery is not None else None
    return seed.fork_point.line if seed is not None else None


def _kept(data: bytes, file: TranscriptFile, fork: Record) -> tuple[int, int, int, bool]:
    """(lines kept, their end offset, the file's whole lines, a torn last line dropped). Through the fork
    point's line, and on to the last whole line when no record with a uuid follows it (titles,
    last-prompt and other metadata lines)."""
    ends = [index + 1 for index, byte in enumerate(data) if byte == 0x0A]
    unterminated = bool(file.records) and file.records[-1].line > len(ends)  # SA703: whole, without LF
    total = len(ends) + (1 if unterminated else 0)
    last = fork.line
    if not any(record.uuid is not None and record.line > fork.line for record in file.records):
        last = total
    end = ends[last - 1] if last <= len(ends) else len(data)
    return last, end, total, bool(file.torn_tail_bytes) and not unterminated


def _repair_lines(
    groups: list[Dangling], file: TranscriptFile, kept: int, fork_line: int, digest: str
) -> list[dict[str, Any]]:
    times = [
        moment_from_text(record.value.get("timestamp")) for record in file.records if record.line <= kept
    ]
    known = [stamp for stamp in times if stamp is not None]
    if not known:
        raise Refused(NOT_WRITTEN, "no line up to the fork point has a timestamp to follow")
    latest = max(known)
    lines: list[dict[str, Any]] = []
    taken = {record.uuid for record in file.records if record.uuid is not None}
    for group in groups:
        latest += timedelta(milliseconds=1)
        ids = "\0".join(str(block.get("id")) for _, block in group.calls)
        seed = f"{NAMESPACE}\0{digest}\0{fork_line}\0{ids}".encode(errors="surrogatepass")
        name = uuid.UUID(bytes=hashlib.sha256(seed).digest()[:16], version=4)
        if str(name) in taken:
            raise Refused(NOT_WRITTEN, f"the derived uuid {name} is already in the file")
        taken.add(str(name))
        lines.append(repair_line(group, uuid=str(name), timestamp=utc_ms(latest)))
    latest += timedelta(milliseconds=1)
    seed = f"{NAMESPACE}\0{digest}\0{fork_line}\0marker".encode()
    name = uuid.UUID(bytes=hashlib.sha256(seed).digest()[:16], version=4)
    lines.append(marker_line(lines[-1], parent=lines[-1]["uuid"], uuid=str(name), timestamp=utc_ms(latest)))
    return lines
