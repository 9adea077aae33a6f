"""The outcome of the v2 pass at the end of a file: end-of-file findings, the runs with their recovery, the
session and the SourceOutcome."""

from __future__ import annotations

from typing import BinaryIO, Final

from sessaudit.formats.tiny_agent.check.header import HeaderOutcome
from sessaudit.formats.tiny_agent.check.observations import Observations
from sessaudit.formats.tiny_agent.check.reducer import Reducer
from sessaudit.formats.tiny_agent.recover.conditions import build_runs
from sessaudit.formats.tiny_agent.recover.recovery import complete_runs, corrupt_reason
from sessaudit.formats.tiny_agent.v2.precedence import Precedence
from sessaudit.framing import LineReader
from sessaudit.limits import TOO_MANY_FINDINGS, too_many_findings_message
from sessaudit.model import Finding, SeedSource, Session, Usage
from sessaudit.plugin import FileRead, SourceOutcome, VerifyOptions
from sessaudit.rules import finding, verdict_of
from sessaudit.verdicts import Verdict

FORMAT: Final = "tiny-agent"


def session_outcome(
    *,
    path: str,
    real_path: str,
    stream: BinaryIO,
    reader: LineReader,
    header: HeaderOutcome,
    findings: list[Finding],
    encoding_only: bool,
    capped_at: int | None,
    options: VerifyOptions,
    reducer: Reducer,
    precedence: Precedence,
    observations: Observations,
    facts: int,
    last_seq: int | None,
    last_offset: int,
) -> SourceOutcome:
    """What the pass found, once every line is read; `findings` (the pass's own list) is extended and
    sorted. `encoding_only`: the header was unsupported, so the lines after it were only scanned."""
    committed = reader.line_count > 0
    if not committed:
        findings.append(
            finding(
                "SA101",
                f"the file has no LF ({reader.bytes_read} bytes): the header line was never committed",
                path=path,
                line=1,
                byte_offset=0,
                evidence={"bytes": reader.bytes_read},
            )
        )
    elif not encoding_only:
        if reader.torn_tail_bytes:
            findings.append(
                finding(
                    "SA109",
                    f"{reader.torn_tail_bytes} byte(s) after the last LF were never committed; "
                    f"tiny-agent truncates the file to {reader.repaired_length} bytes",
                    path=path,
                    session_id=header.session_id,
                    line=reader.line_count + 1,
                    byte_offset=reader.torn_tail_offset,
                    evidence={
                        "torn_tail_bytes": reader.torn_tail_bytes,
                        "repaired_length": reader.repaired_length,
                    },
                )
            )
        if reader.has_bom:
            findings.append(
                finding(
                    "SA110",
                    "the file starts with a UTF-8 byte order mark: tiny-agent's TypeScript reducer "
                    "strips it, its Python reducer rejects the file (MALFORMED_JSON, line 1)",
                    path=path,
                    session_id=header.session_id,
                    line=1,
                    byte_offset=0,
                )
            )
    if capped_at is not None:
        findings.append(
            finding(
                TOO_MANY_FINDINGS,
                too_many_findings_message(options.limits.max_findings, capped_at),
                path=path,
                session_id=header.session_id,
                line=capped_at,
                evidence={"max_findings": options.limits.max_findings},
            )
        )
    current = reducer.current
    native = precedence.answer(
        committed, reader.repaired_length, current.kind if current is not None else "idle"
    )
    corrupt = verdict_of(findings) is Verdict.CORRUPT
    runs, open_findings = build_runs(
        reducer,
        path=path,
        session_id=header.session_id,
        corrupt=corrupt,
        last_offset=last_offset,
    )
    if not encoding_only:
        runs, plan_findings = complete_runs(
            runs,
            reducer,
            stream=stream,
            committed=reader.repaired_length,
            source=SeedSource(path=path, format=FORMAT, format_version="2", sha256=reader.sha256),
            session_id=header.session_id,
            options=options,
            withheld=corrupt_reason(findings, native, reducer) if corrupt else None,
        )
        findings.extend(open_findings)
        findings.extend(plan_findings)
        findings.extend(observations.findings())
    open_work = any(run.recovery is not None for run in runs) and not encoding_only
    verdict = verdict_of(findings, open_work=open_work)
    usage = reducer.usage
    session = Session(
        session_id=header.session_id,
        verdict=verdict,
        facts=facts if not encoding_only else max(reader.line_count - 1, 0),
        last_seq=last_seq if not encoding_only else (reader.line_count if reader.line_count > 1 else None),
        repaired_length=reader.repaired_length if committed else None,
        torn_tail_bytes=reader.torn_tail_bytes if committed else 0,
        usage=Usage.of(
            input=usage["input"],
            output=usage["output"],
            cache_read=usage["cacheRead"],
            cache_write=usage["cacheWrite"],
        ),
        runs=runs if not encoding_only else [],
    )
    findings.sort(key=Finding.sort_key)
    return SourceOutcome(
        format=FORMAT,
        format_version=header.format_version,
        files=[FileRead(path, real_path, reader.bytes_read, reader.sha256, opened_bytes=reader.size)],
        sessions=[session],
        findings=findings,
        native={"reducer": native},
    )
