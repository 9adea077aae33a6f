"""Reading what the Claude Code builders wrote, independently of the builder's own code."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _no_constants(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


@dataclass(frozen=True)
class Written:
    """One file: its complete lines as JSON objects, and its torn tail (the bytes after the last newline)."""

    path: str
    records: list[dict[str, Any]]
    tail: bytes


def read_transcript(root: Path, path: str) -> Written:
    """Strict UTF-8 JSONL: every newline-terminated line decodes and parses to an object; no blank line."""
    data = (root / path).read_bytes()
    *complete, tail = data.split(b"\n")
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(complete, 1):
        assert raw, f"{path}:{number}: blank line"
        assert not raw.endswith(b"\r"), f"{path}:{number}: CR"
        record = json.loads(raw.decode("utf-8", errors="strict"), parse_constant=_no_constants)
        assert isinstance(record, dict), f"{path}:{number}: not an object"
        records.append(record)
    return Written(path, records, tail)


def scenario_files(root: Path, entry: dict[str, Any]) -> dict[str, Written]:
    return {item["path"]: read_transcript(root, item["path"]) for item in entry["files"]}
