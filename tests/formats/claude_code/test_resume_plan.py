"""An open turn's `native_plan`: what `claude --resume` does with it (spec §8), and its words."""

from __future__ import annotations

from pathlib import Path

from sessaudit.engine import audit
from sessaudit.formats.claude_code.build.scenarios import build_one
from sessaudit.formats.claude_code.plugin import PLUGIN
from tests.formats.claude_code.hand_lines import U1, U2, U3, answer, prompt, write


def open_plans(tmp_path: Path, name: str) -> list[dict[str, object]]:
    build_one(tmp_path, name)
    report = audit([str(tmp_path / "projects")]).report
    return [
        run.recovery.native_plan
        for source in report.sources
        for session in source.sessions
        for run in session.runs
        if run.recovery is not None and run.recovery.native_plan is not None
    ]


def test_a_dangling_call_makes_resume_fail(tmp_path: Path) -> None:
    (plan,) = open_plans(tmp_path, "killed_during_bash")
    assert plan["resume"] == "fails" and plan["repair"] == "sessaudit seed PATH --native --output FILE"
    assert isinstance(plan["unanswered"], list) and len(plan["unanswered"]) == 1
    words = PLUGIN.describe_plan(plan)
    assert words is not None and words.startswith("`claude --resume` fails (API 400")
    assert "until the open call is answered" in words


def test_a_turn_waiting_for_the_model_resumes_as_it_is(tmp_path: Path) -> None:
    report = audit([str(write(tmp_path, prompt(U1), answer(U2, U1), prompt(U3, U2)))]).report
    (run,) = [run for run in report.sources[0].sessions[0].runs if run.recovery is not None]
    assert run.recovery is not None and run.recovery.condition == "model-request-open"
    plan = run.recovery.native_plan
    assert plan == {"resume": "loads", "unanswered": []}
    assert (
        PLUGIN.describe_plan(plan)
        == "`claude --resume` loads the session as it is (no call is left unanswered)"
    )
    assert (
        PLUGIN.describe_plan({"resume": "fails", "unanswered": ["a", "b"]}).count("the 2 open calls are") == 1
    )
    assert PLUGIN.describe_plan({}) is None


def test_a_response_torn_mid_stream_is_open_whatever_its_last_block(tmp_path: Path) -> None:
    """A crash while the final tool_use line of a thinking + text + tool_use response was written: the
    torn line is dropped, the kept text line has no stop_reason, so the response was cut: the model request
    is open (the call it was making is not known), not a completed turn."""
    from sessaudit.formats.claude_code.build.parts import Text, Thinking, ToolUse, Usage
    from sessaudit.formats.claude_code.build.transcript import TranscriptBuilder

    b = TranscriptBuilder(tmp_path, "/home/dev/torn", seed=7)
    b.user("Run the tests.")
    b.assistant(
        [Thinking("Run them."), Text("Running the tests."), ToolUse("Bash", {"command": "pytest"})],
        usage=Usage(3, 90, cache_5m=1000, cache_read=5000),
    )
    b.crash(torn=True)
    (path,) = b.finish().files
    report = audit([str(path)]).report
    (source,) = report.sources
    assert source.verdict.value == "needs-recovery" and source.sessions[0].torn_tail_bytes > 0
    (run,) = source.sessions[0].runs
    assert run.state == "open" and run.recovery is not None
    assert (run.recovery.condition, run.recovery.pending_effects) == ("model-request-open", [])
