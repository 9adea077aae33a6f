"""Is a writer alive on a file (a run's .writer.lock, a store's mind.lock)? Read /proc/locks; never lock.

Holding an exclusive `flock` on `<run>/.writer.lock` is a run writer's lease; the pid written in the file
may be stale, so only the kernel's lock table tells. A probing flock (which the spec allows) would briefly
hold a lock on the evidence and could make a starting writer fail; reading /proc/locks changes nothing.

Known limits: Linux only (/proc/locks must be readable; otherwise OSError is raised, not guessed); the lock is
matched by device and inode, so on a stacking filesystem (overlayfs) whose stat() device differs from the
device the kernel records, a live writer is not seen; a writer in another mount namespace is seen (the
table is global) while its pid may read 0 or a pid of another namespace, which is why the pid is not used.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Final

PROC_LOCKS: Final = "/proc/locks"


@dataclass(frozen=True, slots=True)
class KernelLock:
    """One granted entry of /proc/locks (blocked waiters, the `->` lines, are not listed)."""

    kind: str  # FLOCK, POSIX, OFDLCK, LEASE, ...
    access: str  # WRITE (exclusive) or READ (shared)
    pid: int
    major: int
    minor: int
    inode: int


def parse_proc_locks(text: str) -> list[KernelLock]:
    """The granted locks of a /proc/locks text; lines that do not parse are skipped."""
    locks: list[KernelLock] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":
            continue
        kind, access, pid, place = fields[1], fields[3], fields[4], fields[5]
        parts = place.split(":")
        if len(parts) != 3:
            continue
        try:
            lock = KernelLock(kind, access, int(pid), int(parts[0], 16), int(parts[1], 16), int(parts[2]))
        except ValueError:
            continue
        locks.append(lock)
    return locks


def writer_active(lock_path: str | os.PathLike[str], *, proc_locks: str = PROC_LOCKS) -> bool:
    """True when some process holds an exclusive flock on `lock_path`'s inode (the path is not followed
    when it is a symlink, as the writer opens it with O_NOFOLLOW: a symlink or an absent file has no writer).
    """
    try:
        status = os.lstat(lock_path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(status.st_mode):
        return False
    with open(proc_locks, encoding="ascii", errors="replace") as stream:
        text = stream.read()
    device = (os.major(status.st_dev), os.minor(status.st_dev), status.st_ino)
    return any(
        (lock.major, lock.minor, lock.inode) == device and lock.kind == "FLOCK" and lock.access == "WRITE"
        for lock in parse_proc_locks(text)
    )
