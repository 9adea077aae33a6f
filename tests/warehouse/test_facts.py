"""Facts: every verified record, counted as the report counts them; a corrupt source's verified prefix."""

from __future__ import annotations

import json

from sessaudit.formats.half_pi.warehouse.extraction import TABLES
from sessaudit.reporters.json import render_json
from sessaudit.warehouse.extract import cutting
from tests.warehouse.conftest import Loaded, query


def test_the_load_verifies_exactly_as_verify_does(wide: Loaded, examples: Loaded) -> None:
    for loaded in (wide, examples):
        assert render_json(loaded.result.report) == render_json(loaded.audited.report)
        assert loaded.result.incomplete == loaded.audited.incomplete == []


def test_fact_rows_equal_the_reported_facts_of_every_verified_session(wide: Loaded) -> None:
    rows = query(
        wide.db,
        """
        SELECT src.verdict, s.format, s.facts, s.facts_loaded, s.complete,
               count(f.source_id) FILTER (WHERE s.format <> 'half-pi' OR f.kind = 'messages')
        FROM sessions AS s
        JOIN sources AS src USING (source_id)
        LEFT JOIN facts AS f ON f.source_id = s.source_id AND f.session_id IS NOT DISTINCT FROM s.session_id
        GROUP BY s.source_id, s.session_id, src.verdict, s.format, s.facts, s.facts_loaded, s.complete
        """,
    )
    verified = [row for row in rows if row[0] != "corrupt"]
    assert len(verified) > 80 and sum(row[2] for row in verified) > 1000
    for verdict, format_name, facts, loaded, complete, counted in verified:
        assert facts == loaded == counted, (verdict, format_name)
        assert complete
    for verdict, _, facts, loaded, complete, counted in rows:
        assert loaded == counted <= facts
        assert complete or verdict == "corrupt"


def test_corrupt_jsonl_sources_load_the_lines_before_their_first_corrupting_finding(wide: Loaded) -> None:
    checked = 0
    for source in wide.result.report.sources:
        if source.format not in ("tiny-agent", "rivumi") or source.verdict.value != "corrupt":
            continue
        log = source.path if source.format == "tiny-agent" else f"{source.path}/events.jsonl"
        if log not in [item.path for item in source.files]:
            continue
        lines = [
            item.location.line or 1
            for item in wide.result.report.findings
            if item.location.path == log and cutting(item)
        ]
        ((highest, complete),) = query(
            wide.db,
            "SELECT max(f.line), any_value(s.complete) FROM sources AS s "
            "LEFT JOIN facts AS f USING (source_id) WHERE s.path = $path",
            {"path": source.path},
        )
        if lines:
            checked += 1
            assert highest is None or highest < min(lines), source.path
            assert complete is False
    assert checked >= 20


def test_tiny_agent_v2_facts_are_seq_1_to_n_with_their_payloads(wide: Loaded) -> None:
    rows = query(
        wide.db,
        """
        SELECT f.source_id, list(f.seq ORDER BY f.seq),
               count(*) FILTER (WHERE CAST(f.payload->>'seq' AS BIGINT) = f.seq)
        FROM facts AS f JOIN sources AS s USING (source_id)
        WHERE s.format = 'tiny-agent' AND s.format_version = '2'
        GROUP BY f.source_id
        """,
    )
    assert len(rows) > 30
    for _, seqs, matching in rows:
        assert seqs == list(range(1, len(seqs) + 1))
        assert matching == len(seqs)


def test_records_keep_their_place_and_kind(examples: Loaded) -> None:
    kinds = dict(
        query(
            examples.db,
            "SELECT s.format || ' ' || s.format_version, list(DISTINCT f.kind ORDER BY f.kind) "
            "FROM facts AS f JOIN sources AS s USING (source_id) GROUP BY ALL",
        )
    )
    assert kinds["tiny-agent 2"] == ["entry", "record", "usage"]
    assert kinds["tiny-agent 1"] == ["line"]
    assert kinds["rivumi 1"] == ["event"]
    assert "messages" in kinds["half-pi 2026-07-30"] and "remote_runs" in kinds["half-pi 2026-07-30"]
    unplaced = query(
        examples.db,
        "SELECT count(*) FROM facts JOIN sources USING (source_id) "
        "WHERE sources.format <> 'half-pi' AND (facts.line IS NULL OR facts.byte_offset IS NULL)",
    )
    assert unplaced == [(0,)]
    assert query(examples.db, "SELECT count(*) FROM facts WHERE kind = 'messages' AND rowid IS NULL") == [
        (0,)
    ]


def test_v2_facts_belong_to_their_operation(examples: Loaded) -> None:
    """Every fact of a run names it: records and usage by operationId, entries through their step or the
    runStarted that consumed them."""
    rows = query(
        examples.db,
        "SELECT f.kind, f.type, f.role, f.run_id FROM facts AS f JOIN sources AS s USING (source_id) "
        "WHERE s.format = 'tiny-agent' AND s.format_version = '2' AND s.verdict = 'clean'",
    )
    assert rows and all(run_id is not None for *_, run_id in rows)


def test_half_pi_facts_hold_every_table_but_the_credential_tables(examples: Loaded) -> None:
    found = {
        kind for (kind,) in query(examples.db, "SELECT DISTINCT kind FROM facts WHERE rowid IS NOT NULL")
    }
    assert not found & {"hand_tokens", "hand_credentials", "face_tokens"}
    assert {"messages", "sessions", "remote_runs", "remote_run_events", "approval_audits"} <= found
    assert found <= set(TABLES)


def test_payloads_are_json_objects(examples: Loaded) -> None:
    for (payload,) in query(examples.db, "SELECT payload FROM facts"):
        assert isinstance(json.loads(payload), dict)
