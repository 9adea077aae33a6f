"""Bytes on disk: a family's rollouts, a torn last line cut where the crash left it.

Only paths below `<root>/sessions/` and `<root>/archived_sessions/` are written, each with exclusive
creation: the builder never overwrites a file and never writes outside the folder it was given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from sessaudit.formats.codex.build.family import Family, FileState
from sessaudit.formats.codex.build.lines import dump_line

FOLDERS: Final = ("sessions", "archived_sessions")


def render(state: FileState) -> bytes:
    """The file's bytes: one JSON line per record, the last cut to `torn_at` bytes after a torn crash."""
    lines = [dump_line(line.data) for line in state.lines]
    if state.torn_at is not None and lines:
        lines[-1] = lines[-1][: state.torn_at]
    return b"".join(lines)


def inside(root: Path, key: str) -> Path:
    """`<root>/<key>`, refusing any key outside `sessions/` or `archived_sessions/`."""
    for folder in FOLDERS:
        base = (root / folder).resolve()
        path = (root / key).resolve()
        if path.is_relative_to(base) and path != base:
            return path
    raise ValueError(f"refusing to write outside {root}/sessions or archived_sessions: {key!r}")


def write_family(family: Family) -> list[Path]:
    """Write every file of `family`; the paths, in creation order."""
    return [_create(inside(family.root, state.key), render(state)) for state in family.files.values()]


def _create(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as stream:
        stream.write(data)
    return path
