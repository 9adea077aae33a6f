"""One damaged store per history rule (SA601–SA629): raw SQL on the builder, exactly that rule found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from sessaudit.formats.half_pi.build.parts import ToolCall, tool_calls_json
from sessaudit.formats.half_pi.check.history import HISTORY_CODES
from tests.formats.half_pi.test_checks_history import (
    CHAT,
    WEB,
    Statement,
    build_store,
    chat_message,
    chat_summary,
    opened_violations,
)

OTHER_UUID7 = "01900000-0000-7000-8000-000000000000"
RUNTIME = f"(SELECT rowid FROM session_runtime WHERE session_id = {CHAT})"
BUMP_RUNTIME = (
    "UPDATE session_runtime SET history_generation = 13,"
    " history_view_generation = history_view_generation + 1, snapshot_version = snapshot_version + 1"
    f" WHERE session_id = {CHAT}"
)
MESSAGE_COLUMNS = (
    "session_id, role, content, request_id, tool_id, tool_calls, compact_projection, seq, created_at"
)


@dataclass(frozen=True)
class Damage:
    rule: str
    name: str
    statements: tuple[Statement, ...]
    table: str
    rowid: str  # SQL giving the violating row's rowid after the damage
    mentions: str = CHAT  # SQL giving an id the message must name
    foreign_keys: bool = True


def run_event(kind: str) -> str:
    return f"(SELECT rowid FROM remote_run_events WHERE type = '{kind}' ORDER BY rowid LIMIT 1)"


DAMAGES = (
    Damage(
        "SA601",
        "index-disagrees-with-table",
        (
            "CREATE TABLE damage (x TEXT, y TEXT)",
            "CREATE INDEX damage_x ON damage (x)",
            "INSERT INTO damage VALUES ('left', 'right')",
            "PRAGMA writable_schema = ON",
            "UPDATE sqlite_master SET sql = 'CREATE INDEX damage_x ON damage (y)' WHERE name = 'damage_x'",
            "PRAGMA writable_schema = OFF",
        ),
        "damage",
        "(SELECT rowid FROM damage)",
        mentions="'damage_x'",
    ),
    Damage(
        "SA602",
        "message-without-session",
        (
            f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES ('{OTHER_UUID7}', 'user', 'orphan', '', '',"
            " 'null', '', 1, '2026-07-30 12:00:00')",
        ),
        "messages",
        "(SELECT max(rowid) FROM messages)",
        mentions=f"'{OTHER_UUID7}'",
        foreign_keys=False,
    ),
    Damage(
        "SA603",
        "seq-gap",
        (f"UPDATE messages SET seq = 13 WHERE session_id = {CHAT} AND seq = 12", BUMP_RUNTIME),
        "messages",
        chat_message(13),
    ),
    Damage(
        "SA604",
        "history-generation-behind",
        (f"UPDATE session_runtime SET history_generation = 11 WHERE session_id = {CHAT}",),
        "session_runtime",
        RUNTIME,
    ),
    Damage(
        "SA604",
        "runtime-row-missing",
        (f"DELETE FROM session_runtime WHERE session_id = {WEB}",),
        "sessions",
        f"(SELECT rowid FROM sessions WHERE id = {WEB})",
        mentions=WEB,
    ),
    Damage(
        "SA605",
        "pending-without-id",
        (f"UPDATE session_runtime SET pending_compact_id = '' WHERE session_id = {CHAT}",),
        "session_runtime",
        RUNTIME,
    ),
    Damage(
        "SA606",
        "snapshot-version-behind",
        (f"UPDATE session_runtime SET snapshot_version = 0 WHERE session_id = {CHAT}",),
        "session_runtime",
        RUNTIME,
    ),
    Damage(
        "SA607",
        "active-summary-missing",
        (f"UPDATE session_runtime SET active_summary_id = '{OTHER_UUID7}' WHERE session_id = {CHAT}",),
        "session_runtime",
        RUNTIME,
    ),
    Damage(
        "SA607",
        "active-summary-of-another-session",
        (
            "UPDATE session_runtime SET active_summary_id ="
            f" (SELECT id FROM context_summaries WHERE session_id = {WEB}) WHERE session_id = {CHAT}",
        ),
        "session_runtime",
        RUNTIME,
    ),
    Damage(
        "SA608",
        "from-seq-not-one",
        (f"UPDATE context_summaries SET from_seq = 2 WHERE rowid = {chat_summary(0)}",),
        "context_summaries",
        chat_summary(0),
        mentions=chat_summary(0, "id"),
    ),
    Damage(
        "SA609",
        "summary-text-edited",
        (f"UPDATE context_summaries SET summary = 'Nothing happened.' WHERE rowid = {chat_summary(0)}",),
        "context_summaries",
        chat_summary(0),
        mentions=chat_summary(0, "id"),
    ),
    Damage(
        "SA609",
        "covered-message-edited",
        (f"UPDATE messages SET content = 'fix sub() in calc.py' WHERE rowid = {chat_message(1)}",),
        "context_summaries",
        chat_summary(1),
        mentions=chat_summary(1, "id"),
    ),
    Damage(
        "SA610",
        "provider-empty",
        (f"UPDATE context_summaries SET provider_id = '' WHERE rowid = {chat_summary(0)}",),
        "context_summaries",
        chat_summary(0),
        mentions=chat_summary(0, "id"),
    ),
    Damage(
        "SA611",
        "superseded-node-missing",
        (
            f"UPDATE context_summaries SET supersedes_summary_id = '{OTHER_UUID7}'"
            f" WHERE rowid = {chat_summary(1)}",
        ),
        "context_summaries",
        chat_summary(1),
        mentions=f"'{OTHER_UUID7}'",
    ),
    Damage(
        "SA612",
        "projection-not-canonical",
        (
            """UPDATE messages SET compact_projection = '{"tool": "bash"}'"""
            f" WHERE rowid = {chat_message(11)}",
        ),
        "messages",
        chat_message(11),
    ),
    Damage(
        "SA612",
        "projection-on-a-user-row",
        (
            f"UPDATE messages SET compact_projection = {chat_message(11, 'compact_projection')}"
            f" WHERE rowid = {chat_message(9)}",
        ),
        "messages",
        chat_message(9),
    ),
    Damage(
        "SA613",
        "tool-output-rewritten",
        (f"UPDATE messages SET content = 'rolled back' WHERE rowid = {chat_message(11)}",),
        "messages",
        chat_message(11),
    ),
    Damage(
        "SA613",
        "tool-output-invalid-utf8",
        (f"UPDATE messages SET content = CAST(x'64656cff' AS TEXT) WHERE rowid = {chat_message(11)}",),
        "messages",
        chat_message(11),
    ),
    Damage(
        "SA614",
        "ids-reordered",
        (f"UPDATE messages SET id = (SELECT max(id) + 1 FROM messages) WHERE rowid = {chat_message(10)}",),
        "messages",
        chat_message(11),
    ),
    Damage(
        "SA615",
        "tool-result-without-call",
        (
            f"INSERT INTO messages ({MESSAGE_COLUMNS}) SELECT session_id, 'tool', 'ghost output', request_id,"
            f" 'call_ghost', 'null', '', 13, created_at FROM messages WHERE rowid = {chat_message(12)}",
            BUMP_RUNTIME,
        ),
        "messages",
        chat_message(13),
    ),
    Damage(
        "SA616",
        "clock-back",
        (f"UPDATE messages SET created_at = '2000-01-01 00:00:00' WHERE rowid = {chat_message(12)}",),
        "messages",
        chat_message(12),
    ),
    Damage(
        "SA617",
        "call-never-answered",
        (
            (
                f"UPDATE messages SET tool_calls = ? WHERE rowid = {chat_message(10)}",
                (
                    tool_calls_json(
                        [
                            ToolCall("call_3", "bash", '{"command":"./deploy.sh"}'),
                            ToolCall("call_4", "bash", '{"command":"rm -rf /"}'),
                        ]
                    ),
                ),
            ),
        ),
        "messages",
        chat_message(10),
    ),
    Damage(
        "SA618",
        "unknown-role",
        (f"UPDATE messages SET role = 'admin' WHERE rowid = {chat_message(9)}",),
        "messages",
        chat_message(9),
    ),
    Damage(
        "SA618",
        "tool-calls-spaced",
        (
            f"""UPDATE messages SET tool_calls = '[{{"ID": "call_3", "Name": "bash", "Args": "{{}}"}}]'"""
            f" WHERE rowid = {chat_message(10)}",
        ),
        "messages",
        chat_message(10),
    ),
    Damage(
        "SA619",
        "work-dir-rewritten",
        ("UPDATE session_groups SET work_dir = '/home/dev/elsewhere' WHERE rowid = 1",),
        "session_groups",
        "1",
        mentions="(SELECT id FROM session_groups WHERE rowid = 1)",
    ),
    Damage(
        "SA620",
        "pending-id-not-uuid7",
        (f"UPDATE session_runtime SET pending_compact_id = 'pending-1' WHERE session_id = {CHAT}",),
        "session_runtime",
        RUNTIME,
    ),
    Damage(
        "SA620",
        "session-id-not-uuid7",
        (
            "INSERT INTO sessions (id, group_id, created_at, updated_at) VALUES ('session-1',"
            " (SELECT id FROM session_groups WHERE rowid = 1), '2026-07-30 12:00:00', '2026-07-30 12:00:00')",
            "INSERT INTO session_runtime (session_id, updated_at) VALUES ('session-1', 0)",
        ),
        "sessions",
        "(SELECT rowid FROM sessions WHERE id = 'session-1')",
        mentions="'session-1'",
    ),
    Damage(
        "SA621",
        "run-id-not-hex",
        (
            "INSERT INTO remote_runs (id, session_id, hand_id, tool, status, created_at)"
            f" VALUES ('run-1', {CHAT}, 'hand-1', 'exec_command', 'created', 1785412800000)",
        ),
        "remote_runs",
        "(SELECT rowid FROM remote_runs WHERE id = 'run-1')",
        mentions="'run-1'",
    ),
    Damage(
        "SA622",
        "approval-id-not-hex",
        (
            "INSERT INTO approval_audits (approval_id, conversation_id, tool, reason, args_digest, status,"
            f" created_at, expires_at) VALUES ('approval-1', {CHAT}, 'bash', 'needs a human',"
            f" 'sha256:{'0' * 64}', 'pending', 1785412800000, 1785412920000)",
        ),
        "approval_audits",
        "(SELECT rowid FROM approval_audits WHERE approval_id = 'approval-1')",
        mentions="'approval-1'",
    ),
    Damage(
        "SA623",
        "span-not-hex",
        ("UPDATE security_decisions SET span_id = 'span-1' WHERE rowid = 1",),
        "security_decisions",
        "1",
        mentions="(SELECT id FROM security_decisions WHERE rowid = 1)",
    ),
    Damage(
        "SA624",
        "scopes-not-sorted",
        ("""UPDATE face_tokens SET scopes = '["face:chat","face:approve"]'""",),
        "face_tokens",
        "(SELECT rowid FROM face_tokens)",
        mentions="'phone'",
    ),
    Damage(
        "SA624",
        "key-equals-token",
        ("UPDATE hand_credentials SET application_key = token",),
        "hand_credentials",
        "(SELECT rowid FROM hand_credentials)",
        mentions="'hand-1'",
    ),
    Damage(
        "SA625",
        "unknown-source",
        ("UPDATE management_audits SET source = 'web'",),
        "management_audits",
        "(SELECT rowid FROM management_audits)",
        mentions="(SELECT request_id FROM management_audits)",
    ),
    Damage(
        "SA626",
        "updated-before-created",
        (f"UPDATE sessions SET updated_at = '2000-01-01 00:00:00' WHERE id = {CHAT}",),
        "sessions",
        f"(SELECT rowid FROM sessions WHERE id = {CHAT})",
    ),
    Damage(
        "SA627",
        "hand-clock-behind",
        (
            "UPDATE remote_run_events SET created_at = created_at - 100000"
            f" WHERE rowid = {run_event('accepted')}",
        ),
        "remote_run_events",
        run_event("accepted"),
        mentions=f"(SELECT run_id FROM remote_run_events WHERE rowid = {run_event('accepted')})",
    ),
    Damage(
        "SA628",
        "resolved-before-created",
        ("UPDATE approval_audits SET resolved_at = created_at - 5 WHERE status = 'resolved'",),
        "approval_audits",
        "(SELECT rowid FROM approval_audits WHERE status = 'resolved')",
        mentions="(SELECT approval_id FROM approval_audits WHERE status = 'resolved')",
    ),
    Damage(
        "SA629",
        "finished-before-started",
        ("UPDATE remote_tasks SET started_at = finished_at + 10",),
        "remote_tasks",
        "(SELECT rowid FROM remote_tasks)",
        mentions="(SELECT task_id FROM remote_tasks)",
    ),
)


def test_every_rule_has_a_damaged_store() -> None:
    assert {damage.rule for damage in DAMAGES} == HISTORY_CODES


@pytest.mark.parametrize("damage", DAMAGES, ids=[f"{damage.rule}-{damage.name}" for damage in DAMAGES])
def test_a_damaged_store_breaks_exactly_its_rule(tmp_path: Path, damage: Damage) -> None:
    path, (rowid, mentioned) = _built(tmp_path, damage)
    violations = opened_violations(path, tmp_path)
    assert {item.rule for item in violations} == {damage.rule}, [item.message for item in violations]
    located = [item for item in violations if (item.table, item.rowid) == (damage.table, rowid)]
    assert located, [(item.table, item.rowid, item.message) for item in violations]
    assert str(mentioned) in located[0].message
    for item in violations:
        assert item.table is not None and item.rowid is not None
        item.message.encode("utf-8")  # printable: no lone surrogates from invalid UTF-8


def _built(tmp_path: Path, damage: Damage) -> tuple[str, tuple[object, ...]]:
    locate = f"{damage.rowid}, {damage.mentions}"
    return build_store(tmp_path, damage.statements, foreign_keys=damage.foreign_keys, locate=locate)
