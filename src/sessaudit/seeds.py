"""Seeds across formats: write open runs' seeds into `--seeds-dir`, and pick them for `sessaudit seed`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sessaudit.model import Finding, Report, Seed
from sessaudit.seedfiles import seed_file_name, write_seed
from sessaudit.withheld import cited


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


def refused_sources(report: Report, corrupt: dict[str, Finding], run: str | None) -> list[str]:
    """Why `sessaudit seed` prints nothing: one line for each corrupt source (engine's `corrupt`: its
    first corrupting finding) it was asked for, with `--run` the one holding that run, else every one."""
    asked = [
        source.path
        for source in report.sources
        if source.path in corrupt
        and (run is None or any(item.run_id == run for session in source.sessions for item in session.runs))
    ]
    return [
        f"no seed from {path}: the history is corrupt; first corrupting finding: {cited(corrupt[path])}"
        for path in asked
    ]


def seed_document(seed: Seed) -> dict[str, object]:
    document: dict[str, object] = seed.model_dump(mode="json", by_alias=True)
    return document


def write_report_seeds(report: Report, directory: Path) -> list[WrittenSeed]:
    """Write one file per seed; raises SeedClash (before writing the clashing file) on a different file.

    Two copies of the same log in one walk (a backup beside the original) give the same name, since the
    name holds the session, the run and the bytes' digest: their seeds differ only in `source.path`, so
    the first copy's file stands for both rather than making the audit fail."""
    written: list[WrittenSeed] = []
    named: dict[str, tuple[Path, dict[str, object]]] = {}
    for source_path, run_id, seed in report_seeds(report):
        name = seed_file_name(seed.session_id, run_id, seed.source.sha256)
        document = seed_document(seed)
        earlier = named.get(name)
        if earlier is not None and _same_but_path(earlier[1], document):
            written.append(WrittenSeed(source_path, run_id, earlier[0], False))
            continue
        path, fresh = write_seed(directory, name, document)
        named[name] = (path, document)
        written.append(WrittenSeed(source_path, run_id, path, fresh))
    return written


def _same_but_path(first: dict[str, object], second: dict[str, object]) -> bool:
    def without_path(document: dict[str, object]) -> dict[str, object]:
        source = document.get("source")
        if isinstance(source, dict):
            return {**document, "source": {**source, "path": None}}
        return document

    return without_path(first) == without_path(second)
