"""Bundled queries: headers that tell the truth, a golden answer each on the example corpus, parameters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sessaudit.resources import data_dir
from sessaudit.warehouse.queries import QueryError, bind, bundled_queries, find_query, run_sql
from sessaudit.warehouse.render import RENDERERS, QueryFormat
from tests.golden import check_golden
from tests.warehouse.conftest import Loaded

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "queries"
REQUIRED = {
    "usage-by-model",
    "usage-by-day",
    "open-runs",
    "findings-by-rule",
    "tool-outcomes",
    "sessions-by-verdict",
}


def test_the_issue_s_queries_are_bundled_and_nothing_else_is_listed() -> None:
    names = set(bundled_queries())
    assert names >= REQUIRED
    top = {path.stem for path in data_dir("queries").glob("*.sql")}
    assert names == top
    checks = {path.stem for path in (data_dir("queries") / "checks").rglob("*.sql")}
    assert not names & checks


@pytest.mark.parametrize("name", sorted(bundled_queries()))
def test_each_header_names_its_purpose_parameters_and_columns(name: str, examples: Loaded) -> None:
    query = find_query(name)
    assert query.purpose and query.columns
    used = set(re.findall(r"\$([a-z_][a-z0-9_]*)", query.sql.split("\nSELECT", 1)[1]))
    assert used == {parameter.name for parameter in query.parameters}
    answer = run_sql(examples.db, query.sql, bind(query, {}))
    assert answer.columns == [column for column, _, _ in query.columns]
    assert answer.types == [kind for _, kind, _ in query.columns]
    assert answer.rows, f"{name} answers nothing on the example corpus"


@pytest.mark.parametrize("name", sorted(bundled_queries()))
def test_golden_answer_on_the_example_corpus(name: str, examples: Loaded, update_golden: bool) -> None:
    query = find_query(name)
    answer = run_sql(examples.db, query.sql, bind(query, {}))
    check_golden(GOLDEN / f"{name}.txt", RENDERERS[QueryFormat.TABLE](answer), update_golden)


def test_parameters_filter(examples: Loaded) -> None:
    query = find_query("usage-by-model")
    everything = run_sql(examples.db, query.sql, bind(query, {}))
    rivumi = run_sql(examples.db, query.sql, bind(query, {"format": "rivumi"}))
    assert {row[0] for row in rivumi.rows} == {"rivumi"} and len(rivumi.rows) < len(everything.rows)
    later = run_sql(examples.db, query.sql, bind(query, {"since": "2026-11-30"}))
    assert sum(row[3] for row in later.rows) < sum(row[3] for row in everything.rows)
    runs = find_query("open-runs")
    unknown = run_sql(examples.db, runs.sql, bind(runs, {"condition": "effect-unknown"}))
    assert {row[6] for row in unknown.rows} == {"effect-unknown"}


def test_an_unknown_parameter_or_a_bad_value_is_a_usage_error(examples: Loaded) -> None:
    query = find_query("usage-by-day")
    with pytest.raises(QueryError, match="no parameter 'sinse'"):
        bind(query, {"sinse": "2026-11-30"})
    with pytest.raises(QueryError, match="the query failed"):
        run_sql(examples.db, query.sql, bind(query, {"since": "yesterday"}))
    with pytest.raises(QueryError, match="no bundled query"):
        find_query("checks/half-pi/SA603-message-seq-broken")


def test_queries_cannot_change_the_warehouse_or_touch_files(examples: Loaded, tmp_path: Path) -> None:
    before = examples.db.read_bytes()
    for sql in (
        "DELETE FROM facts",
        "CREATE TABLE x (a INTEGER)",
        f"COPY facts TO '{tmp_path / 'out.csv'}'",
        "SELECT * FROM read_text('/etc/hostname')",
    ):
        with pytest.raises(QueryError):
            run_sql(examples.db, sql, {})
    assert examples.db.read_bytes() == before
    assert not (tmp_path / "out.csv").exists()


def test_every_output_format_is_wired_and_json_parses_json_columns(examples: Loaded) -> None:
    assert set(RENDERERS) == set(QueryFormat)
    answer = run_sql(examples.db, "SELECT payload, timestamp FROM facts ORDER BY timestamp LIMIT 1", {})
    document = RENDERERS[QueryFormat.JSON](answer)
    assert '"payload": {' in document and '"timestamp": "20' in document
    assert RENDERERS[QueryFormat.CSV](answer).startswith("payload,timestamp\n")
