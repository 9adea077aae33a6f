"""Severities and verdicts: the two ordered scales every finding and source is judged on."""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """Higher is more severe."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.NOTE: 1, Severity.WARNING: 2, Severity.ERROR: 3}


class Verdict(StrEnum):
    CLEAN = "clean"
    REPAIRABLE = "repairable"
    NEEDS_RECOVERY = "needs-recovery"
    UNSUPPORTED = "unsupported"
    UNREADABLE = "unreadable"
    CORRUPT = "corrupt"

    @property
    def rank(self) -> int:
        """Higher is worse (CONTRACT §4: corrupt > unreadable > unsupported > needs-recovery > …)."""
        return _VERDICT_RANK[self]


_VERDICT_RANK = {
    Verdict.CLEAN: 0,
    Verdict.REPAIRABLE: 1,
    Verdict.NEEDS_RECOVERY: 2,
    Verdict.UNSUPPORTED: 3,
    Verdict.UNREADABLE: 4,
    Verdict.CORRUPT: 5,
}


def worst(*verdicts: Verdict | None) -> Verdict:
    """The worst of the given verdicts; `clean` when none is given."""
    result = Verdict.CLEAN
    for verdict in verdicts:
        if verdict is not None and verdict.rank > result.rank:
            result = verdict
    return result
