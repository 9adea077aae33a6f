"""verify_claude_code: one Claude Code session file, with its sub-agent files → the engine's SourceOutcome.

Read once, read-only (read/lines.py; every file gets a FileRead that the engine re-hashes), then: each
record's shape (check/shape.py), the links between records (check/links.py; what the session's files leave
unresolved is looked up in the project directory, read/elsewhere.py), and the turns with their open calls
and recoveries with their seeds (recover/turns.py, seed/; none when the history is corrupt). One Session
per session file; a sub-agent file whose session file is gone is verified as a source of its own (its
session is the parent's id it carries)."""

from __future__ import annotations

import os
import re
from typing import Final

from sessaudit.formats.claude_code.check.links import check_links
from sessaudit.formats.claude_code.check.shape import check_shape
from sessaudit.formats.claude_code.read.elsewhere import Elsewhere
from sessaudit.formats.claude_code.read.layout import AGENT_FILE, session_stem, subagent_files
from sessaudit.formats.claude_code.read.lines import TranscriptFile, read_transcript
from sessaudit.formats.claude_code.recover.turns import runs_of
from sessaudit.formats.claude_code.seed.seeding import Seeding
from sessaudit.model import Finding, Location, SeedSource, Session
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome, VerifyOptions, source_sha256
from sessaudit.rules import finding, verdict_of
from sessaudit.verdicts import Verdict, worst
from sessaudit.withheld import first_corrupting, withheld_reason

FORMAT: Final = "claude-code"
SEMVER: Final = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)")
RESUME_REFUSES: Final = (
    "Claude Code's resume skips a corrupt line or fails on it, and the API refuses a history whose calls and "
    "results do not pair (spec §2, §8)"
)


def verify_claude_code(path: str, real_path: str, options: VerifyOptions = DEFAULT_OPTIONS) -> SourceOutcome:
    """Verify the session file `real_path` (reported as `path`) and its sub-agent files; nothing is
    written or locked."""
    limits = options.limits
    kind = "subagent" if AGENT_FILE.fullmatch(os.path.basename(real_path)) else "session"
    findings: list[Finding] = []
    try:
        main = read_transcript(path, real_path, kind, limits)
    except OSError as error:
        problem = finding("SA001", f"cannot open {path}: {error.strerror or error}", path=path)
        return SourceOutcome(FORMAT, None, [], findings=[problem])
    files: list[TranscriptFile] = [main]
    for agent in subagent_files(real_path) if kind == "session" else []:
        shown = os.path.join(os.path.dirname(path), os.path.relpath(agent, os.path.dirname(real_path)))
        try:
            files.append(read_transcript(shown, agent, "subagent", limits))
        except OSError as error:
            findings.append(finding("SA001", f"cannot open {shown}: {error.strerror or error}", path=shown))
    session_id = session_stem(real_path) or _first_session_id(main)
    for file in files:
        findings += file.findings
        for record in file.records:
            findings += check_shape(record)
    elsewhere = Elsewhere(real_path, [file.real_path for file in files], limits.max_file_bytes)
    links = check_links(files, session_id or "", elsewhere)
    findings += links.findings
    version = _newest_version(files)
    source = SeedSource(
        path=path, format=FORMAT, format_version=version, sha256=source_sha256([file.read for file in files])
    )
    first = first_corrupting(findings)  # the open-work findings to come never corrupt
    seeding = Seeding(
        source,
        fork_run=options.fork_run,
        fork_sequence=options.fork_sequence,
        withheld=withheld_reason(first, native=RESUME_REFUSES) if first is not None else None,
    )
    runs = []
    for file in files:
        file_runs, open_work = runs_of(file, links, session_id=session_id or "", seeding=seeding)
        runs += file_runs
        findings += open_work
    findings = sorted((_in_session(item, session_id) for item in findings), key=Finding.sort_key)
    recovering = any(run.recovery is not None for run in runs)
    session = Session(
        session_id=session_id,
        verdict=worst(verdict_of(findings), Verdict.NEEDS_RECOVERY if recovering else None),
        facts=sum(len(file.records) for file in files),
        last_seq=None,
        torn_tail_bytes=sum(file.torn_tail_bytes for file in files),
        runs=runs,
    )
    return SourceOutcome(
        format=FORMAT,
        format_version=version,
        files=[file.read for file in files],
        sessions=[session],
        findings=findings,
    )


def _first_session_id(file: TranscriptFile) -> str | None:
    for record in file.records:
        sid = record.value.get("sessionId")
        if isinstance(sid, str):
            return sid
    return None


def _newest_version(files: list[TranscriptFile]) -> str | None:
    """The newest Claude Code `version` the session's lines carry (the format version of this source)."""
    best: tuple[tuple[int, ...], str] | None = None
    for file in files:
        for record in file.records:
            version = record.value.get("version")
            found = SEMVER.match(version) if isinstance(version, str) else None
            if found is not None and isinstance(version, str):
                key = tuple(int(part) for part in found.groups())
                if best is None or key > best[0]:
                    best = (key, version)
    return best[1] if best is not None else None


def _in_session(item: Finding, session_id: str | None) -> Finding:
    if session_id is None or item.location.session_id is not None or item.rule == "SA001":
        return item
    location = Location(**{**item.location.model_dump(), "session_id": session_id})
    return item.model_copy(update={"location": location})
