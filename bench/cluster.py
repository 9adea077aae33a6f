"""Fleet scale on Dask (issue 23): what a cluster costs over local processes on this machine, and the
scheduler's own numbers a scale model needs (docs/fleet.md).

    python bench/cluster.py [--sessions 20000] [--size 2GB] [--repeat 3] [--corpus-dir DIR]
                            [--results bench/RESULTS-cluster.md]

The corpus is bench/corpus.py's tiny-agent sessions (`--sessions` of them, `--size` in all, every 50th
crashed), made once per seed into --corpus-dir and checked against its manifest (every source reported
once with the verdict the manifest says; count and bytes) before anything is timed. Timed, alternating,
`--repeat` times each, on the same inputs in the same run:

- `sessaudit verify --format json --jobs 2` (the reference) and `--cluster local:2`: wall time, their
  ratio (goal <= 1.15), and the reports compared byte for byte;
- `sessaudit load --parquet DIR` with `--jobs 2` and with `--cluster local:2` (a new dataset each time),
  and the cluster's load run again on its dataset (every source unchanged: hashed, not verified);
- a deployed cluster, `dask scheduler` and two `dask worker` processes on this machine: `verify --cluster
  tcp://…`, the scheduler's resident memory before and its peak after; then 20,000 empty tasks through
  the same scheduler: tasks per second and memory per task held (the scheduler's per-task overhead).

Prints a Markdown table; `--results` also writes it to that file."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus as corpus_module  # noqa: E402

GOAL: Final = 1.15
EMPTY_TASKS: Final = 20_000


def ensure_corpus(directory: Path, sessions: int, size: int, seed: int) -> Path:
    root = directory / f"cluster-tiny-agent-{sessions}x-{corpus_module.format_size(size)}-seed{seed}"
    if (root / corpus_module.MANIFEST).exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    corpus_module.generate("tiny-agent", size, root, seed=seed, sessions=sessions, workers=2)
    return root


def check_corpus(root: Path, report: dict[str, Any], sessions: int, size: int) -> list[str]:
    """Where the corpus is not what its manifest (and this benchmark) says it is."""
    found = corpus_module.disagreements(root, report) + corpus_module.manifest_errors(root)
    manifest = corpus_module.load_manifest(root)
    listed = manifest["sources"]
    assert isinstance(listed, list)
    if len(listed) != sessions or len(report["sources"]) != sessions:
        found.append(f"{len(listed)} sources listed, {len(report['sources'])} reported; asked: {sessions}")
    for source in listed:
        size_on_disk = (root / source["path"]).stat().st_size
        if size_on_disk != source["bytes"]:
            found.append(f"{source['path']}: {size_on_disk} bytes on disk, manifest: {source['bytes']}")
    on_disk = sum(path.stat().st_size for path in root.rglob("*.jsonl"))
    if on_disk != manifest["total_bytes"]:
        found.append(f"{on_disk} bytes of sessions on disk, manifest: {manifest['total_bytes']}")
    if abs(on_disk - size) > 0.15 * size:
        found.append(f"{on_disk} bytes of sessions on disk, more than 15% away from the {size} asked")
    return found


def sessaudit(
    *arguments: str, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    command = [sys.executable, "-m", "sessaudit", *arguments]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False, env=env)
    return time.perf_counter() - started, done


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in bytes."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found


def deployed(root: Path, env: dict[str, str]) -> dict[str, float]:
    """verify on a scheduler and two workers started as a real cluster is, then empty tasks through it."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dashboard-address",
            ":0",
            "--no-show",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                address,
                "--nthreads",
                "1",
                "--nworkers",
                "1",
                "--no-dashboard",
                "--memory-limit",
                "0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for _ in range(2)
    ]
    try:
        import distributed

        client = distributed.Client(address, timeout="60s")
        client.wait_for_workers(2, timeout=60)
        idle = _memory(scheduler.pid)["VmRSS"]
        wall, done = sessaudit("verify", str(root), "--format", "json", "--cluster", address, env=env)
        after_verify = _memory(scheduler.pid)
        started = time.perf_counter()
        futures = client.map(_empty, range(EMPTY_TASKS), pure=False)
        held = _memory(scheduler.pid)["VmRSS"]
        client.gather(futures)
        empty_wall = time.perf_counter() - started
        peak = _memory(scheduler.pid)["VmHWM"]
        del futures
        client.close()
        return {
            "verify_wall": wall,
            "verify_code": float(done.returncode),
            "scheduler_idle": float(idle),
            "scheduler_peak_verify": float(after_verify["VmHWM"]),
            "empty_tasks_per_second": EMPTY_TASKS / empty_wall,
            "scheduler_bytes_per_task": max(0.0, (max(held, peak) - after_verify["VmRSS"]) / EMPTY_TASKS),
            "scheduler_peak": float(peak),
        }
    finally:
        for process in [*workers, scheduler]:
            process.terminate()
        for process in [*workers, scheduler]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _empty(index: int) -> int:
    return index


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--size", type=corpus_module.parse_size, default=corpus_module.parse_size("2GB"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus-dir", type=Path, default=Path(tempfile.gettempdir()) / "benchcorpus")
    parser.add_argument("--results", type=Path)
    arguments = parser.parse_args(argv)
    root = ensure_corpus(arguments.corpus_dir, arguments.sessions, arguments.size, arguments.seed)
    env = {
        **os.environ,
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
        # as docs/fleet.md deploys the scheduler and workers (sessaudit sets them itself for local:N)
        "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
        "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
        "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
        "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
    }
    times: dict[str, list[float]] = {"jobs": [], "cluster": [], "load-jobs": [], "load-cluster": []}
    reports: dict[str, bytes] = {}
    for _ in range(arguments.repeat):
        for mode, flags in (("jobs", ["--jobs", "2"]), ("cluster", ["--cluster", "local:2"])):
            wall, done = sessaudit("verify", str(root), "--format", "json", *flags, env=env)
            if done.returncode not in (0, 1):
                sys.stderr.write(done.stderr.decode())
                return 2
            times[mode].append(wall)
            if reports.setdefault(mode, done.stdout) != done.stdout:
                raise SystemExit(f"{mode}: the report differs between runs")
    if reports["jobs"] != reports["cluster"]:
        raise SystemExit("the cluster's report is not the one --jobs 2 writes")
    problems = check_corpus(root, json.loads(reports["jobs"]), arguments.sessions, arguments.size)
    if problems:
        raise SystemExit("the corpus is not what its manifest says:\n" + "\n".join(problems[:20]))
    times["load-again"] = []
    for _ in range(arguments.repeat):
        for mode, flags in (("load-jobs", ["--jobs", "2"]), ("load-cluster", ["--cluster", "local:2"])):
            with tempfile.TemporaryDirectory(prefix="bench-dataset-") as scratch:
                for key in (mode, "load-again") if mode == "load-cluster" else (mode,):
                    wall, done = sessaudit("load", str(root), "--parquet", f"{scratch}/d", *flags, env=env)
                    if done.returncode not in (0, 3):
                        sys.stderr.write(done.stderr.decode())
                        return 2
                    times[key].append(wall)
    real = deployed(root, env)
    one = str(sorted(root.rglob("*.jsonl"))[0])
    alone = [
        sessaudit("verify", one, "--format", "json", *flags, env=env)[0] for flags in (["--jobs", "2"],) * 3
    ]
    started = [
        sessaudit("verify", one, "--format", "json", *flags, env=env)[0]
        for flags in (["--cluster", "local:2"],) * 3
    ]
    startup = statistics.median(started) - statistics.median(alone)
    sys.path.insert(0, str(HERE.parent / "src"))
    from sessaudit.cluster import batches

    sizes = [path.stat().st_size for path in sorted(root.rglob("*.jsonl"))]
    tasks = len(batches(sizes))
    median = {mode: statistics.median(values) for mode, values in times.items()}
    ratio = median["cluster"] / median["jobs"]
    load_ratio = median["load-cluster"] / median["load-jobs"]
    total = sum(sizes)
    rows = [
        (
            "corpus",
            f"{arguments.sessions:,} tiny-agent sessions, {total / 1e9:.2f} GB "
            "(checked against its manifest)",
        ),
        ("verify --jobs 2 (reference)", _spread(times["jobs"])),
        ("verify --cluster local:2", _spread(times["cluster"])),
        (
            "**verify: cluster / jobs**",
            f"**{ratio:.2f}×** (goal ≤ {GOAL}×: {'met' if ratio <= GOAL else 'not met'})",
        ),
        ("reports", "identical, byte for byte"),
        ("load --parquet --jobs 2", _spread(times["load-jobs"])),
        ("load --parquet --cluster local:2", _spread(times["load-cluster"])),
        ("**load: cluster / jobs**", f"**{load_ratio:.2f}×**"),
        ("load --parquet again, nothing changed (local:2: hashed only)", _spread(times["load-again"])),
        ("fixed cost: a LocalCluster started and closed", f"{startup:.1f} s (one source, local:2 − jobs 2)"),
        ("tasks (sources batched by bytes)", f"{tasks} (≤ 256 sources / 32 MiB each)"),
        ("tasks per second (verify, local:2)", f"{tasks / median['cluster']:.1f}"),
        (
            "per-source cost (verify, 2 workers)",
            f"{2 * median['cluster'] / arguments.sessions * 1000:.2f} ms of a worker",
        ),
        ("deployed: verify --cluster tcp:// (2 workers)", f"{real['verify_wall']:.1f} s"),
        (
            "deployed: scheduler memory idle → peak during verify",
            f"{real['scheduler_idle'] / 2**20:.0f} → {real['scheduler_peak_verify'] / 2**20:.0f} MiB",
        ),
        (f"deployed: {EMPTY_TASKS:,} empty tasks", f"{real['empty_tasks_per_second']:.0f} tasks/s"),
        (
            "deployed: scheduler memory per task held",
            f"{real['scheduler_bytes_per_task'] / 1024:.1f} KiB "
            f"(peak {real['scheduler_peak'] / 2**20:.0f} MiB)",
        ),
    ]
    table = "| measure | value |\n|---|---|\n" + "".join(f"| {name} | {value} |\n" for name, value in rows)
    moment = time.strftime("%Y-%m-%d %H:%M")
    head = f"# Fleet scale on Dask (bench/cluster.py), {moment}, {os.cpu_count()} cores\n\n"
    sys.stdout.write(head + table)
    if arguments.results is not None:
        arguments.results.write_text(head + table, encoding="utf-8")
    return 0


def _spread(values: list[float]) -> str:
    middle = statistics.median(values)
    return f"median {middle:.1f} s (min {min(values):.1f}, max {max(values):.1f}, n={len(values)})"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
