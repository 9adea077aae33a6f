"""Longer property fuzzing than the suite (issue 9): `python bench/fuzz.py --examples 2000 [--target NAME]
[--seed N]`; `.ci/run` runs it briefly with a fresh seed each time (the suite's properties are derandomized).

Runs the properties of tests/test_fuzz_*.py (see tests/fuzz_targets.py) with random seeds and no example
database, and prints the executions per target and any failure (hypothesis shrinks it first). The
`fast-path` target (issue 21) is the tiny-agent fast path against the exact pass on valid-preserving
variations, targeted corruptions and generic edits of builder-made sessions."""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from tests import fuzz_targets as targets

Counter = dict[str, int]


def _counted(name: str, counts: Counter, run: Callable[..., object]) -> Callable[..., None]:
    def execute(*arguments: Any) -> None:
        counts[name] = counts.get(name, 0) + 1
        run(*arguments)

    return execute


def build_targets(examples: int, counts: Counter) -> dict[str, Callable[[], None]]:
    configured = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    tiny_names = sorted(targets.tiny_agent_seeds())

    @configured
    @given(st.binary(max_size=4096), st.integers(min_value=1, max_value=64))
    def framing(data: bytes, chunk_size: int) -> None:
        _counted("framing", counts, targets.check_framing)(data, chunk_size)

    @configured
    @given(st.binary(max_size=2048), st.sampled_from(["x.jsonl", "notes.txt", "session.json", "x.db"]))
    def arbitrary_file(data: bytes, name: str) -> None:
        _counted("arbitrary-file", counts, targets.run_arbitrary_file)(data, name)

    @configured
    @given(st.sampled_from(tiny_names), targets.JSONL_EDITS)
    def tiny_agent(seed: str, edits: list[Any]) -> None:
        _counted("tiny-agent", counts, targets.run_tiny_agent)(seed, edits)

    @configured
    @given(
        st.sampled_from(targets.RIVUMI_SEEDS),
        st.sampled_from(targets.RIVUMI_FILES),
        targets.JSONL_EDITS,
        st.integers(min_value=0, max_value=9).map(lambda value: value == 0),
    )
    def rivumi(seed: str, target: str, edits: list[Any], remove: bool) -> None:
        _counted("rivumi", counts, targets.run_rivumi)(seed, target, edits, remove)

    @configured
    @given(
        st.sampled_from(targets.HALF_PI_SEEDS),
        targets.PAGE_EDITS,
        st.one_of(st.none(), targets.RAW_EDITS),
    )
    def half_pi(seed: str, edits: list[Any], wal_edits: list[Any] | None) -> None:
        _counted("half-pi", counts, targets.run_half_pi)(seed, edits, wal_edits)

    @configured
    @given(targets.fast_path_cases())
    def fast_path(case: targets.FastCase) -> None:
        _counted("fast-path", counts, targets.run_fast_path)(case)

    return {
        "framing": framing,
        "arbitrary-file": arbitrary_file,
        "tiny-agent": tiny_agent,
        "rivumi": rivumi,
        "half-pi": half_pi,
        "fast-path": fast_path,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=1000, help="examples per target (default 1000)")
    parser.add_argument("--target", action="append", help="run only this target (repeatable)")
    parser.add_argument("--seed", type=int, help="hypothesis seed: the same inputs again (default: random)")
    arguments = parser.parse_args()
    counts: Counter = {}
    failed = 0
    if arguments.seed is not None:
        print(f"seed {arguments.seed} (rerun: python bench/fuzz.py --seed {arguments.seed} ...)", flush=True)
    for name, test in build_targets(arguments.examples, counts).items():
        if arguments.target and name not in arguments.target:
            continue
        if arguments.seed is not None:
            test = seed(arguments.seed)(test)
        started = time.perf_counter()
        try:
            test()
            outcome = "ok"
        except Exception:
            failed += 1
            outcome = "FAILED"
            traceback.print_exc()
        elapsed = time.perf_counter() - started
        executions = counts.get(name, 0)
        print(
            f"{name:15} {outcome:7} {executions:7d} executions  {elapsed:8.1f} s  "
            f"{executions / max(elapsed, 1e-9):7.1f}/s",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
