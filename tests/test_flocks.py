"""writer_active sees a live writer's flock through /proc/locks, without taking a lock itself."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sessaudit.flocks import KernelLock, parse_proc_locks, writer_active

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux /proc/locks")

HOLDER = """
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_NOFOLLOW)
fcntl.flock(descriptor, fcntl.LOCK_EX if sys.argv[2] == "ex" else fcntl.LOCK_SH)
print("held", flush=True)
sys.stdin.read()
"""


@contextmanager
def held(path: Path, mode: str = "ex") -> Iterator[None]:
    """A child process holding an flock on `path` until the block ends."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        yield
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=10)


def lock_file(tmp_path: Path) -> Path:
    path = tmp_path / ".writer.lock"
    path.write_bytes(b"pid=1 token=" + b"0" * 32 + b"\n")
    path.chmod(0o600)
    return path


def test_live_writer_is_seen_and_gone_after_exit(tmp_path: Path) -> None:
    path = lock_file(tmp_path)
    assert not writer_active(path)
    with held(path):
        assert writer_active(path)
        assert writer_active(str(path))
    assert not writer_active(path)


def test_shared_lock_is_not_a_writer(tmp_path: Path) -> None:
    path = lock_file(tmp_path)
    with held(path, "sh"):
        assert not writer_active(path)


def test_other_files_lock_is_not_ours(tmp_path: Path) -> None:
    path, other = lock_file(tmp_path), tmp_path / "other"
    other.write_bytes(b"")
    with held(other):
        assert not writer_active(path)


def test_checking_takes_no_lock(tmp_path: Path) -> None:
    path = lock_file(tmp_path)
    inode = os.stat(path).st_ino
    writer_active(path)
    with open("/proc/locks", encoding="ascii") as stream:
        assert all(lock.inode != inode for lock in parse_proc_locks(stream.read()))


def test_absent_file_and_symlink(tmp_path: Path) -> None:
    assert not writer_active(tmp_path / ".writer.lock")
    target = lock_file(tmp_path)
    link = tmp_path / "link.lock"
    link.symlink_to(target)
    with held(target):
        assert not writer_active(link)  # Rivumi opens the lock with O_NOFOLLOW


def test_parse_proc_locks_skips_waiters_and_reads_hex_devices() -> None:
    text = (
        "1: FLOCK  ADVISORY  WRITE 31638 fe:00:2146312 0 EOF\n"
        "1: -> FLOCK  ADVISORY  WRITE 31700 fe:00:2146312 0 EOF\n"
        "2: POSIX  ADVISORY  READ 12 103:0a:77 0 EOF\n"
        "3: OFDLCK ADVISORY  WRITE -1 00:2f:9 0 EOF\n"
        "garbage\n"
    )
    assert parse_proc_locks(text) == [
        KernelLock("FLOCK", "WRITE", 31638, 0xFE, 0, 2146312),
        KernelLock("POSIX", "READ", 12, 0x103, 0x0A, 77),
        KernelLock("OFDLCK", "WRITE", -1, 0, 0x2F, 9),
    ]


def test_device_must_match(tmp_path: Path) -> None:
    path = lock_file(tmp_path)
    status = os.stat(path)
    major, minor = os.major(status.st_dev), os.minor(status.st_dev)
    table = tmp_path / "locks"
    table.write_text(f"1: FLOCK  ADVISORY  WRITE 5 {major + 1:02x}:{minor:02x}:{status.st_ino} 0 EOF\n")
    assert not writer_active(path, proc_locks=str(table))
    table.write_text(f"1: FLOCK  ADVISORY  WRITE 5 {major:02x}:{minor:02x}:{status.st_ino} 0 EOF\n")
    assert writer_active(path, proc_locks=str(table))
