"""The sessaudit seed (CONTRACT §5) of an open Half-Pi run: the session's messages up to the last committed
seq as context, the remote or local effect nobody can vouch for, and what Half-Pi's next start changes.

Half-Pi has no seed format of its own, so `native` and `native_text` stay null. `next_facts` are the row
changes of `native.startup_recovery` that concern the run (a request has none: history is restored as
persisted, spec §8), and only when the fork point is the session's last message.
"""

from __future__ import annotations

import json
from typing import Any

from sessaudit.formats.half_pi.read.rows import Row, StoreRows
from sessaudit.formats.half_pi.runs.recovery import OpenRun
from sessaudit.model import ForkPoint, Seed, SeedContext, SeedSource


def half_pi_seed(
    item: OpenRun, rows: StoreRows, *, source: SeedSource, fork_sequence: int | None
) -> Seed | None:
    """The seed of an open run, forking at the session's last message (or at message seq `fork_sequence`);
    None when the run has no recovery or `fork_sequence` names no message of its session."""
    recovery = item.run.recovery
    if recovery is None:
        return None
    full = rows.messages.get(item.session_id or "", [])
    history = full
    if fork_sequence is not None:
        if not any(row.get("seq") == fork_sequence for row in full):
            return None
        history = [row for row in full if int(row.get("seq") or 0) <= fork_sequence]
    at_end = len(history) == len(full)
    last = history[-1] if history else None
    warnings = list(item.warnings)
    summaries = rows.summaries.get(item.session_id or "", [])
    if summaries:
        warnings.append(
            "the session has compaction summaries: the model saw the active summary instead of the "
            "messages it covers; context.messages is the full history"
        )
    replay: dict[str, Any] | None = None
    if recovery.seed_kind == "replay":
        replay = {"kind": "append"}
        if recovery.condition == "model-request-open":
            replay = {
                "kind": "model_request",
                "request_id": item.run.run_id.removeprefix("request:"),
                "context_boundary": last.get("seq") if last is not None else None,
            }
    return Seed(
        seed_kind=recovery.offered_seed_kind(),
        source=source,
        session_id=item.session_id,
        run_id=item.run.run_id,
        condition=recovery.condition,
        fork_point=ForkPoint(
            seq=int(last["seq"]) if last is not None else None,
            line=None,
            byte_offset=None,
            fact_id=str(last.get("id")) if last is not None else None,
        ),
        pending_effects=recovery.pending_effects,
        replay=replay,
        context=SeedContext(messages=[_message(row) for row in history]),
        next_facts=item.next_facts if at_end else [],
        assumes=recovery.assumes,
        warnings=warnings,
    )


def _message(row: Row) -> dict[str, Any]:
    """A message row as the model saw it: role, content, and the tool calls or the call it answers."""
    message: dict[str, Any] = {"seq": row.get("seq"), "role": row.get("role"), "content": row.get("content")}
    for key in ("request_id", "tool_id"):
        if row.get(key):
            message[key] = row[key]
    text = row.get("tool_calls") or ""
    if text and text != "null":
        try:
            message["tool_calls"] = json.loads(text)
        except ValueError:
            message["tool_calls"] = text
    return message
