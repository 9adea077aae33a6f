"""A Rivumi run → warehouse rows: its verified events.jsonl bytes, cut at the first corrupting line."""

from __future__ import annotations

import os

from sessaudit.formats.rivumi.warehouse.extract import extract_events
from sessaudit.model import Finding, Source
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import cut_line, read_verified


def extract_source(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction,
    max_line_bytes: int,
) -> None:
    events_path = os.path.join(source.path, "events.jsonl")
    evidence = next((item for item in source.files if item.path == events_path), None)
    session_id = source.sessions[0].session_id
    if evidence is None:
        return
    data = read_verified(os.path.join(real_path, "events.jsonl"), evidence.bytes, evidence.sha256)
    cut = cut_line(findings, events_path)
    into.complete = cut is None
    extract_events(data, events_path, cut, source_id, session_id, into)
