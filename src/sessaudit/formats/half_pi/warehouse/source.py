"""A Half-Pi store → warehouse rows: a fresh snapshot, proved to be the files that were verified, without
the rows a corrupting finding names."""

from __future__ import annotations

from sessaudit.formats.half_pi.read.snapshot import SnapshotOptions, SnapshotUnavailable, open_snapshot
from sessaudit.formats.half_pi.warehouse.extraction import extract_store
from sessaudit.model import Finding, Source
from sessaudit.warehouse.drafts import Extraction
from sessaudit.warehouse.extract import EvidenceChanged, cutting


def extract_source(
    source: Source,
    real_path: str,
    findings: list[Finding],
    source_id: str,
    into: Extraction,
    max_line_bytes: int,
) -> None:
    verified = {item.path: item.sha256 for item in source.files}
    excluded: set[tuple[str, int]] = set()
    for item in findings:
        table, rowid = item.location.table, item.location.rowid
        if cutting(item) and table is not None and rowid is not None:
            excluded.add((table, rowid))
    try:
        with open_snapshot(real_path, SnapshotOptions(integrity_check=False)) as snapshot:
            copied = {source.path + item.suffix: item.sha256 for item in snapshot.files}
            if copied != verified:
                raise EvidenceChanged(f"{real_path} changed after it was verified")
            extract_store(snapshot.connection, source_id, excluded, into)
    except SnapshotUnavailable as error:
        raise EvidenceChanged(f"{real_path} can no longer be copied: {error}") from None
