"""LF framing: committed lines, offsets, torn tails, the snapshot size bound and the single-pass hash."""

from __future__ import annotations

import hashlib
import io
from typing import BinaryIO, cast

import pytest
from hypothesis import given, strategies

from sessaudit.framing import Line, LineReader


class _RecordingStream(io.BytesIO):
    """A BytesIO that remembers every read size, to prove the reader never asks past `size`."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.requests: list[int] = []

    def read(self, size: int | None = -1, /) -> bytes:
        self.requests.append(-1 if size is None else size)
        return super().read(size)


class _TrickleStream(io.RawIOBase):
    """A raw stream that returns at most `step` bytes per read, as pipes and raw files may."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data = data
        self._position = 0
        self._step = step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1, /) -> bytes:
        size = len(self._data) if size < 0 else size
        chunk = self._data[self._position : self._position + min(size, self._step)]
        self._position += len(chunk)
        return chunk


def _read(data: bytes, size: int | None = None, chunk_size: int = 1 << 20) -> tuple[list[Line], LineReader]:
    reader = LineReader(io.BytesIO(data), len(data) if size is None else size, chunk_size=chunk_size)
    return list(reader), reader


def test_lines_offsets_and_summary() -> None:
    data = b'{"kind":"header"}\n[1]\n"x"\n'
    lines, reader = _read(data)
    assert [(line.number, line.offset, line.data) for line in lines] == [
        (1, 0, b'{"kind":"header"}'),
        (2, 18, b"[1]"),
        (3, 22, b'"x"'),
    ]
    assert reader.bytes_read == len(data)
    assert reader.short_read is False
    assert reader.sha256 == hashlib.sha256(data).hexdigest()
    assert reader.repaired_length == len(data)
    assert reader.torn_tail_bytes == 0
    assert reader.torn_tail_offset == len(data)
    assert reader.line_count == 3
    assert reader.has_bom is False


def test_torn_tail_is_counted_and_hashed_but_never_yielded() -> None:
    data = b'{"a":1}\n{"b":'
    lines, reader = _read(data)
    assert [line.data for line in lines] == [b'{"a":1}']
    assert reader.repaired_length == 8
    assert reader.torn_tail_offset == 8
    assert reader.torn_tail_bytes == 5
    assert reader.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("data", [b"", b'{"kind":"header"}'])
def test_no_lf_means_no_committed_line(data: bytes) -> None:
    lines, reader = _read(data)
    assert lines == []
    assert reader.repaired_length == 0
    assert reader.torn_tail_bytes == len(data)
    assert reader.line_count == 0


def test_empty_lines_and_cr_are_kept_for_the_caller_to_judge() -> None:
    lines, _ = _read(b"\n\r\na\r\n")
    assert [(line.number, line.offset, line.data) for line in lines] == [
        (1, 0, b""),
        (2, 1, b"\r"),
        (3, 3, b"a\r"),
    ]


def test_reading_stops_at_size_even_when_the_file_grew() -> None:
    data = b"one\ntwo\nthree\n"
    stream = _RecordingStream(data)
    reader = LineReader(stream, 8, chunk_size=3)
    assert [line.data for line in reader] == [b"one", b"two"]
    assert sum(stream.requests) <= 8
    assert stream.tell() == 8
    assert reader.bytes_read == 8
    assert reader.short_read is False
    assert reader.sha256 == hashlib.sha256(data[:8]).hexdigest()


def test_a_file_that_shrank_is_a_short_read() -> None:
    data = b"one\ntw"
    lines, reader = _read(data, size=100)
    assert [line.data for line in lines] == [b"one"]
    assert reader.short_read is True
    assert reader.bytes_read == 6
    assert reader.torn_tail_bytes == 2
    assert reader.sha256 == hashlib.sha256(data).hexdigest()


def test_a_line_longer_than_the_chunk_is_accumulated() -> None:
    long_line = b"x" * 10_000
    data = b"a\n" + long_line + b"\nb\n"
    lines, reader = _read(data, chunk_size=7)
    assert [line.data for line in lines] == [b"a", long_line, b"b"]
    assert [line.offset for line in lines] == [0, 2, 10_003]
    assert reader.repaired_length == len(data)


def test_short_reads_from_a_raw_stream_are_continued() -> None:
    data = b"alpha\nbeta\ngamma"
    reader = LineReader(cast(BinaryIO, _TrickleStream(data, 3)), len(data), chunk_size=1024)
    assert [line.data for line in reader] == [b"alpha", b"beta"]
    assert reader.short_read is False
    assert reader.torn_tail_bytes == 5


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 4, 1 << 20])
def test_bom_is_detected_across_chunk_boundaries(chunk_size: int) -> None:
    lines, reader = _read(b"\xef\xbb\xbf{}\n", chunk_size=chunk_size)
    assert reader.has_bom is True
    assert lines[0].data == b"\xef\xbb\xbf{}"  # framing keeps the bytes; the JSON decoder strips the mark


def test_has_bom_is_known_when_line_one_is_yielded() -> None:
    reader = LineReader(io.BytesIO(b"\xef\xbb\xbf{}\n[1]\n"), 9, chunk_size=1)
    iterator = iter(reader)
    next(iterator)
    assert reader.has_bom is True


@pytest.mark.parametrize("data", [b"\xef\xbb", b"\xef\xbb\n", b"\xef\xbb\xbe\n"])
def test_partial_or_wrong_mark_is_not_a_bom(data: bytes) -> None:
    assert _read(data)[1].has_bom is False


def test_a_reader_is_iterated_once() -> None:
    reader = LineReader(io.BytesIO(b"a\n"), 2)
    list(reader)
    with pytest.raises(RuntimeError):
        iter(reader)


def test_invalid_arguments_are_rejected() -> None:
    with pytest.raises(ValueError):
        LineReader(io.BytesIO(b""), -1)
    with pytest.raises(ValueError):
        LineReader(io.BytesIO(b""), 0, chunk_size=0)


@given(
    data=strategies.lists(strategies.sampled_from([b"\n", b"a", b"\r", b"\xef\xbb\xbf", b"\xff", b"{}"])).map(
        b"".join
    )
    | strategies.binary(max_size=300),
    chunk_size=strategies.integers(min_value=1, max_value=64),
)
def test_lines_and_torn_tail_reassemble_the_input(data: bytes, chunk_size: int) -> None:
    lines, reader = _read(data, chunk_size=chunk_size)
    committed = b"".join(line.data + b"\n" for line in lines)
    assert committed + data[reader.torn_tail_offset :] == data
    assert len(committed) == reader.repaired_length == data.rfind(b"\n") + 1
    assert reader.torn_tail_bytes == len(data) - reader.repaired_length
    assert [line.number for line in lines] == list(range(1, len(lines) + 1))
    assert all(data[line.offset : line.offset + len(line.data) + 1] == line.data + b"\n" for line in lines)
    assert reader.line_count == len(lines) == data.count(b"\n")
    assert reader.sha256 == hashlib.sha256(data).hexdigest()
    assert reader.has_bom == data.startswith(b"\xef\xbb\xbf")


@given(
    data=strategies.binary(max_size=200),
    size=strategies.integers(min_value=0, max_value=250),
    chunk_size=strategies.integers(min_value=1, max_value=32),
)
def test_only_the_first_size_bytes_are_read(data: bytes, size: int, chunk_size: int) -> None:
    stream = _RecordingStream(data)
    reader = LineReader(stream, size, chunk_size=chunk_size)
    lines = list(reader)
    snapshot = data[:size]
    assert stream.tell() == len(snapshot)
    assert all(request <= chunk_size for request in stream.requests)
    assert reader.bytes_read == len(snapshot)
    assert reader.short_read == (size > len(data))
    assert [line.data for line in lines] == snapshot.split(b"\n")[:-1]
    assert reader.sha256 == hashlib.sha256(snapshot).hexdigest()
