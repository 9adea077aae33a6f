"""The usage ledger row of one event (CONTRACT §4): Rivumi's token counts in sessaudit's one meaning."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from sessaudit.formats.rivumi.read.envelope import short

TOKEN_KEYS: Final = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")


@dataclass(frozen=True, slots=True)
class LedgerPlace:
    sequence: int | None
    line: int
    created_at: str | None


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One ledger row (CONTRACT §4/§7): `input` excludes cached input; `reasoning` is part of `output`."""

    sequence: int | None
    line: int
    created_at: str | None
    lane: str
    provider: str | None
    model: str | None
    step: int | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    input_total: int
    reasoning: int


def usage_row(
    data: dict[str, Any], where: LedgerPlace, lane: str, provider: str | None, model: str | None
) -> tuple[UsageRow | None, tuple[str, str] | None]:
    """The row for an event's `data.usage`, or why it cannot be counted (message, pointer); (None, None)
    when the event has no usage key at all (its absence is a missing-data-key finding already)."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None, (("usage is not an object", "/data/usage") if "usage" in data else None)
    counts: dict[str, int] = {}
    for key in TOKEN_KEYS:
        value = usage.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return None, (f"usage {key} is {short(value)}, not a non-negative integer", f"/data/usage/{key}")
        counts[key] = value
    cached, total = counts["cached_input_tokens"], counts["input_tokens"]
    if cached > total:
        return None, (
            f"usage cached_input_tokens {cached} exceeds input_tokens {total}",
            "/data/usage/cached_input_tokens",
        )
    step = data.get("step")
    row = UsageRow(
        sequence=where.sequence,
        line=where.line,
        created_at=where.created_at,
        lane=lane,
        provider=provider,
        model=model,
        step=step if isinstance(step, int) and not isinstance(step, bool) else None,
        input=total - cached,
        output=counts["output_tokens"],
        cache_read=cached,
        cache_write=0,
        input_total=total,
        reasoning=counts["reasoning_tokens"],
    )
    return row, None
