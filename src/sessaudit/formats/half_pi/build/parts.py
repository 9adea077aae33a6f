"""The store builder's small parts: a seeded clock and ids (spec §5), Go-style JSON, injectable digests.

Digests: the builder takes digest strings from the caller, or asks a `Digests` object; by default
`SpecDigests` (build/spec_digests.py), the spec's own digests of formats/half_pi/spec/approval_digests.py
and compaction_digests.py.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

DEFAULT_START_MS: Final = 1_785_412_800_000  # 2026-07-30 12:00:00 UTC, the HEAD schema's day

JsonValue = Any


class Ids:
    """Seeded ids and a millisecond clock, so a builder's output is byte-reproducible."""

    def __init__(self, seed: int, start_ms: int) -> None:
        self.random = random.Random(seed)
        self.now_ms = start_ms

    def tick(self, low: int = 1, high: int = 40) -> int:
        """Advance the clock by a few milliseconds and return it."""
        self.now_ms += self.random.randint(low, high)
        return self.now_ms

    def text_time(self, ms: int | None = None) -> str:
        """`YYYY-MM-DD HH:MM:SS` UTC, as SQLite's datetime('now') writes it (spec §2)."""
        moment = datetime.fromtimestamp((self.now_ms if ms is None else ms) / 1000, tz=UTC)
        return moment.strftime("%Y-%m-%d %H:%M:%S")

    def hex(self, size: int) -> str:
        """`size` random bytes as lowercase hex (16 hex: run/approval ids; 32 hex: trace/span/event ids)."""
        return f"{self.random.getrandbits(8 * size):0{2 * size}x}"

    def uuid7(self, ms: int | None = None) -> str:
        """A canonical lowercase UUIDv7 at `ms` (default: now)."""
        stamp = (self.now_ms if ms is None else ms) & ((1 << 48) - 1)
        value = (stamp << 80) | (0x7 << 76) | (self.random.getrandbits(12) << 64)
        value |= (0b10 << 62) | self.random.getrandbits(62)
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def group_id(work_dir: str) -> str:
    """session_groups.id: the first 8 bytes of SHA-256(work_dir) as 16 lowercase hex (spec §4.1, §5)."""
    return hashlib.sha256(work_dir.encode("utf-8")).hexdigest()[:16]


def go_json(value: JsonValue) -> str:
    """Go encoding/json output for maps (sorted keys), arrays, strings, integers, booleans and null."""
    _refuse_floats(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    # these characters only occur inside JSON strings, where Go escapes them
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def go_struct(fields: Sequence[tuple[str, JsonValue]]) -> str:
    """A Go struct's JSON: fields in declaration order (not sorted), each value as `go_json`."""
    return "{" + ",".join(f"{go_json(name)}:{go_json(value)}" for name, value in fields) + "}"


def _refuse_floats(value: JsonValue) -> None:
    if isinstance(value, float):
        raise TypeError("floats need Go's float64 formatting: pass the digest or JSON text explicitly")
    if isinstance(value, Mapping):
        for item in value.values():
            _refuse_floats(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_floats(item)


def framed_sha256(*fields: str) -> str:
    """Spec §6.6: for each field an 8-byte big-endian length then its UTF-8 bytes; `sha256:` + hex."""
    digest = hashlib.sha256()
    for field_text in fields:
        data = field_text.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return "sha256:" + digest.hexdigest()


@dataclass(frozen=True, slots=True)
class BackgroundStart:
    """The extra fields of a background use_hand call's remote digest (spec §6.3)."""

    max_runtime_ms: int


@dataclass(frozen=True, slots=True)
class SourceMessage:
    """The message fields the compaction source digest covers, in order (spec §6.6)."""

    seq: int
    role: str
    content: str
    request_id: str
    tool_id: str
    tool_calls: str
    compact_projection: str


class Digests(Protocol):
    """Where the builder's digests come from; pass the real implementation to get production digests."""

    def local_args(self, tool: str, args: Mapping[str, JsonValue]) -> str: ...

    def remote_args(
        self,
        run_id: str,
        hand_id: str,
        tool: str,
        args: Mapping[str, JsonValue],
        background: BackgroundStart | None,
    ) -> str: ...

    def text(self, text: str) -> str: ...

    def summary(self, summary: str) -> str: ...

    def source(self, session_id: str, to_seq: int, messages: Sequence[SourceMessage]) -> str: ...

    def contract(self, source_digest: str, *fields: str) -> str: ...


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant message: `args` is the model's raw argument JSON text."""

    id: str
    name: str
    args: str = "{}"


def tool_calls_json(calls: Sequence[ToolCall]) -> str:
    """messages.tool_calls: `null` without calls, else Go JSON objects keyed ID, Name, Args (spec §4.3)."""
    if not calls:
        return "null"
    return (
        "["
        + ",".join(go_struct([("ID", call.id), ("Name", call.name), ("Args", call.args)]) for call in calls)
        + "]"
    )


@dataclass(frozen=True, slots=True)
class Credential:
    """A credential row as written: fake secrets from the builder's seed (never real ones)."""

    id: int
    label: str
    token: str
    application_key: str


@dataclass(frozen=True, slots=True)
class RecoveryChange:
    """A row startup recovery changed: `set` maps a column to (old, new) (CONTRACT §6 `startup_recovery`)."""

    table: str
    rowid: int
    id: str
    set: Mapping[str, tuple[JsonValue, JsonValue]]


@dataclass(frozen=True, slots=True)
class BuiltStore:
    """The files a builder left: the database and, for a crash image, its -wal and -shm."""

    path: str
    files: tuple[str, ...]
