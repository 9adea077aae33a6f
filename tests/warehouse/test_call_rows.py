"""Tool calls leave a tiny-agent extraction as rows when their run finishes (issue 8: load's memory), not at
the end of the session; a call a later line may still change (its intent pending: a late result, or the
run's pending effect in the report) stays until the end, and the warehouse is the same either way."""

from __future__ import annotations

import json
from pathlib import Path

from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder
from sessaudit.formats.tiny_agent.warehouse.v2 import extract_v2
from sessaudit.framing import Line
from sessaudit.warehouse.drafts import FAILED, SUCCEEDED, UNKNOWN, Extraction
from sessaudit.warehouse.loader import load_warehouse
from tests.formats.tiny_agent.scenarios import write_tools_run
from tests.warehouse.conftest import FIXED_CLOCK, inside, query
from tests.warehouse.test_reload import dump


def _lines(data: bytes) -> list[Line]:
    lines, offset = [], 0
    for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
        lines.append(Line(number, offset, raw))
        offset += len(raw) + 1
    return lines


def _finished_line(data: bytes, nth: int) -> int:
    """The line number of the `nth` (1-based) operationFinished record."""
    seen = 0
    for line in _lines(data):
        facts = json.loads(line.data)
        for fact in facts if isinstance(facts, list) else [facts]:
            if fact.get("kind") == "record" and fact["record"]["type"] == "operationFinished":
                seen += 1
                if seen == nth:
                    return line.number
    raise AssertionError(f"no operationFinished number {nth}")


def _pending_then_late(builder: SessionBuilder, *, late: bool) -> None:
    run = builder.start_run("Deploy it.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    intent = builder.start_tool(answer, 0)
    builder.finish(run, "failed", error=("tool_error", "deploy runner crashed"))
    if late:
        builder.tool_result(intent, "deployed", duration_ms=60000)


def test_a_finished_runs_calls_are_rows_as_soon_as_it_finishes() -> None:
    builder = SessionBuilder(seed=31)
    write_tools_run(builder)
    write_tools_run(builder)
    data = builder.data()
    lines = _lines(data)
    first_finish = _finished_line(data, 1)
    into = Extraction()
    # the lines through the first run's end: its two calls are rows, none is left as a draft
    extract_v2(lines[:first_finish], None, "s", "session", into)
    assert [(row.tool_name, row.status) for row in into.tool_calls] == [("read", SUCCEEDED), ("bash", FAILED)]
    assert into.calls == []
    whole = Extraction()
    extract_v2(lines, None, "s", "session", whole)
    assert len(whole.tool_calls) == 4 and whole.calls == []
    assert len({row.run_id for row in whole.tool_calls}) == 2


def test_a_call_whose_intent_is_pending_when_its_run_finishes_waits_for_its_late_result() -> None:
    builder = SessionBuilder(seed=32)
    write_tools_run(builder)
    _pending_then_late(builder, late=True)
    data = builder.data()
    lines = _lines(data)
    through_finish = Extraction()
    extract_v2(lines[: _finished_line(data, 2)], None, "s", "session", through_finish)
    assert len(through_finish.tool_calls) == 2  # the first run's
    (waiting,) = through_finish.calls
    assert waiting.status == UNKNOWN and waiting.tool_name == "bash"
    whole = Extraction()
    extract_v2(lines, None, "s", "session", whole)
    (settled,) = whole.calls
    # the late result settled it, and it still has its run (the run's steps were kept for it)
    assert settled.status == SUCCEEDED and settled.run_id == waiting.run_id is not None
    assert settled.result_seq is not None


def test_the_warehouse_has_one_row_for_a_pending_effect_of_a_finished_run(tmp_path: Path) -> None:
    builder = SessionBuilder(seed=33)
    write_tools_run(builder)
    _pending_then_late(builder, late=False)
    (tmp_path / "s.jsonl").write_bytes(builder.data())
    with inside(tmp_path):
        load_warehouse(["s.jsonl"], Path("w.duckdb"), FIXED_CLOCK)
    rows = query(
        tmp_path / "w.duckdb",
        "SELECT tool_name, status, recovery_condition IS NOT NULL FROM tool_calls ORDER BY call_seq",
    )
    # the first run's two calls (rows when it finished), then the failed run's call: one row, the report's
    # pending effect joined to it, not a second row
    assert rows == [("read", SUCCEEDED, False), ("bash", FAILED, False), ("bash", UNKNOWN, True)]
    assert dump(tmp_path / "w.duckdb")["tool_calls"]  # every column readable
