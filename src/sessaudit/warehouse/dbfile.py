"""What a `--db` file is, judged from its first bytes before DuckDB opens it: a whole DuckDB file, a SQLite
database (e.g. a session store given by mistake), a truncated DuckDB file, or something else. DuckDB is
never let near a file that is not a DuckDB database (it is evidence, or someone's data), and a truncated
one is named as such instead of failing deep inside a query."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import Final

DUCKDB_MAGIC: Final = b"DUCK"  # bytes 8-11 of every DuckDB database file
SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_BLOCK: Final = 4096  # DuckDB's file header and its two database headers take one such block each
_HEADERS: Final = 3 * _BLOCK
# a database header: checksum, iteration, meta block, free list, block count, block allocation size
_DATABASE_HEADER: Final = struct.Struct("<QQqqQQ")
_SMALLEST_BLOCK, _LARGEST_BLOCK = 4096, 1 << 30


def foreign_reason(database: Path) -> str | None:
    """Why an existing `database` is no usable DuckDB database file, or None when it looks whole (DuckDB
    itself has the last word on its content). Only reads the file."""
    if not database.is_file():
        return "not a regular file"
    size = os.path.getsize(database)
    with open(database, "rb") as stream:
        head = stream.read(_HEADERS)
    if head.startswith(SQLITE_MAGIC):
        return "a SQLite database, not a DuckDB warehouse"
    if head[8:12] != DUCKDB_MAGIC:
        return "not a DuckDB database file" + (" (it is empty)" if size == 0 else "")
    if size < _HEADERS:
        return f"not a whole DuckDB database file (truncated: {size} bytes, shorter than its headers)"
    expected = _expected_size(head)
    if expected is not None and size < expected:
        return (
            f"not a whole DuckDB database file (truncated or damaged: {size} bytes, its header counts "
            f"{expected})"
        )
    return None


def _expected_size(head: bytes) -> int | None:
    """The file size the newer of the two database headers implies (headers plus its blocks), or None
    when the header is of a layout this check does not know (an older DuckDB: DuckDB decides then)."""
    headers: list[tuple[int, ...]] = [
        _DATABASE_HEADER.unpack_from(head, offset) for offset in (_BLOCK, 2 * _BLOCK)
    ]
    _, _, _, _, count, block = max(headers, key=lambda fields: fields[1])
    if not _SMALLEST_BLOCK <= block <= _LARGEST_BLOCK or block & (block - 1) or count > 1 << 40:
        return None
    return _HEADERS + count * block


def damaged_message(database: Path, error: Exception) -> str:
    """A `--db` file DuckDB refused or failed to read: named, with DuckDB's first line."""
    said = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"--db {database}: not a readable DuckDB database file (truncated or damaged: DuckDB says {said})"


def open_failure(database: Path, error: Exception) -> str:
    """Why DuckDB could not open `database`: held by another process, or the file itself is bad."""
    said = str(error).splitlines()[0] if str(error) else type(error).__name__
    if re.search(r"\block\b", said, re.IGNORECASE):  # "Could not set lock on file", never "block"
        return f"--db {database}: cannot open it: {said}"
    return damaged_message(database, error)
