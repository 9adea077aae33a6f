"""verify_claude_code: one Claude Code session file, with its sub-agent files → the engine's SourceOutcome.

Read once, read-only (read/lines.py; every file gets a FileRead that the engine re-hashes), then: each
record's shape (check/shape.py), the links between records (check/links.py; what the session's files leave
unresolved is looked up in the project directory, read/elsewhere.py), and the turns with their open calls
and recoveries with their seeds (recover/turns.py, seed/; none when the history is corrupt), and the
session's usage from its exact ledger (usage/ledger.py: one response counted once, where it was made;
records copied from the sessions it was resumed from are recognised and left out, those files named in the
source's `native["resumed_from"]` for the warehouse). One Session per session file; a sub-agent file whose
session file is gone is verified as a source of its own (its session is the parent's id it carries)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from typing import Any, Final

from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.formats.claude_code.check.agents import check_agents
from sessaudit.formats.claude_code.check.links import check_links
from sessaudit.formats.claude_code.check.shape import check_shape
from sessaudit.formats.claude_code.read.elsewhere import Elsewhere
from sessaudit.formats.claude_code.read.layout import AGENT_FILE, session_stem, subagent_files
from sessaudit.formats.claude_code.read.lines import TooLarge, TranscriptFile, read_transcript
from sessaudit.formats.claude_code.recover.current import tool_table
from sessaudit.formats.claude_code.recover.turns import runs_of
from sessaudit.formats.claude_code.usage import ledger
from sessaudit.limits import Limits
from sessaudit.model import Finding, SeedSource, Session, Usage
from sessaudit.plugin import DEFAULT_OPTIONS, FileRead, SourceOutcome, VerifyOptions, source_sha256
from sessaudit.rules import finding, in_session, verdict_of
from sessaudit.turnseeds import Seeding
from sessaudit.verdicts import Verdict, worst
from sessaudit.withheld import first_corrupting, withheld_reason

FORMAT: Final = "claude-code"
META_BYTES: Final = 1024 * 1024  # a meta sidecar holds a few ids
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
    except TooLarge as refused:
        return SourceOutcome(FORMAT, None, [], findings=[refused.finding])
    files: list[TranscriptFile] = [main]
    for agent in subagent_files(real_path) if kind == "session" else []:
        shown = os.path.join(os.path.dirname(path), os.path.relpath(agent, os.path.dirname(real_path)))
        try:
            files.append(read_transcript(shown, agent, "subagent", limits))
        except OSError as error:
            findings.append(finding("SA001", f"cannot open {shown}: {error.strerror or error}", path=shown))
        except TooLarge as refused:
            findings.append(refused.finding)
    session_id = session_stem(real_path) or _first_session_id(main)
    for file in files:
        findings += file.findings
        for record in file.records:
            findings += check_shape(record)
    metas, meta_reads = _metas(files)
    findings += check_agents(files, metas)
    elsewhere = Elsewhere(real_path, [file.real_path for file in files], limits.max_file_bytes)
    links = check_links(files, session_id or "", elsewhere)
    findings += links.findings
    version = _newest_version(files)
    source = SeedSource(
        path=path,
        format=FORMAT,
        format_version=version,
        sha256=source_sha256([file.read for file in files] + meta_reads),
    )
    first = first_corrupting(findings)  # the open-work findings to come never corrupt
    seeding = Seeding(
        source,
        fork_run=options.fork_run,
        fork_sequence=options.fork_sequence,
        withheld=withheld_reason(first, native=RESUME_REFUSES) if first is not None else None,
    )
    runs = []
    tools = tool_table(options, session_id)  # `--current` for the tools it names, else spec/tools.py's
    for file in files:
        file_runs, open_work = runs_of(file, links, session_id=session_id or "", tools=tools, seeding=seeding)
        runs += file_runs
        findings += open_work
    findings = sorted((in_session(item, session_id) for item in findings), key=Finding.sort_key)
    before = _resumed_from(path, real_path, files, elsewhere, limits)
    made = ledger.build_ledger(
        [_ledger_file(file) for file in files], [_ledger_file(file) for file in before]
    )
    tokens = made.totals()
    recovering = any(run.recovery is not None for run in runs)
    session = Session(
        session_id=session_id,
        verdict=worst(verdict_of(findings), Verdict.NEEDS_RECOVERY if recovering else None),
        facts=sum(len(file.records) for file in files),
        last_seq=None,
        torn_tail_bytes=sum(file.torn_tail_bytes for file in files),
        runs=runs,
        usage=Usage.of(
            input=tokens.input_tokens,
            output=tokens.output_tokens,
            cache_read=tokens.cache_read_input_tokens,
            cache_write=tokens.cache_creation_input_tokens,
        ),
    )
    native: dict[str, object] = {}
    if before:
        native[ledger.RESUMED_FROM] = [
            {
                "path": file.path,
                "bytes": file.read.bytes,
                "sha256": file.read.sha256,
            }
            for file in before
        ]
    return SourceOutcome(
        format=FORMAT,
        format_version=version,
        files=[file.read for file in files] + meta_reads,
        sessions=[session],
        findings=findings,
        native=native,
    )


def _metas(files: list[TranscriptFile]) -> tuple[dict[str, Mapping[str, Any] | None], list[FileRead]]:
    """The meta sidecars (`agent-<id>.meta.json`, spec §1.4) of the nested sub-agent files, read-only and
    up to META_BYTES: decoded (None when absent, too large or not a JSON object) and as evidence."""
    metas: dict[str, Mapping[str, Any] | None] = {}
    reads: list[FileRead] = []
    for file in files[1:]:
        real = file.real_path.removesuffix(".jsonl") + ".meta.json"
        metas[file.path] = None
        try:
            stream, size = open_evidence(real)
        except OSError:
            continue
        with stream:
            if size > META_BYTES:
                continue
            try:
                data = b"".join(read_chunks(stream, size))
            except OSError:
                continue
        shown = file.path.removesuffix(".jsonl") + ".meta.json"
        reads.append(FileRead(shown, real, len(data), hashlib.sha256(data).hexdigest(), opened_bytes=size))
        try:
            value = json.loads(data)
        except ValueError:
            continue
        metas[file.path] = value if isinstance(value, dict) else None
    return metas, reads


def _ledger_file(file: TranscriptFile) -> ledger.TranscriptFile:
    records = [(record.line, record.value) for record in file.records]
    return ledger.TranscriptFile(file.path, records, ledger.agent_of(file.path))


def _latest(file: TranscriptFile) -> str:
    stamps = [stamp for record in file.records if isinstance(stamp := record.value.get("timestamp"), str)]
    return max(stamps, default="")


def _resumed_from(
    path: str, real_path: str, files: list[TranscriptFile], elsewhere: Elsewhere, limits: Limits
) -> list[TranscriptFile]:
    """The project's files this session was resumed from: those holding records with the uuids of its own
    (copies, spec §1.6) whose latest timestamp is earlier than the session file's (the later files are
    the sessions resumed from this one). Read read-only and leniently (their damage is their own
    sources' findings), to recognise the copies in the ledger."""
    own = {record.uuid for file in files for record in file.records if record.uuid is not None}
    latest = _latest(files[0])
    found: list[TranscriptFile] = []
    for other in elsewhere.sharing(own):
        shown = os.path.join(os.path.dirname(path), os.path.relpath(other, os.path.dirname(real_path)))
        kind = "subagent" if AGENT_FILE.fullmatch(os.path.basename(other)) else "session"
        try:
            read = read_transcript(shown, other, kind, limits)
        except (OSError, TooLarge):
            continue  # its own source's finding
        if _latest(read) < latest:
            found.append(read)
    return found


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
