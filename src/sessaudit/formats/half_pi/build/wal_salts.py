"""Make a built -wal/-shm byte-reproducible: SQLite salts a new WAL with random bytes; we re-salt it.

The salts sit in the WAL header and in every frame header, and every checksum chains from the header's,
so re-salting recomputes the checksum chain. The -shm's wal-index header (two 48-byte copies) holds the
same salts, the last frame's running checksum and its own checksum (native byte order): patched to match.
A reader opening the files fresh discards the -shm anyway and rebuilds it from the -wal.
"""

from __future__ import annotations

import random
import struct
import sys
from typing import Final

from sessaudit.formats.half_pi.read.store_files import wal_checksum, wal_info

_WAL_HEADER: Final = 32
_FRAME_HEADER: Final = 24
_INDEX_HEADER: Final = 48
_NATIVE: Final = "<" if sys.byteorder == "little" else ">"


def resalt_wal(data: bytes, salts: tuple[int, int]) -> tuple[bytes, tuple[int, int]]:
    """The -wal with new salts and recomputed checksums over its valid frames, and the last running checksum.

    Bytes after the valid frames (none in a built WAL) are kept as they are."""
    info = wal_info(data)
    if not info.header_valid:
        return data, (0, 0)
    order = "<" if struct.unpack(">I", data[:4])[0] == 0x377F0682 else ">"
    output = bytearray(data)
    output[16:24] = struct.pack(">2I", *salts)
    checksum = wal_checksum(bytes(output[:24]), order)
    output[24:32] = struct.pack(">2I", *checksum)
    frame_size = _FRAME_HEADER + info.page_size
    for index in range(info.frames):
        offset = _WAL_HEADER + index * frame_size
        output[offset + 8 : offset + 16] = struct.pack(">2I", *salts)
        checksum = wal_checksum(bytes(output[offset : offset + 8]), order, checksum)
        checksum = wal_checksum(bytes(output[offset + _FRAME_HEADER : offset + frame_size]), order, checksum)
        output[offset + 16 : offset + 24] = struct.pack(">2I", *checksum)
    return bytes(output), checksum


def patch_index_header(shm: bytes, salts: tuple[int, int], frame_checksum: tuple[int, int]) -> bytes:
    """The -shm with both wal-index header copies carrying the new salts and running checksum."""
    if len(shm) < 2 * _INDEX_HEADER:
        return shm
    output = bytearray(shm)
    for offset in (0, _INDEX_HEADER):
        header = output[offset : offset + _INDEX_HEADER]
        header[24:32] = struct.pack(f"{_NATIVE}2I", *frame_checksum)
        header[32:40] = struct.pack(">2I", *salts)  # copied from the WAL header bytes as they are
        header[40:48] = struct.pack(f"{_NATIVE}2I", *wal_checksum(bytes(header[:40]), _NATIVE))
        output[offset : offset + _INDEX_HEADER] = header
    return bytes(output)


def index_header_valid(shm: bytes) -> bool:
    """Whether the first wal-index header's checksum holds (what a reader sharing the -shm checks)."""
    if len(shm) < _INDEX_HEADER:
        return False
    stored = struct.unpack(f"{_NATIVE}2I", shm[40:48])
    return (
        wal_checksum(shm[:40], _NATIVE) == stored
        and shm[:_INDEX_HEADER] == shm[_INDEX_HEADER : 2 * _INDEX_HEADER]
    )


def normalize_wal_files(path: str, seed: int) -> None:
    """Re-salt `path`-wal and patch `path`-shm in place, deterministically from `seed`."""
    generator = random.Random(seed)
    salts = (generator.getrandbits(32), generator.getrandbits(32))
    try:
        with open(path + "-wal", "rb") as stream:
            wal = stream.read()
    except FileNotFoundError:
        return
    # an empty -wal (just checkpointed) has nothing to re-salt; its -shm still gets the fixed salts
    resalted, frame_checksum = resalt_wal(wal, salts)
    with open(path + "-wal", "r+b") as stream:
        stream.write(resalted)
    try:
        with open(path + "-shm", "rb") as stream:
            shm = stream.read()
    except FileNotFoundError:
        return
    with open(path + "-shm", "r+b") as stream:
        stream.write(patch_index_header(shm, salts, frame_checksum))
