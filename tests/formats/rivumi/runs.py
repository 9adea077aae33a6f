"""Editing built run directories the way a crash, a foreign tool or a tamperer would (tests only)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sessaudit.formats.rivumi.spec.encoding import dump_sorted


def manifest_of(run_dir: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((run_dir / "session.json").read_text(encoding="utf-8"))
    return document


def set_manifest(run_dir: Path, **fields: Any) -> None:
    (run_dir / "session.json").write_text(dump_sorted({**manifest_of(run_dir), **fields}), encoding="utf-8")


def append(run_dir: Path, event_type: str, data: dict[str, Any], **manifest: Any) -> None:
    """One more event after the last, saved into the manifest first as Rivumi's writer does."""
    lines = (run_dir / "events.jsonl").read_bytes().splitlines()
    last = json.loads(lines[-1])
    event = {**last, "event_type": event_type, "data": data, "sequence": last["sequence"] + 1}
    event["event_id"] = f"{last['sequence'] + 1:032x}"
    set_manifest(run_dir, last_event_sequence=event["sequence"], **manifest)
    with (run_dir / "events.jsonl").open("ab") as stream:
        stream.write((dump_sorted(event) + "\n").encode("utf-8"))


def edit_lines(run_dir: Path, edit: Callable[[list[bytes]], list[bytes]]) -> None:
    """Rewrite events.jsonl from its LF-terminated lines (each kept with its LF)."""
    path = run_dir / "events.jsonl"
    path.write_bytes(b"".join(edit(path.read_bytes().splitlines(keepends=True))))


def edit_event(run_dir: Path, index: int, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Replace the event on line `index + 1` by `change(event)`, written as Rivumi writes a line."""

    def edit(lines: list[bytes]) -> list[bytes]:
        lines[index] = (dump_sorted(change(json.loads(lines[index]))) + "\n").encode("utf-8")
        return lines

    edit_lines(run_dir, edit)
