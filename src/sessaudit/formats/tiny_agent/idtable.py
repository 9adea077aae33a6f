"""Compact storage for the v2 reducer's one id namespace (§6).

A session holds one namespace entry per fact id and reserved id (≈ 2.2 ids per KB of a dense session). As a
`dict[str, int]` each costs ≈ 120 bytes (the 36-character str object and its dict slot); here it costs ≈ 40:
the id's 16 bytes in one `bytearray`, its `hash()` and its value in arrays, and an open-addressing slot
table of 4-byte indexes kept at most half full. The ids inserted are lowercase UUIDs (the callers check the
pattern first); lookups take any str and compare exactly."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import chain

_MIN_SLOTS = 1 << 13
_ABSENT = -(1 << 40)  # outside the 32-bit values


def _text(raw: bytes | bytearray) -> str:
    """The canonical lowercase UUID text of 16 bytes."""
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _same(key: str, raw: bytes | bytearray) -> bool:
    """Whether `key` is exactly the canonical text of `raw` (only called when the hashes agree)."""
    return (
        len(key) == 36
        and key[8] == key[13] == key[18] == key[23] == "-"
        and key.replace("-", "") == raw.hex()
    )


class IdTable:
    """A `dict[str, int]` for UUID keys without a Python object per key, for keys inserted more than
    `YOUNG` insertions ago. No deletion: the namespace only grows and overwrites tags. Values must fit a
    signed 32-bit integer (entry ordinals, negative tags).

    Recent ids stay in a small dict (most lookups are of the current fact's id or of ids a few facts
    back, at C speed); every `YOUNG` insertions they move into the compact arrays. A lookup that misses
    the dict probes the arrays in Python; the last such miss is remembered, since apply_fact asks about a
    new fact id several times before inserting it."""

    __slots__ = ("_hashes", "_keys", "_mask", "_missed", "_slots", "_values", "_young")

    YOUNG = 4096

    def __init__(self) -> None:
        self._young: dict[str, int] = {}
        self._missed: str | None = None  # the last key the arrays do not hold
        self._hashes = array("q")  # per old id, in insertion order: hash(key)
        self._keys = bytearray()  # per old id: its 16 bytes
        self._values = array("i")
        self._slots = array("i", bytes(4 * _MIN_SLOTS))  # index + 1 into the arrays above; 0 is empty
        self._mask = _MIN_SLOTS - 1

    def __len__(self) -> int:
        return len(self._values) + sum(1 for key in self._young if self._old(key) < 0)

    def _old(self, key: str) -> int:
        """The index of `key` in the arrays, or -1."""
        if key is self._missed:
            return -1
        h = hash(key)
        mask = self._mask
        slots = self._slots
        hashes = self._hashes
        keys = self._keys
        slot = h & mask
        while True:
            index = slots[slot] - 1
            if index < 0:
                self._missed = key
                return -1
            if hashes[index] == h and _same(key, keys[16 * index : 16 * index + 16]):
                return index
            slot = (slot + 1) & mask

    def get(self, key: str, default: int) -> int:
        value = self._young.get(key)
        if value is not None:
            return value
        if key is self._missed:
            return default
        h = hash(key)  # _old, inlined: this is the reducer's hottest lookup
        mask = self._mask
        slots = self._slots
        slot = h & mask
        while True:
            index = slots[slot] - 1
            if index < 0:
                self._missed = key
                return default
            if self._hashes[index] == h and _same(key, self._keys[16 * index : 16 * index + 16]):
                return self._values[index]
            slot = (slot + 1) & mask

    def __contains__(self, key: object) -> bool:
        return type(key) is str and (key in self._young or self._old(key) >= 0)

    def __getitem__(self, key: str) -> int:
        value = self.get(key, _ABSENT)
        if value == _ABSENT:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: int) -> None:
        young = self._young
        young[key] = value  # shadows an older value in the arrays until the next flush
        if len(young) >= self.YOUNG:
            self._flush()

    def _flush(self) -> None:
        """Move the young ids into the arrays (overwriting the value of an id they already hold)."""
        hashes, keys, values = self._hashes, self._keys, self._values
        fresh: list[str] = []
        for key, value in self._young.items():
            h = hash(key)
            mask = self._mask
            slots = self._slots
            slot = h & mask
            while True:
                index = slots[slot] - 1
                if index < 0:
                    break
                # An index of this batch has no key bytes yet: it is another key (dict keys differ).
                if hashes[index] == h and _same(key, keys[16 * index : 16 * index + 16]):
                    values[index] = value
                    break
                slot = (slot + 1) & mask
            if index >= 0:
                continue
            hashes.append(h)
            values.append(value)
            fresh.append(key)
            slots[slot] = len(values)
            if 2 * len(values) > len(slots):
                self._grow()
        keys += bytes.fromhex("".join(fresh).replace("-", ""))
        self._young = {}
        self._missed = None

    def _grow(self) -> None:
        size = 2 * len(self._slots)
        mask = size - 1
        slots = array("i", bytes(4 * size))
        for index, h in enumerate(self._hashes, 1):
            slot = h & mask
            while slots[slot]:
                slot = (slot + 1) & mask
            slots[slot] = index
        self._slots, self._mask = slots, mask

    def __iter__(self) -> Iterator[str]:
        keys = self._keys
        old = (_text(keys[at : at + 16]) for at in range(0, len(keys), 16))
        return chain(old, (key for key in self._young if self._old(key) < 0))
