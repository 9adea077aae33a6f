"""`sessaudit verify` reports each Claude Code session's usage from its exact ledger: the same literal
figures as test_ledger_literals.py (worked out by hand from scenarios.py), here through the engine, where a
resumed session must find the copies of its predecessor in the project directory by itself."""

from __future__ import annotations

from pathlib import Path

from sessaudit.engine import audit
from sessaudit.formats.claude_code.build.scenarios import build_one
from sessaudit.model import Report, Usage


def report_of(tmp_path: Path, name: str) -> Report:
    build_one(tmp_path, name)
    return audit([str(tmp_path / "projects")]).report


def usages(report: Report) -> dict[str, Usage]:
    return {
        session.session_id or "": session.usage for source in report.sources for session in source.sessions
    }


def figures(usage: Usage) -> tuple[int, int, int, int, int]:
    return (usage.input, usage.output, usage.cache_write, usage.cache_read, usage.input_total)


def test_clean_session_usage(tmp_path: Path) -> None:
    (usage,) = usages(report_of(tmp_path, "clean")).values()
    assert figures(usage) == (6, 753, 7012, 65181, 6 + 7012 + 65181)


def test_sub_agent_usage_is_the_sessions(tmp_path: Path) -> None:
    for layout in ("subagent_folder", "subagent_beside"):
        (usage,) = usages(report_of(tmp_path / layout, layout)).values()
        assert figures(usage) == (16, 936, 13178, 36859, 16 + 13178 + 36859)


def test_resumed_copies_count_once_where_made(tmp_path: Path) -> None:
    report = report_of(tmp_path, "resumed")
    found = sorted(figures(usage) for usage in usages(report).values())
    # the first session made 1 response (3, 48, 2000, 10000), the resumed one 2 more; its copy of the
    # first session's response is recognised (the earlier file lies beside it) and not counted again
    assert found == [(2, 120, 420, 24300, 24722), (3, 48, 2000, 10000, 12003)]
    later = [source for source in report.sources if source.native.get("resumed_from")]
    assert len(later) == 1
    (earlier,) = later[0].native["resumed_from"]
    assert earlier["path"] != later[0].path and len(earlier["sha256"]) == 64


def test_resumed_session_alone_counts_its_copies(tmp_path: Path) -> None:
    """Without the earlier file (deleted by cleanupPeriodDays, spec §1.7), nothing says the first lines
    are copies: they count as the session's, and the report says no earlier file was used."""
    build_one(tmp_path, "resumed")
    report = audit([str(tmp_path / "projects")]).report
    earlier = min(report.sources, key=lambda source: source.sessions[0].usage.output)
    Path(earlier.files[0].path).unlink()
    again = audit([str(tmp_path / "projects")]).report
    (source,) = again.sources
    assert "resumed_from" not in source.native
    assert figures(source.sessions[0].usage) == (5, 168, 2420, 34300, 5 + 2420 + 34300)


def test_placeholder_output_is_what_the_log_says(tmp_path: Path) -> None:
    (usage,) = usages(report_of(tmp_path, "placeholder_stop_null")).values()
    assert figures(usage) == (3, 123, 3560, 21000, 3 + 3560 + 21000)
