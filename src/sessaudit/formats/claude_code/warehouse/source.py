"""A Claude Code source → warehouse rows: the verified bytes of each of its files, each cut at its first
corrupting line (WarehousePart.extract)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from sessaudit.formats.claude_code.usage.ledger import RESUMED_FROM, agent_of
from sessaudit.formats.claude_code.warehouse.extract import LoadedFile, extract_files
from sessaudit.formats.claude_code.warehouse.lines import split_lines
from sessaudit.model import Finding, Source
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import cut_line, read_verified


def real_path_of(path: str, source: Source, real_path: str) -> str:
    """Where a file of the source is: the source's own file is `real_path`; a companion lies at the same
    place relative to it as its displayed path does to the source's."""
    if path == source.path:
        return real_path
    return os.path.join(os.path.dirname(real_path), os.path.relpath(path, os.path.dirname(source.path)))


def _resumed_from(native: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    found = native.get(RESUMED_FROM)
    return [item for item in found if isinstance(item, Mapping)] if isinstance(found, list) else []


def extract_source(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction,
    max_line_bytes: int,
) -> None:
    """`max_line_bytes` is not needed: the verified bytes are read whole (as read_verified does) and a
    line beyond the verifier's limit is one of its corrupting findings, so it is cut already."""
    session_id = source.sessions[0].session_id if source.sessions else None
    files: list[LoadedFile] = []
    for evidence in source.files:
        if not evidence.path.endswith(".jsonl"):
            continue  # agent-<id>.meta.json sidecars hold no records
        data = read_verified(real_path_of(evidence.path, source, real_path), evidence.bytes, evidence.sha256)
        cut = cut_line(findings, evidence.path)
        if cut is not None:
            into.complete = False
        files.append(LoadedFile(evidence.path, split_lines(data, cut), agent_of(evidence.path)))
    before = [
        LoadedFile(
            str(item["path"]),
            split_lines(
                read_verified(
                    real_path_of(str(item["path"]), source, real_path),
                    int(item["bytes"]),
                    str(item["sha256"]),
                )
            ),
            agent_of(str(item["path"])),
        )
        for item in _resumed_from(source.native)
    ]
    extract_files(files, source_id, session_id, into, before)
