"""Where `sessaudit verify` and `load` spend their time and memory: cProfile on a benchmark session, and what
their peak RSS is made of (bench/memory.py) → bench/PROFILE.md.

    python bench/profile.py [--size 100MB] [--dense-size 50MB] [--seed 1] [--corpus-dir bench/.corpus]
                            [--output bench/PROFILE.md]

The session is the benchmark's own (`bench/corpus.py`, cached like `bench/run.py`'s). Each command runs once
in its own process under cProfile (which slows pure-Python code by a factor the table shows: profiled
seconds vs the plain run measured just before). The tables: the functions with the most own time, and own
time summed per sessaudit module (where a speed-up has to come from). The memory section measures each
fixed part in a fresh process, and the verifier's state at the end of the session and of a dense one."""

from __future__ import annotations

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import corpus as corpus_module  # noqa: E402  (bench/ is not a package)
import memory as memory_module  # noqa: E402
import run as run_module  # noqa: E402

TOP = 25


def _plain_seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _profiled(argv: list[str], output: Path) -> tuple[float, pstats.Stats]:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(output), *argv[1:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started, pstats.Stats(str(output))


def _where(filename: str, function: str) -> str:
    marker = f"{os.sep}sessaudit{os.sep}"
    if marker in filename:
        return "sessaudit/" + filename.split(marker, 1)[1]
    if filename == "~":
        return "(built-in)"
    return Path(filename).name


def _tables(stats: pstats.Stats) -> list[str]:
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(own for (_, _, own, _, _) in entries.values()) or 1.0
    rows = sorted(entries.items(), key=lambda item: item[1][2], reverse=True)[:TOP]
    lines = [
        "| own s | own % | calls | cumulative s | function |",
        "|---:|---:|---:|---:|---|",
    ]
    for (filename, line, function), (_, calls, own, cumulative, _) in rows:
        where = _where(filename, function)
        place = f"{where}:{line} `{function}`" if line else f"`{function}`"
        lines.append(f"| {own:.2f} | {100 * own / total:.1f} | {calls:,} | {cumulative:.2f} | {place} |")
    per_module: dict[str, float] = defaultdict(float)
    for (filename, _, function), (_, _, own, _, _) in entries.items():
        where = _where(filename, function)
        module = where if where.startswith("sessaudit/") else "(outside sessaudit: stdlib, C, libraries)"
        if function.startswith("<built-in method") or function.startswith("<method"):
            module = f"(built-in) {function.split(' of ')[0].removeprefix('<built-in method ')}"
            module = module.removeprefix("<method ").rstrip(">")
        per_module[module] += own
    lines += ["", "| own s | own % | module |", "|---:|---:|---|"]
    for module, own in sorted(per_module.items(), key=lambda item: item[1], reverse=True)[:TOP]:
        lines.append(f"| {own:.2f} | {100 * own / total:.1f} | {module} |")
    return lines


def _peak_mib(argv: list[str]) -> str:
    """Peak RSS of a command's process tree in MiB (bench/run.py's measure; "≤" when the launcher's)."""
    timed = run_module.run_timed(argv)
    if timed.code != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {timed.code}")
    return f"{'≤ ' if timed.bounded else ''}{timed.peak_rss / memory_module.MIB:.0f}"


def _memory(session: str, dense: str, dense_label: str, scratch: str) -> list[str]:
    python = sys.executable
    database = os.path.join(scratch, "m.duckdb")
    probe = [python, str(BENCH / "memory.py")]
    fixed = [
        ("the interpreter (and the probe's own stdlib imports)", [*probe, "imports"]),
        ("`import sessaudit.cli` (every command)", [*probe, "imports", "sessaudit.cli"]),
        ("`import duckdb`", [*probe, "imports", "duckdb"]),
        ("`import pyarrow`", [*probe, "imports", "pyarrow"]),
        (
            "`import sessaudit.warehouse.loader` (load's imports)",
            [*probe, "imports", "sessaudit.warehouse.loader"],
        ),
        ("the above and an open warehouse with its tables", [*probe, "warehouse", database]),
    ]
    lines = [
        "## Peak memory",
        "",
        "What a process holds before it reads any evidence, each in a fresh process that reports its own "
        "memory (`bench/memory.py imports`): its peak RSS, and what is resident at the end, anonymous "
        "(private: the heap) or file-backed (shared libraries' pages: shared with every process that maps "
        "them, dropped first under memory pressure; how many are resident depends on the page cache, so "
        "this part of any RSS varies between runs and machines).",
        "",
        "| what runs | peak RSS MiB | anonymous MiB | file-backed MiB |",
        "|---|---:|---:|---:|",
    ]
    for title, argv_ in fixed:
        Path(database).unlink(missing_ok=True)
        completed = subprocess.run(argv_, capture_output=True, text=True, check=True)
        memory = json.loads(completed.stdout.strip().splitlines()[-1])
        mib = memory_module.MIB
        lines.append(
            f"| {title} | {memory['peak'] / mib:.0f} | {memory['anonymous'] / mib:.0f} | "
            f"{memory['file'] / mib:.0f} |"
        )
    Path(database).unlink(missing_ok=True)
    label = f"the {corpus_module.format_size(os.path.getsize(session))} session"
    lines += [
        "",
        "The commands on the profiled session (bench/run.py's measure: a process tree is charged for all its "
        "processes):",
        "",
        "| command | peak RSS MiB |",
        "|---|---:|",
    ]
    verify = ["sessaudit", "verify", "--format", "json", "--quiet", "--jobs", "1"]
    lines.append(f"| `sessaudit verify --jobs 1`, {label} | {_peak_mib([*verify, session])} |")
    for jobs in ("1", "2"):
        Path(database).unlink(missing_ok=True)
        load = ["sessaudit", "load", session, "--db", database, "--jobs", jobs]
        note = " (its verifier in a worker beside it)" if jobs == "2" else " (one process, one pass)"
        lines.append(f"| `sessaudit load --jobs {jobs}`, {label}{note} | {_peak_mib(load)} |")
    Path(database).unlink(missing_ok=True)
    lines += [
        "",
        "What the verifier holds when the session ends, by structure (`sys.getsizeof` of each object, "
        "charged to the first structure that reaches it, in the table's order):",
        "",
    ]
    lines += memory_module.state_table(memory_module.run_probe(["state", session]), f"The {label[4:]}")
    lines += memory_module.state_table(
        memory_module.run_probe(["state", dense]), f"A dense session of {dense_label}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--dense-size", default="50MB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus-dir", type=Path, default=BENCH / ".corpus")
    parser.add_argument("--output", type=Path, default=BENCH / "PROFILE.md")
    arguments = parser.parse_args(argv)
    size = corpus_module.parse_size(arguments.size)
    label = corpus_module.format_size(size)
    title = f"One tiny-agent session, {label}"
    scenario = run_module.Scenario(f"single-{label}", title, "tiny-agent", size, 1)
    root = run_module.ensure_corpus(arguments.corpus_dir.resolve(), scenario, arguments.seed, print)
    session = run_module.jsonl_files(root, corpus_module.load_manifest(root))[0]
    dense_size = corpus_module.parse_size(arguments.dense_size)
    dense_label = corpus_module.format_size(dense_size)
    dense_scenario = run_module.Scenario(f"dense-{dense_label}", "dense", "tiny-agent-dense", dense_size, 1)
    dense_root = run_module.ensure_corpus(
        arguments.corpus_dir.resolve(), dense_scenario, arguments.seed, print
    )
    dense = run_module.jsonl_files(dense_root, corpus_module.load_manifest(dense_root))[0]
    lines = [
        "# Profile",
        "",
        f"Written by `python bench/profile.py {' '.join(argv or sys.argv[1:])}`: cProfile, one run each, on "
        f"the benchmark's single tiny-agent session of {label} ({scenario.bytes:,} bytes). Own time = time "
        "in the function itself; cProfile's overhead inflates pure-Python code, so read the shares, not "
        "the seconds.",
        "",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        commands = {
            "verify": ["sessaudit", "verify", "--format", "json", "--quiet", "--jobs", "1", session],
            "load": ["sessaudit", "load", session, "--db", os.path.join(scratch, "w.duckdb"), "--jobs", "1"],
        }
        for name, argv_ in commands.items():
            if name == "load":
                Path(scratch, "w.duckdb").unlink(missing_ok=True)
            plain = _plain_seconds(argv_)
            if name == "load":
                Path(scratch, "w.duckdb").unlink(missing_ok=True)
            module_argv = [sys.executable, "-m", "sessaudit", *argv_[1:]]
            seconds, stats = _profiled(module_argv, Path(scratch, f"{name}.prof"))
            note = (
                " One process: the single pass (with more jobs, a large session is verified by a worker "
                "while this extraction runs, and cProfile would see only half of the work)."
                if name == "load"
                else ""
            )
            lines += [
                f"## `sessaudit {name} --jobs 1`",
                "",
                f"{plain:.1f} s plain, {seconds:.1f} s under cProfile.{note}",
                "",
                *_tables(stats),
                "",
            ]
            print(f"profiled {name}: {plain:.1f} s plain, {seconds:.1f} s profiled", file=sys.stderr)
        lines += _memory(session, dense, dense_label, scratch)
    arguments.output.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {arguments.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
