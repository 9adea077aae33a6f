"""Run one function per source in a process pool (`--jobs`), results yielded in input order."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

from sessaudit import progress

if TYPE_CHECKING:  # concurrent.futures and multiprocessing are imported only when a pool runs (start-up)
    from concurrent.futures import Future, ProcessPoolExecutor

Item = TypeVar("Item")
Result = TypeVar("Result")

# Below this much evidence a pool costs more than it saves: forked workers start at once but ship their
# results back pickled; spawned ones import sessaudit afresh (about a second each, measured).
POOL_THRESHOLD_BYTES = {"fork": 8 << 20, "spawn": 48 << 20}
# items in the pool or done and not yet yielded, when the caller sets no window
AHEAD_MIN, AHEAD_PER_JOB = 64, 16


def worker_failure(error: BaseException) -> str | None:
    """The one line for a pool whose worker died (the system killed it, or it could not start), which is
    no bug of sessaudit's: what happened and what to try; None for any other error."""
    futures = sys.modules.get("concurrent.futures")  # never imported: no pool ran, no worker died
    if futures is None or not isinstance(error, futures.BrokenExecutor):
        return None
    return (
        "a worker process ended abruptly (the system may have killed it, for example when memory ran out); "
        "nothing was written; rerun with --jobs 1 or with more memory"
    )


def _worker_start(counter: progress.Counter) -> None:
    """Pool initializer: Ctrl-C is the parent's to handle (it ends the workers); a worker that took it
    itself would print a traceback of its own while idle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    progress.shared_sink(counter)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's workers now (after Ctrl-C): the audit is abandoned, nothing of theirs is awaited."""
    processes = dict(getattr(pool, "_processes", None) or {})  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        process.terminate()


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def ordered_map(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    *,
    jobs: int,
    sizes: Sequence[int] | None = None,
    tracker: progress.Tracker | None = None,
    start_method: str = "fork",
    window: int | None = None,
) -> Iterator[Result]:
    """`function(item)` for each item, yielded in input order; in `jobs` processes when that pays.

    `sizes` (bytes per item) decide whether a pool pays and feed the tracker's total. Workers are forked
    where the platform allows (no re-import; callers holding threads or native connections, like DuckDB,
    pass "spawn"). A worker's reads reach the tracker through a shared counter. With a `window`, at most
    that many items are in the pool or done and not yet yielded, so results waiting for an earlier slow
    item cannot pile up."""
    total = sum(sizes) if sizes is not None else 0
    # one job or one item never needs a pool: multiprocessing is then not even imported
    in_turn = jobs <= 1 or len(items) <= 1
    method = "spawn"
    if not in_turn:
        from multiprocessing import get_all_start_methods

        method = start_method if start_method in get_all_start_methods() else "spawn"
        in_turn = sizes is not None and total < POOL_THRESHOLD_BYTES.get(method, 0)
    if in_turn:
        if tracker is not None:
            tracker.start(total, len(items))
        try:
            for item in items:
                yield function(item)
                if tracker is not None:
                    tracker.source_done()
                # The results so far live until the caller is done: keep the cyclic collector from scanning
                # them again and again while later items run (they hold no reference cycles).
                gc.freeze()
        finally:
            gc.unfreeze()
        return
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from multiprocessing import get_context

    context = get_context(method)
    counter = context.Value("q", 0)
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(items)),
        mp_context=context,
        initializer=_worker_start,
        initargs=(counter,),
    ) as pool:
        try:
            # never every item at once: each wait() below registers with every pending future, so a pool
            # of 20,000 pending items spent more time waiting than verifying (measured: --jobs 2 took 2.3x
            # the time of a cluster of 2 on 20,000 small sessions, bench/cluster.py)
            ahead = max(1, window) if window is not None else max(AHEAD_MIN, AHEAD_PER_JOB * jobs)
            futures: deque[Future[Result]] = deque()
            pending: set[Future[Result]] = set()
            submitted = 0
            started = False
            while submitted < len(items) or futures:
                while submitted < len(items) and len(futures) < ahead:
                    futures.append(pool.submit(function, items[submitted]))
                    pending.add(futures[-1])
                    submitted += 1
                if tracker is not None and submitted and not started:
                    # Forked workers all exist once the first item is submitted: the display (and its refresh
                    # thread) starts only now, so no worker is forked while another thread holds a lock.
                    tracker.start(total, len(items))
                    tracker.attach(counter)
                    started = True
                future = futures.popleft()
                while not future.done():
                    done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    if tracker is not None:
                        for _ in done:
                            tracker.source_done()
                        tracker.poll()
                if future in pending:  # finished between the check and the wait
                    pending.discard(future)
                    if tracker is not None:
                        tracker.source_done()
                yield future.result()
        except (KeyboardInterrupt, GeneratorExit):  # Ctrl-C, or the caller gave up
            _end_workers(pool)
            raise
