"""The usage ledger: one row per usage record of the logs, totals equal to the verify report's, nothing
counted twice, and never a manifest's running totals."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.warehouse.conftest import Loaded, query

TOTALS = """
SELECT src.path, s.session_id, s.verdict, s.format, s.format_version,
       s.usage_input, s.usage_output, s.usage_cache_read, s.usage_cache_write, s.usage_input_total,
       coalesce(sum(u.input), 0), coalesce(sum(u.output), 0), coalesce(sum(u.cache_read), 0),
       coalesce(sum(u.cache_write), 0), coalesce(sum(u.input_total), 0)
FROM sessions AS s
JOIN sources AS src USING (source_id)
LEFT JOIN usage AS u ON u.source_id = s.source_id AND u.session_id IS NOT DISTINCT FROM s.session_id
GROUP BY ALL
"""


def _totals(loaded: Loaded) -> list[tuple[object, ...]]:
    return query(loaded.db, TOTALS)


def test_session_totals_equal_the_report_for_every_verified_session(wide: Loaded) -> None:
    rows = [row for row in _totals(wide) if row[2] != "corrupt"]
    assert len(rows) > 100
    for row in rows:
        assert row[5:10] == row[10:15], row[:5]


def test_the_database_totals_are_the_report_totals(wide: Loaded, examples: Loaded) -> None:
    for loaded in (wide, examples):
        expected = Counter[str]()
        for source in loaded.audited.report.sources:
            for session in source.sessions:
                if session.verdict.value != "corrupt":
                    expected.update(session.usage.model_dump())
        (found,) = query(
            loaded.db,
            "SELECT sum(input), sum(output), sum(cache_read), sum(cache_write), sum(input_total) FROM usage "
            "JOIN sessions USING (source_id, session_id) WHERE sessions.verdict <> 'corrupt'",
        )
        keys = ("input", "output", "cache_read", "cache_write", "input_total")
        assert found == tuple(expected[key] for key in keys)


def test_tiny_agent_totals_equal_the_report_even_for_a_corrupt_session(wide: Loaded) -> None:
    """Its reducer stops counting where the verified prefix ends, so the two agree there too."""
    rows = [row for row in _totals(wide) if row[3] == "tiny-agent"]
    assert any(row[2] == "corrupt" and row[5] for row in rows)
    for row in rows:
        assert row[5:10] == row[10:15], row[:5]


def test_a_corrupt_session_keeps_the_usage_of_its_verified_prefix_only(wide: Loaded) -> None:
    corrupt = [row for row in _totals(wide) if row[2] == "corrupt"]
    assert any(row[5:10] != row[10:15] for row in corrupt)  # Rivumi's report also counts later events
    for row in corrupt:
        assert all(
            int(loaded) <= int(reported) for loaded, reported in zip(row[10:15], row[5:10], strict=True)
        )


def test_no_usage_record_is_counted_twice(wide: Loaded) -> None:
    duplicates = query(
        wide.db,
        "SELECT source_id, line, rowid, count(*) FROM usage GROUP BY ALL HAVING count(*) > 1",
    )
    assert duplicates == []
    assert query(wide.db, "SELECT count(*) FROM usage WHERE line IS NULL AND rowid IS NULL") == [(0,)]


def test_every_usage_record_of_the_logs_is_one_ledger_row(wide: Loaded) -> None:
    pairs = {
        "tiny-agent v2 usage facts": (
            "SELECT count(*) FROM facts JOIN sources USING (source_id) "
            "WHERE sources.format = 'tiny-agent' AND sources.format_version = '2' AND facts.kind = 'usage'",
            "SELECT count(*) FROM usage JOIN sources USING (source_id) "
            "WHERE sources.format = 'tiny-agent' AND sources.format_version = '2'",
        ),
        "Rivumi model and reviewer completions": (
            "SELECT count(*) FROM facts WHERE kind = 'event' "
            "AND type IN ('model.completed', 'role_lane.completed') "
            "AND json_type(payload, '$.data.usage') = 'OBJECT'",
            "SELECT count(*) FROM usage JOIN sources USING (source_id) WHERE sources.format = 'rivumi'",
        ),
        "Half-Pi context summaries": (
            "SELECT count(*) FROM facts WHERE kind = 'context_summaries'",
            "SELECT count(*) FROM usage WHERE scope = 'summary'",
        ),
    }
    for what, (records, ledger) in pairs.items():
        assert query(wide.db, records) == query(wide.db, ledger), what
    assert query(wide.db, "SELECT count(*) FROM usage WHERE scope = 'summary'")[0][0] > 0


def test_the_v1_ledger_has_a_row_per_answer_and_compaction_with_usage(examples: Loaded) -> None:
    (records,) = query(
        examples.db,
        "SELECT count(*) FROM facts JOIN sources USING (source_id) WHERE sources.format = 'tiny-agent' "
        "AND sources.format_version = '1' AND json_type(facts.payload, '$.usage') = 'OBJECT'",
    )
    (ledger,) = query(
        examples.db,
        "SELECT count(*) FROM usage JOIN sources USING (source_id) "
        "WHERE sources.format = 'tiny-agent' AND sources.format_version = '1'",
    )
    assert records == ledger and ledger[0] > 0


def test_a_manifests_running_totals_are_never_loaded(wide: Loaded) -> None:
    """The manifest of `usage-disagrees` claims other totals than its log: the ledger follows the log."""
    (run_dir,) = (wide.root / "wide" / "rivumi" / "usage-disagrees").iterdir()
    manifest = json.loads((run_dir / "session.json").read_text(encoding="utf-8"))
    claimed = sum(
        item["usage"]["input_tokens"] for item in manifest["model_usage"] if item["lane"] == "primary"
    )
    path = str(Path("wide") / "rivumi" / "usage-disagrees" / run_dir.name)
    ((input_total, rows, without_event),) = query(
        wide.db,
        "SELECT sum(input_total), count(*), count(*) FILTER (WHERE line IS NULL) FROM usage "
        "JOIN sources USING (source_id) WHERE sources.path = $path",
        {"path": path},
    )
    (source,) = [item for item in wide.audited.report.sources if item.path == path]
    assert input_total == source.sessions[0].usage.input_total != claimed
    assert without_event == 0 and rows > 0
