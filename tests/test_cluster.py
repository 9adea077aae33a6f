"""`verify --cluster` (sessaudit.cluster) on a LocalCluster: the JSON report is the one `--jobs 1` writes,
byte for byte, on examples/ and on a generated corpus of 2,000 sources of every format; a path a worker
cannot read stops the audit with the worker and the path; a source whose task kills workers twice is
unreadable and the others go on; without Dask, `--cluster` is a usage error."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

import sessaudit.engine
from sessaudit.cli import app
from tests.warehouse.conftest import table_contents

pytest.importorskip(
    "distributed", reason="the cluster extra (pip install 'sessaudit[cluster]') is not installed"
)

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _bench_corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus_for_cluster", REPO / "bench" / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _verify(*arguments: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["verify", *arguments, "--format", "json"])
    return result.exit_code, result.stdout, result.stderr


def test_the_examples_report_is_the_one_jobs_1_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    alone = _verify("examples/", "--jobs", "1")
    clustered = _verify("examples/", "--cluster", "local:2")
    assert clustered[0] == alone[0] == 1  # the corrupt example
    assert clustered[1] == alone[1]


@pytest.fixture(scope="module")
def mixed_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 sources of the five formats, written by the benchmark's generator (crashed ones among them)."""
    corpus = _bench_corpus()
    root = tmp_path_factory.mktemp("fleet")
    counts = {"tiny-agent": 1500, "rivumi": 250, "half-pi": 150, "claude-code": 150}
    for name, count in counts.items():
        corpus.generate(name, count * 4000, root / name, seed=7, sessions=count, crash_every=9, workers=2)
    corpus.generate("codex", 500_000, root / "codex", seed=7)
    return root


def test_a_corpus_of_2000_sources_of_every_format_gives_the_same_report(
    mixed_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(mixed_corpus)
    targets = sorted(path.name for path in mixed_corpus.iterdir())
    alone = _verify(*targets, "--jobs", "1")
    clustered = _verify(*targets, "--cluster", "local:2")
    assert clustered == alone
    sources = json.loads(alone[1])["sources"]
    formats = Counter(source["format"] for source in sources)
    assert len(sources) >= 2000 and set(formats) == {
        "tiny-agent",
        "rivumi",
        "half-pi",
        "claude-code",
        "codex",
    }
    assert {source["verdict"] for source in sources} > {"clean"}  # crashed ones among them


def test_a_path_no_worker_can_read_stops_the_audit_naming_worker_and_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.sessions import clean_session

    session = tmp_path / "gone.jsonl"
    session.write_bytes(clean_session())
    found = sessaudit.engine.discover

    def vanished(*arguments: object, **options: object) -> object:
        discovery = found(*arguments, **options)  # type: ignore[arg-type]
        session.unlink()  # after the client found it, before any worker looks
        return discovery

    monkeypatch.setattr(sessaudit.engine, "discover", vanished)
    code, _, stderr = _verify(str(session), "--cluster", "local:1")
    assert code == 3
    assert "sessaudit: audit incomplete: worker tcp://127.0.0.1:" in stderr
    assert f"cannot read {session}: No such file or directory" in stderr
    assert "a filesystem every worker sees" in stderr


def test_a_source_that_kills_its_workers_twice_is_unreadable_and_the_rest_go_on() -> None:
    from sessaudit.cluster import cluster_map

    def verify(item: int) -> tuple[str, int]:
        if item == 3:
            import os

            os._exit(1)  # a worker killed mid-task, as the OOM killer would
        return ("verified", item)

    results = list(
        cluster_map(
            verify,
            list(range(6)),
            address="local:2",
            sizes=[1] * 6,
            paths=[()] * 6,
            crashed=lambda item, reason: ("crashed", item),
        )
    )
    assert results == [
        ("verified", 0),
        ("verified", 1),
        ("verified", 2),
        ("crashed", 3),
        ("verified", 4),
        ("verified", 5),
    ]


def test_without_dask_cluster_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    monkeypatch.chdir(REPO)
    code, stdout, stderr = _verify("examples/", "--cluster", "local:2")
    assert (code, stdout) == (2, "")
    assert (
        "--cluster needs Dask distributed, which is not installed: pip install 'sessaudit[cluster]'" in stderr
    )


def test_cluster_and_jobs_together_and_a_bad_local_count_are_usage_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    code, _, stderr = _verify("examples/", "--cluster", "local:2", "--jobs", "2")
    assert code == 2 and "give one of them" in stderr
    code, _, stderr = _verify("examples/", "--cluster", "local:none")
    assert code == 2 and "expected local:N with N >= 1 workers" in stderr


def test_the_address_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = runner.invoke(
        app, ["verify", "examples/tiny-agent", "--format", "json"], env={"SESSAUDIT_CLUSTER": "local:1"}
    )
    assert result.exit_code == 1 and result.stdout == _verify("examples/tiny-agent", "--jobs", "1")[1]


def test_small_sources_travel_together_and_a_big_one_alone() -> None:
    from sessaudit.cluster import BATCH_BYTES, BATCH_ITEMS, batches

    small = BATCH_BYTES // 4
    assert batches([small] * 9) == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    assert batches([1, BATCH_BYTES, 1, 1]) == [[0], [1], [2, 3]]
    assert batches([1] * (BATCH_ITEMS + 1)) == [list(range(BATCH_ITEMS)), [BATCH_ITEMS]]
    assert batches([]) == []


# --- load --cluster ----------------------------------------------------------------------------------------
def _warehouse(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    from sessaudit.warehouse.queries import open_read_only

    return table_contents(open_read_only(path))


def _dataset(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    from sessaudit.warehouse.queries import open_dataset

    return table_contents(open_dataset(path))


FIXED = {"clock": lambda: datetime(2026, 12, 1, 8, 0, tzinfo=UTC)}


def test_load_on_the_cluster_writes_the_warehouse_and_the_dataset_jobs_1_writes(
    mixed_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessaudit.warehouse.dataset import load_dataset
    from sessaudit.warehouse.loader import LoadOptions, load_warehouse

    monkeypatch.chdir(mixed_corpus)
    targets = sorted(path.name for path in mixed_corpus.iterdir())
    alone = load_warehouse(targets, tmp_path / "alone.duckdb", LoadOptions(jobs=1, **FIXED))
    clustered = load_warehouse(targets, tmp_path / "cluster.duckdb", LoadOptions(cluster="local:2", **FIXED))
    assert clustered.report == alone.report and clustered.incomplete == alone.incomplete
    expected = _warehouse(tmp_path / "alone.duckdb")
    assert _warehouse(tmp_path / "cluster.duckdb") == expected
    written = load_dataset(targets, tmp_path / "dataset", LoadOptions(cluster="local:2", **FIXED))
    assert written.incomplete == alone.incomplete
    assert _dataset(tmp_path / "dataset") == expected
    assert len(expected["sources"]) >= 2000


def test_load_cluster_cli_and_its_usage_errors(mixed_corpus: Path, tmp_path: Path) -> None:
    target = str(mixed_corpus / "codex")
    done = runner.invoke(app, ["load", target, "--db", str(tmp_path / "w.duckdb"), "--cluster", "local:1"])
    assert done.exit_code in (0, 3), done.stderr
    assert "loaded " in done.stdout
    both = runner.invoke(
        app, ["load", target, "--db", str(tmp_path / "x.duckdb"), "--cluster", "local:1", "--jobs", "2"]
    )
    assert both.exit_code == 2 and "give one of them" in both.stderr


def _killer(client: Any, watched: Path, killed: list[int]) -> threading.Thread:
    """A thread that kills (SIGKILL) one worker process holding work once the run is under way."""

    def kill() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if watched.exists() and any(watched.iterdir()):
                break
            time.sleep(0.05)
        busy = [address for address, keys in client.processing().items() if keys]
        pids = client.run(os.getpid)
        if busy:
            killed.append(pids[busy[0]])
            os.kill(pids[busy[0]], signal.SIGKILL)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_a_worker_killed_mid_run_is_retried_elsewhere_and_nothing_changes(
    mixed_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dask
    import distributed

    from sessaudit.warehouse.dataset import load_dataset
    from sessaudit.warehouse.loader import LoadOptions, load_warehouse

    monkeypatch.chdir(mixed_corpus)
    targets = sorted(path.name for path in mixed_corpus.iterdir())
    alone = load_warehouse(targets, tmp_path / "alone.duckdb", LoadOptions(jobs=1, **FIXED))
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
        )
    client = distributed.Client(cluster, set_as_default=False)
    try:
        killed: list[int] = []
        thread = _killer(client, tmp_path / "dataset" / "sources", killed)
        written = load_dataset(
            targets, tmp_path / "dataset", LoadOptions(cluster=cluster.scheduler_address, **FIXED)
        )
        thread.join()
        assert killed, "no worker was busy when the run was under way"
        assert (
            killed[0] not in client.run(os.getpid).values()
        )  # it was killed (and its nanny started another)
        assert written.incomplete == alone.incomplete
        assert _dataset(tmp_path / "dataset") == _warehouse(tmp_path / "alone.duckdb")
        # verify, too: a worker killed under it leaves the report the one --jobs 1 writes
        killed.clear()
        watched = tmp_path / "started"
        verifying = sessaudit.engine.verify_candidate

        def noted(candidate: Any, *arguments: Any, **options: Any) -> Any:
            watched.mkdir(exist_ok=True)
            (watched / "1").touch()
            return verifying(candidate, *arguments, **options)

        monkeypatch.setattr(sessaudit.engine, "verify_candidate", noted)
        thread = _killer(client, watched, killed)
        code, report, _ = _verify(*targets, "--cluster", cluster.scheduler_address)
        thread.join()
        monkeypatch.undo()
        monkeypatch.chdir(mixed_corpus)
        assert killed
        assert (code, report) == _verify(*targets, "--jobs", "1")[:2]
    finally:
        client.close()
        cluster.close()


def test_ctrl_c_on_the_client_leaves_the_committed_manifest_whole(mixed_corpus: Path, tmp_path: Path) -> None:
    from sessaudit.warehouse.dataset import MANIFEST, TEMPORARY

    target = tmp_path / "dataset"
    command = [sys.executable, "-m", "sessaudit", "load", "--parquet", str(target), "--cluster", "local:2"]
    first = subprocess.run([*command, "codex"], cwd=mixed_corpus, capture_output=True, text=True, timeout=300)
    assert first.returncode in (0, 3), first.stderr
    committed = (target / MANIFEST).read_bytes()
    targets = sorted(path.name for path in mixed_corpus.iterdir())
    running = subprocess.Popen(
        [*command, *targets], cwd=mixed_corpus, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((target / "sources").iterdir())) < 2:
        time.sleep(0.05)  # a set beyond the committed one is written: the load is under way
    running.send_signal(signal.SIGINT)
    _, stderr = running.communicate(timeout=120)
    assert running.returncode == 130, stderr
    assert "sessaudit: interrupted" in stderr
    assert (target / MANIFEST).read_bytes() == committed
    assert not [path for path in target.iterdir() if path.name.endswith(TEMPORARY)]
    again = subprocess.run(
        [*command, *targets], cwd=mixed_corpus, capture_output=True, text=True, timeout=300
    )
    assert again.returncode in (0, 3), again.stderr
    committed_sources = first.stdout.split(" new,")[0].rsplit("(", 1)[1]
    assert f" {committed_sources} unchanged" in again.stdout  # the codex sources committed before


def _worker_settings() -> dict[str, Any]:
    import dask

    keys = (
        "distributed.scheduler.allowed-failures",
        "distributed.worker.profile.enabled",
        "distributed.admin.tick.interval",
        "distributed.admin.system-monitor.interval",
        "distributed.worker.memory.monitor-interval",
    )
    return {key: dask.config.get(key) for key in keys}


def test_a_local_cluster_s_workers_run_with_the_crash_rule_no_profiler_and_slow_timers() -> None:
    """What sessaudit sets for `local:N` reaches the worker processes (each its own interpreter), not only
    the client: the measured overhead (docs/fleet.md) depends on it."""
    from sessaudit.cluster import connect

    client, cluster = connect("local:1")
    try:
        found = list(client.run(_worker_settings).values())
    finally:
        client.close()
        cluster.close()
    assert found == [
        {
            "distributed.scheduler.allowed-failures": 1,
            "distributed.worker.profile.enabled": False,
            "distributed.admin.tick.interval": "1s",
            "distributed.admin.system-monitor.interval": "2s",
            "distributed.worker.memory.monitor-interval": "1s",
        }
    ]
