"""A rejected transaction leaves no trace in the state a plan reads (the active-context boundary); the
report itself offers no plan and no seed for a corrupt session."""

from __future__ import annotations

import io
import json

from sessaudit.formats.tiny_agent.build.session import SessionBuilder
from sessaudit.formats.tiny_agent.recover.planner import plan_recovery
from sessaudit.formats.tiny_agent.v2.verification import _Verification
from sessaudit.plugin import DEFAULT_OPTIONS


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
    verification = _Verification("x.jsonl", "x.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS)
    outcome = verification.run()
    assert outcome.sessions[0].verdict == "corrupt"
    reducer = verification.reducer
    assert reducer.current is not None
    planned = plan_recovery(reducer, reducer.current, None)
    assert planned is not None and planned.plan["type"] == "startStep"
    assert planned.plan["contextThroughEntryId"] == user_id
    # ...but tiny-agent refuses the file, so the report offers neither that plan nor a seed
    recovery = outcome.sessions[0].runs[0].recovery
    assert recovery is not None and recovery.condition == "step-pending"
    assert (recovery.native_plan, recovery.seed, recovery.seed_kind) == (None, None, None)
    assert recovery.warnings[0].startswith("no recovery plan and no seed: the history is corrupt (first: SA")
    assert "tiny-agent refuses the file (" in recovery.warnings[0]
