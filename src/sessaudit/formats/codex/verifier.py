"""verify_codex: one Codex rollout → the engine's SourceOutcome.

Read once, read-only (read/lines.py; the engine re-hashes the file), then: each line's shape
(check/shape.py), which lines are the session's own and which were copied from a parent (check/copies.py:
the parent's rollout, found in the same Codex home, is read read-only to match the copy and named in
`native["copied_from"]`), the links between lines (check/links.py), the turns with their open calls and
recoveries with their seeds (recover/turns.py, seed/; none when the history is corrupt), and the session's
usage from its exact ledger (usage/ledger.py: the growth of the cumulative totals, repeats and copies
counted once). One Session per rollout: a resumed session appends to its own file (spec §1.3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sessaudit.formats.codex.check.copies import Segments, parent_path_shown, segments_of
from sessaudit.formats.codex.check.links import check_links
from sessaudit.formats.codex.check.shape import check_shape
from sessaudit.formats.codex.read.layout import Rollouts, name_parts
from sessaudit.formats.codex.read.lines import RolloutFile, TooLarge, read_rollout
from sessaudit.formats.codex.recover.current import tool_table
from sessaudit.formats.codex.recover.turns import runs_of
from sessaudit.formats.codex.usage.ledger import Ledger, build_ledger
from sessaudit.limits import Limits
from sessaudit.model import Finding, SeedSource, Session, Usage
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome, VerifyOptions
from sessaudit.rules import finding, in_session, verdict_of
from sessaudit.turnseeds import Seeding
from sessaudit.verdicts import Verdict, worst
from sessaudit.withheld import first_corrupting, withheld_reason

FORMAT: Final = "codex"
COPIED_FROM: Final = "copied_from"
LEDGER: Final = "ledger"
RESUME_LOSES: Final = (
    "Codex skips a line it cannot read when it resumes, losing its item, and answers a call whose output "
    'was lost with "aborted" (spec §2, §7)'
)


def cli_version(file: RolloutFile, segments: Segments) -> str | None:
    """The `cli_version` of the rollout's own session_meta (the format version of this source)."""
    if segments.meta is None:
        return None
    version = file.records[segments.meta].payload.get("cli_version")
    return version if isinstance(version, str) and version else None


def parent_reader(path: str, limits: Limits) -> Callable[[str, str], RolloutFile | None]:
    """How a fork's parent rollout is read: found by id in the Codex home, read read-only and leniently
    (its damage is its own source's findings), reported relative to `path`."""

    def read(real_path: str, parent_id: str) -> RolloutFile | None:
        for candidate in Rollouts.find(real_path, parent_id):
            try:
                return read_rollout(parent_path_shown(path, real_path, candidate), candidate, limits)
            except (OSError, TooLarge):
                continue
        return None

    return read


def verify_codex(path: str, real_path: str, options: VerifyOptions = DEFAULT_OPTIONS) -> SourceOutcome:
    """Verify the rollout `real_path` (reported as `path`); nothing is written or locked."""
    limits = options.limits
    try:
        file = read_rollout(path, real_path, limits)
    except OSError as error:
        problem = finding("SA001", f"cannot open {path}: {error.strerror or error}", path=path)
        return SourceOutcome(FORMAT, None, [], findings=[problem])
    except TooLarge as refused:
        return SourceOutcome(FORMAT, None, [], findings=[refused.finding])
    segments = segments_of(file, parent_reader(path, limits))
    version = cli_version(file, segments)
    findings: list[Finding] = list(file.findings) + segments.findings
    for record in file.records:
        findings += check_shape(record, version)
    links = check_links(file, segments)
    findings += links.findings
    named = name_parts(real_path)
    session_id = segments.session_id or (named[1] if named is not None else None)
    source = SeedSource(path=path, format=FORMAT, format_version=version, sha256=file.read.sha256)
    first = first_corrupting(findings)  # the open-work findings to come never corrupt
    seeding = Seeding(
        source,
        fork_run=options.fork_run,
        fork_sequence=options.fork_sequence,
        withheld=withheld_reason(first, native=RESUME_LOSES) if first is not None else None,
    )
    tools = tool_table(options, session_id)
    runs, open_work = runs_of(
        file, segments, links, session_id=session_id or "", tools=tools, seeding=seeding
    )
    findings = sorted((in_session(item, session_id) for item in findings + open_work), key=Finding.sort_key)
    ledger = build_ledger(file.records, segments)
    totals = ledger.totals()
    recovering = any(run.recovery is not None for run in runs)
    session = Session(
        session_id=session_id,
        verdict=worst(verdict_of(findings), Verdict.NEEDS_RECOVERY if recovering else None),
        facts=len(file.records),
        last_seq=None,
        torn_tail_bytes=file.torn_tail_bytes,
        runs=runs,
        usage=Usage.of(
            input=totals["input"], output=totals["output"], cache_read=totals["cache_read"], cache_write=0
        ),
        native={LEDGER: _ledger_native(ledger)},
    )
    native: dict[str, Any] = {}
    copy = segments.copy
    if copy is not None:
        native[COPIED_FROM] = {
            "parent_id": copy.parent_id,
            "lines": [file.records[copy.start].line, file.records[copy.end].line],
            "matched": copy.method,
            "parent": [
                {"path": read.path, "bytes": read.bytes, "sha256": read.sha256}
                for read in segments.parent_reads
            ],
        }
    return SourceOutcome(
        format=FORMAT,
        format_version=version,
        files=[file.read],
        sessions=[session],
        findings=findings,
        native=native,
    )


def _ledger_native(ledger: Ledger) -> dict[str, int]:
    """How the ledger counted: model calls, reasoning tokens (inside output), token_counts skipped."""
    totals = ledger.totals()
    return {
        "calls": totals["calls"],
        "reasoning_output_tokens": totals["reasoning"],
        "repeated_token_counts": ledger.repeated,
        "copied_token_counts": ledger.copied,
        "rebased_totals": ledger.rebased,
    }
