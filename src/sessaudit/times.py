"""Times as the report writes them: UTC ISO-8601 with milliseconds (`2026-11-30T14:05:53.120Z`).

One converter for every format (some record epoch milliseconds, others ISO-8601 text), so no format
imports another's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# datetime's own range, in epoch ms: a record's time outside it is not a time (None)
_MIN_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z
_MAX_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


def iso_from_epoch_ms(value: object) -> str | None:
    """Epoch milliseconds (an int; not a bool, not a float) as ISO-8601 UTC with ms; else None."""
    if type(value) is not int or not _MIN_MS <= value <= _MAX_MS:
        return None
    return _format(_EPOCH + timedelta(milliseconds=value))


def moment_from_text(value: object) -> datetime | None:
    """An ISO-8601 time with an offset (`Z`, `+02:00`) as an aware UTC datetime; else None. A time without
    an offset names no instant and gives None."""
    if not isinstance(value, str) or not 10 <= len(value) <= 64:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None or moment.utcoffset() is None:
        return None
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def iso_from_text(value: object) -> str | None:
    """An ISO-8601 time with an offset (`Z`, `+02:00`) as UTC with ms (sub-ms digits cut); else None.
    A time without an offset names no instant and gives None."""
    moment = moment_from_text(value)
    return _format(moment) if moment is not None else None


def latest(*values: str | None) -> str | None:
    """The latest of these ISO times (all in this module's form, so they sort as text); None if none."""
    present = [value for value in values if value is not None]
    return max(present) if present else None


def _format(moment: datetime) -> str:
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
        f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def iso_from_micros(value: int | None) -> str | None:
    """Epoch microseconds (the warehouse's rows) as ISO-8601 UTC with ms; None for None or out of range."""
    if value is None:
        return None
    try:
        return _format(_EPOCH + timedelta(microseconds=value))
    except OverflowError:
        return None
