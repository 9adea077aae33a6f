"""`verify --timestamps`: when the audit ran, for the outputs that have a place for it (SARIF, JUnit).

Without the flag every output is a function of the evidence alone (byte-identical across runs); with it,
SARIF gets `invocations[0].startTimeUtc`/`endTimeUtc` and JUnit `timestamp`/`time`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


@dataclass(frozen=True)
class AuditTimes:
    """The audit's start (wall clock, UTC) and end (start plus monotonic elapsed time, so end >= start
    even when the wall clock is stepped back meanwhile)."""

    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


class Stopwatch:
    """Start on creation; `stop()` gives the AuditTimes."""

    def __init__(
        self,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._monotonic = monotonic
        self._start = clock().astimezone(UTC)
        self._started = monotonic()

    def stop(self) -> AuditTimes:
        elapsed = max(0.0, self._monotonic() - self._started)
        return AuditTimes(self._start, self._start + timedelta(seconds=elapsed))


def sarif_time(moment: datetime) -> str:
    """SARIF §3.9: ISO 8601 in UTC with a `Z`, here to the millisecond (`2026-11-30T02:12:38.709Z`)."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def junit_time(moment: datetime) -> str:
    """The JUnit XSD's `timestamp` (ISO 8601 without a zone, which the schema does not allow): UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
