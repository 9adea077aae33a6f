"""The fast path of the v2 pass: it only proves that a session is accepted, and doubts everything else.

`prove_accepted` streams the file once through the same line framing, header checks, `ReducerState` and
end-of-file outcome (`session_outcome`) as the exact pass (verification.py), but applies each fact with
straight-line code (fastfacts.py) on the state directly: no undo journal (`DirectJournal`), no `Failure`
objects, no per-transaction bookkeeping for a rejection that cannot happen. The first doubt of any kind
(an undecodable line, a line over --max-line-bytes, an unsupported or invalid header, any fact the exact
rules would reject, a transcript problem, any finding the exact pass would keep) raises `Doubt`, and the
caller verifies the file again with the exact pass, unchanged. So a file the fast path accepts reaches
exactly the state the exact pass reaches (the same handlers where a fact is not a common shape), and its
outcome, findings and seeds are built by the same code from that state.

The promise is checked, not assumed: with `SESSAUDIT_CHECK_FAST_PATH=1` (the test suite sets it) every
tiny-agent verification runs the exact pass for its answer and the fast path beside it, and any difference
in the whole outcome, or a doubt where the exact pass kept no finding, is an internal error
(`differential_check`)."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any, BinaryIO, Final

import orjson

from sessaudit.fastjson import compact_lines_are_strict
from sessaudit.formats.tiny_agent.check.state import Journal, Place
from sessaudit.formats.tiny_agent.read.shapes import Violation
from sessaudit.formats.tiny_agent.v2 import compact, fastfacts
from sessaudit.formats.tiny_agent.v2.compact import Compactor, Doubt, compaction_allowed
from sessaudit.formats.tiny_agent.v2.verification import ENCODING_ONLY, REDUCE, _Verification
from sessaudit.framing import Line
from sessaudit.model import Finding
from sessaudit.plugin import LineTap, SourceOutcome, VerifyOptions
from sessaudit.rules import finding
from sessaudit.strictjson import MAX_DEPTH, LineProblem, decode_line

# The environment variable that makes every tiny-agent verification run both paths and compare them.
CHECK_VARIABLE: Final = "SESSAUDIT_CHECK_FAST_PATH"
# What the differential checks of this process saw: sessions the fast path accepted, and doubted.
COMPARED: Final[dict[str, int]] = {"accepted": 0, "doubted": 0, "compacted": 0}
# The differential check's second fast pass compacts its state after this many new ids.
CHECK_LIMIT: Final = 4


# New ids are checked against the UUIDv7 pattern in batches of this many, by one regular expression call.
FRESH_BATCH: Final = 4096


class FastPathMismatch(AssertionError):
    """The fast path accepted a file with another outcome than the exact pass, or doubted a file the exact
    pass kept no finding on: a defect of the fast path, never of the evidence."""


class DirectJournal(Journal):
    """A journal that only applies: the fast path never rolls a transaction back (it doubts instead)."""

    __slots__ = ()

    def set(self, target: Any, name: str, value: Any) -> None:
        setattr(target, name, value)

    def put(self, container: Any, key: Any, value: Any) -> None:
        container[key] = value

    def remove(self, container: dict[Any, Any], key: Any) -> None:
        del container[key]

    def append(self, container: list[Any], value: Any) -> None:
        container.append(value)

    def commit(self) -> None:
        return None

    def rollback(self) -> None:
        raise Doubt("a rejected transaction")


class _FastVerification(_Verification):
    """The exact pass's framing, header and outcome; transactions applied by the fast facts; any finding
    the pass itself would keep is a doubt."""

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
        compactor: Compactor | None = None,
    ) -> None:
        super().__init__(path, real_path, stream, size, options, tap, report_progress=report_progress)
        self.tapped = 0  # the last line handed to the tap
        # the state is compacted past this many ids (compact.py); never where str hashes are not random
        self.compactor = compactor if compactor is not None else Compactor()
        if compactor is None and not compaction_allowed():
            self.compactor.limit = sys.maxsize

    def _reducer(self, **parts: Any) -> fastfacts.FastReducer:
        reducer = fastfacts.FastReducer(**parts)
        reducer.journal = DirectJournal()
        self.fast = reducer
        return reducer

    def run(self) -> SourceOutcome:
        reader = self.reader
        rereader = self.rereader
        reducer = self.fast
        apply_fact = fastfacts.apply_fact
        observations = reducer.observations
        last_written = reducer.last_written
        loads, dumps = orjson.loads, orjson.dumps
        tap = self.tap
        compact_is_strict = compact_lines_are_strict(MAX_DEPTH)
        fresh = reducer.fresh_ids
        compactor = self.compactor
        facts = 0
        number, offset, place = 0, 0, None
        for line in reader:
            self.line_end = rereader.line_end = line.end
            if line.over_limit:
                raise Doubt(f"line {line.number} is over --max-line-bytes")
            if line.number == 1:
                header = self._header(line)
                if self.mode != REDUCE or self.findings:
                    raise Doubt("the header is not accepted")
                if tap is not None:
                    tap(line, header, self.header.session_id, self.findings)
                    self.tapped = 1
                continue
            data = line.data
            try:
                value = loads(data)  # a compact line orjson writes back byte for byte is strict JSON
                strict = compact_is_strict and dumps(value) == data
            except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # e.g. nested past orjson's writer
                strict = False
            if not strict:
                try:
                    value = decode_line(data)
                except LineProblem as problem:
                    raise Doubt(f"line {line.number} does not decode") from problem
            number = line.number
            offset = line.offset
            reducer.transcript_problem = None
            before = reducer.current
            if type(value) is list:
                if not value:
                    raise Doubt(f"line {number} is an empty transaction")
                for index, fact in enumerate(value):
                    place = Place(number, offset, index, 0)
                    apply_fact(reducer, fact, place)
                facts += len(value)
            else:
                place = Place(number, offset, -1, 0)
                apply_fact(reducer, value, place)
                facts += 1
            if reducer.transcript_problem is not None:
                raise Doubt(f"line {number} breaks the transcript")
            if observations.buffer:
                observations.commit()
            if len(fresh) >= FRESH_BATCH and not fastfacts.check_fresh_ids(fresh):
                raise Doubt(f"an id before line {number} is not a UUIDv7")
            if len(reducer.namespace) >= compactor.limit and compactor.due(
                len(reducer.namespace), line.end, reader.size
            ):
                if not fastfacts.check_fresh_ids(fresh):  # only proven UUIDs are packed
                    raise Doubt(f"an id before line {number} is not a UUIDv7")
                compactor.compact(reducer)
            # the operation the transaction wrote to, finished or started (reducer.apply's bookkeeping)
            current = reducer.current
            if current is not None:
                last_written[current.operation_id] = reducer.fact_timestamp
            if before is not None and before is not current:
                last_written[before.operation_id] = reducer.fact_timestamp
            if tap is not None:
                tap(line, value, self.header.session_id, self.findings)
                self.tapped = number
        if not fastfacts.check_fresh_ids(fresh):
            raise Doubt("an id is not a UUIDv7")
        if reader.line_count == 0:
            raise Doubt("the file has no header line (no LF)")
        if self.findings or self.mode == ENCODING_ONLY:
            raise Doubt("the pass kept a finding")
        if compactor.compactions and reducer.current is None and not reducer.pending_intents:
            compact.release(reducer)  # nothing open: the outcome reads only the runs
        # what the exact pass sets after each accepted transaction, for the last one
        self.facts = facts
        if place is not None:
            reducer.verified_line = number
            reducer.verified_seq = place.seq
            self.last_offset = offset
            self.last_seq = reducer.last_seen_seq
        return self._outcome()

    def _keep(self, item: Finding) -> None:
        raise Doubt(f"a finding: {item.rule}")

    def _over_limit(self, line: Line) -> None:
        raise Doubt(f"line {line.number} is over --max-line-bytes")


def prove_accepted(
    path: str,
    real_path: str,
    stream: BinaryIO,
    size: int,
    options: VerifyOptions,
    tap: LineTap | None = None,
) -> SourceOutcome | None:
    """The outcome of a session the fast path proves accepted, or None when it doubts (the stream is then
    back at offset 0 for the exact pass). The collector is paused during the pass: the reducer's state
    holds no reference cycles, so collecting while it grows finds nothing to free.

    A `tap` sees each line the fast path accepted, as the exact pass would show it (no findings: there
    are none); `verify_fast_first` resumes it in the exact pass after a doubt."""
    return _prove(_FastVerification(path, real_path, stream, size, options, tap))


def _prove(verification: _FastVerification) -> SourceOutcome | None:
    stream = verification.stream
    start = stream.tell()
    collecting = gc.isenabled()
    gc.disable()
    try:
        return verification.run()
    except (Doubt, Violation, orjson.JSONEncodeError, ValueError):
        stream.seek(start)
        return None
    finally:
        if collecting:
            gc.enable()


def verify_fast_first(
    path: str,
    real_path: str,
    stream: BinaryIO,
    size: int,
    options: VerifyOptions,
    tap: LineTap | None,
) -> SourceOutcome:
    """The fast path's outcome, or after a doubt the exact pass's (its tap resumed after the lines the
    fast path already showed it)."""
    verification = _FastVerification(path, real_path, stream, size, options, tap)
    proven = _prove(verification)
    if proven is not None:
        return proven
    resumed = tap if tap is None or not verification.tapped else _Resumed(tap, verification.tapped)
    first_read, first_sha256 = verification.reader.hashed_so_far()
    again = _Verification(
        path,
        real_path,
        stream,
        size,
        options,
        resumed,
        already_reported=verification.reader.reported,
        prefix_bytes=first_read,
    )
    outcome = again.run()
    if first_read and again.reader.prefix_sha256 != first_sha256:
        # the evidence changed between the two reads: the engine's re-hash compares with the second
        outcome.findings.append(
            finding(
                "SA004",
                f"{path}: its first {first_read} bytes were rewritten between the fast path's read and the "
                "exact pass's; the report describes the bytes as read the second time",
                path=path,
                evidence={"bytes": first_read, "sha256": first_sha256},
            )
        )
    return outcome


class _Resumed:
    """A tap that passes on only the lines after `shown`."""

    __slots__ = ("shown", "tap")

    def __init__(self, tap: LineTap, shown: int) -> None:
        self.tap = tap
        self.shown = shown

    def __call__(self, line: Line, value: Any, session_id: str | None, findings: list[Finding]) -> None:
        if line.number > self.shown:
            self.tap(line, value, session_id, findings)


def checking() -> bool:
    """Whether every verification also runs the fast path and compares (SESSAUDIT_CHECK_FAST_PATH=1)."""
    return os.environ.get(CHECK_VARIABLE, "") not in ("", "0")


def differential_check(
    exact: SourceOutcome, path: str, real_path: str, stream: BinaryIO, size: int, options: VerifyOptions
) -> None:
    """Run the fast path after the exact pass on the same bytes and compare: equal outcomes when it
    accepts; when it doubts, the exact pass must have kept a finding of its own (not only the end-of-file
    findings and notes the outcome adds). Twice: as verify runs it, and compacting its state after every
    few ids into tables of a few buckets (compact.py), so the compacted state answers every session of the
    suite, not only the dense ones past HOT_LIMIT."""
    read = exact.files[0].sha256
    kept: bool | None = None
    for compactor in (None, Compactor(limit=CHECK_LIMIT, bits=1, filter_bits=6, projected=0)):
        stream.seek(0)
        second = _FastVerification(
            path, real_path, stream, size, options, report_progress=False, compactor=compactor
        )
        fast = _prove(second)
        which = "the fast path" if compactor is None else "the compacting fast path"
        if fast is None:
            if kept is None:
                kept, again = _pass_kept_findings(path, real_path, stream, size, options)
                if again != read:
                    return  # the evidence changed between the reads (the engine's re-hash reports it)
            COMPARED["doubted"] += 1
            if not kept:
                raise FastPathMismatch(f"{path}: {which} doubted a session the exact pass kept no finding on")
            continue
        if second.reader.sha256 != read:
            return  # the evidence changed between the reads
        COMPARED["accepted"] += 1
        COMPARED["compacted"] += second.compactor.compactions > 0
        if fast != exact:
            raise FastPathMismatch(f"{path}: {which}'s outcome differs from the exact pass's")


class _Counting(_Verification):
    """The exact pass, remembering how many findings the pass itself kept before the outcome's."""

    kept = 0

    def _outcome(self) -> SourceOutcome:
        self.kept = (
            len(self.findings)
            + (self.capped_at is not None)
            + (self.mode == ENCODING_ONLY)
            + (self.reader.line_count == 0)  # no LF: SA101, which the outcome adds
        )
        return super()._outcome()


def _pass_kept_findings(
    path: str, real_path: str, stream: BinaryIO, size: int, options: VerifyOptions
) -> tuple[bool, str]:
    """Whether the exact pass keeps a finding of its own on the file, and the sha256 of what it read."""
    stream.seek(0)
    counting = _Counting(path, real_path, stream, size, options, None, report_progress=False)
    counting.run()
    return counting.kept > 0, counting.reader.sha256
