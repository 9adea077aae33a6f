"""The fast path's compact state: what a dense session's reducer keeps once it holds many ids.

The exact reducer keeps every id as a str in dicts (about 200 bytes an id, most of a dense session's
memory). When the namespace holds HOT_LIMIT ids and the whole file is projected to hold PROJECTED_LIMIT
(`Compactor.due`), the fast path compacts its state at a line boundary (`compact`), and again each time
as many new ids have come, so a dense 1 GB session verifies in bounded memory:

- the namespace keeps its newest ids as str keys of the dict it is (`CompactNamespace`) and the older ones
  as a 64-bit fingerprint (the str's own keyed SipHash, `hash()`) and their value, 16 bytes in a bucket of
  `ColdTable`;
- entry ids are packed as their 16 bytes (`PackedIds`), read back as the same text; message ids are the
  entries' but the compactions' (`MessageIds`);
- a finished operation with nothing pending becomes a `FinishedRun` (its id, kind and outcome); its
  attempts and tool intents are fingerprints with the few facts a later usage fact needs (`ColdAttempt`).

Every handler, fast or exact, reads this state through the same mapping and sequence operations as the
exact state. Nothing is approximated in a way that could accept: two ids with one fingerprint, or any
detail of a compacted object a handler asks for beyond those kept, is a `Doubt`, and the exact pass
verifies the file again. A fingerprint can only make a reference look present when a different id has
the same keyed 64-bit hash; the keys are random per process unless PYTHONHASHSEED fixes them, and then the
fast path does not compact (`compaction_allowed`)."""

from __future__ import annotations

import os
import struct
import sys
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from sessaudit.formats.tiny_agent.check.state import COMPACTION

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.v2.fastfacts import FastReducer

# The namespace's str keys before the first compaction, and between two: below it nothing is compacted.
HOT_LIMIT: Final = 1 << 17
# A session whose ids, projected from the share of the file read when HOT_LIMIT is reached (and again at
# each further HOT_LIMIT ids), stay below this many is not compacted at all: its whole state fits (about
# 220 bytes an id: 600,000 ids ~ 130 MiB beside the interpreter's ~50), and compacting would only cost
# time (15-30% on the compacted part). A content-heavy 1 GB session has ~400,000 ids, a dense one 2.5 million.
PROJECTED_LIMIT: Final = 600_000
# The cold tables' buckets, and their bitmaps: the namespace's answers about 96% of the lookups of a new id
# from the bitmap alone with 2.5 million ids cold (a dense 1 GB session), in 8 MiB.
BUCKET_BITS: Final = 10
NAMESPACE_FILTER_BITS: Final = 26
SMALL_FILTER_BITS: Final = 22

_KEY: Final = struct.Struct("<q")
_RECORD: Final = struct.Struct("<qq")
_ABSENT: Final[Any] = object()

# a cold attempt's value: its run's index, then a bit each for superseded and failed, then its usage facts
_USAGE_BITS: Final = 14
_USAGE_MASK: Final = (1 << _USAGE_BITS) - 1
_FAILED: Final = 1 << _USAGE_BITS
_SUPERSEDED: Final = 1 << (_USAGE_BITS + 1)
_RUN_SHIFT: Final = _USAGE_BITS + 2


class Doubt(Exception):
    """The fast path cannot prove the file accepted: the exact pass decides."""


def compaction_allowed() -> bool:
    """Whether str hashes are keyed at random in this process (fingerprints no one can aim at)."""
    return bool(sys.flags.hash_randomization) and os.environ.get("PYTHONHASHSEED", "random") in ("", "random")


class ColdTable:
    """64-bit fingerprints, each with a 64-bit value, as 16-byte records in 2**bits bytearrays, and a bitmap
    of 2**filter_bits bits (one per fingerprint, from other bits than the bucket's) that answers most
    lookups of a fingerprint not here without searching its bucket. Few large buckets: a bucket is only
    searched for a fingerprint the bitmap has, and many small growing buffers would fragment the heap."""

    __slots__ = ("bitmap", "buckets", "mask", "spread")

    def __init__(self, bits: int, filter_bits: int) -> None:
        self.buckets = [bytearray() for _ in range(1 << bits)]
        self.mask = (1 << bits) - 1
        self.bitmap = bytearray(1 << (filter_bits - 3))
        # a byte of the bitmap, from the fingerprint's bits above 16
        self.spread = (1 << (filter_bits - 3)) - 1

    def position(self, fingerprint: int) -> tuple[bytearray, int]:
        """The fingerprint's bucket and its record's offset there, or -1."""
        bucket = self.buckets[fingerprint & self.mask]
        if not self.bitmap[(fingerprint >> 19) & self.spread] & (1 << ((fingerprint >> 16) & 7)):
            return bucket, -1
        return bucket, _search(bucket, fingerprint)

    def get(self, fingerprint: int, default: Any = None) -> Any:
        bucket, at = self.position(fingerprint)
        return default if at < 0 else _KEY.unpack_from(bucket, at + 8)[0]

    def add(self, fingerprint: int, value: int) -> None:
        """Add a record for a fingerprint not yet here (else a Doubt: two ids share it)."""
        bucket, at = self.position(fingerprint)
        if at >= 0:
            raise Doubt("two ids have one fingerprint")
        bucket += _RECORD.pack(fingerprint, value)
        self.bitmap[(fingerprint >> 19) & self.spread] |= 1 << ((fingerprint >> 16) & 7)

    def put_many(self, pairs: Iterable[tuple[int, int]]) -> None:
        """Add each record, or change the value of the one there (the fingerprints distinct): each bucket
        grows once."""
        bitmap, spread, mask = self.bitmap, self.spread, self.mask
        pack = _RECORD.pack
        buckets = self.buckets
        grown: list[list[bytes]] = [[] for _ in buckets]
        for fingerprint, value in pairs:
            byte = (fingerprint >> 19) & spread
            bit = 1 << ((fingerprint >> 16) & 7)
            if bitmap[byte] & bit:
                bucket = buckets[fingerprint & mask]
                at = _search(bucket, fingerprint)
                if at >= 0:
                    _KEY.pack_into(bucket, at + 8, value)
                    continue
            else:
                bitmap[byte] |= bit
            grown[fingerprint & mask].append(pack(fingerprint, value))
        for bucket, records in zip(buckets, grown, strict=True):
            if records:
                bucket += b"".join(records)

    def __contains__(self, fingerprint: int) -> bool:
        return self.position(fingerprint)[1] >= 0

    def __len__(self) -> int:
        return sum(len(bucket) for bucket in self.buckets) >> 4


def _search(bucket: bytearray, fingerprint: int) -> int:
    """The offset of the fingerprint's record in its bucket, or -1 (the bitmap said it may be there)."""
    needle = _KEY.pack(fingerprint)
    at = bucket.find(needle)
    while at >= 0 and at & 15:  # the bytes straddle two records
        at = bucket.find(needle, at + 1)
    return at


class CompactNamespace(dict[str, int]):
    """The namespace (id → entry ordinal or tag): the ids since the last compaction as the dict's own str
    keys, the older ones in a cold table. A key set while it is cold (a reservation consumed) shadows its
    record until the next flush updates it."""

    __slots__ = ("cold",)

    def __init__(self, cold: ColdTable) -> None:
        super().__init__()
        self.cold = cold

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        fingerprint = hash(key)  # ColdTable.__contains__, inline: most ids looked up here are new
        cold = self.cold
        if not cold.bitmap[(fingerprint >> 19) & cold.spread] & (1 << ((fingerprint >> 16) & 7)):
            return False
        return _search(cold.buckets[fingerprint & cold.mask], fingerprint) >= 0

    def get(self, key: str, default: Any = None) -> Any:
        value = dict.get(self, key, _ABSENT)
        return self.cold.get(hash(key), default) if value is _ABSENT else value

    def __missing__(self, key: str) -> int:
        value: int = self.cold.get(hash(key), _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def flush(self, items: Iterable[tuple[str, int]]) -> None:
        """Move `items` (this dict's, or a plain dict's at the first compaction) into the cold table. Every
        new id was looked up here before it entered (no handler adds an id without), so a key whose
        fingerprint is already cold is that same id, changed; two hot keys with one fingerprint are a
        doubt."""
        pairs = [(hash(key), value) for key, value in items]
        if len({fingerprint for fingerprint, _ in pairs}) != len(pairs):
            raise Doubt("two ids have one fingerprint")
        self.cold.put_many(pairs)
        self.clear()


class CompactSet(set[str]):
    """A set of ids (the run inputs already used): the newest as str, the older as fingerprints."""

    __slots__ = ("cold",)

    def __init__(self, cold: ColdTable) -> None:
        super().__init__()
        self.cold = cold

    def __contains__(self, key: object) -> bool:
        return set.__contains__(self, key) or hash(key) in self.cold

    def flush(self, keys: Iterable[str]) -> None:
        self.cold.put_many({(hash(key), 0) for key in keys})
        self.clear()


class _CompactedIds:
    """A list of ids whose first `count` are compacted (read back by `_compacted`) and the rest a `tail` of
    str, the ids since the last compaction."""

    __slots__ = ("count", "tail")

    def __init__(self, tail: list[str]) -> None:
        self.count = 0
        self.tail = tail

    def _compacted(self, index: int) -> str:
        raise NotImplementedError

    def append(self, value: str) -> None:
        self.tail.append(value)

    def __len__(self) -> int:
        return self.count + len(self.tail)

    def __bool__(self) -> bool:
        return bool(self.count or self.tail)

    def __getitem__(self, index: Any) -> Any:
        if type(index) is slice:
            return _IdSlice(self, *index.indices(len(self)))
        count = self.count
        if index < 0:
            index += count + len(self.tail)
        if index >= count:
            return self.tail[index - count]
        if index < 0:
            raise IndexError("index out of range")
        return self._compacted(index)

    def __iter__(self) -> Iterator[str]:
        for index in range(len(self)):
            yield self[index]


class PackedIds(_CompactedIds):
    """A list of UUIDs (entry ids): a packed prefix of 16 bytes an id, then a list of str. Only ids the state
    proved lowercase UUIDs are packed, so each reads back as the text it was."""

    __slots__ = ("packed",)

    def __init__(self, ids: list[str]) -> None:
        super().__init__(ids)
        self.packed = bytearray()
        self.pack()

    def pack(self) -> None:
        tail = self.tail
        digits = "".join(tail).replace("-", "")
        if len(digits) != 32 * len(tail):
            raise Doubt("an id to pack is not a UUID")
        self.packed += bytes.fromhex(digits)
        self.count += len(tail)
        self.tail = []

    def _compacted(self, index: int) -> str:
        digits = self.packed[index * 16 : index * 16 + 16].hex()
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


class MessageIds(_CompactedIds):
    """The message ids: every entry but a compaction's, in order, so the ids themselves are the entries'
    (`entries`); only those since the last compaction are kept, as str. `pack` proves the premise."""

    __slots__ = ("entries", "kinds", "shifts")

    def __init__(self, messages: list[str], entries: PackedIds, kinds: bytearray) -> None:
        super().__init__(messages)
        self.entries = entries
        self.kinds = kinds
        # for the n-th compaction entry (ascending ordinals), how many messages come before it: message i
        # is entry i + (the number of these at most i)
        self.shifts: list[int] = []
        self.pack()

    def pack(self) -> None:
        """Called before `entries` packs its own tail (the entries since the last compaction)."""
        kinds = self.kinds
        entries = self.entries
        start = entries.count
        if len(kinds) != len(entries) or start - len(self.shifts) != self.count:
            raise Doubt("the message ids are not the entries' but the compactions'")
        recent = kinds[start:]
        expected = [entry for entry, kind in zip(entries.tail, recent, strict=True) if kind != COMPACTION]
        if expected != self.tail:
            raise Doubt("the message ids are not the entries' but the compactions'")
        shifts = self.shifts
        at = recent.find(COMPACTION)
        while at >= 0:
            shifts.append(start + at - len(shifts))
            at = recent.find(COMPACTION, at + 1)
        self.count += len(self.tail)
        self.tail = []

    def _compacted(self, index: int) -> str:
        result: str = self.entries[index + bisect_right(self.shifts, index)]
        return result


class _IdSlice:
    """ids[start:stop] of a packed list, compared with a list one id at a time (a compaction record names
    every message before it: its list need not be copied out of the packed bytes whole)."""

    __slots__ = ("ids", "start", "stop")

    def __init__(self, ids: _CompactedIds, start: int, stop: int, step: int) -> None:
        if step != 1:
            raise Doubt("a stepped slice of packed ids")
        self.ids = ids
        self.start = start
        self.stop = max(start, stop)

    def __len__(self) -> int:
        return self.stop - self.start

    def __iter__(self) -> Iterator[str]:
        ids = self.ids
        for index in range(self.start, self.stop):
            yield ids[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _IdSlice):
            other = list(other)
        if not isinstance(other, list) or len(other) != len(self):
            return False
        return all(mine == theirs for mine, theirs in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class _Compacted:
    """A compacted object: any detail it no longer keeps is a doubt, never a guess."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise Doubt(f"a compacted {type(self).__name__} was asked for {name!r}")


class _Released:
    """A part of the state that the outcome of a session with nothing open does not read, released before
    the outcome is built: any use of it is a doubt."""

    __slots__ = ()

    def _used(self, *_: Any) -> Any:
        raise Doubt("a released part of the state was read")

    __contains__ = __getitem__ = __setitem__ = __iter__ = __len__ = __bool__ = get = _used
    __hash__ = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise Doubt(f"a released part of the state was asked for {name!r}")


RELEASED: Final[Any] = _Released()
# What the outcome of a session with no run open and no intent pending never reads (outcome.py: the
# runs, their last writes, the usage, the verified line and seq, the environment, the operations).
RELEASED_PARTS: Final = (
    "attempts",
    "entry_ids",
    "entry_indexes",
    "entry_kinds",
    "entry_offsets",
    "intent_operation",
    "message_ids",
    "namespace",
    "used_inputs",
)


def release(r: FastReducer) -> None:
    """Free the compacted tables before the outcome is built (its run models then fit in their memory)."""
    for name in RELEASED_PARTS:
        setattr(r, name, RELEASED)


class FinishedRun(_Compacted):
    """A finished operation with nothing pending, as the report and the usage rules still see it."""

    __slots__ = ("kind", "operation_id", "outcome")
    finished: Final = True
    pending: Final = 0
    intents: Final = ()

    def __init__(self, operation_id: str, kind: str, outcome: str | None) -> None:
        self.operation_id = operation_id
        self.kind = kind
        self.outcome = outcome


class ColdAttempt(_Compacted):
    """An attempt of a compacted operation, as a usage fact reads it (its usage count written back)."""

    __slots__ = ("at", "attempt_id", "bucket", "runs", "value")
    closed: Final = True

    def __init__(self, attempt_id: str, bucket: bytearray, at: int, runs: list[Any]) -> None:
        self.attempt_id = attempt_id
        self.bucket = bucket
        self.at = at
        self.runs = runs
        self.value: int = _KEY.unpack_from(bucket, at + 8)[0]

    @property
    def operation(self) -> str:
        run: FinishedRun = self.runs[self.value >> _RUN_SHIFT]
        return run.operation_id

    @property
    def superseded(self) -> bool:
        return bool(self.value & _SUPERSEDED)

    @property
    def failed(self) -> bool:
        return bool(self.value & _FAILED)

    @property
    def usage_facts(self) -> int:
        return self.value & _USAGE_MASK

    @usage_facts.setter
    def usage_facts(self, count: int) -> None:
        if not 0 <= count <= _USAGE_MASK:
            raise Doubt("an attempt has too many usage facts to keep compacted")
        self.value = (self.value & ~_USAGE_MASK) | count
        _KEY.pack_into(self.bucket, self.at + 8, self.value)


class _ByRun(dict[str, Any]):
    """A dict of the ids of runs not yet compacted; the compacted runs' ids in a cold table whose values
    name the run (an index in `runs`), read back by `_cold`."""

    __slots__ = ("cold", "runs")

    def __init__(self, cold: ColdTable, runs: list[Any]) -> None:
        super().__init__()
        self.cold = cold
        self.runs = runs

    def get(self, key: str, default: Any = None) -> Any:
        value = dict.get(self, key, _ABSENT)
        return self._cold(key, default) if value is _ABSENT else value

    def _cold(self, key: str, default: Any) -> Any:
        raise NotImplementedError


class CompactAttempts(_ByRun):
    """attempt id → Attempt for operations not yet compacted; `ColdAttempt` for the others."""

    __slots__ = ()

    def _cold(self, key: str, default: Any) -> Any:
        bucket, at = self.cold.position(hash(key))
        return default if at < 0 else ColdAttempt(key, bucket, at, self.runs)

    def retire(self, attempt_id: str, attempt: Any, run: int) -> None:
        if attempt.usage_facts > _USAGE_MASK:
            raise Doubt("an attempt has too many usage facts to keep compacted")
        value = (
            (run << _RUN_SHIFT)
            | (_SUPERSEDED if attempt.superseded else 0)
            | (_FAILED if attempt.failed else 0)
            | attempt.usage_facts
        )
        self.cold.add(hash(attempt_id), value)
        del self[attempt_id]


class CompactIntents(_ByRun):
    """toolStartedId → its operation's id; a compacted operation's intents as fingerprints → run index."""

    __slots__ = ()

    def _cold(self, key: str, default: Any) -> Any:
        run = self.cold.get(hash(key), -1)
        return default if run < 0 else self.runs[run].operation_id


class Compactor:
    """The compactions of one fast pass: which runs are still whole, and the tables."""

    __slots__ = ("bits", "compactions", "filter_bits", "limit", "projected", "swept", "whole")

    def __init__(
        self,
        limit: int = HOT_LIMIT,
        bits: int = BUCKET_BITS,
        filter_bits: int = NAMESPACE_FILTER_BITS,
        projected: int = PROJECTED_LIMIT,
    ) -> None:
        self.limit = limit
        self.projected = projected
        self.bits = bits
        self.filter_bits = filter_bits
        self.compactions = 0
        self.swept = 0  # runs before this index were looked at by a compaction
        self.whole: list[int] = []  # runs looked at, not compacted (open, or with intents pending)

    def due(self, ids: int, read: int, size: int) -> bool:
        """Whether to compact now, with `ids` str keys in the namespace after `read` of the file's `size`
        bytes: always once compacting; before, when the ids projected for the whole file reach
        `projected` (else look again after `limit` more)."""
        if self.compactions or ids * size >= self.projected * max(read, 1):
            return True
        self.limit = ids + self.limit
        return False

    def compact(self, r: FastReducer) -> None:
        """Compact the state between two lines (every new id already checked to be a UUIDv7)."""
        if self.compactions == 0:
            self._first(r)
        else:
            namespace: CompactNamespace = r.namespace  # type: ignore[assignment]
            namespace.flush(namespace.items())
            r.message_ids.pack()  # type: ignore[attr-defined]
            r.entry_ids.pack()  # type: ignore[attr-defined]
            used: CompactSet = r.used_inputs  # type: ignore[assignment]
            used.flush(used)
        self._retire_runs(r)
        self.compactions += 1

    def _first(self, r: FastReducer) -> None:
        bits = self.bits
        small = min(self.filter_bits, SMALL_FILTER_BITS)
        namespace = CompactNamespace(ColdTable(bits, self.filter_bits))
        namespace.flush(r.namespace.items())
        r.namespace = namespace
        entries = PackedIds([])
        entries.tail = r.entry_ids
        r.message_ids = MessageIds(r.message_ids, entries, r.entry_kinds)  # type: ignore[assignment]
        entries.pack()
        r.entry_ids = entries  # type: ignore[assignment]
        used = CompactSet(ColdTable(bits, small))
        used.flush(r.used_inputs)
        r.used_inputs = used
        attempts = CompactAttempts(ColdTable(bits, small), r.runs)
        attempts.update(r.attempts)
        r.attempts = attempts
        intents = CompactIntents(ColdTable(bits, small), r.runs)
        intents.update(r.intent_operation)
        r.intent_operation = intents

    def _retire_runs(self, r: FastReducer) -> None:
        """Every finished run with nothing pending becomes a FinishedRun; its attempts and intents go cold."""
        runs: list[Any] = r.runs
        retiring: dict[str, int] = {}
        whole: list[int] = []
        for index in [*self.whole, *range(self.swept, len(runs))]:
            operation = runs[index]
            if operation.finished and not operation.pending and operation is not r.current:
                if any(intent.pending for intent in operation.intents):
                    whole.append(index)
                    continue
                run = FinishedRun(operation.operation_id, operation.kind, operation.outcome)
                runs[index] = run
                r.operations[run.operation_id] = run  # type: ignore[assignment]
                retiring[run.operation_id] = index
            else:
                whole.append(index)
        self.whole = whole
        self.swept = len(runs)
        if not retiring:
            return
        attempts: CompactAttempts = r.attempts  # type: ignore[assignment]
        for attempt_id, attempt in list(attempts.items()):
            index = retiring.get(attempt.operation)
            if index is not None:
                attempts.retire(attempt_id, attempt, index)
        intents: CompactIntents = r.intent_operation  # type: ignore[assignment]
        add = intents.cold.add
        for started_id, operation_id in list(intents.items()):
            index = retiring.get(operation_id)
            if index is not None:
                add(hash(started_id), index)
                del intents[started_id]
