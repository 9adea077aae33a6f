"""Seeded identifiers and clock: session and line uuids, `msg_…`/`req_…`/`toolu_…` ids, agent ids, times.

Everything comes from one `random.Random`, so a seed fixes every byte the builder writes.
"""

from __future__ import annotations

import base64
import random
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Final

BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
DEFAULT_START: Final = datetime(2026, 3, 14, 9, 26, 53, 589000, tzinfo=UTC)
_OUTSIDE: Final = re.compile(r"[^A-Za-z0-9]")
# Words for 2.1.3x-2.1.7x session `slug`s, three-word names like `lively-noodling-mitten` (spec §3.1).
_SLUG_WORDS: Final = (
    ("lively", "quiet", "amber", "brisk", "mellow", "sunny", "velvet", "gentle"),
    ("noodling", "humming", "drifting", "tinkering", "wandering", "puzzling", "sketching", "roaming"),
    ("mitten", "otter", "lantern", "pebble", "teapot", "comet", "acorn", "harbor"),
)


def project_dir_name(cwd: str) -> str:
    """Spec §1.2: the cwd with every character outside `[A-Za-z0-9]` replaced by `-`."""
    return _OUTSIDE.sub("-", cwd)


def version_tuple(version: str) -> tuple[int, int, int]:
    """`2.1.79` -> (2, 1, 79); a suffix after the patch number is ignored."""
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"not a Claude Code version: {version!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def format_time(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and `Z` (spec §3.1)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Ids:
    """The seeded source of every identifier and instant a family of transcripts uses."""

    def __init__(self, seed: int, start: datetime = DEFAULT_START) -> None:
        self.random = random.Random(seed)
        self.now = start

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.random.getrandbits(128), version=4))

    def base62(self, length: int) -> str:
        return "".join(self.random.choice(BASE62) for _ in range(length))

    def message_id(self, *, bedrock: bool = False) -> str:
        return ("msg_bdrk_01" if bedrock else "msg_01") + self.base62(22)

    def request_id(self) -> str:
        return "req_011C" + self.base62(20)

    def tool_use_id(self, *, bedrock: bool = False) -> str:
        return ("toolu_bdrk_01" if bedrock else "toolu_01") + self.base62(22)

    def agent_id(self, hex_digits: int) -> str:
        return f"{self.random.getrandbits(4 * hex_digits):0{hex_digits}x}"

    def slug(self) -> str:
        return "-".join(self.random.choice(words) for words in _SLUG_WORDS)

    def signature(self) -> str:
        return base64.b64encode(self.random.randbytes(96)).decode("ascii")

    def placeholder(self, floor: int = 1) -> int:
        """A streamed line's provisional `output_tokens` (spec §5.2: 1-9), never below `floor`."""
        return max(floor, self.random.randint(1, 9))

    def tick(self, low: float, high: float) -> str:
        """Advance the clock by a seeded number of seconds in [low, high]; the new instant, formatted."""
        self.now += timedelta(milliseconds=self.random.randint(int(low * 1000), int(high * 1000)))
        return format_time(self.now)
