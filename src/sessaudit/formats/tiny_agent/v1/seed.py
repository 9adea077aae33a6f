"""Seeds for open legacy v1 turns: the context the CLI's resume would rebuild, and the fork point."""

from __future__ import annotations

from typing import Any, BinaryIO

from sessaudit.framing import LineReader
from sessaudit.limits import REREAD_LINE_BYTES
from sessaudit.model import ForkPoint, Recovery, Seed, SeedContext, SeedSource
from sessaudit.strictjson import LineProblem, decode_line

COMPACTED_PREFIX = "[Compacted history]\n"
NOTHING_APPENDED = "v1 has no recovery writer: nothing is appended in place; continue from the context"


def v1_context(stream: BinaryIO, committed: int, through_line: int) -> list[Any]:
    """The model context as tiny-ts `resumeSession` rebuilds it from lines 2..through_line.

    Its system prompt is not in the log and is not shown; a compaction keeps its summary as a user
    message and the last `keptMessages` messages."""
    messages: list[Any] = []
    stream.seek(0)
    for line in LineReader(stream, committed, report_progress=False, max_line_bytes=REREAD_LINE_BYTES):
        if line.number == 1:
            continue
        if line.number > through_line:
            break
        try:
            value = decode_line(line.data, strip_bom=False)
        except LineProblem:
            continue  # reported by the verifier; resume would have thrown here
        if not isinstance(value, dict):
            continue
        if value.get("type") == "message":
            messages.append(value.get("message"))
        elif value.get("type") == "compaction":
            kept = value.get("keptMessages")
            recent = messages[-kept:] if isinstance(kept, int) and kept > 0 else []
            messages = [{"role": "user", "content": COMPACTED_PREFIX + str(value.get("summary"))}, *recent]
    return messages


def v1_seed(
    recovery: Recovery,
    *,
    source: SeedSource,
    session_id: str | None,
    run_id: str,
    fork_line: int,
    fork_offset: int | None,
    context: list[Any],
) -> Seed:
    """The seed of an open v1 turn (CONTRACT §5): v1 has no facts to append, so `next_facts` is empty."""
    replay: dict[str, Any] | None = None
    if recovery.seed_kind == "replay":
        if recovery.condition in ("model-request-open", "step-pending"):
            replay = {
                "kind": "model_request",
                "step_id": None,
                "attempt": None,
                "context_through_line": fork_line,
            }
        elif recovery.condition == "tool-not-started" and recovery.pending_effects:
            effect = recovery.pending_effects[0]
            replay = {
                "kind": "tool",
                "mode": "start",
                "tool_name": effect.tool_name,
                "arguments": effect.arguments,
                "intent_id": None,
                "result_slot": None,
                "replay_key": None,
            }
        else:
            replay = {"kind": "append"}
    return Seed(
        seed_kind=recovery.offered_seed_kind(),
        source=source,
        session_id=session_id,
        run_id=run_id,
        condition=recovery.condition,
        fork_point=ForkPoint(seq=fork_line, line=fork_line, byte_offset=fork_offset, fact_id=None),
        pending_effects=recovery.pending_effects,
        replay=replay,
        context=SeedContext(messages=context),
        next_facts=[],
        assumes=[*recovery.assumes, NOTHING_APPENDED],
    )
