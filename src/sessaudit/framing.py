"""Streaming LF framing shared by every JSONL format: committed lines, byte offsets, torn tails, hash."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from sessaudit import progress
from sessaudit.limits import DEFAULT_MAX_LINE_BYTES

BYTE_ORDER_MARK = b"\xef\xbb\xbf"
DEFAULT_CHUNK_SIZE = 1 << 20


@dataclass(slots=True)
class Line:
    """One committed line: its 1-based physical number, the offset of its first byte, its bytes without LF."""

    number: int
    offset: int
    data: bytes
    # the line's length when it is longer than the reader's `max_line_bytes`: its bytes were hashed and
    # counted but not kept, and `data` is empty (callers report it, never decode it); else 0
    over_limit: int = 0

    @property
    def end(self) -> int:
        """The offset just after the line's LF."""
        return self.offset + (self.over_limit or len(self.data)) + 1


class LineReader:
    """Iterate the committed lines (each ended by LF) of the first `size` bytes of a binary stream.

    Reading starts at the stream's current position (offsets count from there; callers open at 0) and
    never goes past `size` bytes, so a log appended to while it is read is verified as the snapshot at
    open. The file is hashed in the same pass. Bytes after the last LF are a torn tail: they are hashed
    and counted, never yielded. A reader is iterated once; the summary attributes are final once the
    iteration is exhausted, except `has_bom`, which is already right when line 1 is yielded (so the
    caller can decode it with `strip_bom`).

    A line longer than `max_line_bytes` is not kept: once its pending bytes pass the limit they are dropped
    (still hashed and counted) and it is yielded with `over_limit` set, so memory stays O(limit + chunk)
    for a gigabyte without LF. A torn tail longer than the limit is never held either.
    """

    def __init__(
        self,
        stream: BinaryIO,
        size: int,
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        report_progress: bool = True,
        already_reported: int = 0,
        prefix_bytes: int = 0,
    ) -> None:
        if size < 0:
            raise ValueError(f"size must be non-negative, got {size}")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be positive, got {chunk_size}")
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be positive, got {max_line_bytes}")
        self.max_line_bytes = max_line_bytes
        self._stream = stream
        self._size = size
        self.size = size  # the size at open: the range read unless the file shrinks meanwhile (short_read)
        self._chunk_size = chunk_size
        self._started = False
        self.bytes_read = 0
        self.short_read = False
        self.sha256 = hashlib.sha256().hexdigest()
        self.repaired_length = 0
        self.torn_tail_bytes = 0
        self.torn_tail_offset = 0
        self.line_count = 0
        self.has_bom = False
        # a first read of evidence counts for the progress display; a re-read (seeds, compaction) does not,
        # and a read again after an earlier one stopped part way counts only the bytes past where it stopped
        self._report_progress = report_progress
        self.reported = already_reported  # the bytes of this evidence counted so far
        # what was hashed so far (`hashed_so_far`), and the sha256 of the first `prefix_bytes` bytes once
        # they are read (a second read of the same evidence compares it with the first read's)
        self._hasher = hashlib.sha256()
        self._hashed = 0
        self._prefix_bytes = prefix_bytes
        self.prefix_sha256: str | None = None

    def __iter__(self) -> Iterator[Line]:
        if self._started:
            raise RuntimeError("a LineReader can be iterated only once")
        self._started = True
        return self._lines()

    def hashed_so_far(self) -> tuple[int, str]:
        """How many bytes were read and hashed so far, and their sha256 (whole chunks)."""
        return self._hashed, self._hasher.hexdigest()

    def _lines(self) -> Iterator[Line]:
        hasher = self._hasher
        prefix = self._prefix_bytes
        stream = self._stream
        remaining = self._size
        chunk_size = self._chunk_size
        limit = self.max_line_bytes
        # Pieces of a line that has not met its LF yet: kept as a list so a line spanning many chunks is
        # joined once, not re-copied per chunk; dropped once they pass the limit (`pending_bytes` counts on).
        pending: list[bytes] = []
        pending_bytes = 0
        line_offset = 0
        number = 0
        bytes_read = 0
        head = b""
        while remaining > 0:
            chunk = stream.read(min(chunk_size, remaining))
            if not chunk:
                self.short_read = True
                break
            if 0 < prefix - bytes_read <= len(chunk):
                hasher.update(chunk[: prefix - bytes_read])
                self.prefix_sha256 = hasher.hexdigest()
                hasher.update(chunk[prefix - bytes_read :])
            else:
                hasher.update(chunk)
            bytes_read += len(chunk)
            self._hashed = bytes_read
            if self._report_progress and bytes_read > self.reported:
                progress.advance(bytes_read - self.reported)
                self.reported = bytes_read
            remaining -= len(chunk)
            if len(head) < len(BYTE_ORDER_MARK):
                # The mark can straddle chunks when chunk_size < 3, so collect the head separately.
                head += chunk[: len(BYTE_ORDER_MARK) - len(head)]
                self.has_bom = head == BYTE_ORDER_MARK
            parts = chunk.split(b"\n")
            last = parts.pop()
            if parts and pending_bytes:  # the chunk's first LF ends the pending line
                data = parts[0]
                length = pending_bytes + len(data)
                if length <= limit:
                    pending.append(data)
                    parts[0] = b"".join(pending)
                else:
                    number += 1
                    yield Line(number, line_offset, b"", over_limit=length)
                    line_offset += length + 1
                    del parts[0]
                pending, pending_bytes = [], 0
            for data in parts:
                number += 1
                length = len(data)
                if length <= limit:
                    yield Line(number, line_offset, data)
                else:
                    yield Line(number, line_offset, b"", over_limit=length)
                line_offset += length + 1
            if last:
                pending_bytes += len(last)
                if pending_bytes <= limit:
                    pending.append(last)
                elif pending:
                    pending = []
        self.bytes_read = bytes_read
        self.sha256 = hasher.hexdigest()
        self.repaired_length = line_offset
        self.torn_tail_offset = line_offset
        self.torn_tail_bytes = bytes_read - line_offset
        self.line_count = number
