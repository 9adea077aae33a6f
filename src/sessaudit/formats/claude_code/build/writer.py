"""Bytes on disk: a family's transcripts (a torn last line cut where the crash left it) and sidecars.

Only paths below `<root>/projects/` are written, each with exclusive creation: the builder never
overwrites a file and never writes outside the folder it was given.
"""

from __future__ import annotations

import json
from pathlib import Path

from sessaudit.formats.claude_code.build.family import Family, FileState
from sessaudit.formats.claude_code.build.lines import dump_line


def render(state: FileState) -> bytes:
    """The file's bytes: one JSON line per record, the last cut to `torn_at` bytes after a torn crash."""
    lines = [dump_line(line.data) for line in state.lines]
    if state.torn_at is not None and lines:
        lines[-1] = lines[-1][: state.torn_at]
    return b"".join(lines)


def inside(root: Path, key: str) -> Path:
    """`<root>/projects/<key>`, refusing any key that would leave that folder."""
    base = (root / "projects").resolve()
    path = (base / key).resolve()
    if not path.is_relative_to(base) or path == base:
        raise ValueError(f"refusing to write outside {base}: {key!r}")
    return path


def write_family(family: Family) -> list[Path]:
    """Write every file of `family` (transcripts, then sidecars); the paths, in creation order."""
    written: list[Path] = []
    for state in family.files.values():
        written.append(_create(inside(family.root, state.key), render(state)))
        if state.sidecar is not None:
            key, meta = state.sidecar
            text = json.dumps(meta, ensure_ascii=False, separators=(",", ":"))
            written.append(_create(inside(family.root, key), text.encode("utf-8")))
    return written


def _create(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as stream:
        stream.write(data)
    return path
