"""A Half-Pi remote run's pending effect takes its arguments from a `--claims` entry only when the claim
matched the recorded digest, and says so; an unmatched claim is never shown as the arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessaudit.engine import audit
from sessaudit.formats.half_pi.claims.claims_file import parse_claims
from sessaudit.model import Run
from sessaudit.plugin import VerifyOptions

STORE = Path(__file__).resolve().parents[3] / "examples" / "half-pi" / "home" / "db" / "half-pi.db"
RUN_ID = "59fb1ad012774d16"  # the deploy on hand-1, approved by approval 0998d680510009ef, still running
CLAIM: dict[str, Any] = {
    "approval_id": "0998d680510009ef",
    "tool": "exec_command",
    "args": {"command": "./deploy.sh staging"},
    "run_id": RUN_ID,
    "hand_id": "hand-1",
}


def remote_run(*claims: dict[str, Any]) -> Run:
    options = VerifyOptions(claims=tuple(parse_claims({"claims": list(claims)})), claims_path="claims.json")
    report = audit([str(STORE)], options=options).report
    (run,) = [
        run
        for source in report.sources
        for session in source.sessions
        for run in session.runs
        if run.run_id == RUN_ID
    ]
    return run


def test_without_claims_the_arguments_are_not_recorded() -> None:
    recovery = remote_run().recovery
    assert recovery is not None and recovery.pending_effects[0].arguments is None


def test_a_matched_claim_supplies_the_arguments_and_says_so() -> None:
    recovery = remote_run(CLAIM).recovery
    assert recovery is not None
    (effect,) = recovery.pending_effects
    assert effect.arguments == {"command": "./deploy.sh staging"}
    (said,) = [item for item in recovery.assumes if item.startswith("arguments from --claims")]
    assert "claim /claims/0" in said and "matched the recorded digest" in said
    assert recovery.seed is not None and recovery.seed.pending_effects == [effect]


def test_an_unmatched_claim_is_never_shown_as_the_arguments() -> None:
    wrong = {**CLAIM, "args": {"command": "./deploy.sh production"}}
    recovery = remote_run(wrong).recovery
    assert recovery is not None and recovery.pending_effects[0].arguments is None
    assert not [item for item in recovery.assumes if "--claims" in item]
    # a matched claim beside an unmatched one: only the matched arguments are used
    recovery = remote_run(wrong, CLAIM).recovery
    assert recovery is not None and recovery.pending_effects[0].arguments == CLAIM["args"]
    assert any("claim /claims/1" in item for item in recovery.assumes)


def test_a_claim_of_another_run_or_hand_is_not_used() -> None:
    for other in ({**CLAIM, "hand_id": "hand-2"}, {**CLAIM, "run_id": "0123456789abcdef"}):
        recovery = remote_run(other).recovery
        assert recovery is not None and recovery.pending_effects[0].arguments is None
