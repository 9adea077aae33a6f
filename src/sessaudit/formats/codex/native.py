"""`sessaudit seed PATH --native --output FILE`: a repaired copy of a Codex rollout that `codex resume` can
continue without running a side effect again (spec §7, docs/formats/codex.md §7.1). The original is only
read.

The new file holds every line of the original byte for byte up to and including the fork point's line (the
rollout's last whole line, or line `--sequence N` of an open turn; never a torn last line; an LF is added
to a whole last line without one), then, for every call up to the fork point that has no output, in the
order the calls were made, an output item of the call's kind whose text says the outcome is unknown and
nothing was run again, then a `turn_aborted` event that ends the turn unless it is closed already
(seed/repair.py). So turns completed after a resume are kept, and the calls a crash left open before them
are answered at the end. Each added line is stamped 1 ms
after the latest time already in the kept lines, so the same input always gives the same bytes and time
never runs backwards. The session_meta is kept as it is: the copy is the same session, and replaces the
original (kept elsewhere as evidence) under the original's name, where `codex resume` finds it.

Exit status (sessaudit.repairs): 0 written; 1 nothing written (corrupt history, nothing open); 2 usage (the
output exists, no such run or line, a folder named); 3 the source could not be read or changed."""

from __future__ import annotations

from datetime import datetime, timedelta

from sessaudit.formats.codex.read.lines import Record, RolloutFile, read_rollout
from sessaudit.formats.codex.seed.repair import repair_lines
from sessaudit.formats.codex.seed.seeding import open_calls
from sessaudit.formats.codex.spec.tools import tool_name
from sessaudit.formats.codex.verifier import verify_codex
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


def native_repair(path: str, run: str | None, sequence: int | None, output: str) -> int:
    """Write the repaired copy of rollout `path` to the new file `output`; the exit status. What was written
    (or why nothing was) is said on stderr."""
    return run_repair(lambda: _repair(path, run, sequence, output))


def _repair(path: str, run: str | None, sequence: int | None, output: str) -> str:
    real, outcome = verified_source(
        path, output, run, sequence, verify_codex, "the rollout (rollout-<time>-<uuid>.jsonl)"
    )
    file = read_rollout(path, real, DEFAULT_LIMITS)
    chosen = _chosen_run(outcome, run, sequence, path)
    seed = chosen.recovery.seed if chosen.recovery is not None else None
    if seed is None or seed.fork_point.line is None:
        at = f"line {sequence}" if sequence is not None else "last line to fork at"
        raise Refused(USAGE, f"turn {safe(chosen.run_id)} has no {at}")
    data = verified_bytes(real, outcome.files[0], file.read)
    # without --sequence the whole file is kept: turns completed after a resume stay, their open calls
    # answered at its end (Codex pairs outputs by call_id, spec §7)
    fork = seed.fork_point.line if sequence is not None else _whole_lines(data, file)
    calls = open_calls(file.records, fork)
    if not calls:
        raise Refused(
            NOT_WRITTEN,
            f"nothing to repair in {safe(path)}: no call up to line {fork} lacks its output (turn "
            f"{safe(chosen.run_id)}, {seed.condition}); `codex resume` continues it as it is",
        )
    kept, end, total, torn = _kept(data, file, fork)
    latest = _latest(file.records, kept)
    lines = repair_lines(file.records, calls, fork, timestamp=None)
    body = data[:end] + (b"" if data[:end].endswith(b"\n") else b"\n")
    for line in lines:
        latest += timedelta(milliseconds=1)
        body += json_line({**line, "timestamp": utc_ms(latest)}) + b"\n"
    write_new(output, body)
    names = ", ".join(sorted({tool_name(call.payload) for call in calls}))
    dropped = []
    if torn:
        dropped.append("the torn last line dropped")
    if kept < total:
        dropped.append(f"the lines after {kept} left out")
    notes = f" ({'; '.join(dropped)})" if dropped else ""
    count = len(calls)
    closing = ", and a turn_aborted event" if len(lines) > count else ""
    place = (
        "put the copy in its place (same name) and continue with `codex resume`"
        if kept == total
        else "the copy forks the session at that line: resuming it in the original's place loses the lines "
        "left out"
    )
    return (
        f"wrote {safe(output)}: the first {kept} lines of {safe(path)} byte for byte{notes}, then an output "
        f"for {count} open call{'s' if count != 1 else ''} ({safe(names)}) saying the outcome is unknown, "
        f"none run again{closing}; keep the original as evidence; {place}"
    )


def _chosen_run(outcome: SourceOutcome, run: str | None, sequence: int | None, path: str) -> Run:
    """The open turn `--run` names, or the one holding line `sequence`, or the latest one."""
    open_runs = [
        item
        for session in outcome.sessions
        for item in session.runs
        if item.state == "open" and item.recovery is not None
    ]
    if run is not None:
        found = [item for item in open_runs if item.run_id == run]
        if not found:
            raise Refused(USAGE, f"no open turn {safe(run)!r} in {safe(path)} (see `sessaudit verify`)")
        return found[0]
    if not open_runs:
        raise Refused(NOT_WRITTEN, f"nothing to repair: {safe(path)} has no open turn")
    holding = [item for item in open_runs if _fork_line(item) == sequence]
    if sequence is not None and not holding:
        raise Refused(USAGE, f"line {sequence} is in no open turn of {safe(path)} (see `sessaudit verify`)")
    return holding[0] if holding else open_runs[-1]


def _fork_line(run: Run) -> int | None:
    seed = run.recovery.seed if run.recovery is not None else None
    return seed.fork_point.line if seed is not None else None


def _whole_lines(data: bytes, file: RolloutFile) -> int:
    """The number of the file's last whole line (a torn last line is not one)."""
    ends = data.count(b"\n")
    return ends + 1 if file.records and file.records[-1].line > ends else ends


def _kept(data: bytes, file: RolloutFile, fork: int) -> tuple[int, int, int, bool]:
    """(lines kept, their end offset, the file's whole lines, a torn last line dropped): through the fork
    point's line."""
    ends = [index + 1 for index, byte in enumerate(data) if byte == 0x0A]
    unterminated = bool(file.records) and file.records[-1].line > len(ends)  # SA803: whole, without LF
    total = len(ends) + (1 if unterminated else 0)
    end = ends[fork - 1] if fork <= len(ends) else len(data)
    return fork, end, total, bool(file.torn_tail_bytes) and not unterminated


def _latest(records: list[Record], kept: int) -> datetime:
    times = [moment_from_text(record.timestamp) for record in records if record.line <= kept]
    known = [stamp for stamp in times if stamp is not None]
    if not known:
        raise Refused(NOT_WRITTEN, "no line up to the fork point has a timestamp to follow")
    return max(known)
