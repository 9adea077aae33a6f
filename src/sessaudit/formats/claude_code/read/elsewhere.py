"""Looking a uuid or a tool_use id up in the project's other transcript files (spec §7: "index every file
in the project before judging"), and finding the files a session shares records with (resume copies,
§1.6). Each other file is read once per process, read-only and up to the size limit, into an index of the
`uuid` and `id` values it holds (a byte search, no decode); a file is indexed again only when its size,
modification time or inode changed. Those files are not verified here (each is a source of its own)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.formats.claude_code.read.layout import project_files, session_stem

UUIDS: Final = re.compile(rb'"uuid"\s*:\s*"([^"\\]{1,200})"')
IDS: Final = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')


@dataclass(frozen=True, slots=True)
class _Indexed:
    stamp: tuple[int, int, int, int]  # (device, inode, size, mtime_ns) when it was indexed
    uuids: frozenset[bytes]
    ids: frozenset[bytes]


# real path -> its index; process-wide, so that a walk of one project reads each file once
_INDEX: dict[str, _Indexed] = {}


def _stamp(path: str) -> tuple[int, int, int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def _indexed(path: str, max_bytes: int) -> _Indexed | None:
    stamp = _stamp(path)
    if stamp is None or stamp[2] > max_bytes:
        return None
    known = _INDEX.get(path)
    if known is not None and known.stamp == stamp:
        return known
    try:
        stream, size = open_evidence(path)
    except OSError:
        return None
    with stream:
        if size > max_bytes:
            return None
        data = b"".join(read_chunks(stream, size))
    made = _Indexed(stamp, frozenset(UUIDS.findall(data)), frozenset(IDS.findall(data)))
    _INDEX[path] = made
    return made


class Elsewhere:
    """The other files of a session file's project directory (and their sub-agent folders), indexed
    lazily, on the first look-up."""

    def __init__(self, real_path: str, own: Iterable[str], max_bytes: int) -> None:
        self._real_path = real_path
        self._own = set(own)
        self._max_bytes = max_bytes
        self._files: list[tuple[str, _Indexed]] | None = None

    def files(self) -> list[tuple[str, _Indexed]]:
        if self._files is None:
            self._files = []
            for path in self._candidates():
                indexed = _indexed(path, self._max_bytes)
                if indexed is not None:
                    self._files.append((path, indexed))
        return self._files

    def _candidates(self) -> list[str]:
        found: list[str] = []
        for path in project_files(self._real_path):
            if path in self._own:
                continue
            found.append(path)
            stem = session_stem(path)
            folder = os.path.join(os.path.dirname(path), stem or "", "subagents")
            if stem is not None and os.path.isdir(folder):
                for top, directories, names in os.walk(folder):
                    directories.sort()
                    found.extend(os.path.join(top, name) for name in sorted(names) if name.endswith(".jsonl"))
        return [path for path in found if path not in self._own]

    def record(self, uuid: str) -> list[str]:
        """The names of the other files holding a record with this uuid."""
        key = uuid.encode("utf-8", "surrogateescape")
        return [os.path.basename(path) for path, indexed in self.files() if key in indexed.uuids]

    def tool_use(self, call_id: str) -> list[str]:
        """The names of the other files holding a tool_use block with this id."""
        key = call_id.encode("utf-8", "surrogateescape")
        return [os.path.basename(path) for path, indexed in self.files() if key in indexed.ids]

    def sharing(self, uuids: Iterable[str]) -> list[str]:
        """The real paths of the other files holding a record with any of these uuids (in project order):
        the sessions this one was resumed from, or that were resumed from it."""
        keys = {uuid.encode("utf-8", "surrogateescape") for uuid in uuids}
        return [path for path, indexed in self.files() if not keys.isdisjoint(indexed.uuids)]
