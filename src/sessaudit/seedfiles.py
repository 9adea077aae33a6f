"""The seed-file writer: sanitised names inside `--seeds-dir` only, atomic, never overwriting."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from sessaudit.jsonout import pretty_json

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
# Keep names well below the usual 255-byte limit, with room for the sha prefix and the suffix.
_MAX_PART = 80


class SeedClash(Exception):
    """A different file already exists under the seed's name (CONTRACT §5: never overwritten; exit 2)."""


def _part(value: str) -> str:
    cleaned = _UNSAFE.sub("_", value) or "_"
    if len(cleaned) > _MAX_PART:
        # a long id keeps a readable head and a hash of the whole, so distinct ids stay distinct
        cleaned = (
            cleaned[: _MAX_PART - 9]
            + "~"
            + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        )
    return cleaned


def seed_file_name(session_id: str | None, run_id: str, source_sha256: str | None) -> str:
    """`<session>--<run>--<first 8 hex of the source sha256>.seed.json`, every unsafe character as `_`."""
    session = _part(session_id or "session")
    run = _part(run_id)
    digest = _part((source_sha256 or "")[:8] or "nohash")
    name = f"{session}--{run}--{digest}.seed.json"
    # dot-only names would mean "here" or "up" to some tools; no path separator can survive _part
    return name if not name.startswith(".") else "_" + name[1:]


def seed_text(seed: dict[str, Any]) -> str:
    return pretty_json(seed)


def write_seed(directory: Path, name: str, seed: dict[str, Any]) -> tuple[Path, bool]:
    """Write one seed into `directory`; returns (path, written). An identical existing file is left as is."""
    if os.sep in name or (os.altsep and os.altsep in name) or name in (".", ".."):
        raise ValueError(f"seed file name {name!r} would leave the seeds directory")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    text = seed_text(seed)
    data = text.encode("utf-8")
    if target.exists() or target.is_symlink():
        if not target.is_symlink() and target.is_file() and target.read_bytes() == data:
            return target, False
        raise SeedClash(f"{target} already exists with different content; it is never overwritten")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{name[:40]}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        # link() fails if the name appeared meanwhile, so a concurrent writer's file is never replaced
        os.link(temporary, target)
    except FileExistsError as error:
        if target.read_bytes() == data:
            return target, False
        raise SeedClash(f"{target} already exists with different content; it is never overwritten") from error
    finally:
        Path(temporary).unlink(missing_ok=True)
    return target, True
