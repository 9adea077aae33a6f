"""`sessaudit load` and `sessaudit query` on the command line: messages, formats, CONTRACT §3 exit codes."""

from __future__ import annotations

import json
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from sessaudit.cli import app
from sessaudit.warehouse import loader
from tests.warehouse.conftest import Loaded, inside
from tests.warehouse.corpus import build_examples

runner = CliRunner()


def test_load_then_load_again_then_change(tmp_path: Path) -> None:
    build_examples(tmp_path)
    with inside(tmp_path):
        first = runner.invoke(app, ["load", "examples", "--db", "w.duckdb"])
        assert first.exit_code == 0, first.output
        assert "loaded 11 source(s) into w.duckdb" in first.stdout and "facts 168" in first.stdout
        again = runner.invoke(app, ["load", "examples", "--db", "w.duckdb"])
        assert again.exit_code == 0 and "(0 new, 0 replaced, 11 unchanged)" in again.stdout
        legacy = sorted(Path("examples/tiny-agent/.tiny-agent/sessions").glob("2026-11-29*.jsonl"))[0]
        legacy.write_bytes(legacy.read_bytes().splitlines(keepends=True)[0])  # only the header is left
        changed = runner.invoke(app, ["load", "examples", "--db", "w.duckdb"])
    assert changed.exit_code == 0, changed.output
    assert f"sessaudit: {legacy} changed (sha256 " in changed.stderr
    assert "its rows were replaced" in changed.stderr


def test_a_named_input_that_cannot_be_read_makes_the_load_incomplete(tmp_path: Path) -> None:
    result = runner.invoke(app, ["load", str(tmp_path / "missing.jsonl"), "--db", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 3
    assert "load incomplete" in result.stderr and "unreadable" in result.stderr


def test_load_usage_errors_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["load", str(tmp_path)]).exit_code == 2  # --db is required
    assert runner.invoke(app, ["load", str(tmp_path), "--db", "w.duckdb", "--jobs", "0"]).exit_code == 2
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    result = runner.invoke(
        app, ["load", str(tmp_path), "--db", str(tmp_path / "w.duckdb"), "--parquet", str(folder)]
    )
    assert result.exit_code == 2 and "not empty" in result.stderr


def test_a_db_that_is_another_file_is_never_opened(tmp_path: Path) -> None:
    evidence = tmp_path / "session.jsonl"
    evidence.write_bytes(b'{"kind":"header"}\n')
    for target in (evidence, tmp_path):
        result = runner.invoke(app, ["load", str(evidence), "--db", str(target)])
        assert result.exit_code == 2, result.output
    assert evidence.read_bytes() == b'{"kind":"header"}\n'
    assert sorted(path.name for path in tmp_path.iterdir()) == ["session.jsonl"]


def _load_raising(error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    """`sessaudit load` when loading raises `error`."""

    def broken(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(loader, "load_warehouse", broken)
    return runner.invoke(app, ["load", str(tmp_path), "--db", str(tmp_path / "w.duckdb")])


def test_an_internal_error_is_one_line_and_exit_4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _load_raising(RuntimeError("boom"), tmp_path, monkeypatch)
    assert result.exit_code == 4
    assert result.stderr.strip().splitlines() == [
        "sessaudit: internal error: RuntimeError: boom (rerun with --debug for details)"
    ]


def test_a_dead_worker_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    error = BrokenProcessPool("A process in the process pool was terminated abruptly")
    result = _load_raising(error, tmp_path, monkeypatch)
    assert result.exit_code == 4
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("sessaudit: a worker process ended abruptly") and "--jobs 1" in line


def test_query_list_names_every_bundled_query_and_no_check(examples: Loaded) -> None:
    result = runner.invoke(app, ["query", "--list"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert names == sorted(names) and "usage-by-model" in names and "tool-outcomes" in names
    assert not [name for name in names if name.startswith("SA")]


def test_query_formats(examples: Loaded) -> None:
    base = ["query", "sessions-by-verdict", "--db", str(examples.db)]
    table = runner.invoke(app, base)
    assert table.exit_code == 0 and table.stdout.startswith("format ") and table.stdout.endswith("(9 rows)\n")
    rows = json.loads(runner.invoke(app, [*base, "--format", "json"]).stdout)
    assert {"format": "tiny-agent", "verdict": "corrupt"}.items() <= rows[6].items()
    csv = runner.invoke(app, [*base, "--format", "csv", "--param", "format=rivumi"]).stdout
    assert csv.splitlines()[0].startswith("format,verdict,sessions") and len(csv.splitlines()) == 3
    sql = runner.invoke(
        app,
        [
            "query",
            "--db",
            str(examples.db),
            "--sql",
            "SELECT count(*) AS n FROM facts WHERE kind = $kind",
            "--param",
            "kind=event",
            "--format",
            "json",
        ],
    )
    assert json.loads(sql.stdout) == [{"n": 37}]


@pytest.mark.parametrize(
    "arguments",
    [
        ["query", "usage-by-model"],  # no --db
        ["query", "--db", "x.duckdb"],  # neither a name nor --sql
        ["query", "usage-by-model", "--sql", "SELECT 1", "--db", "x.duckdb"],  # both
        ["query", "no-such-query", "--db", "{db}"],
        ["query", "usage-by-day", "--db", "{db}", "--param", "since"],
        ["query", "usage-by-day", "--db", "{db}", "--param", "sinse=2026-11-30"],
        ["query", "usage-by-day", "--db", "{db}", "--param", "since=yesterday"],
        ["query", "--db", "{db}", "--sql", "DELETE FROM facts"],
        ["query", "--db", "{db}", "--sql", "SELEC 1"],
        ["query", "usage-by-model", "--db", "{missing}"],
        ["query", "usage-by-model", "--db", "{db}", "--format", "xml"],
    ],
)
def test_query_usage_errors_exit_2(arguments: list[str], examples: Loaded, tmp_path: Path) -> None:
    filled = [item.format(db=examples.db, missing=tmp_path / "none.duckdb") for item in arguments]
    result = runner.invoke(app, filled)
    assert result.exit_code == 2, result.output


def test_a_database_that_is_not_a_warehouse_is_refused(tmp_path: Path) -> None:
    import duckdb

    duckdb.connect(str(tmp_path / "other.duckdb")).close()
    result = runner.invoke(app, ["query", "usage-by-model", "--db", str(tmp_path / "other.duckdb")])
    assert result.exit_code == 2 and "not a sessaudit warehouse" in result.stderr


def _damaged_copies(examples: Loaded, tmp_path: Path) -> dict[str, Path]:
    """Copies of the examples' warehouse cut short at several places, or with blocks overwritten."""
    whole = examples.db.read_bytes()
    copies: dict[str, Path] = {}
    for size in (12, 4096, 12288, len(whole) - 300_000, len(whole) - 1):
        copies[f"cut at {size}"] = tmp_path / f"cut-{size}.duckdb"
        copies[f"cut at {size}"].write_bytes(whole[:size])
    damaged = bytearray(whole)
    for offset in range(20_000, len(whole), 4096):
        damaged[offset : offset + 16] = b"\xff" * 16
    copies["overwritten"] = tmp_path / "overwritten.duckdb"
    copies["overwritten"].write_bytes(bytes(damaged))
    return copies


@pytest.mark.parametrize("command", ["load", "query"])
def test_a_truncated_or_damaged_warehouse_is_a_usage_error_naming_it(
    command: str, examples: Loaded, tmp_path: Path
) -> None:
    for label, copy in _damaged_copies(examples, tmp_path).items():
        before = copy.read_bytes()
        if command == "load":
            arguments = ["load", str(examples.root / examples.name), "--db", str(copy)]
        else:
            arguments = ["query", "--db", str(copy), "--sql", "SELECT count(*) FROM facts"]
        result = runner.invoke(app, arguments)
        assert result.exit_code == 2, (label, result.output)
        assert result.stderr.startswith(f"sessaudit: --db {copy}: not a "), (label, result.stderr)
        assert "DuckDB database file" in result.stderr, (label, result.stderr)
        assert "truncated" in result.stderr or "damaged" in result.stderr, (label, result.stderr)
        assert copy.read_bytes() == before, label  # never written to
        assert not Path(f"{copy}.wal").exists(), label


def test_a_sqlite_database_as_db_is_named_and_left_untouched(tmp_path: Path) -> None:
    import sqlite3

    store = tmp_path / "half-pi.db"
    with sqlite3.connect(store) as connection:
        connection.execute("CREATE TABLE facts (x)")
    before = store.read_bytes()
    for arguments in (
        ["load", str(tmp_path / "none.jsonl"), "--db", str(store)],
        ["query", "usage-by-model", "--db", str(store)],
    ):
        result = runner.invoke(app, arguments)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"sessaudit: --db {store}: a SQLite database, not a DuckDB warehouse")
    assert store.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["half-pi.db"]
