"""Seeds across formats: write open runs' seeds into `--seeds-dir`, and pick them for `sessaudit seed`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sessaudit.model import Report, Seed
from sessaudit.seedfiles import seed_file_name, write_seed


@dataclass(frozen=True, slots=True)
class WrittenSeed:
    source: str
    run_id: str
    path: Path
    written: bool  # False: an identical file was already there


def report_seeds(report: Report) -> list[tuple[str, str, Seed]]:
    """(source path, run id, seed) for every run with a seed, in report order."""
    found: list[tuple[str, str, Seed]] = []
    for source in report.sources:
        for session in source.sessions:
            for run in session.runs:
                if run.recovery is not None and run.recovery.seed is not None:
                    found.append((source.path, run.run_id, run.recovery.seed))
    return found


def seed_document(seed: Seed) -> dict[str, object]:
    document: dict[str, object] = seed.model_dump(mode="json", by_alias=True)
    return document


def write_report_seeds(report: Report, directory: Path) -> list[WrittenSeed]:
    """Write one file per seed; raises SeedClash (before writing the clashing file) on a different file."""
    written: list[WrittenSeed] = []
    for source_path, run_id, seed in report_seeds(report):
        name = seed_file_name(seed.session_id, run_id, seed.source.sha256)
        path, fresh = write_seed(directory, name, seed_document(seed))
        written.append(WrittenSeed(source_path, run_id, path, fresh))
    return written
