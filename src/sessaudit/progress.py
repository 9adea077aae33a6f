"""Progress of a long audit: readers report bytes read; a display (rich, on a terminal only) shows them.

Readers call `advance(n)` for every chunk of evidence they read the first time (never for the re-hash). By
default it does nothing. The CLI installs a sink in its own process; worker processes of `--jobs` add to a
shared counter the parent's display polls (`shared_sink`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Protocol

Sink = Callable[[int], None]


def _ignore(count: int) -> None:
    return None


_sink: Sink = _ignore


def advance(count: int) -> None:
    """`count` more bytes of evidence were read."""
    _sink(count)


def set_sink(sink: Sink | None) -> Sink:
    """Route `advance` to `sink` (None: nowhere); returns the previous sink."""
    global _sink
    previous = _sink
    _sink = sink or _ignore
    return previous


class Counter(Protocol):
    """A `multiprocessing.Value('q')`: shared between the parent and its workers."""

    value: int

    def get_lock(self) -> Any: ...


def shared_sink(counter: Counter) -> None:
    """Pool initializer: this worker's reads add to the parent's shared counter."""

    def add(count: int) -> None:
        with counter.get_lock():
            counter.value += count

    set_sink(add)


class Tracker(Protocol):
    """What the engine tells a display: the work ahead, bytes read, sources done."""

    def start(self, total_bytes: int, total_sources: int) -> None: ...

    def source_done(self) -> None: ...

    def attach(self, counter: Counter) -> None: ...

    def poll(self) -> None: ...


def estimated_bytes(real_path: str) -> int:
    """The bytes a source will take to read: a file's size (with a SQLite `-wal` beside it), or the sum of
    the regular files directly inside a run directory. An estimate for the display only."""
    try:
        info = os.stat(real_path)
    except OSError:
        return 0
    if os.path.isdir(real_path):
        total = 0
        try:
            with os.scandir(real_path) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            return total
        return total
    size = info.st_size
    with suppress(OSError):
        size += os.stat(real_path + "-wal").st_size
    return size


class ProgressBar:
    """A rich progress bar on stderr: bytes done / total, sources done / total, rate and time left."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("verifying"),
            BarColumn(),
            DownloadColumn(),
            TextColumn("{task.fields[sources]}"),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("verify", total=None, sources="")
        self._lock = threading.Lock()
        self._local = 0
        self._counter: Counter | None = None
        self._sources_done = 0
        self._sources_total = 0

    def start(self, total_bytes: int, total_sources: int) -> None:
        self._sources_total = total_sources
        self._progress.update(self._task, total=total_bytes or None, sources=self._sources_text())
        self._progress.start()

    def add(self, count: int) -> None:
        with self._lock:
            self._local += count
        self._refresh()

    def attach(self, counter: Counter) -> None:
        self._counter = counter

    def source_done(self) -> None:
        self._sources_done += 1
        self._refresh()

    def _sources_text(self) -> str:
        return f"{self._sources_done}/{self._sources_total} sources"

    def _refresh(self) -> None:
        done = self._local + (self._counter.value if self._counter is not None else 0)
        self._progress.update(self._task, completed=done, sources=self._sources_text())

    def poll(self) -> None:
        """Pick up what worker processes read (called while waiting for their results)."""
        self._refresh()

    def stop(self) -> None:
        self._progress.stop()


@contextmanager
def progress_bar(enabled: bool) -> Iterator[ProgressBar | None]:
    """A progress bar routed from `advance` while the block runs; None (and no output) when not enabled."""
    if not enabled:
        yield None
        return
    bar = ProgressBar()
    previous = set_sink(bar.add)
    try:
        yield bar
    finally:
        set_sink(previous)
        bar.stop()
