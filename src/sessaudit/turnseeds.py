"""What the formats that seed an open turn of a log read whole share: the seeding request (the source,
`seed --run/--sequence`, why a seed is withheld) and how a finding names a recovery's seed."""

from __future__ import annotations

from dataclasses import dataclass

from sessaudit.model import Recovery, SeedSource


@dataclass(frozen=True, slots=True)
class Seeding:
    """What a turn's seed needs beyond its records: the source, `seed --run/--sequence`, and why the seed
    is withheld (a corrupt history), if it is."""

    source: SeedSource
    fork_run: str | None = None
    fork_sequence: int | None = None
    withheld: str | None = None


def seed_words(recovery: Recovery) -> str:
    """The seed an open run's finding offers, in words."""
    if recovery.seed is not None:
        return f"a {recovery.seed.seed_kind} seed (`sessaudit seed`)"
    if recovery.seed_kind is None:
        return "no seed (the history is corrupt)"
    return f"no {recovery.seed_kind} seed at the chosen fork point"
