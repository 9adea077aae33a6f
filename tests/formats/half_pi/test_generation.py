"""Schema generations are told apart by the tables and columns present, by name only (spec §3, §11)."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from sessaudit.formats.half_pi.build.schema_sql import DECLARATIONS, schema_sql
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.read.snapshot import Snapshot, SnapshotOptions, open_snapshot
from sessaudit.formats.half_pi.spec.schema_generations import (
    BY_FEATURE,
    CATALOGUE,
    GENERATIONS,
    HEAD,
    INDEXES,
    Feature,
    Generation,
    classify,
    columns_at,
    detect_generation,
)


def opened(path: str, tmp_path: Path) -> AbstractContextManager[Snapshot]:
    """A snapshot whose private copy lives under the test's tmp_path."""
    root = tmp_path / "private"
    root.mkdir(exist_ok=True)
    return open_snapshot(path, SnapshotOptions(temp_root=str(root)))


def memory_store(sql: str) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.executescript(sql)
    return connection


@pytest.mark.parametrize("generation", GENERATIONS, ids=[item.feature.value for item in GENERATIONS])
def test_each_generation_is_detected(tmp_path: Path, generation: Generation) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", generation=generation)
    builder.session().user("hello")
    built = builder.finish()
    with opened(built.path, tmp_path) as snap:
        found = detect_generation(snap.connection)
    assert found.generation == generation
    assert found.format_version == generation.date
    assert found.features == {item.feature for item in GENERATIONS[: generation.index + 1]}
    assert found.partial == frozenset() and found.notes == ()
    assert found.is_half_pi


def test_the_head_date_is_the_report_format_version() -> None:
    found = detect_generation(memory_store(schema_sql(HEAD)))
    assert found.format_version == "2026-07-30"
    assert found.has(Feature.TOOL_DISPLAY) and found.has_column("remote_tasks", "detail_mode")


def test_an_upgraded_store_has_later_columns_at_the_end_and_legacy_defaults(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", generation=BY_FEATURE[Feature.SESSION_NAMES])
    chat = builder.session()
    chat.user("first").assistant("reply")
    builder.upgrade(HEAD)
    chat.user("after the upgrade")
    built = builder.finish()
    with opened(built.path, tmp_path) as snap:
        found = detect_generation(snap.connection)
        assert found.generation == HEAD and found.notes == ()
        sessions = found.columns["sessions"]
        assert sessions[:6] == ("id", "group_id", "name", "description", "soul_path", "created_at")
        assert sessions[6:] == ("active_hand", "mode", "updated_at")
        assert found.columns["messages"][-2:] == ("request_id", "compact_projection")
        rows = snap.connection.execute("SELECT seq, request_id FROM messages ORDER BY seq").fetchall()
        assert [(row["seq"], row["request_id"] == "") for row in rows] == [(1, True), (2, True), (3, False)]
        runtime = snap.connection.execute("SELECT * FROM session_runtime").fetchone()
        assert runtime["history_generation"] == 3 and runtime["snapshot_version"] == 3
        session = snap.connection.execute("SELECT created_at, updated_at, mode FROM sessions").fetchone()
        assert session["mode"] == "normal" and session["updated_at"] >= session["created_at"] != ""


def test_a_store_from_the_first_day_never_gets_session_names(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", generation=GENERATIONS[0])
    builder.session().user("hello")
    builder.upgrade(HEAD)
    built = builder.finish()
    with opened(built.path, tmp_path) as snap:
        found = detect_generation(snap.connection)
    assert found.generation == HEAD
    assert Feature.SESSION_NAMES not in found.features | found.partial
    assert found.notes == (
        "feature session-names (2026-07-14) is absent while the later tool-display (2026-07-30) is present",
    )


def test_columns_are_addressed_by_name_not_position() -> None:
    sql = schema_sql(HEAD).replace(
        "    id TEXT PRIMARY KEY,\n    group_id TEXT NOT NULL,\n    name TEXT NOT NULL DEFAULT '',",
        "    name TEXT NOT NULL DEFAULT '',\n    group_id TEXT NOT NULL,\n    id TEXT PRIMARY KEY,",
    )
    assert sql != schema_sql(HEAD)
    found = detect_generation(memory_store(sql))
    assert found.generation == HEAD and found.notes == ()


def test_active_hand_sits_at_the_end_of_a_fresh_store_until_session_modes() -> None:
    before = detect_generation(memory_store(schema_sql(BY_FEATURE[Feature.CREDENTIALS])))
    assert before.columns["sessions"][-1] == "active_hand"
    after = detect_generation(memory_store(schema_sql(BY_FEATURE[Feature.SESSION_MODES])))
    assert after.columns["sessions"][-2:] == ("created_at", "updated_at")
    head = detect_generation(memory_store(schema_sql(HEAD)))
    assert head.columns["hand_tokens"][-1] == "hand_id"
    assert head.columns["remote_run_events"][-3:] == ("progress_seq", "kind", "gap")


def head_columns() -> dict[str, tuple[str, ...]]:
    return {table: columns_at(table, HEAD) for table in CATALOGUE}


def test_a_later_feature_without_an_earlier_one_is_noted() -> None:
    columns = head_columns()
    del columns["approval_audits"]
    found = classify(columns, INDEXES)
    assert found.generation == HEAD
    assert Feature.APPROVALS not in found.features
    assert Feature.LIFECYCLE in found.partial  # its approval_audits columns are gone too
    assert any("approvals" in note and "absent while the later tool-display" in note for note in found.notes)


def test_partial_features_unknown_names_and_missing_indexes_are_noted() -> None:
    columns = head_columns()
    columns["sessions"] = (*(name for name in columns["sessions"] if name != "mode"), "colour")
    columns["mystery"] = ("id",)
    columns["sqlite_sequence"] = ("name", "seq")
    indexes = {*INDEXES, "idx_custom", "sqlite_autoindex_sessions_1"} - {"idx_messages_session_seq"}
    found = classify(columns, indexes)
    assert Feature.SESSION_MODES in found.partial and Feature.SESSION_MODES not in found.features
    assert found.generation == HEAD
    assert set(found.notes) == {
        "feature session-modes (2026-07-19) is partial: missing sessions.mode",
        "unknown table mystery",
        "unknown column sessions.colour",
        "unknown index idx_custom",
        "index idx_messages_session_seq of feature message-request-ids is missing",
    }


def test_a_database_that_is_not_half_pi() -> None:
    found = detect_generation(memory_store("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"))
    assert found.generation is None and found.format_version is None
    assert not found.is_half_pi and found.features == frozenset()
    assert found.notes == ("unknown table notes",)


def test_catalogue_and_declarations_agree() -> None:
    for table, columns in CATALOGUE.items():
        assert {name for name, _ in columns} == set(DECLARATIONS[table]), table
    for name, (table, _) in INDEXES.items():
        assert table in CATALOGUE, name
    assert [item.index for item in GENERATIONS] == list(range(16))
    assert len({item.feature for item in GENERATIONS}) == 16
