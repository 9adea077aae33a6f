"""Streaming loads (issue 8): a source's rows reach DuckDB in bounded batches as its bytes are read, the
tables are the same whatever the batch size, evidence that changes after verification still loads
nothing (and leaves a replaced source's old rows), and memory does not grow with the size of a session."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.tiny_agent.build.session import SessionBuilder
from sessaudit.parallel import ordered_map
from sessaudit.warehouse import drafts, loader, writer
from sessaudit.warehouse.assemble import source_id_of
from sessaudit.warehouse.loader import NOT_LOADED, REPLACED, load_warehouse
from sessaudit.warehouse.rows import FactRow
from sessaudit.warehouse.schema import SOURCE_TABLES
from tests.formats.tiny_agent.test_memory import MB, dense_session
from tests.warehouse.conftest import FIXED_CLOCK, inside, query
from tests.warehouse.corpus import build_examples
from tests.warehouse.test_reload import dump

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    build_examples(tmp_path)
    return tmp_path


def tiny_batches(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every fact and ledger row its own batch, handed to DuckDB at once; counts what the writer does."""
    monkeypatch.setattr(loader, "SPILL_ROWS", 1)
    monkeypatch.setattr(loader, "SPILL_BYTES", 1)
    monkeypatch.setattr(writer, "FLUSH_ROWS", 1)
    seen = {"inserts": 0, "patches": 0}
    insert, patch = writer.Writer._insert, writer.Writer._patch

    def counted_insert(self: writer.Writer, batch: Any) -> None:
        seen["inserts"] += 1
        insert(self, batch)

    def counted_patch(self: writer.Writer, argument: Any) -> None:
        seen["patches"] += 1
        patch(self, argument)

    monkeypatch.setattr(writer.Writer, "_insert", counted_insert)
    monkeypatch.setattr(writer.Writer, "_patch", counted_patch)
    return seen


def test_many_small_batches_give_the_same_tables_as_one(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with inside(corpus):
        whole = load_warehouse(["examples"], Path("one.duckdb"), FIXED_CLOCK)
        seen = tiny_batches(monkeypatch)
        streamed = load_warehouse(["examples"], Path("many.duckdb"), FIXED_CLOCK)
        held = dict(seen)
        monkeypatch.setattr(drafts, "HOLD_LINES", 0)  # a user entry's fact leaves before its run is known
        seen.update(inserts=0, patches=0)
        patched = load_warehouse(["examples"], Path("patched.duckdb"), FIXED_CLOCK)
    assert held["inserts"] > whole.rows["facts"] // 2  # the rows did go in many batches
    assert held["patches"] == 0  # each user entry's fact waited for its runStarted, a line later
    assert seen["patches"] > 0  # … unless it may not wait: its run id is written after it
    assert streamed.rows == patched.rows == whole.rows
    assert dump(corpus / "many.duckdb") == dump(corpus / "one.duckdb") == dump(corpus / "patched.duckdb")


def _rewrite_after_verification(monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    verify = getattr(loader, "verify_candidate")  # noqa: B009 - not in the module's exports

    def verify_then_rewrite(candidate: Any, options: Any, *tap: Any) -> Any:
        answer = verify(candidate, options, *tap)
        if candidate.path.endswith(".jsonl") and marker in candidate.path:
            data = bytearray(Path(candidate.real_path).read_bytes())
            data[-3:-1] = b"XX"  # rewritten at the end of the verified range: after rows were written
            Path(candidate.real_path).write_bytes(bytes(data))
        return answer

    monkeypatch.setattr(loader, "verify_candidate", verify_then_rewrite)


def test_a_source_changed_after_verification_leaves_no_rows_though_some_were_written(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tiny_batches(monkeypatch)
    _rewrite_after_verification(monkeypatch, "2026-11-30T09")
    with inside(corpus):  # verified, then read again (what the single pass leaves when it cannot be used)
        result = load_warehouse(["examples"], Path("w.duckdb"), replace(FIXED_CLOCK, single_pass=False))
    (refused,) = [item for item in result.outcomes if item.status == NOT_LOADED]
    assert "changed after it was verified" in str(refused.detail)
    assert result.incomplete == [f"{refused.source.path}: not loaded: {refused.detail}"]
    assert seen["inserts"] > 0
    source_id = source_id_of(refused.real_path)
    for table in SOURCE_TABLES:
        assert query(
            corpus / "w.duckdb", f"SELECT count(*) FROM {table} WHERE source_id = $s", {"s": source_id}
        ) == [(0,)]
    assert query(corpus / "w.duckdb", "SELECT count(*) FROM facts")[0][0] == result.rows["facts"]


def test_a_replaced_source_changed_after_verification_keeps_its_old_rows(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = corpus / "examples" / "tiny-agent" / ".tiny-agent" / "sessions"
    target = sorted(sessions.glob("2026-11-30T09*.jsonl"))[0]
    verify = getattr(loader, "verify_candidate")  # noqa: B009 - not in the module's exports
    with inside(corpus):
        load_warehouse(["examples"], Path("w.duckdb"), FIXED_CLOCK)
        before = dump(Path("w.duckdb"))
        builder = SessionBuilder(seed=9, created_at=1787410800000, cwd="/home/dev/shop")
        run = builder.start_run("hello")
        builder.assistant(builder.step(run), "hi there")
        builder.finish(run)
        target.write_bytes(builder.data())  # a new version to replace the loaded one …
        tiny_batches(monkeypatch)
        _rewrite_after_verification(monkeypatch, "2026-11-30T09")  # … which changes once verified
        # read again after verification (a reload at another size takes the single pass, which reads once)
        again = load_warehouse(["examples"], Path("w.duckdb"), replace(FIXED_CLOCK, single_pass=False))
        after = dump(Path("w.duckdb"))
    assert [item.status for item in again.outcomes if item.status not in ("unchanged",)] == [NOT_LOADED]
    assert after == before  # the old version's rows, all of them, and nothing of the new one

    # and once the file holds still, the replacement goes through whole
    monkeypatch.setattr(loader, "verify_candidate", verify)
    with inside(corpus):
        third = load_warehouse(["examples"], Path("w.duckdb"), FIXED_CLOCK)
    assert [item.status for item in third.outcomes if item.status != "unchanged"] == [REPLACED]
    (source,) = query(
        corpus / "w.duckdb", "SELECT source_id, facts_loaded FROM sources WHERE path LIKE '%T09%'"
    )
    assert query(
        corpus / "w.duckdb", "SELECT count(*) FROM facts WHERE source_id = $s", {"s": source[0]}
    ) == [(source[1],)]
    assert query(corpus / "w.duckdb", "SELECT count(*) FROM facts WHERE source_id LIKE '%:replaced'") == [
        (0,)
    ]


_MEASURE = """
import os, sys
from pathlib import Path
from sessaudit.warehouse.loader import LoadOptions, load_warehouse
result = load_warehouse([sys.argv[1]], Path(sys.argv[2]), LoadOptions(jobs=int(sys.argv[3])))
assert result.incomplete == [], result.incomplete
print(result.rows["facts"])
"""


def _session(folder: Path, size: str) -> Path:
    subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "corpus.py"),
            "--format",
            "tiny-agent",
            "--size",
            size,
            "--seed",
            "3",
            "--out",
            str(folder),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = (folder / ".tiny-agent" / "sessions").glob("*.jsonl")
    return path


def _peak_rss_mib(session: Path, db: Path, jobs: int = 1) -> float:
    """Peak RSS of a load in a fresh process (one process with jobs=1: ru_maxrss is the largest one's)."""
    process = subprocess.Popen(
        [sys.executable, "-c", _MEASURE, str(session), str(db), str(jobs)], stdout=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert process.stdout is not None and int(process.stdout.read()) > 0
    return usage.ru_maxrss / 1024


def test_peak_memory_does_not_grow_with_the_session(tmp_path: Path) -> None:
    small = _session(tmp_path / "small", "12MB")
    large = _session(tmp_path / "large", "60MB")
    grown = _peak_rss_mib(large, tmp_path / "large.duckdb") - _peak_rss_mib(small, tmp_path / "small.duckdb")
    # 48 MB more input; loading the whole source at once grew by several times that
    assert grown < 30, f"peak RSS grew by {grown:.0f} MiB for 48 MB more input"


# Measured (dense sessions, 15 -> 60 MB, one process): 1.09-1.20 MiB of peak RSS per MB; 1.60-1.75 when
# every tool call of the session was kept as a draft until its end (before they left as rows when their run
# finished). It includes the verifier's state (≈ 0.47, tests/formats/tiny_agent/test_memory.py).
LOAD_GROWTH_MIB_PER_MB = 1.4


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss is in KiB on Linux")
def test_a_dense_sessions_load_grows_at_most_the_pinned_rate(tmp_path: Path) -> None:
    small = dense_session(tmp_path / "small", 15 * MB)
    large = dense_session(tmp_path / "large", 60 * MB)
    growth = _peak_rss_mib(large, tmp_path / "large.duckdb") - _peak_rss_mib(small, tmp_path / "small.duckdb")
    megabytes = (large.stat().st_size - small.stat().st_size) / MB
    assert growth <= LOAD_GROWTH_MIB_PER_MB * megabytes, (
        f"peak RSS grew {growth:.1f} MiB over {megabytes:.0f} MB ({growth / megabytes:.2f} MiB/MB)"
    )


def _square(value: int) -> int:
    return value * value


def test_a_window_keeps_results_in_order() -> None:
    # sizes large enough for a pool; a window of 3 never lets more than 3 results wait
    results = ordered_map(_square, list(range(12)), jobs=2, sizes=[64 << 20] * 12, window=3)
    assert list(results) == [value * value for value in range(12)]


def test_a_line_larger_than_duckdbs_memory_limit_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "DUCKDB_MEMORY", 32 << 20)  # a 6 MiB value needs more than this
    builder = SessionBuilder(seed=5, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("read it")
    builder.assistant(builder.step(run), "é" * (3 << 20))  # one line of 6 MiB
    builder.finish(run)
    session = tmp_path / "big.jsonl"
    session.write_bytes(builder.data())
    result = load_warehouse([str(session)], tmp_path / "w.duckdb", FIXED_CLOCK)
    assert result.incomplete == []
    (length,) = query(tmp_path / "w.duckdb", "SELECT max(length(payload::VARCHAR)) FROM facts")[0]
    assert length > 3 << 20


def _fact_row(line: int, fact_id: str, run_id: str | None = None) -> Any:
    return FactRow(
        "s", "session", run_id, line, line, 0, None, "entry", "message", "user", fact_id, None, b"{}"
    )


def test_a_fact_awaiting_its_run_waits_for_the_next_batch_but_not_for_long() -> None:
    spilled: list[list[Any]] = []
    into = drafts.Extraction(spill=lambda facts, usage, calls, size: spilled.append(facts), spill_rows=4)
    into.add_fact(_fact_row(1, "old"), awaiting_run=True)
    for line in range(2, 2 + drafts.HOLD_LINES):
        into.add_fact(_fact_row(line, f"f{line}"))
    into.add_fact(_fact_row(40, "new"), awaiting_run=True)  # spills: "new" is recent, "old" is not
    into.add_fact(_fact_row(41, "other"))
    into.assign_run(40, "new", "run-2")  # still held: set in place
    into.assign_run(1, "old", "run-1")  # written already: a patch
    into.flush()
    written = [row for batch in spilled for row in batch]
    assert sorted(row.line for row in written) == [1, *range(2, 2 + drafts.HOLD_LINES), 40, 41]
    assert {row.id: row.run_id for row in written if row.id in ("old", "new")} == {
        "old": None,
        "new": "run-2",
    }
    assert into.patches == [(1, "old", "run-1")]
    assert into.facts_loaded == len(written)


def test_the_writer_shortens_the_switch_interval_only_while_it_is_open(tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    connection = loader.open_database(tmp_path / "w.duckdb")
    try:
        with writer.Writer(connection) as open_writer:
            assert sys.getswitchinterval() == pytest.approx(min(before, writer.SWITCH_INTERVAL))
            open_writer.commit()
        assert sys.getswitchinterval() == before
        with pytest.raises(RuntimeError), writer.Writer(connection):
            raise RuntimeError("an error while loading")
        assert sys.getswitchinterval() == before
    finally:
        connection.close()
