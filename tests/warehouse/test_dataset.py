"""`load --parquet DIR` without `--db` (sessaudit.warehouse.dataset): the dataset the workers write holds,
table by table, the rows `load --db` writes; a re-run skips what is unchanged and replaces what changed
(rewriting the sets a changed source leaves); nothing but a whole manifest is ever committed; `query
--parquet` answers on it and reads nothing else."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from typer.testing import CliRunner

import sessaudit.warehouse.dataset as dataset
from sessaudit.cli import app
from sessaudit.warehouse import drafts
from sessaudit.warehouse.dataset import (
    MANIFEST,
    DatasetError,
    DatasetResult,
    dataset_views,
    load_dataset,
    read_manifest,
)
from sessaudit.warehouse.extract import EvidenceChanged
from sessaudit.warehouse.loader import load_warehouse
from sessaudit.warehouse.queries import bundled_queries, open_dataset, open_read_only
from sessaudit.warehouse.schema import SOURCE_TABLES
from tests.warehouse.conftest import FIXED_CLOCK, inside, table_contents
from tests.warehouse.corpus import build_examples, build_wide

runner = CliRunner()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Every format: the examples (Claude Code and Codex among them) and every built case of the others."""
    build_examples(tmp_path / "in")
    build_wide(tmp_path / "in")
    return tmp_path / "in"


def _both(root: Path, *, jobs: int = 1) -> tuple[dict[str, Any], dict[str, Any], Any]:
    with inside(root):
        options = replace(FIXED_CLOCK, jobs=jobs)
        load_warehouse(["examples", "wide"], Path("../w.duckdb"), options)
        result = load_dataset(["examples", "wide"], Path("../dataset"), options)
    return (
        table_contents(open_read_only(root.parent / "w.duckdb")),
        table_contents(open_dataset(root.parent / "dataset")),
        result,
    )


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_dataset_holds_the_rows_load_db_writes(corpus: Path, jobs: int) -> None:
    warehouse, written, result = _both(corpus, jobs=jobs)
    assert written == warehouse
    assert all(warehouse[table] for table in SOURCE_TABLES)  # every table has rows: the check can fail
    assert result.new == len(warehouse["sources"]) and not result.replaced and result.unchanged == 0
    assert result.rows == {table: len(rows) for table, rows in warehouse.items()}
    connection = open_dataset(corpus.parent / "dataset")
    formats = {row[0] for row in connection.execute("SELECT DISTINCT format FROM sources").fetchall()}
    connection.close()
    assert {"tiny-agent", "rivumi", "half-pi", "claude-code", "codex"} <= formats


def test_facts_spilled_and_patched_late_are_the_same_rows(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fact spilled to the set's file as it is read (run ids learnt later patched in at the end)."""
    monkeypatch.setattr(dataset, "SPILL_ROWS", 1)
    monkeypatch.setattr(dataset, "SPILL_BYTES", 1)
    monkeypatch.setattr(drafts, "HOLD_LINES", 0)  # a user entry's fact leaves before its run is known
    patched: list[int] = []
    finish = dataset.SetWriter.finish

    def counted(self: dataset.SetWriter, name: str | None) -> Any:
        patched.append(len(self.patches))
        return finish(self, name)

    monkeypatch.setattr(dataset.SetWriter, "finish", counted)
    warehouse, written, _ = _both(corpus)
    assert written == warehouse
    assert sum(patched) > 0  # run ids were patched into facts already written


def _files(directory: Path) -> set[str]:
    return {str(path.relative_to(directory)) for path in directory.rglob("*") if path.is_file()}


def test_a_rerun_skips_the_unchanged_and_replaces_the_changed(corpus: Path) -> None:
    _both(corpus)
    target = corpus.parent / "dataset"
    before = _files(target)
    with inside(corpus):
        again = load_dataset(["examples", "wide"], Path("../dataset"), FIXED_CLOCK)
    assert again.new == 0 and not again.replaced and again.rows == {}
    assert again.unchanged == len(read_manifest(target)) and 0 < again.hashed < again.unchanged
    assert _files(target) == before
    # a log that grew: its set is written anew, the set it leaves rewritten without it
    grown = sorted((corpus / "wide" / "tiny-agent").glob("*.jsonl"))[0]
    old_set = read_manifest(target)[str(grown.resolve())].file_set
    grown.write_bytes(grown.read_bytes() + b'{"torn": ')
    changed = _load_again_as_fresh(corpus)
    assert [path for path, _ in changed.replaced] == [str(Path("wide") / "tiny-agent" / grown.name)]
    assert old_set not in {entry.file_set for entry in read_manifest(target).values()}


def _load_again_as_fresh(corpus: Path) -> DatasetResult:
    """Load the corpus into its dataset again: the dataset must then hold what a new `load --db` of the
    corpus holds, and nothing be on disk but the committed sets' files, the manifest and the marker."""
    target = corpus.parent / "dataset"
    with inside(corpus):
        result = load_dataset(["examples", "wide"], Path("../dataset"), FIXED_CLOCK)
        load_warehouse(["examples", "wide"], Path("../fresh.duckdb"), FIXED_CLOCK)
    fresh = table_contents(open_read_only(corpus.parent / "fresh.duckdb"))
    assert table_contents(open_dataset(target)) == fresh
    listed = {str(path.relative_to(target)) for path in dataset_views(target)[1]}
    assert _files(target) == listed | {MANIFEST, dataset.MARKER}
    return result


def test_an_interrupted_commit_leaves_the_old_manifest_whole(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _both(corpus)
    target = corpus.parent / "dataset"
    committed = (target / MANIFEST).read_bytes()
    grown = sorted((corpus / "wide" / "tiny-agent").glob("*.jsonl"))[0]
    grown.write_bytes(grown.read_bytes() + b"\n")

    def interrupted(table: Any, where: Any, **_: Any) -> None:
        Path(where).write_bytes(b"PAR1 half")  # a manifest half written, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(dataset.pq, "write_table", interrupted)
    with inside(corpus), pytest.raises(KeyboardInterrupt):
        load_dataset(["examples", "wide"], Path("../dataset"), FIXED_CLOCK)
    monkeypatch.undo()
    assert (target / MANIFEST).read_bytes() == committed
    assert not [path for path in target.iterdir() if path.name.endswith(dataset.TEMPORARY)]
    # the next load removes the sets the interrupted one wrote, and commits
    assert len(_load_again_as_fresh(corpus).replaced) == 1


def test_a_source_that_changes_while_it_is_extracted_is_not_loaded_and_its_set_holds_the_others(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_extract = dataset.extract
    changing = "wide/tiny-agent/"

    def extract(source: Any, real_path: str, *arguments: Any) -> Any:
        found = real_extract(source, real_path, *arguments)  # rows spilled, then the bytes turn out other
        if changing in real_path and real_path.endswith(
            sorted(Path(corpus, changing).glob("*.jsonl"))[0].name
        ):
            raise EvidenceChanged(f"{real_path} changed after it was verified")
        return found

    monkeypatch.setattr(dataset, "SPILL_ROWS", 1)
    monkeypatch.setattr(dataset, "extract", extract)
    with inside(corpus):
        result = load_dataset(["examples", "wide"], Path("../dataset"), FIXED_CLOCK)
    assert any("changed after it was verified" in line for line in result.incomplete)
    entries = read_manifest(corpus.parent / "dataset")
    lost = str(sorted(Path(corpus, changing).glob("*.jsonl"))[0].resolve())
    assert lost not in entries and len(entries) == result.new
    written = table_contents(open_dataset(corpus.parent / "dataset"))
    ids = {row[0] for table in SOURCE_TABLES for row in written[table]}
    assert len(ids) == len(entries)  # no row of the lost source, every row of the others


def test_folders_that_are_not_a_dataset_are_refused(tmp_path: Path, corpus: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match="holds no sessaudit dataset"):
        load_dataset([str(corpus)], tmp_path / "other", FIXED_CLOCK)
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / ".sessaudit-parquet").write_text("{}")
    with pytest.raises(DatasetError, match="export of a DuckDB warehouse"):
        load_dataset([str(corpus)], tmp_path / "export", FIXED_CLOCK)
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def test_a_second_load_into_the_same_dataset_is_refused_while_one_writes(tmp_path: Path) -> None:
    held = dataset._lock(tmp_path / "d")
    try:
        with pytest.raises(DatasetError, match="another load is writing"):
            dataset._lock(tmp_path / "d")
    finally:
        import os

        os.close(held)


def test_query_parquet_answers_the_bundled_queries_as_db_does_and_only_queries(corpus: Path) -> None:
    _both(corpus)
    database, target = corpus.parent / "w.duckdb", corpus.parent / "dataset"
    answered = 0
    for entry in bundled_queries().values():
        on_db = runner.invoke(app, ["query", entry.name, "--db", str(database), "--format", "json"])
        on_set = runner.invoke(app, ["query", entry.name, "--parquet", str(target), "--format", "json"])
        assert on_db.exit_code == on_set.exit_code, (entry.name, on_set.stderr)
        if on_db.exit_code == 0:  # a query whose parameters have no default needs them
            assert json.loads(on_set.stdout) == json.loads(on_db.stdout), entry.name
            answered += bool(json.loads(on_db.stdout))
    assert answered >= 5
    for sql in (f"COPY (SELECT 1) TO '{target}/x.csv'", "CREATE TABLE t (a INT)"):
        refused = runner.invoke(app, ["query", "--parquet", str(target), "--sql", sql])
        assert refused.exit_code == 2 and "only a query" in refused.stderr
    outside = runner.invoke(
        app, ["query", "--parquet", str(target), "--sql", "SELECT * FROM read_text('/etc/hostname')"]
    )
    assert outside.exit_code == 2 and "disabled by configuration" in outside.stderr
    both = runner.invoke(app, ["query", "usage-by-model", "--parquet", str(target), "--db", str(database)])
    assert both.exit_code == 2


def test_load_cli_without_db_writes_the_dataset_and_says_what_it_did(corpus: Path) -> None:
    with inside(corpus):
        first = runner.invoke(app, ["load", "examples", "--parquet", "../d", "--jobs", "1"])
        second = runner.invoke(app, ["load", "examples", "--parquet", "../d", "--jobs", "1"])
        neither = runner.invoke(app, ["load", "examples"])
    assert first.exit_code == 0, first.stderr
    assert "into the dataset ../d (" in first.stdout and " 0 unchanged" in first.stdout
    assert second.exit_code == 0 and " new, 0 replaced" in second.stdout and "only hashed" in second.stdout
    assert neither.exit_code == 2 and "--db FILE (DuckDB), or --parquet DIR" in neither.stderr


def _manifest_rows(target: Path) -> Iterator[dict[str, Any]]:
    yield from pq.read_table(target / MANIFEST).to_pylist()


def test_the_manifest_names_each_source_with_its_digest_and_set(corpus: Path) -> None:
    _both(corpus)
    target = corpus.parent / "dataset"
    rows = list(_manifest_rows(target))
    assert rows and all(len(row["sha256"]) == 64 and len(row["file_set"]) == 64 for row in rows)
    for row in rows:
        for table in row["tables"]:
            assert (target / table / f"{row['file_set']}.parquet").is_file()
    assert shutil.which  # the module imports what it uses
