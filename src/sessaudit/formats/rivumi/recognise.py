"""What makes a directory a Rivumi run directory (CONTRACT §1), decided from a few bytes of its records."""

from __future__ import annotations

import os
from typing import Final

from sessaudit.evidence import read_prefix

SNIFF_BYTES: Final = 64 * 1024
RECORDS: Final = ("events.jsonl", "session.json")
COMPANIONS: Final = ("request.json", ".writer.lock", "workspace")


def rivumi_run_directory(real_path: str) -> bool:
    """A directory with `session.json` holding `schema_version`, or an `events.jsonl` of events (CONTRACT §1);
    also, leniently, one whose `session.json` or `events.jsonl` is damaged beyond that test (zero-filled by a
    power loss, unreadable, a symbolic link) but which holds both of them, or one of them and a run's
    companions (`request.json`, `.writer.lock` or `workspace/`): a damaged run is verified and its damage
    reported, never walked into and skipped."""
    manifest = os.path.join(real_path, "session.json")
    events = os.path.join(real_path, "events.jsonl")
    if b'"schema_version"' in _prefix_or_empty(manifest):
        return True
    first_line = _prefix_or_empty(events).split(b"\n", 1)[0]
    if all(key in first_line for key in (b'"event_type"', b'"run_id"', b'"sequence"')):
        return True
    records = sum(os.path.lexists(os.path.join(real_path, name)) for name in RECORDS)
    return records == len(RECORDS) or (
        records > 0 and any(os.path.lexists(os.path.join(real_path, name)) for name in COMPANIONS)
    )


def _prefix_or_empty(real_path: str) -> bytes:
    """The first bytes of a regular file, or b"" when it is absent, not a regular file or unreadable (the
    Rivumi verifier reports each of those on its own)."""
    try:
        return read_prefix(real_path, SNIFF_BYTES)
    except OSError:
        return b""
