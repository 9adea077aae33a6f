"""Property fuzzing (issue 9): mutations of tiny-agent v2 and v1 sessions built by the project's builders."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz_targets import JSONL_EDITS, fuzz_settings, run_tiny_agent, tiny_agent_seeds


@fuzz_settings(250)
@given(st.sampled_from(sorted(tiny_agent_seeds())), JSONL_EDITS)
def test_mutated_sessions_get_a_valid_report(seed: str, edits: list[Any]) -> None:
    run_tiny_agent(seed, edits)
