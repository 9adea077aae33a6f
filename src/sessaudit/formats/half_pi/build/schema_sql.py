"""The builder's DDL, written from the spec's tables (§4) per schema generation (§3), as `.sql` text.

Column names, their order and the feature that added each come from `schema_generations.CATALOGUE`; this
module adds each column's declaration, the table constraints and the indexes. `schema_sql(generation)` is the
text a fresh store of that generation was created with; `upgrade_sql` is what a later Mind's migration
runs on an older store (ALTER TABLE ... ADD COLUMN at the end, new tables, indexes, backfills).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from sessaudit.formats.half_pi.spec.schema_generations import (
    BY_FEATURE,
    CATALOGUE,
    INDEXES,
    Feature,
    Generation,
    columns_at,
)

_T: Final = "TEXT NOT NULL DEFAULT ''"
_I0: Final = "INTEGER NOT NULL DEFAULT 0"
_T_REQUIRED: Final = "TEXT NOT NULL"
_I_REQUIRED: Final = "INTEGER NOT NULL"
_NOW: Final = "TEXT NOT NULL DEFAULT (datetime('now'))"
_AUTO: Final = "INTEGER PRIMARY KEY AUTOINCREMENT"
_KEY: Final = "TEXT PRIMARY KEY"


def _declare(
    required: str = "", text: str = "", integer: str = "", counts: str = "", **special: str
) -> dict[str, str]:
    """Column declarations from space-separated names: required TEXT, TEXT='', INTEGER=0, required INTEGER."""
    declared = {name: _T_REQUIRED for name in required.split()}
    declared.update({name: _T for name in text.split()})
    declared.update({name: _I0 for name in integer.split()})
    declared.update({name: _I_REQUIRED for name in counts.split()})
    declared.update(special)
    return declared


_LIFECYCLE_TEXT: Final = "trace_id span_id parent_span_id group_id principal_id lifecycle_source node_id"

DECLARATIONS: Final[Mapping[str, Mapping[str, str]]] = {
    "session_groups": _declare("work_dir", "name soul_path", id=_KEY, created_at=_NOW, updated_at=_NOW),
    "sessions": _declare(
        "group_id",
        "name description soul_path active_hand",
        id=_KEY,
        mode="TEXT NOT NULL DEFAULT 'normal'",
        created_at=_NOW,
        updated_at=_NOW,
    ),
    "messages": _declare(
        "session_id role",
        "content request_id tool_id tool_calls compact_projection",
        id=_AUTO,
        seq=_I_REQUIRED,
        created_at=_NOW,
    ),
    "context_summaries": _declare(
        "session_id summary summary_digest source_digest contract_digest provider_id model_id profile"
        " policy_version projection_version generation_mode",
        "parent_summary_id supersedes_summary_id generation_key",
        id=_KEY,
        counts="from_seq to_seq source_estimated_tokens summary_estimated_tokens input_tokens output_tokens"
        " created_at",
    ),
    "session_runtime": _declare(
        "",
        "active_summary_id pending_compact_id",
        "history_generation compact_generation history_view_generation pending_compact pending_attempt"
        " pending_not_before snapshot_version",
        session_id=_KEY,
        updated_at=_I_REQUIRED,
    ),
    "hand_tokens": _declare("label", "hand_id", id=_AUTO, token="TEXT NOT NULL UNIQUE", created_at=_NOW),
    "hand_credentials": _declare(
        "",
        id=_AUTO,
        label="TEXT NOT NULL UNIQUE",
        token="TEXT NOT NULL UNIQUE",
        application_key="TEXT NOT NULL UNIQUE",
        created_at=_NOW,
    ),
    "face_tokens": _declare(
        "scopes",
        id=_AUTO,
        label="TEXT NOT NULL UNIQUE",
        token="TEXT NOT NULL UNIQUE",
        application_key="TEXT NOT NULL UNIQUE",
        created_at=_NOW,
    ),
    "remote_runs": _declare(
        "hand_id tool status",
        "session_id request_id args_digest approval_source approval_mode approval_reason reject_code error "
        + _LIFECYCLE_TEXT,
        "sent_at accepted_at finished_at duration_ms",
        id=_KEY,
        created_at=_I_REQUIRED,
    ),
    "remote_run_events": _declare(
        "run_id to_status type",
        "from_status message kind",
        "progress_seq gap",
        id=_AUTO,
        seq=_I_REQUIRED,
        created_at=_I_REQUIRED,
    ),
    "remote_tasks": _declare(
        "session_id hand_id tool args_digest status",
        "error",
        "started_at finished_at log_bytes truncated",
        task_id=_KEY,
        detail_mode="TEXT NOT NULL DEFAULT 'summary'",
        created_at=_I_REQUIRED,
        updated_at=_I_REQUIRED,
        stale="INTEGER NOT NULL DEFAULT 1",
    ),
    "approval_audits": _declare(
        "conversation_id tool reason args_digest status",
        "request_id run_id decision actor_id actor_label source resolution_reason " + _LIFECYCLE_TEXT,
        "resolved_at",
        approval_id=_KEY,
        created_at=_I_REQUIRED,
        expires_at=_I_REQUIRED,
    ),
    "tool_display_projections": _declare(
        "conversation_id request_id tool detail_mode args_digest",
        "args_projection result_projection output_digest error_category projection_version",
        "args_bytes args_truncated output_bytes truncated success complete completed_at",
        ordinal=_I_REQUIRED,
        scan_warnings="TEXT NOT NULL DEFAULT '[]'",
        created_at=_I_REQUIRED,
    ),
    "management_audits": _declare(
        "request_id source actor operation target_type status",
        "target_id target_label code message",
        id=_AUTO,
        created_at=_I_REQUIRED,
    ),
    "security_decisions": _declare(
        "trace_id span_id action_kind decision",
        "request_id conversation_id group_id principal_id node_id resource_name target_node input_digest"
        " reason_code rule_id policy_version approval_id run_id",
        id=_KEY,
        risk_labels="TEXT NOT NULL DEFAULT '[]'",
        details_redacted="TEXT NOT NULL DEFAULT '{}'",
        created_at=_I_REQUIRED,
    ),
    "lifecycle_outbox": _declare(
        "event_type trace_id span_id payload_redacted",
        "subject_id last_error",
        "attempts delivered_at dead_letter_at",
        id=_KEY,
        schema_version=_I_REQUIRED,
        available_at=_I_REQUIRED,
        created_at=_I_REQUIRED,
    ),
}

# An ALTER TABLE cannot add a column whose default is an expression: the migration used '' instead.
ALTER_DECLARATIONS: Final[Mapping[tuple[str, str], str]] = {("sessions", "updated_at"): _T}

CONSTRAINTS: Final[Mapping[str, tuple[str, ...]]] = {
    "sessions": ("FOREIGN KEY (group_id) REFERENCES session_groups(id)",),
    "messages": ("FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE",),
    "context_summaries": (
        "UNIQUE(session_id, from_seq, to_seq, contract_digest)",
        "FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE",
    ),
    "session_runtime": ("FOREIGN KEY (session_id) REFERENCES sessions(id) ON DELETE CASCADE",),
    "remote_run_events": (
        "UNIQUE(run_id, seq)",
        "FOREIGN KEY (run_id) REFERENCES remote_runs(id) ON DELETE CASCADE",
    ),
    "tool_display_projections": (
        "PRIMARY KEY(conversation_id, request_id, ordinal)",
        "FOREIGN KEY (conversation_id) REFERENCES sessions(id) ON DELETE CASCADE",
    ),
}

INDEX_DEFINITIONS: Final[Mapping[str, str]] = {
    "idx_messages_session": "messages(session_id, seq)",
    "idx_remote_runs_session": "remote_runs(session_id, created_at)",
    "idx_remote_runs_hand": "remote_runs(hand_id, created_at)",
    "idx_remote_runs_status": "remote_runs(status)",
    "idx_remote_run_events_run": "remote_run_events(run_id, seq)",
    "idx_remote_run_progress_unique": "UNIQUE remote_run_events(run_id, progress_seq) WHERE progress_seq > 0",
    "idx_remote_tasks_session": "remote_tasks(session_id, created_at)",
    "idx_remote_tasks_hand": "remote_tasks(hand_id, created_at)",
    "idx_remote_tasks_status": "remote_tasks(status)",
    "idx_approval_audits_conversation": "approval_audits(conversation_id, created_at)",
    "idx_approval_audits_status": "approval_audits(status, expires_at)",
    "idx_management_audits_request": "management_audits(request_id)",
    "idx_management_audits_created": "management_audits(created_at)",
    "idx_messages_session_seq": "UNIQUE messages(session_id, seq)",
    "idx_security_decisions_trace": "security_decisions(trace_id, created_at)",
    "idx_security_decisions_conversation": "security_decisions(conversation_id, created_at)",
    "idx_lifecycle_outbox_due": "lifecycle_outbox(delivered_at, dead_letter_at, available_at)",
    "idx_context_summaries_session_to": "context_summaries(session_id, to_seq DESC)",
    "idx_session_runtime_pending": "session_runtime(pending_compact, pending_not_before)",
    "idx_tool_display_conversation": "tool_display_projections(conversation_id, created_at, ordinal)",
}

# Columns a fresh store got by ALTER TABLE (so they sit after the others) until the feature that moved
# them into CREATE TABLE; None: always by ALTER.
_APPENDED_UNTIL: Final[Mapping[tuple[str, str], Feature | None]] = {
    ("sessions", "active_hand"): Feature.SESSION_MODES,
    ("hand_tokens", "hand_id"): None,
    ("remote_run_events", "progress_seq"): None,
    ("remote_run_events", "kind"): None,
    ("remote_run_events", "gap"): None,
}


# Columns that only ever appeared in CREATE TABLE: no migration adds them to an older store.
NEVER_MIGRATED: Final = frozenset({("sessions", "name"), ("sessions", "description")})


def _appended(table: str, column: str, generation: Generation) -> bool:
    if (table, column) not in _APPENDED_UNTIL:
        return False
    until = _APPENDED_UNTIL[(table, column)]
    return until is None or generation.index < BY_FEATURE[until].index


def _index_sql(name: str) -> str:
    definition = INDEX_DEFINITIONS[name]
    unique = definition.startswith("UNIQUE ")
    target = definition.removeprefix("UNIQUE ")
    return f"CREATE {'UNIQUE ' if unique else ''}INDEX IF NOT EXISTS {name} ON {target};"


def _add_column_sql(table: str, column: str) -> str:
    declaration = ALTER_DECLARATIONS.get((table, column), DECLARATIONS[table][column])
    return f"ALTER TABLE {table} ADD COLUMN {column} {declaration};"


def _indexes_at(generation: Generation) -> list[str]:
    return [
        _index_sql(name)
        for name, (_, feature) in INDEXES.items()
        if BY_FEATURE[feature].index <= generation.index
    ]


def _create_table_sql(table: str, generation: Generation) -> list[str]:
    """CREATE TABLE for `table` as a fresh store at `generation` made it, plus the ALTERs that followed."""
    columns = columns_at(table, generation)
    inline = [name for name in columns if not _appended(table, name, generation)]
    lines = [f"    {name} {DECLARATIONS[table][name]}" for name in inline]
    lines.extend(f"    {constraint}" for constraint in CONSTRAINTS.get(table, ()))
    create = f"CREATE TABLE IF NOT EXISTS {table} (\n" + ",\n".join(lines) + "\n);"
    return [create, *(_add_column_sql(table, name) for name in columns if name not in inline)]


def schema_sql(generation: Generation) -> str:
    """The DDL of a fresh store at `generation`: CREATE TABLE (+ the ALTERs it ran), then its indexes."""
    statements = []
    for table in CATALOGUE:
        if columns_at(table, generation):
            statements.extend(_create_table_sql(table, generation))
    statements.extend(_indexes_at(generation))
    return "\n".join(statements) + "\n"


def upgrade_sql(present: Mapping[str, tuple[str, ...]], generation: Generation, now_ms: int) -> str:
    """What opening the store with a Mind at `generation` runs (spec §3): new tables, ALTERs, backfills.

    `present` is table -> columns as they are; missing columns are added in the order of the features
    that added them, as the migration does, so they sit at the end of their table (sessions.name and
    description never were: a store older than them stays without them)."""
    statements = []
    for table in CATALOGUE:
        columns = columns_at(table, generation)
        if not columns:
            continue
        if table not in present:
            statements.extend(_create_table_sql(table, generation))
            continue
        order = {name: (BY_FEATURE[feature].index, at) for at, (name, feature) in enumerate(CATALOGUE[table])}
        absent = [name for name in columns if name not in present[table]]
        missing = sorted(
            (name for name in absent if (table, name) not in NEVER_MIGRATED), key=order.__getitem__
        )
        statements.extend(_add_column_sql(table, name) for name in missing)
    if BY_FEATURE[Feature.COMPACTION].index <= generation.index:
        statements.append(
            "INSERT INTO session_runtime (session_id, history_generation, history_view_generation,"
            " snapshot_version, updated_at) SELECT sessions.id, COALESCE(MAX(messages.seq), 0),"
            " COALESCE(MAX(messages.seq), 0), COALESCE(MAX(messages.seq), 0),"
            f" {int(now_ms)} FROM sessions LEFT JOIN messages ON messages.session_id = sessions.id"
            " WHERE true GROUP BY sessions.id ON CONFLICT(session_id) DO NOTHING;"
        )
    if BY_FEATURE[Feature.SESSION_MODES].index <= generation.index:
        statements.append("UPDATE sessions SET updated_at = created_at WHERE updated_at = '';")
    statements.extend(_indexes_at(generation))
    return "\n".join(statements) + "\n"
