"""Property fuzzing (issue 9): Rivumi run directories with a mutated (or removed) events.jsonl, session.json,
request.json or .writer.lock."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz_targets import JSONL_EDITS, RIVUMI_FILES, RIVUMI_SEEDS, LineEdit, fuzz_settings, run_rivumi


@fuzz_settings(150)
@given(
    st.sampled_from(RIVUMI_SEEDS),
    st.sampled_from(RIVUMI_FILES),
    JSONL_EDITS,
    st.integers(min_value=0, max_value=9).map(lambda value: value == 0),
)
# found by bench/fuzz.py: an array as the value of an enum-valued data key (here tool.started's `effect`)
# was looked up in a frozenset and raised TypeError (unhashable type: 'list')
@example("clean", "events.jsonl", [LineEdit("json", 97, 0, 250, [])], False)
def test_mutated_run_directories_get_a_valid_report(
    seed: str, target: str, edits: list[Any], remove: bool
) -> None:
    run_rivumi(seed, target, edits, remove)
