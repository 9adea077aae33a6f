"""What a format's extractor hands back for one source: facts and ledger rows, tool calls and run spans
still to be joined with the report (recovery conditions, pending effects), and per-session details."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from sessaudit.warehouse.rows import FactRow, LedgerRow, clean, raw_json, to_json

# tool_calls.status: what the log says about one call (docs/warehouse.md)
SUCCEEDED: Final = "succeeded"
FAILED: Final = "failed"
ANSWERED: Final = "answered"  # a result is recorded, but not whether the tool succeeded (Half-Pi local tools)
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
    header: str | None = None  # a tiny-agent header line, as JSON text


@dataclass(slots=True)
class Extraction:
    """Everything loaded from one source's records (its verified prefix when it is corrupt)."""

    facts: list[FactRow] = field(default_factory=list)
    usage: list[LedgerRow] = field(default_factory=list)
    calls: list[CallDraft] = field(default_factory=list)
    spans: dict[tuple[str | None, str], Span] = field(default_factory=dict)  # (session, run) → span
    sessions: dict[str | None, SessionDetails] = field(default_factory=dict)
    complete: bool = True  # False when a cut left verified records out

    def span(self, session_id: str | None, run_id: str) -> Span:
        key = (session_id, run_id)
        found = self.spans.get(key)
        if found is None:
            found = self.spans[key] = Span()
        return found


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
