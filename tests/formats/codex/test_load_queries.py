"""`sessaudit load` of a folder holding the Codex builder's scenarios and one session of every other format,
then every bundled query on it; the usage queries give the Codex totals written here by hand (the builder's
Usage figures, cached input taken out of the input), priced by genai-prices' bundled snapshot. Codex models
the snapshot knows get a cost, one it does not a note saying so, never a silent NULL."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.claude_code.build.scenarios import build_one as build_claude_code
from sessaudit.formats.codex.build.parts import Usage
from sessaudit.formats.codex.build.scenarios import build_all, start
from sessaudit.warehouse.queries import bind, bundled_queries, find_query, run_sql
from tests.formats.half_pi.cases import CASES as HALF_PI_CASES
from tests.formats.rivumi.cases import CASES as RIVUMI_CASES
from tests.test_golden_reports import CASES as TINY_AGENT_CASES
from tests.warehouse.conftest import inside, query

# per Codex file: (input not cached, cache_read, output, usage records), from the scenarios' Usage figures
TOTALS: dict[str, list[tuple[int, int, int, int]]] = {
    "clean": [(4_822, 49_280, 1_235, 5)],  # 2772 + 927 + 405 + 324 + 394; output 298 + 611 + 143 + 87 + 96
    "doubled-token-counts": [(4_809, 23_424, 860, 4)],  # 3348 + 641 + 604 + 216 (repeats not counted)
    "first-info-null": [(10_358, 17_792, 890, 3)],  # 8034 + 1940 + 384
    "fork-with-history": [(10_461, 43_392, 1_130, 4), (886, 26_752, 607, 2)],  # the fork: 436 + 450
    "compaction": [(27_784, 78_464, 4_189, 6)],  # 17960 + 2622 + 1294 + 302 + 4812 + 794
    "killed-during-exec": [(7_902, 0, 254, 1)],
    "killed-during-read": [(3_681, 13_184, 236, 2)],  # 3090 + 591
    "torn-tail": [(2_428, 6_912, 488, 1)],  # the second response's token_count is torn
    "apply-patch-unanswered": [(3_602, 11_520, 1_004, 2)],  # 2512 + 1090
    "mcp-call": [(9_414, 12_416, 511, 2)],  # 8402 + 1012
    "model-request-open": [(5_750, 4_992, 284, 2)],  # 5012 + 738
    "sub-agent": [(9_172, 35_328, 766, 3), (1_419, 29_312, 543, 2)],  # 8064 + 554 + 554; 940 + 479
    "archived": [(5_126, 4_608, 822, 2)],  # 4630 + 496
    "multi-day-local-time": [(13_416, 36_288, 981, 4)],  # 11006 + 1476 + 485 + 449
    "local-shell": [(4_274, 3_840, 226, 2)],  # codex-mini-latest: 3904 + 370
}
MINI = "local-shell"
# genai-prices 0.2.3 per million tokens: gpt-5-codex input $1.25, cache read $0.125, output $10;
# codex-mini-latest input $1.50, cache read $0.375, output $6
CLEAN_COST = Decimal("0.024537500")  # 4822×1.25 + 49280×0.125 + 1235×10 = 6027.5 + 6160 + 12350 millionths
MINI_COST = Decimal("0.009207000")  # 4274×1.5 + 3840×0.375 + 226×6 = 6411 + 1440 + 1356 millionths

runner = CliRunner()


@dataclass(frozen=True)
class Corpus:
    db: Path
    sessions: dict[str, list[str]]  # scenario → its files' session ids
    load_output: str


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("mixed")
    target = root / "corpus"
    manifest = build_all(target / "codex")["scenarios"]
    build_claude_code(target / "claude-code", "clean")
    (target / "tiny-agent").mkdir()
    (target / "tiny-agent" / "legal-compaction-settled.jsonl").write_bytes(
        TINY_AGENT_CASES["legal-compaction-settled"]()
    )
    (target / "rivumi" / "clean").mkdir(parents=True)
    RIVUMI_CASES["clean"](target / "rivumi" / "clean")
    (target / "half-pi" / "core").mkdir(parents=True)
    HALF_PI_CASES["generation-2026-07-14-core"](target / "half-pi" / "core")
    with inside(root):
        result = runner.invoke(app, ["load", "corpus", "--db", "w.duckdb"])
    assert result.exit_code == 0, result.output
    sessions = {name: [item["session_id"] for item in entry["files"]] for name, entry in manifest.items()}
    return Corpus(root / "w.duckdb", sessions, result.stdout)


def test_every_format_is_loaded(corpus: Corpus) -> None:
    formats = {row[0] for row in query(corpus.db, "SELECT DISTINCT format FROM sources")}
    assert formats == {"codex", "claude-code", "tiny-agent", "rivumi", "half-pi"}
    (count,) = query(corpus.db, "SELECT count(*) FROM sources WHERE format = 'codex'")[0]
    assert count == 17  # 15 scenarios, two of them with a second file (a fork, a sub-agent)


@pytest.mark.parametrize("name", sorted(bundled_queries()))
def test_every_bundled_query_runs(corpus: Corpus, name: str) -> None:
    found = find_query(name)
    answer = run_sql(corpus.db, found.sql, bind(found, {}))
    assert answer.columns == [column for column, _, _ in found.columns]
    if "format" in {parameter.name for parameter in found.parameters}:
        codex = run_sql(corpus.db, found.sql, bind(found, {"format": "codex"}))
        assert codex.columns == answer.columns


def test_usage_by_session_gives_each_codex_session_its_totals(corpus: Corpus) -> None:
    found = find_query("usage-by-session")
    answer = run_sql(corpus.db, found.sql, bind(found, {"format": "codex"}))
    column = {name: index for index, name in enumerate(answer.columns)}
    got = {
        row[column["session_id"]]: (
            row[column["input"]],
            row[column["cache_read"]],
            row[column["output"]],
            row[column["records"]],
            row[column["cache_write"]],
            row[column["input_total"]],
            row[column["unpriced"]],
        )
        for row in answer.rows
    }
    expected = {
        session_id: (input_, cache_read, output, records, 0, input_ + cache_read, 0)
        for name, files in TOTALS.items()
        for session_id, (input_, cache_read, output, records) in zip(
            corpus.sessions[name], files, strict=True
        )
    }
    assert got == expected
    costs = {row[column["session_id"]]: row[column["cost_usd"]] for row in answer.rows}
    assert costs[corpus.sessions["clean"][0]] == CLEAN_COST
    assert costs[corpus.sessions[MINI][0]] == MINI_COST
    models = {row[column["session_id"]]: row[column["models"]] for row in answer.rows}
    assert models[corpus.sessions[MINI][0]] == ["codex-mini-latest"]
    assert models[corpus.sessions["clean"][0]] == ["gpt-5-codex"]


def test_usage_by_model_sums_the_codex_models(corpus: Corpus) -> None:
    found = find_query("usage-by-model")
    answer = run_sql(corpus.db, found.sql, bind(found, {"format": "codex"}))
    rows = [row[:11] for row in answer.rows]
    gpt5 = [item for name, files in TOTALS.items() if name != MINI for item in files]
    assert len(gpt5) == 16
    input_ = sum(item[0] for item in gpt5)
    cache_read = sum(item[1] for item in gpt5)
    assert (input_, cache_read, sum(item[2] for item in gpt5)) == (121_030, 393_664, 14_800)
    assert rows == [
        ("codex", "openai", "codex-mini-latest", 2, 1, 4_274, 3_840, 0, 8_114, 226, MINI_COST),
        # 121030×1.25 + 393664×0.125 + 14800×10 = 151287.5 + 49208 + 148000 millionths
        (
            "codex",
            "openai",
            "gpt-5-codex",
            45,
            16,
            121_030,
            393_664,
            0,
            514_694,
            14_800,
            Decimal("0.348495500"),
        ),
    ]
    assert [row[11] for row in answer.rows] == [0, 0]  # unpriced


def test_codex_sessions_rows(corpus: Corpus) -> None:
    got = query(
        corpus.db,
        "SELECT session_id, provider, model, cwd, facts, facts_loaded, usage_input, runs, open_runs "
        "FROM sessions WHERE format = 'codex' ORDER BY session_id",
    )
    assert len(got) == 17
    assert {(row[1], row[4] == row[5]) for row in got} == {("openai", True)}
    by_id = {row[0]: row for row in got}
    clean = by_id[corpus.sessions["clean"][0]]
    assert clean[2:4] == ("gpt-5-codex", "/home/dev/work/clean")
    assert (clean[6], clean[7], clean[8]) == (4_822, 2, 0)
    exec_ = by_id[corpus.sessions["killed-during-exec"][0]]
    assert (exec_[7], exec_[8]) == (1, 1)


def test_an_open_call_is_one_row_with_its_condition(corpus: Corpus) -> None:
    got = query(
        corpus.db,
        "SELECT tool_name, status, recovery_condition, replay_policy FROM tool_calls WHERE session_id = $id",
        {"id": corpus.sessions["killed-during-exec"][0]},
    )
    assert got == [("exec_command", "unknown", "effect-unknown", "never")]
    found = find_query("tool-outcomes")
    answer = run_sql(corpus.db, found.sql, bind(found, {"format": "codex"}))
    column = {name: index for index, name in enumerate(answer.columns)}
    shell = next(row for row in answer.rows if row[column["tool_name"]] == "shell")
    # clean 2, doubled 1, first-info-null 1, fork parent 1 (exit 101), compaction 1, killed-during-read 1,
    # apply-patch-unanswered 1, sub-agent's own 1 (exit 1), model-request-open 1, archived 1, multi-day 2
    assert (shell[column["calls"]], shell[column["succeeded"]], shell[column["failed"]]) == (13, 11, 2)


def build_models(root: Path) -> dict[str, str]:
    """One single-response session per model; the model → its session id."""
    ids = {}
    for model in (
        "gpt-5-codex",
        "gpt-5.1-codex",
        "gpt-5.1-codex-max",
        "gpt-5.1-codex-mini",
        "gpt-5.2-codex",
        "codex-mini-latest",
        "gpt-codex-zeta",
    ):
        b = start(root, f"model-{model}", 0, model=model)
        b.user("Say hello.")
        b.assistant("Hello.")
        b.response(Usage(10_000, 4_000, 1_000, 200))
        b.task_complete()
        b.finish()
        ids[model] = b.session_id
    return ids


def test_codex_models_get_a_price_or_a_note(tmp_path: Path) -> None:
    ids = build_models(tmp_path / "home")
    with inside(tmp_path):
        result = runner.invoke(app, ["load", "home", "--db", "w.duckdb"])
    assert result.exit_code == 0, result.output
    got: dict[Any, tuple[Any, ...]] = {
        row[0]: row[1:]
        for row in query(
            tmp_path / "w.duckdb", "SELECT model, input, cache_read, output, cost_usd, price_note FROM usage"
        )
    }
    assert set(got) == set(ids)
    assert {row[:3] for row in got.values()} == {(6_000, 4_000, 1_000)}
    # per million tokens: the gpt-5 family $1.25 / $0.125 / $10 → 7500 + 500 + 10000 millionths; gpt-5.2-codex
    # $1.75 / $0.175 / $14 → 10500 + 700 + 14000; gpt-5.1-codex-mini $0.25 / $0.025 / $2 → 1500 + 100 + 2000;
    # codex-mini-latest $1.50 / $0.375 / $6 → 9000 + 1500 + 6000
    assert {model: row[3] for model, row in got.items()} == {
        "gpt-5-codex": Decimal("0.018000000"),
        "gpt-5.1-codex": Decimal("0.018000000"),
        "gpt-5.1-codex-max": Decimal("0.018000000"),
        "gpt-5.1-codex-mini": Decimal("0.003600000"),
        "gpt-5.2-codex": Decimal("0.025200000"),
        "codex-mini-latest": Decimal("0.016500000"),
        "gpt-codex-zeta": None,
    }
    assert all(row[4] is None for model, row in got.items() if model != "gpt-codex-zeta")
    note = got["gpt-codex-zeta"][4]
    assert note is not None and note.startswith("model 'gpt-codex-zeta' unknown to genai-prices")
    assert note.endswith("for provider openai")
    silent = query(
        tmp_path / "w.duckdb", "SELECT count(*) FROM usage WHERE cost_usd IS NULL AND price_note IS NULL"
    )
    assert silent == [(0,)]
