"""Seeded identifiers and clock: UUIDv7 session ids, `call_…` ids, encrypted reasoning blobs, UTC times.

Everything comes from one `random.Random`, so a seed fixes every byte the builder writes. Line times are
UTC with milliseconds and `Z`; file names use the writer's local time (`rollout-YYYY-MM-DDTHH-MM-SS-<id>`).
"""

from __future__ import annotations

import base64
import random
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

ALPHANUMERIC: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
DEFAULT_START: Final = datetime(2026, 2, 11, 14, 7, 21, 483000, tzinfo=UTC)


def format_time(moment: datetime) -> str:
    """`2025-10-29T00:59:38.317Z`: UTC, millisecond precision, `Z`."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def format_offset(offset: timedelta) -> str:
    """`+09:00`, `-05:30`, `+00:00`."""
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def local_time(moment: datetime, offset: timedelta) -> datetime:
    return moment.astimezone(timezone(offset))


def file_stamp(moment: datetime, offset: timedelta) -> str:
    """The file name's time: local to the writer, seconds, dashes for colons (`2025-10-29T09-59-38`)."""
    return local_time(moment, offset).strftime("%Y-%m-%dT%H-%M-%S")


def date_folder(moment: datetime, offset: timedelta) -> str:
    """`YYYY/MM/DD` of the writer's local date."""
    return local_time(moment, offset).strftime("%Y/%m/%d")


class Ids:
    """The seeded source of every identifier and instant a family of rollouts uses."""

    def __init__(self, seed: int, start: datetime = DEFAULT_START) -> None:
        self.random = random.Random(seed)
        self.now = start.astimezone(UTC)

    def uuid7(self, moment: datetime | None = None) -> str:
        """A UUIDv7: 48 bits of Unix milliseconds (of `moment`, else now), version 7, variant, random bits."""
        millis = int((moment or self.now).timestamp() * 1000)
        value = (millis & ((1 << 48) - 1)) << 80
        value |= 0x7 << 76
        value |= self.random.getrandbits(12) << 64
        value |= 0b10 << 62
        value |= self.random.getrandbits(62)
        return str(uuid.UUID(int=value))

    def alphanumeric(self, length: int) -> str:
        return "".join(self.random.choice(ALPHANUMERIC) for _ in range(length))

    def call_id(self) -> str:
        return "call_" + self.alphanumeric(24)

    def encrypted(self, size: int) -> str:
        """An opaque `encrypted_content` blob (Fernet-looking: `gAAAAAB` and URL-safe base64)."""
        return "gAAAAAB" + base64.urlsafe_b64encode(self.random.randbytes(size)).decode("ascii")

    def tick(self, low: float, high: float) -> datetime:
        """Advance the clock by a seeded number of seconds in [low, high]; the new instant."""
        self.now += timedelta(milliseconds=self.random.randint(int(low * 1000), int(high * 1000)))
        return self.now

    def skip(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now


def version_tuple(version: str) -> tuple[int, int, int]:
    """`0.46.0` -> (0, 46, 0); a suffix after the patch number is ignored."""
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"not a Codex CLI version: {version!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def rollout_key(session_id: str, moment: datetime, offset: timedelta, *, archived: bool) -> str:
    """The file's path relative to the root: local date folders and local time in the name."""
    name = f"rollout-{file_stamp(moment, offset)}-{session_id}.jsonl"
    return f"archived_sessions/{name}" if archived else f"sessions/{date_folder(moment, offset)}/{name}"
