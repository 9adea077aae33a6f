"""The sessaudit seed (CONTRACT §5) of an open Claude Code turn.

The fork point is the turn's last record with a uuid (`seq` null: Claude Code numbers nothing), or the
record on line `--sequence N` of the turn's file (1-based line numbers). `context.messages` are the user
and assistant lines of the chain at the fork point (seed/chain.py), each as {uuid, type, role, content};
`next_facts` the user lines Claude Code needs appended before it can send the history again: one per
response with calls the chain leaves unanswered, each result an error saying the outcome is unknown and
the tool was not run again, then Claude Code's interruption marker (what `seed --native` writes, with
`uuid` and `timestamp` left to assign; the marker's `parentUuid` names the uuid the last result line gets).
Claude Code has no seed of its own: `native` and `native_text` stay null."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.claude_code.read.lines import Record
from sessaudit.formats.claude_code.seed.chain import Chain, chain_at, dangling
from sessaudit.formats.claude_code.seed.repair import marker_line, repair_line
from sessaudit.model import ForkPoint, Recovery, Seed, SeedContext, SeedSource
from sessaudit.turnseeds import Seeding, turn_replay, unknown_effect_warnings

UUID: Final = {"$assign": "uuid"}
TIMESTAMP: Final = {"$assign": "timestamp"}


def fork_record(turn: list[Record], sequence: int | None) -> Record | None:
    """The turn's last record with a uuid, or the one on line `sequence` (None: no such record)."""
    with_uuid = [record for record in turn if record.uuid is not None]
    if sequence is None:
        return with_uuid[-1] if with_uuid else None
    return next((record for record in with_uuid if record.line == sequence), None)


def seeded(
    recovery: Recovery,
    records: list[Record],
    turn: list[Record],
    run_id: str,
    session_id: str,
    seeding: Seeding,
) -> Recovery:
    """`recovery` with its seed, or withheld (corrupt history), or with a warning why there is none."""
    if seeding.withheld is not None:
        return recovery.withheld(seeding.withheld)
    sequence = seeding.fork_sequence if seeding.fork_run in (None, run_id) else None
    fork = fork_record(turn, sequence)
    if fork is None:
        where = (
            f"line {sequence} holds no record with a uuid" if sequence is not None else "no record has a uuid"
        )
        warning = f"no seed at the chosen fork point: in turn {run_id}, {where}"
        return recovery.model_copy(update={"warnings": [*recovery.warnings, warning]})
    seed = turn_seed(recovery, records, fork, run_id, session_id, seeding.source)
    return recovery.model_copy(update={"seed": seed})


def turn_seed(
    recovery: Recovery, records: list[Record], fork: Record, run_id: str, session_id: str, source: SeedSource
) -> Seed:
    chain = chain_at(records, fork)
    seed_kind = recovery.offered_seed_kind()
    next_facts: list[Any] = [repair_line(group, uuid=UUID, timestamp=TIMESTAMP) for group in dangling(chain)]
    if next_facts:
        parent = {**UUID, "same_as": f"next_facts[{len(next_facts) - 1}].uuid"}
        next_facts.append(marker_line(next_facts[-1], parent=parent, uuid=UUID, timestamp=TIMESTAMP))
    return Seed(
        seed_kind=seed_kind,
        source=source,
        session_id=session_id or None,
        run_id=run_id,
        condition=recovery.condition,
        fork_point=ForkPoint(seq=None, line=fork.line, byte_offset=fork.offset, fact_id=fork.uuid),
        pending_effects=recovery.pending_effects,
        replay=turn_replay(recovery, fork.uuid) if seed_kind == "replay" else None,
        context=SeedContext(messages=[_message(record) for record in chain.records if _visible(record)]),
        next_facts=next_facts,
        assumes=recovery.assumes,
        warnings=[
            *recovery.warnings,
            *unknown_effect_warnings(recovery, "as an error"),
            *_chain_warnings(chain),
        ],
    )


def _visible(record: Record) -> bool:
    return record.kind in ("user", "assistant")


def _message(record: Record) -> dict[str, Any]:
    message = record.value.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return {"uuid": record.uuid, "type": record.kind, "role": role, "content": content}


def _chain_warnings(chain: Chain) -> list[str]:
    warnings: list[str] = []
    if chain.boundary is not None:
        warnings.append(
            f"context.messages start after the compact_boundary on line {chain.boundary.line}: Claude Code "
            "does not load the history before it on resume"
        )
    if chain.foreign_parent is not None:
        first = chain.records[0] if chain.records else None
        where = f"line {first.line}'s" if first is not None else "the"
        warnings.append(
            f"the chain goes on in another file ({where} parentUuid {chain.foreign_parent}): "
            "context.messages hold only this file's part"
        )
    return warnings
