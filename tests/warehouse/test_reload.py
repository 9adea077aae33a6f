"""Re-loading: idempotent, a changed source replaces its rows (and only its), `--jobs` changes nothing, the
evidence is never written, and evidence that changes after verification is not loaded."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sessaudit.formats.tiny_agent.build.session import SessionBuilder
from sessaudit.warehouse import loader
from sessaudit.warehouse.loader import NOT_LOADED, REPLACED, UNCHANGED, LoadOptions, load_warehouse
from sessaudit.warehouse.schema import SOURCE_TABLES
from tests.warehouse.conftest import FIXED_CLOCK, Loaded, inside, query
from tests.warehouse.corpus import build_examples


def dump(db: Path, *, without: tuple[str, ...] = ()) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted, leaving out the named columns."""
    connection = duckdb.connect(str(db), read_only=True)
    try:
        tables = {}
        for table in (*SOURCE_TABLES, "warehouse_meta"):
            columns = [
                name
                for (name,) in connection.execute(
                    "SELECT column_name FROM duckdb_columns() WHERE table_name = $table "
                    "ORDER BY column_index",
                    {"table": table},
                ).fetchall()
                if name not in without
            ]
            listed = ", ".join(f'"{name}"' for name in columns)
            rows = connection.execute(f"SELECT {listed} FROM {table}").fetchall()
            tables[table] = sorted(rows, key=repr)
        return tables
    finally:
        connection.close()


def tree(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder`: sha256 and modification time."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            found[str(path.relative_to(folder))] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                os.stat(path).st_mtime_ns,
            )
    return found


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    build_examples(tmp_path)
    return tmp_path


def test_loading_twice_is_idempotent(corpus: Path) -> None:
    with inside(corpus):
        first = load_warehouse(["examples"], Path("w.duckdb"), FIXED_CLOCK)
        before = dump(Path("w.duckdb"))
        second = load_warehouse(["examples"], Path("w.duckdb"), LoadOptions())
        after = dump(Path("w.duckdb"))
    assert {item.status for item in second.outcomes} == {UNCHANGED}
    assert set(second.rows.values()) == {0}
    assert before == after
    assert sum(first.rows.values()) > 100


def test_a_changed_source_replaces_its_rows_and_only_its(corpus: Path) -> None:
    sessions = corpus / "examples" / "tiny-agent" / ".tiny-agent" / "sessions"
    target = sorted(sessions.glob("2026-11-30T09*.jsonl"))[0]
    with inside(corpus):
        load_warehouse(["examples"], Path("w.duckdb"), FIXED_CLOCK)
        before = dump(Path("w.duckdb"))
        builder = SessionBuilder(seed=9, created_at=1787410800000, cwd="/home/dev/shop")
        run = builder.start_run("hello")
        builder.assistant(builder.step(run), "hi there")
        builder.finish(run)
        target.write_bytes(builder.data())  # same path, another session: another sha256
        again = load_warehouse(["examples"], Path("w.duckdb"), FIXED_CLOCK)
        after = dump(Path("w.duckdb"))
    statuses = {item.source.path: item.status for item in again.outcomes}
    changed = [path for path, status in statuses.items() if status == REPLACED]
    assert changed == [str(target.relative_to(corpus))]
    assert set(statuses.values()) == {UNCHANGED, REPLACED}
    assert len(after["sources"]) == len(before["sources"])
    (source,) = query(
        corpus / "w.duckdb", "SELECT source_id, sha256 FROM sources WHERE path = $p", {"p": changed[0]}
    )
    assert source[1] == hashlib.sha256(target.read_bytes()).hexdigest()
    (facts,) = query(corpus / "w.duckdb", "SELECT count(*) FROM facts WHERE source_id = $s", {"s": source[0]})
    assert facts == (6,)  # the new session's six facts, none of the old one's
    others = {table: [row for row in rows if source[0] not in row] for table, rows in before.items()}
    assert others == {table: [row for row in rows if source[0] not in row] for table, rows in after.items()}


def test_a_source_named_twice_is_loaded_once(corpus: Path) -> None:
    with inside(corpus):
        sessions = sorted(Path("examples/tiny-agent/.tiny-agent/sessions").glob("*.jsonl"))
        result = load_warehouse([str(sessions[0]), str(sessions[0]), "examples/tiny-agent"], Path("w.duckdb"))
    assert result.rows["sources"] == len(sessions)


def test_parallel_verification_loads_the_same_warehouse(corpus: Path, examples: Loaded) -> None:
    with inside(corpus):
        result = load_warehouse(["examples"], Path("w.duckdb"), LoadOptions(jobs=2, clock=FIXED_CLOCK.clock))
    assert result.report == examples.result.report
    assert dump(corpus / "w.duckdb", without=("source_id", "real_path")) == dump(
        examples.db, without=("source_id", "real_path")
    )


def test_loading_never_writes_the_evidence(corpus: Path) -> None:
    before = tree(corpus / "examples")
    with inside(corpus):
        load_warehouse(["examples"], Path("w.duckdb"))
    assert tree(corpus / "examples") == before


def test_evidence_changed_after_verification_is_not_loaded(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the two-pass load re-reads the evidence to extract it (the single pass loads the bytes it verified:
    # test_single_pass)
    verify = loader.verify_candidate

    def verify_then_rewrite(candidate: Any, options: Any, *tap: Any) -> Any:
        answer = verify(candidate, options, *tap)
        if candidate.path.endswith(".jsonl") and "2026-11-30T09" in candidate.path:
            data = bytearray(Path(candidate.real_path).read_bytes())
            data[10:12] = b"XX"  # rewritten inside the verified range
            Path(candidate.real_path).write_bytes(bytes(data))
        return answer

    monkeypatch.setattr(loader, "verify_candidate", verify_then_rewrite)
    with inside(corpus):
        result = load_warehouse(["examples"], Path("w.duckdb"), LoadOptions(jobs=2, single_pass=False))
    (refused,) = [item for item in result.outcomes if item.status == NOT_LOADED]
    assert "changed after it was verified" in str(refused.detail)
    assert result.incomplete == [f"{refused.source.path}: not loaded: {refused.detail}"]
    assert query(
        corpus / "w.duckdb", "SELECT count(*) FROM sources WHERE path = $p", {"p": refused.source.path}
    ) == [(0,)]


def test_rows_are_inserted_in_bulk_never_row_by_row(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    statements: list[str] = []
    connect = duckdb.connect

    class Recording:
        def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
            self.connection = connection

        def execute(self, sql: str, *args: Any) -> Any:
            statements.append(sql)
            return self.connection.execute(sql, *args)

        def executemany(self, *args: Any) -> Any:  # pragma: no cover - the point is that it is never called
            raise AssertionError("executemany is row by row")

        def __getattr__(self, name: str) -> Any:
            return getattr(self.connection, name)

    monkeypatch.setattr(loader.duckdb, "connect", lambda *args, **kwargs: Recording(connect(*args, **kwargs)))
    with inside(corpus):
        result = load_warehouse(["examples"], Path("w.duckdb"))
    inserts = [sql for sql in statements if sql.startswith("INSERT INTO") and "warehouse_meta" not in sql]
    tables = [table for table in SOURCE_TABLES if result.rows[table]]
    assert inserts == [f"INSERT INTO {table} SELECT * FROM incoming" for table in tables]
    assert not any("VALUES" in sql for sql in inserts)
    shutil.rmtree(corpus / "examples")
