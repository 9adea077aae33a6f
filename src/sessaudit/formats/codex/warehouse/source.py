"""A Codex source → warehouse rows (WarehousePart.extract): the rollout's verified bytes, cut at its first
corrupting line, and for a fork or a sub-agent the verified bytes of the parent rollout the verifier
matched its copy with (`native["copied_from"]["parent"]`), so that the copy is found exactly as the
verifier found it and the usage rows are the report's ledger."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from sessaudit.formats.codex.check.copies import segments_of
from sessaudit.formats.codex.read.lines import RolloutFile
from sessaudit.formats.codex.warehouse.extract import LoadedRollout, extract_rollout
from sessaudit.formats.codex.warehouse.lines import rollout_of, split_lines
from sessaudit.model import Finding, Source
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import cut_line, read_verified

COPIED_FROM: Final = "copied_from"  # the source's `native` key the verifier names the copy's parent under


def real_path_of(shown: str, source: Source, real_path: str) -> str:
    """Where a file named in the source's report lies: the source's own file is `real_path`; another (the
    parent rollout) at the same place relative to it as its reported path is to the source's."""
    if shown == source.path:
        return real_path
    relative = os.path.relpath(shown, os.path.dirname(source.path))
    return os.path.normpath(os.path.join(os.path.dirname(real_path), relative))


def parents_of(native: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The parent rollouts the verifier read to match the copy: [{path, bytes, sha256}]."""
    copied = native.get(COPIED_FROM)
    found = copied.get("parent") if isinstance(copied, Mapping) else None
    return [item for item in found if isinstance(item, Mapping)] if isinstance(found, list) else []


def parent_finder(
    source: Source, real_path: str, max_line_bytes: int
) -> Callable[[str, str], RolloutFile | None]:
    """segments_of's `find_parent`: the first parent rollout the report names, read from its verified
    bytes (EvidenceChanged when they changed since), or None when it names none (the copy was inferred)."""

    def find(_real_path: str, _parent_id: str) -> RolloutFile | None:
        for item in parents_of(source.native):
            shown = str(item["path"])
            where = real_path_of(shown, source, real_path)
            data = read_verified(where, int(item["bytes"]), str(item["sha256"]))
            return rollout_of(shown, where, data, split_lines(shown, data, max_line_bytes=max_line_bytes))
        return None

    return find


def extract_source(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction,
    max_line_bytes: int,
) -> None:
    """Add the rows of the rollout `source` (found at `real_path`) to `into`."""
    session_id = source.sessions[0].session_id if source.sessions else None
    for evidence in source.files:
        data = read_verified(real_path_of(evidence.path, source, real_path), evidence.bytes, evidence.sha256)
        cut = cut_line(findings, evidence.path)
        if cut is not None:
            into.complete = False
        lines = split_lines(evidence.path, data, cut, max_line_bytes)
        file = rollout_of(evidence.path, real_path, data, lines)
        segments = segments_of(file, parent_finder(source, real_path, max_line_bytes))
        extract_rollout(LoadedRollout(evidence.path, lines, segments), source_id, session_id, into)
