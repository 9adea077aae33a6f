"""Read-only access to evidence: open without blocking or following, re-hash the verified range afterwards."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 1 << 20
READ_ONLY = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """The path is not a regular file; it is never read (a FIFO or device could block or never end)."""


# The two seams through which every read of evidence goes (discovery's sniffing and walking, every
# verifier's open): tests replace them to inject the PermissionError an unprivileged user meets, since CI
# runs as root and root reads a file of mode 000.
def open_descriptor(real_path: str, flags: int = READ_ONLY) -> int:
    """os.open for reading evidence: `flags` are read-only, non-blocking, never following a link."""
    return os.open(real_path, flags)


def scan_directory(real_path: str) -> AbstractContextManager[Iterator[os.DirEntry[str]]]:
    """os.scandir for walking evidence: `with scan_directory(path) as entries: ...`."""
    return os.scandir(real_path)


def read_prefix(real_path: str, limit: int) -> bytes:
    """Up to `limit` bytes of a regular file, opened like evidence (never a FIFO wait, never a link);
    NotRegularFile when it is not a regular file."""
    descriptor = open_descriptor(real_path)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NotRegularFile(0, "not a regular file", real_path)
        return os.read(descriptor, limit)
    finally:
        os.close(descriptor)


def open_evidence(real_path: str) -> tuple[BinaryIO, int]:
    """Open a regular file read-only (no write, no lock, no truncation) and return it with its size at open.

    The size is taken from the open descriptor, so a log appended to while it is read is verified as the
    snapshot it was when opened."""
    descriptor = open_descriptor(real_path)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(0, "not a regular file", real_path)
        # the non-blocking flag only mattered for the open itself; regular-file reads never block
        os.set_blocking(descriptor, True)
        stream = os.fdopen(descriptor, "rb", buffering=0)
    except BaseException:
        os.close(descriptor)
        raise
    return stream, info.st_size


def read_chunks(stream: BinaryIO, length: int) -> Iterator[bytes]:
    """The next `length` bytes of `stream` in chunks of at most CHUNK (fewer at end of file)."""
    remaining = length
    while remaining > 0:
        chunk = stream.read(min(CHUNK, remaining))
        if not chunk:
            return
        remaining -= len(chunk)
        yield chunk


def hash_range(real_path: str, length: int) -> tuple[str, int, int]:
    """(hex sha256 of bytes [0, length) as the file is now, bytes actually available, current size).

    Opens the path afresh, so a file replaced by rename during the audit is noticed."""
    stream, size = open_evidence(real_path)
    digest = hashlib.sha256()
    available = 0
    with stream:
        for chunk in read_chunks(stream, length):
            digest.update(chunk)
            available += len(chunk)
    return digest.hexdigest(), available, size


@dataclass(frozen=True, slots=True)
class Recheck:
    unchanged: bool
    grew: bool
    detail: str | None


def recheck(real_path: str, verified_bytes: int, verified_sha256: str) -> Recheck:
    """Compare the verified range with the file as it is now (CONTRACT §4 `unchanged`)."""
    try:
        now_sha256, available, size = hash_range(real_path, verified_bytes)
    except FileNotFoundError:
        return Recheck(False, False, "the file was removed during the audit")
    except OSError as error:
        return Recheck(False, False, f"the file could not be read again: {error.strerror or error}")
    if available < verified_bytes:
        return Recheck(
            False, False, f"the file shrank from {verified_bytes} to {size} bytes during the audit"
        )
    if now_sha256 != verified_sha256:
        return Recheck(False, False, "the verified bytes were rewritten during the audit (sha256 differs)")
    if size > verified_bytes:
        return Recheck(True, True, f"the file grew by {size - verified_bytes} bytes during the audit")
    return Recheck(True, False, None)
