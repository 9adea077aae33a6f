"""What a format's extractor hands back for one source: facts and ledger rows, tool calls and run spans
still to be joined with the report (recovery conditions, pending effects), and per-session details."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from sessaudit.warehouse.rows import FactRow, LedgerRow, ToolCallRow, clean, raw_json, to_json

# tool_calls.status: what the log says about one call (docs/warehouse.md)
SUCCEEDED: Final = "succeeded"
FAILED: Final = "failed"
ANSWERED: Final = (
    "answered"  # a result is recorded, but not whether the tool succeeded (e.g. local tools of a store)
)
NOT_EXECUTED: Final = "not-executed"  # answered without running: denied, aborted before execution, truncated
UNKNOWN: Final = "unknown"  # started (or may have started) and no outcome is known
NOT_STARTED: Final = "not-started"  # asked for by the model, neither started nor answered
STATUSES: Final = (SUCCEEDED, FAILED, ANSWERED, NOT_EXECUTED, UNKNOWN, NOT_STARTED)


@dataclass(slots=True)
class CallDraft:
    """One tool call as the records tell it; `recovery_condition` is added from the report's runs."""

    session_id: str | None
    run_id: str | None
    tool_call_id: str | None
    tool_name: str | None
    status: str = NOT_STARTED
    call_seq: int | None = None
    intent_seq: int | None = None
    result_seq: int | None = None
    intent_id: str | None = None
    result_type: str | None = None
    replay_policy: str | None = None
    replay_key: str | None = None
    effect: str | None = None
    target: str | None = None
    requested_at: int | None = None
    finished_at: int | None = None
    arguments: str | None = None
    recovery_condition: str | None = None


@dataclass(slots=True)
class Span:
    """Where a run's records lie: seq range and time range of its loaded records."""

    first_seq: int | None = None
    last_seq: int | None = None
    started_at: int | None = None
    last_at: int | None = None

    def add(self, seq: int | None, moment: int | None) -> None:
        if seq is not None:
            self.first_seq = seq if self.first_seq is None else min(self.first_seq, seq)
            self.last_seq = seq if self.last_seq is None else max(self.last_seq, seq)
        if moment is not None:
            self.started_at = moment if self.started_at is None else min(self.started_at, moment)
            self.last_at = moment if self.last_at is None else max(self.last_at, moment)


@dataclass(slots=True)
class SessionDetails:
    provider: str | None = None
    model: str | None = None
    cwd: str | None = None
    header: str | None = None  # a log's header line, as JSON text


# a spill gets the facts, ledger rows and finished tool calls made since the last one, and their payload size
Spill = Callable[[list[FactRow], list[LedgerRow], list[ToolCallRow], int], None]
HOLD_LINES: Final = 16  # a fact awaiting its run id is held back from a spill this many lines at most


@dataclass(slots=True)
class Extraction:
    """Everything loaded from one source's records (its verified prefix when it is corrupt).

    Facts and ledger rows go through `add_fact`/`add_usage`, and tool calls that nothing later can change
    through `add_call` (e.g. those of a finished run). With a `spill` they leave in bounded batches
    (`spill_rows` rows or `spill_bytes` of payload, whichever comes first) as they are made, and only what a
    source's summary rows need stays: counts and time bounds per session (state, not bytes). Without one
    they all stay in `facts`, `usage` and `tool_calls`. `calls` are the drafts still to be joined with the
    report's runs (pending effects), made rows at the end."""

    facts: list[FactRow] = field(default_factory=list)  # not spilled yet
    usage: list[LedgerRow] = field(default_factory=list)  # not spilled yet
    tool_calls: list[ToolCallRow] = field(default_factory=list)  # finished ones, not spilled yet
    calls: list[CallDraft] = field(default_factory=list)
    spans: dict[tuple[str | None, str], Span] = field(default_factory=dict)  # (session, run) → span
    sessions: dict[str | None, SessionDetails] = field(default_factory=dict)
    complete: bool = True  # False when a cut left verified records out
    spill: Spill | None = None
    spill_rows: int = 50_000
    spill_bytes: int = 2 << 20
    spills: int = 0  # batches spilled so far
    facts_loaded: int = 0  # facts added, spilled or not
    pending_bytes: int = 0  # payload characters of the facts not spilled yet
    counted: Counter[str | None] = field(default_factory=Counter)  # facts per session
    messages: Counter[str | None] = field(
        default_factory=Counter
    )  # `messages` facts per session (WarehousePart.counts_messages)
    bounds: dict[str | None, tuple[int, int]] = field(default_factory=dict)  # session → first, last moment
    # run ids given to facts already spilled: (line, fact id, run id), applied where the rows were written
    patches: list[tuple[int, str, str]] = field(default_factory=list)
    # facts not spilled yet that may still be given a run id: (line, fact id) → index in `facts`
    awaiting: dict[tuple[int, str], int] = field(default_factory=dict)

    def span(self, session_id: str | None, run_id: str) -> Span:
        key = (session_id, run_id)
        found = self.spans.get(key)
        if found is None:
            found = self.spans[key] = Span()
        return found

    def add_fact(self, row: FactRow, *, awaiting_run: bool = False) -> None:
        """Add a fact; `awaiting_run`: a later record may give it its run id (`assign_run`)."""
        if awaiting_run and row.id is not None and row.line is not None:
            self.awaiting[(row.line, row.id)] = len(self.facts)
        self.facts.append(row)
        self.facts_loaded += 1
        session_id = row.session_id
        self.counted[session_id] += 1
        if row.kind == "messages":
            self.messages[session_id] += 1
        moment = row.timestamp
        if moment is not None:
            found = self.bounds.get(session_id)
            if found is None:
                self.bounds[session_id] = (moment, moment)
            elif moment < found[0] or moment > found[1]:
                self.bounds[session_id] = (min(found[0], moment), max(found[1], moment))
        if self.spill is not None:
            self.pending_bytes += len(row.payload) if row.payload is not None else 0
            if self.pending_bytes >= self.spill_bytes or self._rows() >= self.spill_rows:
                self.flush()

    def add_usage(self, row: LedgerRow) -> None:
        self.usage.append(row)
        if self.spill is not None and self._rows() >= self.spill_rows:
            self.flush()

    def add_call(self, row: ToolCallRow) -> None:
        """A tool call's final row (no pending effect can name it any more)."""
        self.tool_calls.append(row)
        if self.spill is not None and self._rows() >= self.spill_rows:
            self.flush()

    def _rows(self) -> int:
        return len(self.facts) + len(self.usage) + len(self.tool_calls)

    def assign_run(self, line: int, fact_id: str, run_id: str) -> None:
        """Give the fact of line `line` with id `fact_id`, added awaiting a run, the run `run_id`: in place
        while it is not spilled, else by a patch where its row was written."""
        index = self.awaiting.pop((line, fact_id), None)
        if index is not None:
            self.facts[index] = self.facts[index]._replace(run_id=run_id)
        else:
            self.patches.append((line, fact_id, run_id))

    def flush(self) -> None:
        """Hand the pending facts and ledger rows to `spill`. A fact of the last `HOLD_LINES` lines that
        awaits its run id waits for the next batch: its run is usually named a line or two later, and a
        patch is an UPDATE of rows already written, which costs DuckDB's commit a rewrite (measured on
        the 1 GB bench session: 4.5 s instead of 0.7 s)."""
        if self.spill is None or not (self.facts or self.usage or self.tool_calls):
            return
        facts, usage, calls, size = self.facts, self.usage, self.tool_calls, self.pending_bytes
        self.facts, self.usage, self.tool_calls, self.pending_bytes = [], [], [], 0
        if self.awaiting:
            newest = (facts[-1].line or 0) if facts else 0
            held = sorted(
                (index, key) for key, index in self.awaiting.items() if newest - key[0] < HOLD_LINES
            )
            self.awaiting = {}
            if held:
                for index, key in held:
                    row = facts[index]
                    self.awaiting[key] = len(self.facts)
                    self.facts.append(row)
                    self.pending_bytes += len(row.payload) if row.payload is not None else 0
                kept = {index for index, _ in held}
                facts = [row for index, row in enumerate(facts) if index not in kept]
                size -= self.pending_bytes
        self.spills += 1
        self.spill(facts, usage, calls, size)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python reads NaN and Infinity; JSON has no such values


def arguments_json(value: Any) -> str | None:
    """Tool arguments as JSON text: an object as is; a provider's argument string as the JSON it holds
    when it holds JSON, else as a JSON string (malformed arguments are evidence too)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            json.loads(value, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return to_json(value)
        return raw_json(clean(value))
    return to_json(value, sort_keys=False)


def call_row(source_id: str, draft: CallDraft) -> ToolCallRow:
    return ToolCallRow(
        source_id,
        draft.session_id,
        draft.run_id,
        draft.tool_call_id,
        draft.tool_name,
        draft.call_seq,
        draft.intent_seq,
        draft.result_seq,
        draft.intent_id,
        draft.status,
        draft.result_type,
        draft.replay_policy,
        draft.replay_key,
        draft.effect,
        draft.target,
        draft.recovery_condition,
        draft.requested_at,
        draft.finished_at,
        draft.arguments,
    )
