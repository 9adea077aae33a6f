"""tiny-agent's 48 golden reducer fixtures: native answer, verdict, usage and recovery conditions."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.plugin import SourceOutcome
from sessaudit.verdicts import Verdict
from tests.shared import conformance_dir, conformance_manifest, conformance_names

# Recovery conditions of every fixture left with an open operation, derived by hand from CONTRACT §4's
# tiny-agent v2 column (not from the verifier's output), with the reasoning in a comment.
OPEN_CONDITIONS: dict[str, list[str]] = {
    # runStarted only: the run has no step yet.
    "run-accepted": ["step-pending"],
    "torn-tail": ["step-pending"],
    # stepAttempt 1 with no answer.
    "open-attempt": ["model-request-open"],
    "configuration-order-equivalent": ["model-request-open"],
    # stepAttempt 2 with no answer: the one retry is used.
    "attempts-exhausted": ["attempts-exhausted"],
    # toolStarted (safe) without a result, no abort.
    "pending-safe-tool": ["effect-replayable"],
    # toolStarted (never) without a result.
    "pending-never-tool": ["effect-unknown"],
    # A toolUse answer whose one call has neither toolStarted nor a synthetic result.
    "unknown-tool": ["tool-not-started"],
    "invalid-arguments": ["tool-not-started"],
    # A settled `length` answer and no terminal (its calls are never started: not tool-not-started).
    "truncated-tool-call": ["awaiting-terminal"],
    # The one call is answered (interrupted result, or an aborted synthetic without an abort request): the
    # next step is due.
    "synthetic-interrupted": ["step-pending"],
    "synthetic-aborted": ["step-pending"],
    # abortRequested while attempt 1 is open.
    "abort-open-attempt": ["abort-pending", "model-request-open"],
    # abortRequested with a never-replay intent pending (effect-unknown holds under abort too).
    "abort-pending-never-tool": ["effect-unknown", "abort-pending"],
    # Same, plus an untouched second call; tool-not-started does not apply under an abort.
    "abort-mixed-tools-requested": ["effect-unknown", "abort-pending"],
}

SEED_KIND = {"effect-unknown": "fork", "attempts-exhausted": "fork"}


def _manifest() -> list[dict[str, Any]]:
    return conformance_manifest("tiny-agent", "fixtures")


def _names() -> list[str]:
    return conformance_names("tiny-agent", "fixtures")


def _verify(name: str) -> tuple[SourceOutcome, dict[str, Any]]:
    directory = conformance_dir("tiny-agent") / "fixtures"
    entry = next(fixture for fixture in _manifest() if fixture["name"] == name)
    data = (directory / entry["file"]).read_bytes()
    expected = json.loads((directory / entry["expected"]).read_text())
    path = str(Path("fixtures") / entry["file"])
    return verify_tiny_agent(path, path, io.BytesIO(data), len(data)), expected


def test_the_manifest_has_48_reducer_fixtures() -> None:
    assert len(_manifest()) == 48


@pytest.mark.parametrize("name", _names())
def test_fixture(name: str) -> None:
    outcome, expected = _verify(name)
    native = outcome.native["reducer"]
    session = outcome.sessions[0]
    if not expected["ok"]:
        error = expected["error"]
        assert (native["ok"], native["code"], native["line"]) == (False, error["code"], error["line"])
        assert native["seq"] == error.get("seq")
        assert native["repaired_length"] is None and native["operation"] is None
        if name == "legacy-version-rejected":
            assert session.verdict is Verdict.UNSUPPORTED
            assert outcome.format_version == "1"
            assert [finding.rule for finding in outcome.findings] == ["SA003"]
            return
        assert session.verdict is Verdict.CORRUPT
        assert any(finding.native_code == error["code"] for finding in outcome.findings)
        first = next(finding for finding in outcome.findings if finding.native_code == error["code"])
        assert first.severity == "error"
        return
    state = expected["state"]
    assert native == {
        "ok": True,
        "code": None,
        "line": None,
        "seq": None,
        "repaired_length": state["repairedLength"],
        "operation": state["operation"]["kind"],
    }
    assert outcome.format_version == "2"
    assert session.session_id == state["header"]["id"]
    assert session.repaired_length == state["repairedLength"]
    usage = state["usage"]
    assert (
        session.usage.input,
        session.usage.output,
        session.usage.cache_read,
        session.usage.cache_write,
    ) == (
        usage["input"],
        usage["output"],
        usage["cacheRead"],
        usage["cacheWrite"],
    )
    assert session.usage.input_total == usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
    open_runs = [run for run in session.runs if run.state == "open"]
    if state["operation"]["kind"] == "idle":
        assert not open_runs
        assert session.verdict is Verdict.CLEAN
        assert all(run.recovery is None for run in session.runs)
        return
    assert [run.run_id for run in open_runs] == [state["operation"]["operationId"]]
    recovery = open_runs[0].recovery
    assert recovery is not None
    assert recovery.conditions == OPEN_CONDITIONS[name]
    assert recovery.condition == OPEN_CONDITIONS[name][0]
    assert recovery.seed_kind == SEED_KIND.get(recovery.condition, "replay")
    assert recovery.assumes[0] == "configuration unchanged"
    assert session.verdict is Verdict.NEEDS_RECOVERY
    assert [finding.rule for finding in outcome.findings].count("SA301") == 1
    if name == "torn-tail":
        assert session.torn_tail_bytes > 0
        assert any(finding.rule == "SA109" for finding in outcome.findings)


def test_open_fixture_table_covers_every_open_fixture() -> None:
    opened = []
    directory = conformance_dir("tiny-agent") / "fixtures"
    for fixture in _manifest():
        expected = json.loads((directory / fixture["expected"]).read_text())
        if expected["ok"] and expected["state"]["operation"]["kind"] != "idle":
            opened.append(fixture["name"])
    assert sorted(opened) == sorted(OPEN_CONDITIONS)


def test_pending_effects_of_the_mixed_abort() -> None:
    outcome, _ = _verify("abort-mixed-tools-requested")
    recovery = outcome.sessions[0].runs[0].recovery
    assert recovery is not None
    started, untouched = recovery.pending_effects
    assert (started.tool_call_id, started.replay_policy, started.intent_id) == (
        "call_1",
        "never",
        "018f0000-0000-7000-8000-000000000009",
    )
    assert started.result_slot == "018f0000-0000-7000-8000-00000000000a"
    assert started.arguments == {"path": "README.md"}
    assert (untouched.tool_call_id, untouched.intent_id, untouched.replay_policy) == ("call_2", None, None)
    assert untouched.arguments == {"path": "SECOND.md"}
    assert "replay policy of calls that never started is not recorded" in recovery.assumes
    warnings = [finding for finding in outcome.findings if finding.rule == "SA302"]
    assert len(warnings) == 1 and warnings[0].location.line == 5
    assert "tool read (call_1) intent recorded at line 5, no result" in warnings[0].message
