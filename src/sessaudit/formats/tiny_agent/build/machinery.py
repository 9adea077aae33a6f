"""The session builders' machinery: simulated clock, seeded UUIDv7 ids, JSON lines, damage and the sink."""

from __future__ import annotations

import copy
import io
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, BinaryIO, Final

JsonObject = dict[str, Any]

CALL_ID_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
MAXIMUM_MILLIS: Final = (1 << 48) - 1


class Delete:
    """The value that, given to a tamper or a header override, removes the key instead of setting it."""

    def __repr__(self) -> str:
        return "DELETE"


DELETE: Final = Delete()


class KeyOrder(StrEnum):
    """Object key layout: as tiny-agent's TypeScript store writes them, or sorted (Go, the fixtures)."""

    STORE = "store"
    SORTED = "sorted"


def dump_json(value: Any, *, key_order: KeyOrder = KeyOrder.STORE) -> str:
    """Compact JSON as JavaScript's `JSON.stringify` writes the builders' values (no floats, no NaN)."""
    return json.dumps(
        value,
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=key_order is KeyOrder.SORTED,
        allow_nan=False,
    )


def iso_instant(millis: int) -> str:
    """`Date.prototype.toISOString()` of an epoch-millisecond instant: `2026-08-22T15:00:00.000Z`."""
    moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def file_stamp(millis: int) -> str:
    """The session file name's stamp: the ISO instant with `:` and `.` replaced by `-` (spec §2)."""
    return iso_instant(millis).replace(":", "-").replace(".", "-")


def session_file_name(created_at: int, session_id: str) -> str:
    """`<stamp>_<sessionId>.jsonl`, the name tiny-agent gives a session file (spec §2)."""
    return f"{file_stamp(created_at)}_{session_id}.jsonl"


class SimulatedClock:
    """A millisecond clock that moves only when told to, so built files are reproducible."""

    def __init__(self, start: int) -> None:
        if not 0 <= start <= MAXIMUM_MILLIS:
            raise ValueError(f"clock start {start} is outside the 48-bit UUIDv7 range")
        self._now = start

    def now(self) -> int:
        return self._now

    def advance(self, milliseconds: int) -> int:
        """Move forward (never backward) and return the new time."""
        if milliseconds < 0:
            raise ValueError("the simulated clock never goes backwards; use a tamper for that")
        self._now += milliseconds
        return self._now


class IdFactory:
    """UUIDv7 ids as tiny-agent makes them: 48-bit ms time, version 7, RFC variant, 74 seeded random bits."""

    def __init__(self, generator: random.Random, clock: SimulatedClock) -> None:
        self._generator = generator
        self._clock = clock

    def uuid7(self, at: int | None = None) -> str:
        """A fresh id stamped with `at` (default: the clock's now); no monotonic counter, as in tiny-agent."""
        millis = self._clock.now() if at is None else at
        if not 0 <= millis <= MAXIMUM_MILLIS:
            raise ValueError(f"time {millis} is outside the 48-bit UUIDv7 range")
        random_a = self._generator.getrandbits(12)
        random_b = self._generator.getrandbits(62)
        value = (millis << 80) | (0x7 << 76) | (random_a << 64) | (0b10 << 62) | random_b
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def call_id(self, index: int) -> str:
        """A provider-style tool-call id such as `call_0_tRJ4ztNvU-zarPiP` (not a local id)."""
        suffix = "".join(self._generator.choice(CALL_ID_ALPHABET) for _ in range(16))
        return f"call_{index}_{suffix}"


def set_path(document: JsonObject, path: str, value: Any) -> None:
    """Set (or, with DELETE, remove) a dotted path such as `entry.message.content` or `tools.0.name`.

    A callable value receives the current value (or DELETE when absent) and returns the new one."""
    parts = path.split(".")
    holder: Any = document
    for part in parts[:-1]:
        holder = holder[int(part)] if isinstance(holder, list) else holder[part]
    last = parts[-1]
    if isinstance(holder, list):
        index = int(last)
        current = holder[index]
        new_value = value(current) if callable(value) else value
        if isinstance(new_value, Delete):
            del holder[index]
        else:
            holder[index] = new_value
        return
    current = holder.get(last, DELETE)
    new_value = value(current) if callable(value) else value
    if isinstance(new_value, Delete):
        holder.pop(last, None)
    else:
        holder[last] = new_value


@dataclass(slots=True)
class Tamper:
    """Deliberate damage to one fact, identified by its position among all facts the builder emits."""

    fact_index: int
    path: str
    value: Any


def apply_tampers(fact: JsonObject, tampers: list[Tamper]) -> JsonObject:
    """A damaged deep copy of `fact` (the builder's own record of it stays intact)."""
    damaged = copy.deepcopy(fact)
    for tamper in tampers:
        set_path(damaged, tamper.path, tamper.value)
    return damaged


@dataclass(slots=True)
class LineSink:
    """Where built bytes go: a caller's binary stream, or an in-memory buffer returned by `data()`."""

    stream: BinaryIO | None = None
    written: int = 0
    line_feeds: int = 0
    torn: bool = False
    _buffer: io.BytesIO | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.stream is None:
            self._buffer = io.BytesIO()
            self.stream = self._buffer

    def write(self, data: bytes) -> None:
        assert self.stream is not None
        self.stream.write(data)
        self.written += len(data)
        self.line_feeds += data.count(b"\n")

    def data(self) -> bytes:
        if self._buffer is None:
            raise RuntimeError("this builder streams into a caller's stream; read the bytes from there")
        return self._buffer.getvalue()


@dataclass(slots=True)
class LineOptions:
    """One-shot framing damage for the next committed line: its ending, a tear, an array wrapper."""

    line_ending: bytes = b"\n"
    tear_after: int | None = None
    force_array: bool = False

    def reset(self) -> None:
        self.line_ending = b"\n"
        self.tear_after = None
        self.force_array = False


def frame_line(text: str, options: LineOptions) -> tuple[bytes, bool]:
    """The bytes of one line under `options`, and whether they leave a torn (unterminated) tail."""
    whole = text.encode("utf-8") + options.line_ending
    if options.tear_after is None:
        return whole, False
    keep = options.tear_after if options.tear_after >= 0 else len(whole) + options.tear_after
    if not 0 < keep < len(whole) or b"\n" in whole[:keep]:
        raise ValueError(f"a tear must keep 1 to {len(whole) - 1} bytes of the line, without its LF")
    return whole[:keep], True


def choose_delay(generator: random.Random, low: int, high: int) -> int:
    """A seeded pause in milliseconds, so that facts are not all stamped in the same millisecond."""
    return generator.randint(low, high)


def merge_overrides(document: JsonObject, overrides: Mapping[str, Any] | None) -> JsonObject:
    """`document` with dotted-path overrides applied (DELETE removes a key), for damaged headers."""
    if not overrides:
        return document
    result = copy.deepcopy(document)
    for path, value in overrides.items():
        set_path(result, path, value)
    return result
