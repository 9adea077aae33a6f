"""Discovery: content-based recognition, walking rules and named-input problems (CONTRACT §1)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sessaudit.discovery import Problem, discover
from tests.formats.names import Format

V2_HEADER = b'{"kind":"header","version":2,"id":"018f0000-0000-7000-8000-000000000001"}\n'
V1_HEADER = b'{"type":"session","version":1,"id":"01a228fb-99a2-70e0-87a7-4367dd5b6582"}\n'
SESSION_NAME = "2026-11-29T20-25-57-606Z_01a228fb-99a2-70e0-87a7-4367dd5b6582.jsonl"


def test_named_files_are_recognised_by_content(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(V2_HEADER)
    (tmp_path / "b.txt").write_bytes(V1_HEADER)
    found = discover([str(tmp_path / "a.log"), str(tmp_path / "b.txt")])
    assert [(c.path, c.format, c.named) for c in found.candidates] == [
        (str(tmp_path / "a.log"), Format.TINY_AGENT, True),
        (str(tmp_path / "b.txt"), Format.TINY_AGENT, True),
    ]


def test_named_jsonl_with_a_broken_header_is_still_a_tiny_agent_source(tmp_path: Path) -> None:
    (tmp_path / "broken.jsonl").write_bytes(b"not json at all\n")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    found = discover([str(tmp_path / "broken.jsonl"), str(tmp_path / "empty.jsonl")])
    assert [c.format for c in found.candidates] == [Format.TINY_AGENT, Format.TINY_AGENT]


def test_named_problems_become_sources_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    found = discover([str(tmp_path / "missing.jsonl"), str(tmp_path / "notes.txt"), str(fifo)])
    assert [c.problem for c in found.candidates] == [
        Problem.MISSING,
        Problem.UNRECOGNISED,
        Problem.NOT_REGULAR,
    ]
    assert "FIFO" in (found.candidates[2].detail or "")


def test_walk_is_sorted_recursive_includes_hidden_and_skips_the_rest(tmp_path: Path) -> None:
    sessions = tmp_path / ".tiny-agent" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / SESSION_NAME).write_bytes(b"")  # empty, but a session by its name and place
    (tmp_path / "z.jsonl").write_bytes(V2_HEADER)
    (tmp_path / "a.txt").write_text("not a log\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.jsonl").write_bytes(V2_HEADER)
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "z.jsonl")
    found = discover([str(tmp_path)])
    assert [c.path for c in found.candidates] == [
        os.path.join(str(tmp_path), ".tiny-agent", "sessions", SESSION_NAME),
        os.path.join(str(tmp_path), "z.jsonl"),
    ]
    assert all(not c.named for c in found.candidates)
    reasons = {Path(item.path).name: item.reason for item in found.skipped}
    assert reasons == {
        "a.txt": "not a session log of a known format",
        "link.jsonl": "symbolic link (not followed)",
    }


def test_walked_jsonl_without_a_header_is_skipped_not_verified(tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text('{"event":"x"}\n')
    found = discover([str(tmp_path)])
    assert found.candidates == []
    assert [Path(item.path).name for item in found.skipped] == ["other.jsonl"]


def test_rivumi_run_directories_are_one_source_and_never_walked_into(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "run-1"
    (run / "workspace").mkdir(parents=True)
    (run / "events.jsonl").write_text('{"event_type":"run.created","run_id":"r","sequence":0}\n')
    (run / "workspace" / "inner.jsonl").write_bytes(V2_HEADER)
    found = discover([str(tmp_path / "runs"), str(run / "events.jsonl")])
    # the named events.jsonl stands for the run the walk already found: verified once, where first met
    assert [(c.format, c.real_path, c.path) for c in found.candidates] == [
        (Format.RIVUMI, str(run), str(run)),
    ]
    alone = discover([str(run / "events.jsonl")])
    assert [(c.format, c.real_path) for c in alone.candidates] == [(Format.RIVUMI, str(run))]


def test_half_pi_store_is_recognised_without_opening_sqlite(tmp_path: Path) -> None:
    store = tmp_path / "mind.db"
    connection = sqlite3.connect(store)
    connection.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    connection.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT)")
    connection.commit()
    connection.close()
    other = tmp_path / "other.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    found = discover([str(tmp_path)])
    assert [(Path(c.path).name, c.format) for c in found.candidates] == [("mind.db", Format.HALF_PI)]
    assert [Path(item.path).name for item in found.skipped] == ["other.db"]


def test_a_damaged_run_directory_is_still_a_rivumi_source(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "run-2"
    (run / "workspace").mkdir(parents=True)
    (run / "session.json").write_bytes(b'{"sche')  # torn by something other than Rivumi's atomic save
    (run / "events.jsonl").write_bytes(b'{"event_ty')
    (run / "workspace" / "inner.jsonl").write_bytes(V2_HEADER)
    found = discover([str(tmp_path / "runs"), str(run / "session.json")])
    assert [(c.format, c.real_path) for c in found.candidates] == [(Format.RIVUMI, str(run))]
    assert found.skipped == []
    named = discover([str(run / "session.json")])  # the named manifest alone stands for its run too
    assert [(c.format, c.real_path) for c in named.candidates] == [(Format.RIVUMI, str(run))]


def test_a_lone_events_file_without_companions_is_not_a_run(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_bytes(b'{"event_ty')
    found = discover([str(tmp_path)])
    assert found.candidates == [] and [Path(item.path).name for item in found.skipped] == ["events.jsonl"]


def test_a_half_pi_store_whose_schema_is_only_in_the_wal_is_recognised(tmp_path: Path) -> None:
    from sessaudit.formats.half_pi.build.store_builder import StoreBuilder

    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=5)
    builder.session().user("hello")
    built = builder.finish(keep_wal=True)
    assert b"CREATE TABLE" not in Path(built.path).read_bytes()
    found = discover([str(tmp_path)])
    assert [(Path(c.path).name, c.format) for c in found.candidates] == [("half-pi.db", Format.HALF_PI)]
    assert found.skipped == []  # the -wal and -shm belong to the store


def test_a_named_wal_stands_for_its_store(tmp_path: Path) -> None:
    from sessaudit.formats.half_pi.build.store_builder import StoreBuilder

    builder = StoreBuilder(tmp_path / "half-pi.db", seed=6)
    builder.session().user("hello")
    built = builder.finish(keep_wal=True)
    found = discover([built.path + "-wal"])
    assert [(c.path, c.real_path, c.format) for c in found.candidates] == [
        (built.path, os.path.realpath(built.path), Format.HALF_PI)
    ]
