"""The usage-blocks query on usage rows at hand-chosen times: ccusage's 5-hour blocks (a block starts at
its first record's time floored to the hour; a record more than 5 hours after the block's start, or after
a gap of more than 5 hours, starts the next one)."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb

from sessaudit.warehouse.queries import bind, find_query, run_sql
from sessaudit.warehouse.schema import create_schema

# (timestamp, session, model, input, cost_usd)
ROWS = [
    ("2026-05-01 10:55:30", "s1", "m1", 1, "0.1"),  # block 1: 10:00-15:00
    ("2026-05-01 14:59:59", "s1", "m1", 2, "0.2"),
    ("2026-05-01 15:00:00", "s2", "m2", 4, None),  # exactly 5 h after the start: still block 1
    ("2026-05-01 15:20:00", "s2", "m2", 8, "0.4"),  # 5 h 20 min after it: block 2, floored to 15:00
    ("2026-05-01 19:10:00", "s2", "m1", 16, "0.8"),  # before 20:00: block 2
    ("2026-05-02 00:30:00", "s3", "m3", 32, "1.6"),  # 5 h 20 min after the last record (a gap): block 3
    ("2026-05-02 00:45:00", "s3", None, 64, None),
    (None, "s3", "m3", 128, "3.2"),  # no time: in no block
]


def warehouse(tmp_path: Path) -> Path:
    database = tmp_path / "w.duckdb"
    connection = duckdb.connect(str(database))
    try:
        create_schema(connection)
        connection.execute(
            "INSERT INTO sources (source_id, path, real_path, format, verdict, sessions, facts_loaded, "
            "complete, sessaudit_version, loaded_at) VALUES ('src', 'a', '/a', 'claude-code', 'clean', 3, 0, "
            "true, 'test', '2026-06-01 00:00:00')"
        )
        for moment, session, model, tokens, cost in ROWS:
            connection.execute(
                "INSERT INTO usage (source_id, session_id, timestamp, scope, model, input, output, "
                "cache_read, cache_write, input_total, cost_usd) "
                "VALUES ('src', ?, ?, 'model', ?, ?, 1, 0, 0, ?, ?)",
                [session, moment, model, tokens, tokens, cost],
            )
    finally:
        connection.close()
    return database


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_blocks_cross_hour_boundaries_and_gaps(tmp_path: Path) -> None:
    query = find_query("usage-blocks")
    answer = run_sql(warehouse(tmp_path), query.sql, bind(query, {}))
    columns = ["block_start", "block_end", "first_at", "last_at", "idle_before", "records", "sessions"]
    assert answer.columns[:7] == columns
    got = [dict(zip(answer.columns, row, strict=True)) for row in answer.rows]
    assert [tuple(item[name] for name in columns) for item in got] == [
        (
            at("2026-05-01 10:00"),
            at("2026-05-01 15:00"),
            at("2026-05-01 10:55:30"),
            at("2026-05-01 15:00"),
            None,
            3,
            2,
        ),
        (
            at("2026-05-01 15:00"),
            at("2026-05-01 20:00"),
            at("2026-05-01 15:20"),
            at("2026-05-01 19:10"),
            timedelta(minutes=20),
            2,
            1,
        ),
        (
            at("2026-05-02 00:00"),
            at("2026-05-02 05:00"),
            at("2026-05-02 00:30"),
            at("2026-05-02 00:45"),
            timedelta(hours=5, minutes=20),
            2,
            1,
        ),
    ]
    assert [item["models"] for item in got] == [["m1", "m2"], ["m1", "m2"], ["m3"]]
    assert [item["input"] for item in got] == [7, 24, 96]
    assert [(item["cost_usd"], item["unpriced"]) for item in got] == [
        (Decimal("0.300000000"), 1),
        (Decimal("1.200000000"), 0),
        (Decimal("1.600000000"), 1),
    ]


def test_blocks_are_formed_from_the_rows_the_parameters_keep(tmp_path: Path) -> None:
    query = find_query("usage-blocks")
    database = warehouse(tmp_path)
    answer = run_sql(database, query.sql, bind(query, {"since": "2026-05-02"}))
    assert [(row[0], row[5]) for row in answer.rows] == [(at("2026-05-02 00:00"), 2)]
    answer = run_sql(database, query.sql, bind(query, {"until": "2026-05-01"}))
    assert [(row[0], row[5]) for row in answer.rows] == [
        (at("2026-05-01 10:00"), 3),
        (at("2026-05-01 15:00"), 2),
    ]
    assert run_sql(database, query.sql, bind(query, {"format": "rivumi"})).rows == []
