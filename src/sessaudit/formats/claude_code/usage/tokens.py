"""One line's `message.usage`, read strictly: the four counts and the 5-minute/1-hour cache-write split."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


@dataclass(frozen=True, slots=True)
class Tokens:
    """`cache_5m`/`cache_1h` are None when the line has no `cache_creation` breakdown (before ~1.0.85)."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cache_5m: int | None = None
    cache_1h: int | None = None

    @property
    def total(self) -> int:
        """What is compared between the lines of one response (spec §6.1, as ccusage's adapter does)."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    @property
    def write_5m(self) -> int:
        """Cache writes with a 5-minute TTL; all of them when the line has no split (spec §6.1)."""
        return self.cache_creation_input_tokens if self.cache_5m is None else self.cache_5m

    @property
    def write_1h(self) -> int:
        return 0 if self.cache_1h is None else self.cache_1h

    @property
    def prompt(self) -> tuple[int, int, int]:
        """The counts every line of one response repeats (spec §5.2): input, cache write, cache read."""
        return (self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens)

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.write_5m + other.write_5m,
            self.write_1h + other.write_1h,
        )


ZERO = Tokens(0, 0, 0, 0, 0, 0)


def read_tokens(usage: Any) -> Tokens | None:
    """The counts of a `usage` object; None unless the four counts are non-negative integers (a missing
    cache count reads as 0, as early transcripts omit them)."""
    if not isinstance(usage, Mapping):
        return None
    counts = [
        _count(usage.get("input_tokens")),
        _count(usage.get("output_tokens")),
        _count(usage.get("cache_creation_input_tokens", 0)),
        _count(usage.get("cache_read_input_tokens", 0)),
    ]
    if any(count is None for count in counts):
        return None
    five = hour = None
    split = usage.get("cache_creation")
    if isinstance(split, Mapping):
        five = _count(split.get("ephemeral_5m_input_tokens", 0))
        hour = _count(split.get("ephemeral_1h_input_tokens", 0))
    a, b, c, d = (count or 0 for count in counts)
    return Tokens(a, b, c, d, five, hour)
