"""One source's rows for every table: the report's source, sessions, runs and findings joined with what its
records gave (facts, the ledger, tool calls, run spans); every pending effect of an open run becomes a
tool call row, with the run's recovery condition."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

from sessaudit.model import Finding, PendingEffect, Run, Session, Source
from sessaudit.rules import find_rule
from sessaudit.warehouse.drafts import (
    NOT_STARTED,
    UNKNOWN,
    CallDraft,
    Extraction,
    SessionDetails,
    Span,
    call_row,
)
from sessaudit.warehouse.extract import warehouse_part
from sessaudit.warehouse.rows import (
    Batch,
    FindingRow,
    RunRow,
    SessionRow,
    SourceRow,
    to_json,
)


@dataclass(frozen=True, slots=True)
class Stamp:
    """What every row of one load shares: the loading sessaudit and the moment (epoch µs, UTC)."""

    version: str
    loaded_at: int


def source_id_of(real_path: str) -> str:
    """The stable key of a source: 16 hex of the sha256 of its real path (the identity across loads)."""
    return hashlib.sha256(real_path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def source_batch(
    source: Source, real_path: str, findings: list[Finding], extraction: Extraction, stamp: Stamp
) -> Batch:
    source_id = source_id_of(real_path)
    _merge_pending_effects(source, extraction)
    bounds = extraction.bounds
    # those not spilled already
    batch = Batch(facts=extraction.facts, usage=extraction.usage, tool_calls=extraction.tool_calls)
    batch.sources.append(
        SourceRow(
            source_id,
            source.path,
            real_path,
            source.format,
            source.format_version,
            source.sha256,
            sum(item.bytes for item in source.files),
            to_json([item.model_dump() for item in source.files], sort_keys=False),
            source.evidence_unchanged,
            source.verdict.value,
            len(source.sessions),
            extraction.facts_loaded,
            extraction.complete,
            min((first for first, _ in bounds.values()), default=None),
            max((last for _, last in bounds.values()), default=None),
            to_json(source.native),
            stamp.version,
            stamp.loaded_at,
        )
    )
    # loaded facts per session, counted as the report counts `facts` (for some formats: message rows)
    part = warehouse_part(source.format)
    counted = extraction.messages if part is not None and part.counts_messages else extraction.counted
    for session in source.sessions:
        first, last = bounds.get(session.session_id, (None, None))
        batch.sessions.append(_session_row(source, source_id, session, extraction, counted, first, last))
        for run in session.runs:
            span = extraction.spans.get((session.session_id, run.run_id), Span())
            batch.runs.append(_run_row(source_id, session.session_id, run, span))
    batch.tool_calls.extend(call_row(source_id, draft) for draft in extraction.calls)
    batch.findings.extend(_finding_row(source_id, item) for item in findings)
    return batch


def _session_row(
    source: Source,
    source_id: str,
    session: Session,
    extraction: Extraction,
    counted: Counter[str | None],
    first: int | None,
    last: int | None,
) -> SessionRow:
    details = extraction.sessions.get(session.session_id, SessionDetails())
    usage = session.usage
    return SessionRow(
        source_id,
        session.session_id,
        source.format,
        source.format_version,
        session.verdict.value,
        session.facts,
        counted.get(session.session_id, 0),
        extraction.complete,
        session.last_seq,
        session.repaired_length,
        session.torn_tail_bytes,
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
        usage.input_total,
        len(session.runs),
        sum(1 for run in session.runs if run.state == "open"),
        first,
        last,
        details.provider,
        details.model,
        details.cwd,
        details.header,
        to_json(session.native),
    )


def _run_row(source_id: str, session_id: str | None, run: Run, span: Span) -> RunRow:
    recovery = run.recovery
    return RunRow(
        source_id,
        session_id,
        run.run_id,
        run.kind,
        run.state,
        recovery.condition if recovery else None,
        list(recovery.conditions) if recovery else None,
        recovery.seed_kind if recovery else None,
        len(recovery.pending_effects) if recovery else 0,
        list(recovery.assumes) if recovery else None,
        span.first_seq,
        span.last_seq,
        span.started_at,
        span.last_at,
        to_json(recovery.model_dump(mode="json", exclude={"seed"})) if recovery else None,
        to_json(recovery.seed.model_dump(mode="json", by_alias=True)) if recovery and recovery.seed else None,
    )


def _merge_pending_effects(source: Source, extraction: Extraction) -> None:
    """Mark each pending effect's call with its run's condition; one no loaded record names gets a row."""
    for session in source.sessions:
        for run in session.runs:
            if run.recovery is None:
                continue
            for effect in run.recovery.pending_effects:
                draft = _call_for(extraction.calls, session.session_id, run.run_id, effect)
                if draft is None:
                    draft = CallDraft(
                        session.session_id,
                        run.run_id,
                        effect.tool_call_id,
                        effect.tool_name,
                        status=NOT_STARTED if run.recovery.condition == "tool-not-started" else UNKNOWN,
                        intent_id=effect.intent_id,
                        arguments=to_json(effect.arguments, sort_keys=False),
                    )
                    extraction.calls.append(draft)
                draft.recovery_condition = run.recovery.condition
                draft.replay_policy = draft.replay_policy or effect.replay_policy
                draft.replay_key = draft.replay_key or effect.replay_key


def _call_for(
    calls: list[CallDraft], session_id: str | None, run_id: str, effect: PendingEffect
) -> CallDraft | None:
    """The latest call of this session with the effect's call id, preferring one of the same run."""
    matches = [
        draft
        for draft in calls
        if draft.session_id == session_id and draft.tool_call_id == effect.tool_call_id
    ]
    same_run = [draft for draft in matches if draft.run_id == run_id]
    chosen = same_run or matches
    return chosen[-1] if chosen else None


def _finding_row(source_id: str, item: Finding) -> FindingRow:
    rule = find_rule(item.rule)
    location = item.location
    return FindingRow(
        source_id,
        item.rule,
        item.name,
        item.severity.value,
        rule.verdict.value if rule is not None and rule.verdict is not None else None,
        item.message,
        location.path,
        location.session_id,
        location.line,
        location.byte_offset,
        location.seq,
        location.pointer,
        location.table,
        location.rowid,
        item.native_code,
        to_json(item.evidence),
    )
