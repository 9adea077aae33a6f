"""Benchmark: `sessaudit load` against `sessaudit verify` alone, on the same generated input, in one run.

    python bench/bench_load.py [--sessions 300] [--legacy 30] [--runs 40] [--stores 3] [--repeat 3]

The input is made by the project's own builders in a temporary folder: tiny-agent v2 sessions of several
runs with tools and a compaction, legacy v1 sessions, Rivumi run directories and Half-Pi stores. Two pairs
are timed, `--repeat` times each, alternating, and their best times compared:

- the commands as a user runs them: `sessaudit verify PATHS` (its default console report) against
  `sessaudit load PATHS --db NEW.duckdb` (verify, extract, bulk inserts, checkpoint);
- the engine alone, in this process: `audit()` (no report rendered) against `load()`, the stricter pair.

It prints load-time / verify-time for both; the issue's target is load at >= 50% of `verify`'s speed, a
ratio <= 2. Timings on a shared machine vary; compare numbers from one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sessaudit.engine import audit
from sessaudit.formats.half_pi.build.parts import ToolCall as HalfPiCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, build_run
from sessaudit.formats.tiny_agent.build.legacy_v1 import LegacySessionBuilder
from sessaudit.formats.tiny_agent.build.session import Call, Configuration, SessionBuilder, TokenUsage
from sessaudit.warehouse.loader import load_warehouse

CONFIGURATION = Configuration(tools=("read", "edit", "bash"))
SOURCE = "export function total(items) {\n  return items.reduce((sum, item) => sum + item.price, 0);\n}\n" * 4
TARGET_RATIO = 2.0  # load time / verify time: load at >= 50% of verify's speed


def tiny_agent_session(seed: int, runs: int) -> SessionBuilder:
    builder = SessionBuilder(
        seed=seed, created_at=1796029923412 + seed * 60_000, cwd="/home/dev/shop", configuration=CONFIGURATION
    )
    for index in range(runs):
        run = builder.start_run(f"Task {index}: the cart test fails since items became {{price, qty}}.")
        look = builder.assistant(
            builder.step(run),
            "Let me look at the code and run the tests.",
            calls=[Call("read", {"path": f"src/cart{index}.js"}), Call("bash", {"command": "npm test"})],
        )
        builder.tool_result(builder.start_tool(look, 0), SOURCE, duration_ms=4)
        builder.tool_result(
            builder.start_tool(look, 1),
            "# tests 3, pass 2, fail 1\n",
            outcome="error",
            usage=TokenUsage(),
            duration_ms=1840,
        )
        fix = builder.assistant(
            builder.step(run),
            "Multiplying by qty fixes it.",
            calls=[
                Call(
                    "edit",
                    {"path": f"src/cart{index}.js", "old": "item.price", "new": "item.price * item.qty"},
                )
            ],
        )
        builder.tool_result(builder.start_tool(fix, 0), "Replaced 1 occurrence.", duration_ms=3)
        builder.assistant(builder.step(run), "Fixed: total() now multiplies price by qty.")
        builder.finish(run)
        builder.wait(60_000)
    builder.compact("The cart tests failed because total() ignored qty; fixed, tests pass.")
    return builder


def legacy_session(seed: int) -> LegacySessionBuilder:
    builder = LegacySessionBuilder(seed=seed, created_at=1795983907234 + seed * 60_000, cwd="/home/dev/shop")
    for index in range(5):
        builder.user(f"How many tests does suite {index} have?")
        calls = builder.assistant(None, calls=[Call("bash", {"command": "npm test"})])
        builder.tool_result(calls[0], "# tests 3, pass 3, fail 0\n", duration_ms=1690)
        builder.assistant("Three, and all of them pass.")
    return builder


def half_pi_store(path: Path, seed: int, requests: int) -> None:
    builder = StoreBuilder(path, seed=seed)
    chat = builder.session("/home/dev/shop")
    for index in range(requests):
        question = f"Question {index}: which test runner does this repo use?"
        chat.user(question)
        builder.admitted(chat, question)
        call = HalfPiCall(f"call_{index}", "read_file", '{"path":"package.json"}')
        chat.assistant("", calls=[call], results=['{"scripts": {"test": "node --test"}}'])
        builder.local_tool(chat, "read_file", {"path": "package.json"}, outcome="succeeded")
        chat.assistant("node:test, run through `npm test`.")
    builder.finish()


def generate(root: Path, arguments: argparse.Namespace) -> list[str]:
    sessions = root / "tiny-agent" / ".tiny-agent" / "sessions"
    sessions.mkdir(parents=True)
    for seed in range(arguments.sessions):
        builder = tiny_agent_session(1000 + seed, runs=4)
        (sessions / builder.file_name).write_bytes(builder.data())
    for seed in range(arguments.legacy):
        legacy = legacy_session(5000 + seed)
        (sessions / legacy.file_name).write_bytes(legacy.data())
    for seed in range(arguments.runs):
        build_run(
            root / "rivumi", seed=7000 + seed, crash=KILLED_AFTER_TOOL_STARTED if seed % 4 == 0 else None
        )
    for seed in range(arguments.stores):
        half_pi_store(root / "half-pi" / f"home{seed}" / "db" / "half-pi.db", 9000 + seed, requests=40)
    return ["tiny-agent", "rivumi", "half-pi"]


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _command(*arguments: str) -> Callable[[], object]:
    """Run `sessaudit ARGUMENTS` as a user would (this interpreter, output discarded)."""
    command = [sys.executable, "-m", "sessaudit", *arguments]
    return lambda: subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def _line(name: str, times: list[float]) -> str:
    return f"{name:<28} best {min(times):6.2f} s   median {statistics.median(times):6.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300, help="tiny-agent v2 sessions (4 runs each)")
    parser.add_argument("--legacy", type=int, default=30, help="tiny-agent v1 sessions")
    parser.add_argument("--runs", type=int, default=40, help="Rivumi run directories")
    parser.add_argument("--stores", type=int, default=3, help="Half-Pi stores (40 requests each)")
    parser.add_argument("--repeat", type=int, default=3, help="timings of each, alternating")
    arguments = parser.parse_args()
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="sessaudit-bench-") as temporary:
        root = Path(temporary)
        paths = generate(root, arguments)
        os.chdir(root)
        report = audit(paths).report
        for attempt in range(arguments.repeat):
            steps: dict[str, Callable[[], object]] = {
                "sessaudit verify": _command("verify", *paths),
                "sessaudit load": _command("load", *paths, "--db", f"cli-{attempt}.duckdb"),
                "audit() (engine only)": lambda: audit(paths),
                "load() (engine only)": lambda attempt=attempt: load_warehouse(
                    paths, root / f"engine-{attempt}.duckdb"
                ),
            }
            for name, step in steps.items():
                times.setdefault(name, []).append(_timed(step))
        rows = load_warehouse(paths, root / "rows.duckdb").rows
    facts = sum(session.facts for source in report.sources for session in source.sessions)
    print(
        f"input: {len(report.sources)} sources, {facts} facts; rows loaded: "
        + ", ".join(f"{table} {count}" for table, count in rows.items())
    )
    for name, measured in times.items():
        print(_line(name, measured))
    for label, (loading, verifying) in {
        "commands (sessaudit load / sessaudit verify)": ("sessaudit load", "sessaudit verify"),
        "engine only (load() / audit())": ("load() (engine only)", "audit() (engine only)"),
    }.items():
        ratio = min(times[loading]) / min(times[verifying])
        verdict = "met" if ratio <= TARGET_RATIO else "NOT MET"
        print(
            f"load-time / verify-time, {label}: {ratio:.2f} (load at {100 / ratio:.0f}% of verify's speed; "
            f"target >= 50%: {verdict})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
