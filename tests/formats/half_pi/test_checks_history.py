"""Half-Pi history invariants (spec §10 invariants 1–6, 22, 23): clean stores, generations, the rule table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.half_pi.build.parts import ToolCall
from sessaudit.formats.half_pi.build.sessions import Session, ToolResult
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.check.history import HISTORY_CODES, check_history, history_checks
from sessaudit.formats.half_pi.check.sql_checks import Violation, run_checks
from sessaudit.formats.half_pi.read.snapshot import SnapshotOptions, open_snapshot
from sessaudit.formats.half_pi.rules.history import HISTORY_RULES
from sessaudit.formats.half_pi.spec.schema_generations import (
    BY_FEATURE,
    GENERATIONS,
    HEAD,
    Feature,
    Generation,
    detect_generation,
)
from sessaudit.verdicts import Severity, Verdict

# SQL fragments naming the scenario's rows (the "calc" chat is the first session, "web" the second)
CHAT = "(SELECT id FROM sessions ORDER BY rowid LIMIT 1)"
WEB = "(SELECT id FROM sessions ORDER BY rowid LIMIT 1 OFFSET 1)"
Statement = str | tuple[str, tuple[Any, ...]]


def chat_message(seq: int, column: str = "rowid") -> str:
    return f"(SELECT {column} FROM messages WHERE session_id = {CHAT} AND seq = {seq})"


def chat_summary(index: int, column: str = "rowid") -> str:
    ordered = f"FROM context_summaries WHERE session_id = {CHAT} ORDER BY rowid"
    return f"(SELECT {column} {ordered} LIMIT 1 OFFSET {index})"


def build_scenario(builder: StoreBuilder) -> Session:
    """Everything the history checks read, as Half-Pi writes it, for whatever the generation has.

    HEAD: the calc chat has seq 1..12 (two summaries covering 1..4 and 1..8, incremental; a pending
    compaction; seq 9..12 uncovered: user, assistant calling call_3, its tool row, a final answer), a
    remote run, a background task, credentials and a management audit; the web chat has a rebase summary.
    """
    chat = builder.session("/home/dev/calc").user("fix add() in calc.py")
    if builder.has(Feature.LIFECYCLE):
        builder.admitted(chat, "fix add() in calc.py")
    chat.assistant("", calls=[ToolCall("call_1", "bash", '{"command":"pytest -q"}')], results=["1 failed"])
    chat.assistant("Fixed: add() returned a - b.")
    compaction = builder.has(Feature.COMPACTION)
    if compaction:
        chat.compact("Fixed add() in calc.py.")
    chat.user("now run the linter")
    calls = [ToolCall("call_2", "bash", '{"command":"ruff check"}')]
    chat.assistant("", calls=calls, results=[ToolResult("E501 line too long", "failed")])
    chat.assistant("One long line remains.")
    if compaction:
        chat.compact("Fixed add(); one lint error left.", mode="incremental")
        chat.request_compaction()
    chat.user("deploy it")
    chat.assistant("", calls=[ToolCall("call_3", "bash", '{"command":"./deploy.sh"}')], results=["deployed"])
    chat.assistant("Deployed.")
    if builder.has(Feature.APPROVALS):
        approval = builder.approval(chat, "exec_command", remote=True, args={"command": "./deploy.sh"})
        approval.resolve("allow_once", actor_id="1", actor_label="phone", source="face")
        if builder.has(Feature.LIFECYCLE):
            approval.tool_decision()
            builder.local_tool(chat, "bash", {"command": "./deploy.sh"}, outcome="succeeded")
        approval.remote_run().through("approved", "sent", "accepted", "running").progress("ok\n")
    if builder.has(Feature.REMOTE_RUNS):
        builder.remote_run(chat, args={"command": "ls"}).through("approved", "sent", "accepted", "succeeded")
    if builder.has(Feature.REMOTE_TASKS):
        background = builder.background_run(chat, args={"command": "make long"})
        background.through("approved", "sent", "accepted", "succeeded")
        started = builder.ids.tick()
        background.task.update("running", started_at=started)
        background.task.update("succeeded", started_at=started, finished_at=builder.ids.tick(), log_bytes=9)
    if builder.has(Feature.CREDENTIALS):
        builder.hand_credential("hand-1")
        builder.face_token("phone", ["face:chat", "face:approve", "face:chat"])
    if builder.has(Feature.MANAGEMENT_AUDITS):
        builder.management_audit("hand.add", target_label="hand-1", target_id="1")
    web = builder.session("/home/dev/web").user("hello")
    web.assistant("Hello! What shall we build?")
    if compaction:
        web.compact("Greetings exchanged.", mode="rebase", generation_key="sha256:" + "ab" * 32)
    return chat


def opened_violations(path: str, tmp_path: Path) -> list[Violation]:
    """check_history over a snapshot of the store at `path`, as the verifier runs it."""
    root = tmp_path / "private"
    root.mkdir(exist_ok=True)
    with open_snapshot(path, SnapshotOptions(temp_root=str(root))) as snap:
        generation = detect_generation(snap.connection)
        return check_history(snap.connection, generation, list(snap.integrity), list(snap.foreign_keys))


def build_store(
    tmp_path: Path,
    statements: Sequence[Statement] = (),
    *,
    generation: Generation = HEAD,
    foreign_keys: bool = True,
    locate: str | None = None,
) -> tuple[str, Any]:
    """The scenario, damaged by raw SQL `statements`; returns (db path, the row `SELECT locate` gives after
    them, read on the builder's own connection so the finished store is never opened by anything else)."""
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=11, generation=generation)
    build_scenario(builder)
    for statement in statements:
        sql, parameters = (statement, ()) if isinstance(statement, str) else statement
        builder.execute(sql, parameters, foreign_keys=foreign_keys)
    located = tuple(builder.connection.execute(f"SELECT {locate}").fetchone()) if locate else None
    return builder.finish().path, located


def test_the_clean_scenario_has_no_violations(tmp_path: Path) -> None:
    path, _ = build_store(tmp_path)
    assert opened_violations(path, tmp_path) == []


@pytest.mark.parametrize("generation", GENERATIONS, ids=[item.feature.value for item in GENERATIONS])
def test_every_generation_is_clean_and_runs_only_the_checks_it_can(
    tmp_path: Path, generation: Generation
) -> None:
    path, _ = build_store(tmp_path, generation=generation)
    assert opened_violations(path, tmp_path) == []


def test_checks_are_skipped_where_the_generation_lacks_their_columns(tmp_path: Path) -> None:
    before_compaction = BY_FEATURE[Feature.LIFECYCLE]  # no session_runtime, no compact_projection yet
    # a runtime-less store whose history is intact except for one gap: only the gap is judged
    gap = f"UPDATE messages SET seq = 13 WHERE session_id = {CHAT} AND seq = 12"
    path, (gap_rowid,) = build_store(tmp_path, [gap], generation=before_compaction, locate=chat_message(13))
    root = tmp_path / "private"
    root.mkdir()
    with open_snapshot(path, SnapshotOptions(temp_root=str(root))) as snap:
        generation = detect_generation(snap.connection)
        assert not generation.has(Feature.COMPACTION)
        found, skipped = run_checks(snap.connection, history_checks())
        violations = check_history(snap.connection, generation, list(snap.integrity), list(snap.foreign_keys))
    assert {check.name for check in skipped} == {
        "SA604-session-runtime-mismatch",
        "SA605-runtime-pending-invalid",
        "SA606-runtime-counters-inconsistent",
        "SA607-active-summary-invalid",
        "SA608-summary-range-invalid",
        "SA610-summary-node-invalid",
        "SA611-summary-link-invalid",
    }
    assert [(item.rule, item.table, item.rowid) for item in found] == [("SA603", "messages", gap_rowid)]
    assert [(item.rule, item.table, item.rowid) for item in violations] == [("SA603", "messages", gap_rowid)]


def test_the_oldest_generation_runs_only_the_message_checks(tmp_path: Path) -> None:
    path, _ = build_store(tmp_path, generation=GENERATIONS[0])
    root = tmp_path / "private"
    root.mkdir()
    with open_snapshot(path, SnapshotOptions(temp_root=str(root))) as snap:
        _, skipped = run_checks(snap.connection, history_checks())
    applied = {check.rule for check in history_checks()} - {check.rule for check in skipped}
    assert applied == {"SA603", "SA614", "SA616"}


# --- the rule table ---------------------------------------------------------------------------------

PYTHON_RULES = {
    "SA601",
    "SA602",
    "SA609",
    "SA612",
    "SA613",
    "SA615",
    "SA617",
    "SA618",
    "SA619",
    "SA620",
    "SA624",
}


def test_every_rule_has_one_check_and_every_check_a_rule() -> None:
    codes = [rule.code for rule in HISTORY_RULES]
    assert codes == [f"SA6{number:02d}" for number in range(1, 30)]
    assert set(codes) == HISTORY_CODES
    sql_rules = [check.rule for check in history_checks()]
    assert len(sql_rules) == len(set(sql_rules))  # one file per rule
    assert set(sql_rules).isdisjoint(PYTHON_RULES)
    assert set(sql_rules) | PYTHON_RULES == HISTORY_CODES
    for check in history_checks():
        assert check.name.startswith(check.rule + "-")
        assert check.what and "Spec §" in check.sql


def test_levels_decide_severity_and_verdict() -> None:
    for rule in HISTORY_RULES:
        level = re.match(r"Level ([HPS]),", rule.doc)
        assert level is not None, rule.code
        assert rule.formats == ("half-pi",)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert rule.summary.endswith(".") and len(rule.doc) > 40 and "§" in rule.doc
        if level.group(1) == "S":
            assert (rule.severity, rule.verdict) == (Severity.WARNING, None), rule.code
        else:
            assert (rule.severity, rule.verdict) == (Severity.ERROR, Verdict.CORRUPT), rule.code
