"""A Half-Pi store's files read as bytes: the -wal's frames as SQLite's recovery walks them, the database
header's own problems, and the `run/mind.lock` state lock (hashed and read, never locked)."""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from typing import Any, Final

from sessaudit.evidence import open_evidence
from sessaudit.flocks import writer_active


@dataclass(frozen=True, slots=True)
class WalInfo:
    """What SQLite takes from a -wal: frames with valid salts and checksum chain, up to the last commit."""

    bytes: int
    header_valid: bool
    page_size: int = 0
    checkpoint_sequence: int = 0
    salts: tuple[int, int] = (0, 0)
    frames: int = 0  # valid frames
    committed_frames: int = 0  # valid frames up to and including the last commit frame
    transactions: int = 0  # commit frames among them
    ignored_bytes: int = 0  # after the committed frames: an unfinished transaction or an older WAL's frames


@dataclass(frozen=True, slots=True)
class LockInfo:
    """`<home>/run/mind.lock` (spec §1): hashed, its diagnostics read, never locked by us."""

    real_path: str
    bytes: int | None
    sha256: str | None
    diagnostics: tuple[tuple[str, str], ...]  # `key=value` lines (pid, mode, started_at); not authoritative
    held: bool | None  # some process holds its flock now (from /proc/locks); None when unknown
    detail: str | None = None


_WAL_MAGIC: Final = {0x377F0682: "<", 0x377F0683: ">"}  # checksum words little- or big-endian
_WAL_VERSION: Final = 3007000
_MASK: Final = 0xFFFFFFFF


def wal_checksum(data: bytes, order: str, seed: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """SQLite's WAL checksum over `data` (a multiple of 8 bytes) with 32-bit words in `order` ("<" or ">")."""
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    first, second = seed
    for index in range(0, len(words), 2):
        first = (first + words[index] + second) & _MASK
        second = (second + words[index + 1] + first) & _MASK
    return first, second


def wal_info(data: bytes) -> WalInfo:
    """Walk a -wal's frames as SQLite's recovery does (stop at the first bad salt or checksum)."""
    if len(data) < 32:
        return WalInfo(len(data), False, ignored_bytes=len(data))
    magic, version, page_size, sequence, salt1, salt2 = struct.unpack(">6I", data[:24])
    order = _WAL_MAGIC.get(magic)
    valid = order is not None and version == _WAL_VERSION and 512 <= page_size <= 65536
    valid = valid and page_size & (page_size - 1) == 0
    if order is None or not valid or wal_checksum(data[:24], order) != struct.unpack(">2I", data[24:32]):
        return WalInfo(len(data), False, ignored_bytes=len(data))
    checksum = struct.unpack(">2I", data[24:32])
    frames = committed = transactions = 0
    offset, frame_size = 32, 24 + page_size
    while offset + frame_size <= len(data):
        page, commit, frame_salt1, frame_salt2, sum1, sum2 = struct.unpack(">6I", data[offset : offset + 24])
        if page == 0 or (frame_salt1, frame_salt2) != (salt1, salt2):
            break
        checksum = wal_checksum(
            data[offset + 24 : offset + frame_size],
            order,
            wal_checksum(data[offset : offset + 8], order, checksum),
        )
        if checksum != (sum1, sum2):
            break
        frames += 1
        if commit:
            committed, transactions = frames, transactions + 1
        offset += frame_size
    ignored = len(data) - 32 - committed * frame_size
    return WalInfo(
        len(data), True, page_size, sequence, (salt1, salt2), frames, committed, transactions, ignored
    )


def database_header_problems(head: bytes, size: int) -> list[tuple[str, str]]:
    """(problem kind, message) from the 100-byte database header and the file size."""
    problems = []
    (raw_page_size,) = struct.unpack(">H", head[16:18])
    page_size = 65536 if raw_page_size == 1 else raw_page_size
    if head[18] != 2 or head[19] != 2:
        problems.append(("not-wal-mode", f"header bytes 18/19 are {head[18]}/{head[19]}, not 2/2 (WAL)"))
    if page_size < 512 or page_size & (page_size - 1):
        return problems  # SQLite itself will refuse the file
    if size % page_size:
        problems.append(("truncated", f"{size} bytes is not a whole number of {page_size}-byte pages"))
    change_counter, pages = struct.unpack(">II", head[24:32])
    (valid_for,) = struct.unpack(">I", head[92:96])
    if pages and change_counter == valid_for and size < pages * page_size:
        problems.append(("truncated", f"{size} bytes, shorter than the {pages} pages its header counts"))
    return problems


def lock_path(real_path: str) -> str | None:
    """`<home>/run/mind.lock` for a store at `<home>/db/<file>` (Half-Pi's layout); None elsewhere."""
    folder = os.path.dirname(os.path.abspath(real_path))
    if os.path.basename(folder) != "db":
        return None
    return os.path.join(os.path.dirname(folder), "run", "mind.lock")


def read_lock(real_path: str) -> LockInfo | None:
    """The state lock beside a store, or None when there is none. Read with O_RDONLY; never flocked."""
    path = lock_path(real_path)
    if path is None or not os.path.lexists(path):
        return None
    try:
        stream, _ = open_evidence(path)
    except OSError as error:
        return LockInfo(path, None, None, (), None, f"not read: {error.strerror or error}")
    with stream:
        data = stream.read()
    pairs = tuple(
        (key, value)
        for key, _, value in (
            line.partition("=") for line in data[:4096].decode("utf-8", "replace").splitlines()
        )
        if key and _
    )
    try:
        held: bool | None = writer_active(path)
    except OSError:
        held = None
    return LockInfo(path, len(data), hashlib.sha256(data).hexdigest(), pairs, held)


def wide_modes(modes: list[tuple[str, int]]) -> tuple[str, dict[str, Any]] | None:
    """SA686's message and evidence when any store file (name, st_mode) is wider than 0600: every file
    of the store is named with its mode; None when none is wider."""
    wide = [name for name, mode in modes if mode & 0o077]
    if not wide:
        return None
    shown = {name: f"{mode & 0o7777:04o}" for name, mode in modes}
    listed = ", ".join(f"{name} {mode}" for name, mode in shown.items())
    count = f"{len(wide)} of {len(modes)} files are" if len(modes) > 1 else "it is"
    return f"the store's files have modes {listed}: {count} wider than 0600", {"modes": shown, "wide": wide}
