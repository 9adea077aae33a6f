"""The builder's named legal and damaged sessions and random walks: our native answer is tiny-agent's."""

from __future__ import annotations

import io

import pytest

from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.verdicts import Verdict
from tests.formats.tiny_agent.damaged import DAMAGED
from tests.formats.tiny_agent.scenarios import LEGAL, Expected
from tests.formats.tiny_agent.walk import random_session


def check(data: bytes, expected: Expected) -> None:
    outcome = verify_tiny_agent("s.jsonl", "s.jsonl", io.BytesIO(data), len(data))
    native = outcome.native["reducer"]
    session = outcome.sessions[0]
    if expected.ok:
        assert native["ok"] is True, native
        assert native["operation"] == expected.operation
        assert native["repaired_length"] == data.rindex(b"\n") + 1
        assert session.verdict in (Verdict.CLEAN, Verdict.REPAIRABLE, Verdict.NEEDS_RECOVERY)
        assert (session.torn_tail_bytes > 0) == expected.torn
        assert (session.verdict is Verdict.NEEDS_RECOVERY) == any(run.recovery for run in session.runs)
        return
    assert (native["ok"], native["code"], native["line"], native["seq"]) == (
        False,
        expected.code,
        expected.line,
        expected.seq,
    )
    if session.verdict is not Verdict.UNSUPPORTED:
        assert session.verdict is Verdict.CORRUPT
        assert any(finding.native_code == expected.code for finding in outcome.findings)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legal(name: str) -> None:
    check(*LEGAL[name]())


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged(name: str) -> None:
    check(*DAMAGED[name]())


@pytest.mark.parametrize("seed", range(60))
def test_random_walks(seed: int) -> None:
    check(*random_session(seed, actions=20))
