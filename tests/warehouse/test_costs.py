"""Costs of usage rows (sessaudit.prices): a Claude Code session made with its builder, priced by a
`--prices` table with round numbers and by genai-prices' bundled snapshot, every expected cost computed by
hand; the price table's errors; pricing with the network blocked."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.claude_code.build.parts import Text, Usage
from sessaudit.formats.claude_code.build.scenarios import SONNET_45, start
from sessaudit.prices import Counts, Prices, PricesFileError, load_price_table, parse_price_table
from sessaudit.warehouse.loader import LoadOptions, load_warehouse
from tests.warehouse.conftest import query

CLOCK = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
BUNDLED = "genai-prices 0.2.3 (data sha256:"
# USD per million tokens, chosen so that a cost in millionths of a dollar is a sum of small products
ROUND_PRICES = {
    "schema": "sessaudit/prices/v1",
    "models": [
        {
            "model": SONNET_45,
            "input": 1,
            "output": 2,
            "cache_read": 0.5,
            "cache_write_5m": 4,
            "cache_write_1h": 8,
        }
    ],
}


def build_session(root: Path) -> None:
    """Two Claude Code sessions of claude-sonnet-4-5-20250929: one of 2.1.79 (cache writes split by TTL)
    with a 5-minute write, a 1-hour write and a placeholder response; one of 1.0.80 (no split)."""
    b = start(root, "prices", 0, model=SONNET_45)
    b.user("Summarise calc.py.")
    b.assistant([Text("It adds.")], usage=Usage(10, 200, cache_5m=1000))
    b.user("And the tests?")
    b.assistant([Text("Three.")], usage=Usage(2, 300, cache_1h=2000, cache_read=1000))
    b.user("Anything else?")
    b.assistant(
        [Text("Thinking…"), Text("No.")], usage=Usage(1, 50, cache_5m=100, cache_read=3000), placeholder=True
    )
    b.finish()
    old = start(root, "prices-old", 0, model=SONNET_45, version="1.0.80")
    old.user("Hello")
    old.assistant([Text("Hi.")], usage=Usage(5, 100, cache_1h=400))
    old.finish()


def load(root: Path, prices: Path | None = None) -> Path:
    database = root / "w.duckdb"
    result = load_warehouse(
        [str(root / "projects")], database, LoadOptions(clock=lambda: CLOCK, prices=prices)
    )
    assert not result.incomplete
    return database


def rows(database: Path) -> list[tuple[Any, ...]]:
    return query(
        database,
        "SELECT input, output, cache_read, cache_write, cache_write_5m, cache_write_1h, placeholder, "
        "cost_usd, price_source, price_note FROM usage ORDER BY cache_write_5m IS NULL, timestamp",
    )


@pytest.fixture
def session(tmp_path: Path) -> Path:
    build_session(tmp_path)
    return tmp_path


def test_a_prices_file_prices_every_row_by_hand(session: Path) -> None:
    table = session / "prices.json"
    table.write_text(json.dumps(ROUND_PRICES), encoding="utf-8")
    got = rows(load(session, table))
    source = got[0][8]
    assert source.startswith("prices.json sha256:") and len(source) == len("prices.json sha256:") + 64
    # the placeholder's logged output is 9 (the builder's seeded placeholder count), not its true 50
    assert [row[:8] for row in got] == [
        # 10×1 + 200×2 + 1000×4 (5-minute writes) = 4410 millionths
        (10, 200, 0, 1000, 1000, 0, False, Decimal("0.004410000")),
        # 2×1 + 300×2 + 1000×0.5 + 2000×8 (1-hour writes) = 17102
        (2, 300, 1000, 2000, 0, 2000, False, Decimal("0.017102000")),
        # 1×1 + 9×2 + 3000×0.5 + 100×4 = 1919
        (1, 9, 3000, 100, 100, 0, True, Decimal("0.001919000")),
        # no split logged (1.0.80): all 400 cache writes are 5-minute ones: 5×1 + 100×2 + 400×4 = 1805
        (5, 100, 0, 400, None, None, False, Decimal("0.001805000")),
    ]
    assert {row[8] for row in got} == {source} and {row[9] for row in got} == {None}


def test_genai_prices_bundled_snapshot_prices_a_real_model(session: Path) -> None:
    # genai-prices 0.2.3, claude-sonnet-4-5 (below its 200k-input tier): input $3, output $15, cache read
    # $0.30, cache write (5 minutes) $3.75, cache write (1 hour) $6 per million tokens
    got = rows(load(session))
    assert [row[7] for row in got] == [
        Decimal("0.006780000"),  # 10×3 + 200×15 + 1000×3.75 = 6780 millionths
        Decimal("0.016806000"),  # 2×3 + 300×15 + 1000×0.3 + 2000×6 = 16806
        Decimal("0.001413000"),  # 1×3 + 9×15 + 3000×0.3 + 100×3.75 = 1413
        Decimal("0.003015000"),  # 5×3 + 100×15 + 400×3.75 = 3015 (no split: 5-minute writes)
    ]
    assert all(row[8].startswith(BUNDLED) and row[9] is None for row in got)


def test_the_cost_queries_sum_the_rows(session: Path) -> None:
    database = load(session)
    runner = CliRunner()
    result = runner.invoke(app, ["query", "usage-by-session", "--db", str(database), "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert [(item["records"], item["cost_usd"], item["unpriced"]) for item in answer] == [
        (3, 0.024999, 0),  # 6780 + 16806 + 1413 millionths
        (1, 0.003015, 0),
    ]
    assert answer[0]["models"] == [SONNET_45]
    month = runner.invoke(app, ["query", "usage-by-month", "--db", str(database), "--format", "json"])
    assert [(item["month"], item["records"], item["cost_usd"]) for item in json.loads(month.output)] == [
        ("2026-03-01", 4, 0.028014)  # 24999 + 3015 millionths
    ]


def prices(**table: Any) -> Prices:
    return Prices(0, parse_price_table({"schema": "sessaudit/prices/v1", **table}, source="t.json"))


def test_cache_writes_without_a_split_are_five_minute_and_a_larger_split_wins() -> None:
    table = prices(
        models=[{"model": "m", "input": 0, "output": 0, "cache_write_5m": 1, "cache_write_1h": 10}]
    )
    assert table.price(Counts(None, "m", 0, 0, 0, 1_000_000)).usd == Decimal("1.000000000")
    assert table.price(Counts(None, "m", 0, 0, 0, 1_000_000, 0, 1_000_000)).usd == Decimal("10.000000000")
    # cache_write 0 but a split of 300 + 200 (Claude Code before 2.1.152): 300×1 + 200×10 = 2300 millionths
    assert table.price(Counts(None, "m", 0, 0, 0, 0, 300, 200)).usd == Decimal("0.002300000")


def test_the_table_picks_exact_then_longest_prefix_then_provider_then_period() -> None:
    moment = int(datetime(2026, 6, 1, tzinfo=UTC).timestamp()) * 1_000_000
    table = prices(
        models=[
            {"model_prefix": "claude-", "input": 1, "output": 0},
            {"model_prefix": "claude-opus-", "input": 2, "output": 0},
            {"model_prefix": "claude-opus-", "provider": "bedrock", "input": 3, "output": 0},
            {"model": "claude-opus-9", "input": 4, "output": 0, "until": "2026-06-01"},
            {"model": "claude-opus-9", "input": 5, "output": 0, "from": "2026-06-01"},
        ]
    )

    def per_million(provider: str | None, model: str, at: int | None = moment) -> Decimal | None:
        return table.price(Counts(provider, model, 1_000_000, 0, 0, 0, timestamp=at)).usd

    assert per_million(None, "claude-haiku-9") == Decimal(1)
    assert per_million("anthropic", "claude-opus-8") == Decimal(2)
    assert per_million("bedrock", "claude-opus-8") == Decimal(3)
    assert per_million("bedrock", "claude-opus-9") == Decimal(5)  # from 2026-06-01 (inclusive)
    assert per_million(None, "claude-opus-9", moment - 1) == Decimal(4)  # until 2026-06-01 (exclusive)
    assert per_million(None, "claude-opus-9", None) == Decimal(4)  # no time: the load's moment (epoch 0)


def test_price_since_is_the_start_of_the_price_period_used() -> None:
    def micros(day: date) -> int:
        return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) * 1_000_000

    table = prices(
        models=[
            {"model": "m", "input": 1, "output": 0, "until": "2026-06-01"},
            {"model": "m", "input": 2, "output": 0, "from": "2026-06-01"},
        ]
    )
    assert table.price(Counts(None, "m", 1, 0, 0, 0, timestamp=micros(date(2026, 5, 1)))).since is None
    assert table.price(Counts(None, "m", 1, 0, 0, 0, timestamp=micros(date(2026, 7, 1)))).since == date(
        2026, 6, 1
    )
    # genai-prices 0.2.3 dates a new price of claude-opus-4-6 from 2026-03-13; before it, its first,
    # undated price applies
    bundled = Prices(0)
    after = bundled.price(
        Counts("anthropic", "claude-opus-4-6", 1000, 0, 0, 0, timestamp=micros(date(2026, 11, 30)))
    )
    before = bundled.price(
        Counts("anthropic", "claude-opus-4-6", 1000, 0, 0, 0, timestamp=micros(date(2026, 1, 5)))
    )
    assert (after.since, before.since) == (date(2026, 3, 13), None)
    assert after.usd is not None and before.usd is not None


def test_an_unknown_model_has_no_cost_and_says_why() -> None:
    table = prices(models=[{"model": "m", "input": 1, "output": 1}])
    unknown = table.price(Counts("scripted", "scripted", 10, 10, 0, 0))
    assert unknown.usd is None and unknown.source is None
    assert unknown.note is not None and unknown.note.startswith(
        "model 'scripted' unknown to genai-prices 0.2.3"
    )
    assert table.price(Counts(None, None, 10, 10, 0, 0)).note == "no model recorded"
    lacking = table.price(Counts(None, "m", 1, 1, 5, 0))
    assert (lacking.usd, lacking.note) == (None, "t.json: /models/0 has no cache_read price for 5 tokens")
    # a provider genai-prices does not know leaves the match to the model id
    assert table.price(Counts("my-gateway", "gpt-4o", 0, 1_000_000, 0, 0)).usd == Decimal("10.000000000")


def test_a_bad_price_table_names_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "schema": "sessaudit/prices/v1",
                "models": [
                    {"model": "a", "input": 1, "output": 1, "cache_wrte_1h": 2},
                    {"model": "b", "model_prefix": "b", "input": 1, "output": 1},
                    {"model": "c", "input": -1, "output": 1},
                    {"model": "d", "input": 1, "output": 1, "from": "2026-02-01", "until": "2026-01-01"},
                    {"model": "e", "input": 1, "output": 1, "from": "2026-01-01"},
                    {"model": "e", "input": 2, "output": 1, "until": "2026-02-01"},
                ],
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(PricesFileError) as schema:
        load_price_table(path)
    assert [pointer for pointer, _ in schema.value.problems] == [
        "/models/0/cache_wrte_1h",
        "/models/1",
        "/models/2/input",
    ]
    models = json.loads(path.read_text(encoding="utf-8"))["models"]
    path.write_text(json.dumps({"schema": "sessaudit/prices/v1", "models": models[3:]}), encoding="utf-8")
    with pytest.raises(PricesFileError) as periods:
        load_price_table(path)
    assert periods.value.problems == (
        ("/models/0/until", "is not after `from`"),
        ("/models/2", "its period overlaps that of /models/1 (same model)"),
    )
    path.write_text("{", encoding="utf-8")
    with pytest.raises(PricesFileError, match="is not JSON"):
        load_price_table(path)


def test_load_refuses_a_bad_price_table_as_a_usage_error(session: Path) -> None:
    bad = session / "prices.json"
    bad.write_text('{"schema": "sessaudit/prices/v1", "models": [{"model": "m"}]}', encoding="utf-8")
    result = CliRunner().invoke(
        app, ["load", str(session / "projects"), "--db", str(session / "w.duckdb"), "--prices", str(bad)]
    )
    assert result.exit_code == 2
    assert "prices.json: 2 problems: /models/0: 'input' is a required property" in result.output
    assert not (session / "w.duckdb").exists()


def test_pricing_never_opens_a_connection() -> None:
    """In a fresh interpreter whose sockets refuse to connect or resolve, genai-prices is imported and
    prices a row."""
    script = """
import socket
def refuse(*args, **kwargs):
    raise AssertionError("network access")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from sessaudit.prices import Counts, Prices
cost = Prices(0).price(Counts("anthropic", "claude-sonnet-4-5-20250929", 100_000, 0, 0, 0))
print(cost.usd)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0.300000000"  # 100,000 input tokens at $3 per million
