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
