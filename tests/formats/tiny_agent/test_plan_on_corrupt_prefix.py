"""A rejected transaction leaves no trace in the state a plan reads (the active-context boundary)."""

from __future__ import annotations

import io
import json

from sessaudit.formats.tiny_agent.builder import SessionBuilder
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent


def test_a_rejected_line_with_a_message_entry_does_not_move_the_step_context() -> None:
    builder = SessionBuilder(seed=11, created_at=1787410800000, cwd="/home/dev/shop")
    builder.start_run("first question")  # seq 1 user entry, seq 2 runStarted: a run with no step
    data = builder.data()
    user_id = json.loads(data.split(b"\n")[1])[0]["id"]
    rejected = [
        {
            "kind": "entry",
            "seq": 3,
            "id": "01a029fc-9999-7999-8999-000000000003",
            "timestamp": 1787410800100,
            "entry": {"type": "message", "message": {"role": "user", "content": "second"}},
        },
        {
            "kind": "nonsense",
            "seq": 4,
            "id": "01a029fc-9999-7999-8999-000000000004",
            "timestamp": 1787410800100,
        },
    ]
    data += json.dumps(rejected).encode() + b"\n"
    outcome = verify_tiny_agent("x.jsonl", "x.jsonl", io.BytesIO(data), len(data))
    assert outcome.sessions[0].verdict == "corrupt"
    recovery = outcome.sessions[0].runs[0].recovery
    assert recovery is not None and recovery.native_plan is not None
    assert recovery.native_plan["type"] == "startStep"
    assert recovery.native_plan["contextThroughEntryId"] == user_id
