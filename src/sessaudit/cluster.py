"""Verify on a Dask cluster (`--cluster ADDRESS`, `SESSAUDIT_CLUSTER`; `local:N` for a LocalCluster of N
worker processes): one task per big source, small sources batched by bytes, each task running the same
per-source function the local path runs (`engine.verify_candidate`), results in input order so that the
report is byte for byte the one `--jobs 1` writes.

The inputs must be on a filesystem every worker sees at the same path: a task first checks that its worker
can read each of its paths, and a path it cannot read stops the audit with the worker's address and the
path (ClusterPathError), never a report that silently lacks a source. A task whose worker dies is retried
once elsewhere (`distributed.scheduler.allowed-failures=1`); a batch that kills workers twice is split
into its sources, and a source that kills workers twice on its own is reported unreadable with the
reason, the audit going on. Dask is an optional extra (`pip install 'sessaudit[cluster]'`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, Final, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

LOCAL: Final = "local:"
BATCH_BYTES: Final = 32 << 20  # small sources travel together up to this many bytes
BATCH_ITEMS: Final = 256  # and at most this many in one task
ALLOWED_FAILURES: Final = 1  # a task is retried once after its worker died


class ClusterUnavailable(Exception):
    """`--cluster` without Dask installed, or an address that names no cluster (a usage error)."""


class ClusterPathError(Exception):
    """A worker cannot read an input path: inputs must be on a filesystem every worker sees."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as error:
        raise ClusterUnavailable(
            "--cluster needs Dask distributed, which is not installed: pip install 'sessaudit[cluster]'"
        ) from error
    return distributed


def connect(address: str) -> tuple[Any, Any]:
    """A client for `address` (`local:N` starts a LocalCluster of N single-threaded worker processes), and
    the cluster to close after it (None for a cluster that was already there)."""
    distributed = _distributed()
    import dask

    dask.config.set(
        {
            "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
            # Dask's statistical profiler samples each worker's stacks every 10 ms, holding the GIL the
            # task needs: verification ran 16-21% slower with it (measured on bench/cluster.py's corpus);
            # a deployed worker needs DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False (docs/fleet.md)
            "distributed.worker.profile.enabled": False,
            # Every Dask server (the scheduler, each nanny and worker) wakes on timers: every 20 ms to see
            # that its event loop is not blocked, every 500 ms to sample its system's metrics, every 100 ms
            # (nannies, workers) to check memory against the limits. A task holding the GIL yields it to
            # each wake-up, and a LocalCluster's scheduler and nannies share the client's process: `load
            # --parquet --cluster local:2` used 11% more CPU than `--jobs 2` with the defaults, as much as
            # `--jobs 2` with these (bench/cluster.py's corpus, docs/fleet.md). Still well inside the 3 s a
            # blocked loop is warned of, and memory checked each second.
            "distributed.admin.tick.interval": "1s",
            "distributed.admin.system-monitor.interval": "2s",
            "distributed.worker.memory.monitor-interval": "1s",
        }
    )
    if address.startswith(LOCAL):
        count = address[len(LOCAL) :]
        if not count.isdigit() or int(count) < 1:
            raise ClusterUnavailable(f"--cluster {address!r}: expected local:N with N >= 1 workers")
        cluster = distributed.LocalCluster(
            n_workers=int(count),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,  # CRITICAL only: a retried task is said by sessaudit, not by Dask's log
        )
        return distributed.Client(cluster, set_as_default=False), cluster
    try:
        return distributed.Client(address, timeout="20s", set_as_default=False), None
    except (OSError, TimeoutError) as error:
        raise ClusterUnavailable(
            f"--cluster {address!r}: no Dask scheduler answers there ({error})"
        ) from error


def batches(sizes: Sequence[int]) -> list[list[int]]:
    """Item indices in input order, grouped: a source of BATCH_BYTES or more alone, smaller ones together
    up to BATCH_BYTES and BATCH_ITEMS."""
    grouped: list[list[int]] = []
    current: list[int] = []
    held = 0
    for index, size in enumerate(sizes):
        if size >= BATCH_BYTES:
            if current:
                grouped.append(current)
                current, held = [], 0
            grouped.append([index])
            continue
        if current and (held + size > BATCH_BYTES or len(current) >= BATCH_ITEMS):
            grouped.append(current)
            current, held = [], 0
        current.append(index)
        held += size
    if current:
        grouped.append(current)
    return grouped


def each(function: Callable[[Item], Result], items: list[Item]) -> list[Result]:
    """A task that runs `function` on each of its items (what `cluster_map` runs unless told otherwise)."""
    return [function(item) for item in items]


def _run_batch(
    task: Callable[[list[Item]], list[Result]], items: list[Item], paths: list[Sequence[str]]
) -> tuple[str, list[Result] | tuple[str, str]]:
    """On a worker: (its address, the task's results, one per item) or (its address, (a path it cannot
    read, why))."""
    try:
        from distributed import get_worker

        where = str(get_worker().address)
    except (ImportError, ValueError):
        where = "this process"
    for path in (path for group in paths for path in group):
        try:
            os.stat(path)
        except OSError as error:
            return where, (path, error.strerror or str(error))
    return where, task(items)


def cluster_map(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    *,
    address: str,
    sizes: Sequence[int],
    paths: Sequence[Sequence[str]],
    crashed: Callable[[Item, str], Result],
    tracker: Any = None,
    task: Callable[[list[Item]], list[Result]] | None = None,
    alone: bool = False,
) -> Iterator[Result]:
    """`function(item)` for each item on the cluster at `address`, yielded in input order. `paths`: the
    paths each item reads, checked on its worker first; `crashed(item, reason)`: the result for an item
    whose task killed workers twice on its own. `task`: what a worker runs on a batch of items, one result
    per item (default: `function` on each); `alone`: one item per task (items that are batches already)."""
    distributed = _distributed()
    run = task if task is not None else partial(each, function)
    client, cluster = connect(address)
    try:
        groups = [[index] for index in range(len(items))] if alone else batches(sizes)
        if tracker is not None:
            tracker.start(sum(sizes), len(items))
        futures = [
            client.submit(_run_batch, run, [items[i] for i in group], [paths[i] for i in group], pure=False)
            for group in groups
        ]
        futures.reverse()  # popped from the end, in input order: a gathered task's result leaves its worker
        for group in groups:
            future = futures.pop()
            found = _gathered(client, distributed, run, items, paths, group, future, crashed)
            future.release()
            del future
            for result in found:
                if tracker is not None:
                    tracker.source_done()
                yield result
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _gathered(
    client: Any,
    distributed: Any,
    run: Callable[[list[Item]], list[Result]],
    items: Sequence[Item],
    paths: Sequence[Sequence[str]],
    group: list[int],
    future: Any,
    crashed: Callable[[Item, str], Result],
) -> list[Result]:
    """One task's results; a task that killed its workers twice is split, or its one source crashed."""
    try:
        where, outcome = future.result()
    except distributed.KilledWorker as error:
        if len(group) == 1:
            return [crashed(items[group[0]], f"its task ended two workers ({error})")]
        found: list[Result] = []
        for index in group:  # one task each: only the source that kills a worker is lost
            single = client.submit(_run_batch, run, [items[index]], [paths[index]], pure=False)
            found.extend(_gathered(client, distributed, run, items, paths, [index], single, crashed))
        return found
    if isinstance(outcome, tuple):
        path, why = outcome
        raise ClusterPathError(
            f"worker {where} cannot read {path}: {why} (the inputs must be on a filesystem every worker "
            "sees, at the same path)"
        )
    found = list(outcome)
    return found
