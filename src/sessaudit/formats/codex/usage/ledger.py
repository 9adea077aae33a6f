"""The exact usage ledger of a rollout (spec §5, §6, §9): one entry per model call the session itself made.

Each entry is the growth of the cumulative `total_token_usage` since the token_count before it, never a
sum of `last_token_usage`: a token_count whose total equals the one before is the same call reported
again (Codex reports one on every rate-limit update, spec §5) and counts nothing; the lines copied from a
parent (check/copies.py) only move the baseline, so a fork's or sub-agent's copy of its parent's history
is counted once, in the parent; a total that falls (the context-window fill, or SA810) becomes the new
baseline and counts nothing. Only when a token_count has no total does its `last_token_usage` count
(`basis` "last"). Codex counts cached input inside input and reasoning inside output: an entry's `input` is
input − cached (floored at 0), `cache_read` the cached part, `output` all output with `reasoning` beside
it. Codex records no cache writes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from sessaudit.formats.codex.check.copies import Segments
from sessaudit.formats.codex.check.links import token_info, usage_of
from sessaudit.formats.codex.read.lines import Record
from sessaudit.formats.codex.read.turns import run_id_of, turns_of
from sessaudit.formats.codex.spec.records import USAGE_FIELDS

ZERO: Final = dict.fromkeys(USAGE_FIELDS, 0)


@dataclass(frozen=True, slots=True)
class Entry:
    """One model call's usage, from the token_count on `line`."""

    line: int
    offset: int
    timestamp: str | None
    turn: str | None  # the run id of the turn it belongs to (recover/turns.py run_id_of), or None
    model: str | None
    provider: str | None
    input: int  # not cached
    cache_read: int
    output: int  # reasoning included
    reasoning: int
    total: int
    basis: str  # "total" (the growth of the cumulative total) or "last" (no total on the line)


@dataclass(slots=True)
class Ledger:
    entries: list[Entry] = field(default_factory=list)
    repeated: int = 0  # token_counts that repeat the total before them (not new calls)
    copied: int = 0  # token_counts copied from a parent (baseline only)
    rebased: int = 0  # totals that fell and became the new baseline
    empty: int = 0  # token_counts with info null

    def totals(self) -> dict[str, int]:
        return {
            "input": sum(entry.input for entry in self.entries),
            "cache_read": sum(entry.cache_read for entry in self.entries),
            "output": sum(entry.output for entry in self.entries),
            "reasoning": sum(entry.reasoning for entry in self.entries),
            "total": sum(entry.total for entry in self.entries),
            "calls": len(self.entries),
        }


def _entry(
    record: Record,
    counts: Mapping[str, int],
    basis: str,
    turn: str | None,
    model: str | None,
    provider: str | None,
) -> Entry:
    cached = counts["cached_input_tokens"]
    return Entry(
        line=record.line,
        offset=record.offset,
        timestamp=record.timestamp,
        turn=turn,
        model=model,
        provider=provider,
        input=max(counts["input_tokens"] - cached, 0),
        cache_read=cached,
        output=counts["output_tokens"],
        reasoning=counts["reasoning_output_tokens"],
        total=counts["total_tokens"],
        basis=basis,
    )


def _turn_ids(records: list[Record], segments: Segments) -> dict[int, str]:
    """Each own line's turn (by index), as recover/turns.py numbers them."""
    own = segments.own(records)
    index_of = {id(record): index for index, record in own}
    found: dict[int, str] = {}
    for turn in turns_of([record for _, record in own]):
        run_id = run_id_of(turn)
        for record in turn.records:
            found[index_of[id(record)]] = run_id
    return found


def provider_of(records: list[Record], segments: Segments) -> str | None:
    if segments.meta is None:
        return None
    provider = records[segments.meta].payload.get("model_provider")
    return provider if isinstance(provider, str) and provider else None


def build_ledger(records: list[Record], segments: Segments) -> Ledger:
    """The ledger of the rollout whose records and segments these are."""
    ledger = Ledger()
    turns = _turn_ids(records, segments)
    provider = provider_of(records, segments)
    baseline: dict[str, int] = dict(ZERO)
    model: str | None = None
    previous_last: Any = None
    for index, record in enumerate(records):
        if record.kind == "turn_context":
            named = record.payload.get("model")
            model = named if isinstance(named, str) and named else model
            continue
        if not record.is_event("token_count"):
            continue
        info = token_info(record)
        if info is None:
            ledger.empty += 1
            continue
        total = usage_of(info.get("total_token_usage"))
        last = usage_of(info.get("last_token_usage"))
        own = segments.meta is not None and index > segments.meta and not segments.copied(index)
        if not own:
            ledger.copied += 1
            baseline = total if total is not None else baseline
            continue
        if total is None:
            if last is not None and info.get("last_token_usage") != previous_last:
                ledger.entries.append(_entry(record, last, "last", turns.get(index), model, provider))
            elif last is not None:
                ledger.repeated += 1
            previous_last = info.get("last_token_usage")
            continue
        previous_last = info.get("last_token_usage")
        if total == baseline:
            ledger.repeated += 1
            continue
        grew = {name: total[name] - baseline[name] for name in USAGE_FIELDS}
        baseline = total
        if any(value < 0 for value in grew.values()):
            ledger.rebased += 1
            continue
        ledger.entries.append(_entry(record, grew, "total", turns.get(index), model, provider))
    return ledger
