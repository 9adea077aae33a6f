"""Evidence handling: read-only opening, refusing special files, re-hashing the verified range."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sessaudit.evidence import NotRegularFile, open_evidence, recheck


def test_open_takes_the_size_at_open_and_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"abc\n")
    os.chmod(path, 0o444)
    before = path.stat()
    stream, size = open_evidence(str(path))
    with stream:
        path.chmod(0o644)
        with path.open("ab") as appender:
            appender.write(b"more\n")
        assert size == 4
        assert stream.read(size) == b"abc\n"
    assert before.st_ino == path.stat().st_ino


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        open_evidence(str(fifo))


def test_recheck_tells_unchanged_grown_rewritten_and_truncated(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"line one\n")
    digest = hashlib.sha256(b"line one\n").hexdigest()
    assert recheck(str(path), 9, digest).unchanged
    path.write_bytes(b"line one\nline two\n")
    grown = recheck(str(path), 9, digest)
    assert grown.unchanged and grown.grew
    path.write_bytes(b"line 0ne\n")
    rewritten = recheck(str(path), 9, digest)
    assert not rewritten.unchanged and "rewritten" in (rewritten.detail or "")
    path.write_bytes(b"line")
    truncated = recheck(str(path), 9, digest)
    assert not truncated.unchanged and "shrank" in (truncated.detail or "")
    path.unlink()
    assert not recheck(str(path), 9, digest).unchanged
