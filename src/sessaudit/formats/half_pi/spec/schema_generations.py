"""Which Half-Pi schema generation a store has, from its tables and columns (spec §3: no version number).

Every generation adds one named feature (a group of tables and columns). A feature is present when all its
columns are, partial when some are. The newest present feature dates the store (`format_version`); gaps,
partial features, and unknown tables, columns or indexes become notes. Columns are matched by name only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final


class Feature(StrEnum):
    """One schema change of spec §3, named after what it adds."""

    CORE = "core"  # session_groups, sessions, messages
    SESSION_NAMES = "session-names"  # sessions + name, description
    HAND_TOKENS = "hand-tokens"  # hand_tokens
    ACTIVE_HAND = "active-hand"  # sessions + active_hand
    REMOTE_RUNS = "remote-runs"  # remote_runs, remote_run_events
    RUN_PROGRESS = "run-progress"  # remote_run_events + progress_seq, kind, gap
    REMOTE_TASKS = "remote-tasks"  # hand_tokens + hand_id; remote_tasks
    CREDENTIALS = "credentials"  # hand_credentials, face_tokens
    SESSION_MODES = "session-modes"  # sessions + mode, updated_at
    RUN_REQUEST_IDS = "run-request-ids"  # remote_runs + request_id
    APPROVALS = "approvals"  # approval_audits
    MANAGEMENT_AUDITS = "management-audits"  # management_audits
    MESSAGE_REQUEST_IDS = "message-request-ids"  # messages + request_id
    LIFECYCLE = "lifecycle"  # lifecycle columns; security_decisions; lifecycle_outbox
    COMPACTION = "compaction"  # messages + compact_projection; context_summaries; session_runtime
    TOOL_DISPLAY = "tool-display"  # remote_tasks + detail_mode; tool_display_projections


@dataclass(frozen=True, slots=True)
class Generation:
    """One schema generation: the Half-Pi commit that introduced it, its date and its feature."""

    index: int
    commit: str
    date: str
    feature: Feature


GENERATIONS: Final = tuple(
    Generation(index, commit, date, feature)
    for index, (commit, date, feature) in enumerate(
        (
            ("c06966b", "2026-07-14", Feature.CORE),
            ("ca0ca79", "2026-07-14", Feature.SESSION_NAMES),
            ("6561be7", "2026-07-14", Feature.HAND_TOKENS),
            ("bd089f6", "2026-07-16", Feature.ACTIVE_HAND),
            ("8686689", "2026-07-17", Feature.REMOTE_RUNS),
            ("3ffa593", "2026-07-18", Feature.RUN_PROGRESS),
            ("8cae5ee", "2026-07-18", Feature.REMOTE_TASKS),
            ("cdec78d", "2026-07-18", Feature.CREDENTIALS),
            ("9cdc119", "2026-07-19", Feature.SESSION_MODES),
            ("0d3f96d", "2026-07-19", Feature.RUN_REQUEST_IDS),
            ("7d50589", "2026-07-19", Feature.APPROVALS),
            ("c697ffa", "2026-07-20", Feature.MANAGEMENT_AUDITS),
            ("bda4794", "2026-07-20", Feature.MESSAGE_REQUEST_IDS),
            ("df4a275", "2026-07-22", Feature.LIFECYCLE),
            ("2a14881", "2026-07-22", Feature.COMPACTION),
            ("252f14f", "2026-07-30", Feature.TOOL_DISPLAY),
        )
    )
)
BY_FEATURE: Final = {generation.feature: generation for generation in GENERATIONS}
HEAD: Final = GENERATIONS[-1]

_F = Feature
_LIFECYCLE_COLUMNS: Final = tuple(
    (name, _F.LIFECYCLE)
    for name in (
        "trace_id",
        "span_id",
        "parent_span_id",
        "group_id",
        "principal_id",
        "lifecycle_source",
        "node_id",
    )
)


def _all(feature: Feature, names: str) -> tuple[tuple[str, Feature], ...]:
    return tuple((name, feature) for name in names.split())


# Every table's columns in a fresh HEAD store's order, each with the feature that added it.
CATALOGUE: Final[Mapping[str, tuple[tuple[str, Feature], ...]]] = {
    "session_groups": _all(_F.CORE, "id name work_dir soul_path created_at updated_at"),
    "sessions": (
        ("id", _F.CORE),
        ("group_id", _F.CORE),
        ("name", _F.SESSION_NAMES),
        ("description", _F.SESSION_NAMES),
        ("soul_path", _F.CORE),
        ("mode", _F.SESSION_MODES),
        ("active_hand", _F.ACTIVE_HAND),
        ("created_at", _F.CORE),
        ("updated_at", _F.SESSION_MODES),
    ),
    "messages": (
        *_all(_F.CORE, "id session_id role content"),
        ("request_id", _F.MESSAGE_REQUEST_IDS),
        *_all(_F.CORE, "tool_id tool_calls"),
        ("compact_projection", _F.COMPACTION),
        *_all(_F.CORE, "seq created_at"),
    ),
    "context_summaries": _all(
        _F.COMPACTION,
        "id session_id parent_summary_id supersedes_summary_id from_seq to_seq summary summary_digest"
        " source_digest contract_digest provider_id model_id profile policy_version projection_version"
        " generation_mode generation_key source_estimated_tokens summary_estimated_tokens input_tokens"
        " output_tokens created_at",
    ),
    "session_runtime": _all(
        _F.COMPACTION,
        "session_id active_summary_id history_generation compact_generation history_view_generation"
        " pending_compact pending_compact_id pending_attempt pending_not_before snapshot_version updated_at",
    ),
    "hand_tokens": (*_all(_F.HAND_TOKENS, "id label token created_at"), ("hand_id", _F.REMOTE_TASKS)),
    "hand_credentials": _all(_F.CREDENTIALS, "id label token application_key created_at"),
    "face_tokens": _all(_F.CREDENTIALS, "id label token application_key scopes created_at"),
    "remote_runs": (
        *_all(_F.REMOTE_RUNS, "id session_id"),
        ("request_id", _F.RUN_REQUEST_IDS),
        *_LIFECYCLE_COLUMNS,
        *_all(
            _F.REMOTE_RUNS,
            "hand_id tool args_digest approval_source approval_mode approval_reason status reject_code error"
            " created_at sent_at accepted_at finished_at duration_ms",
        ),
    ),
    "remote_run_events": (
        *_all(_F.REMOTE_RUNS, "id run_id seq from_status to_status type message created_at"),
        *_all(_F.RUN_PROGRESS, "progress_seq kind gap"),
    ),
    "remote_tasks": (
        *_all(_F.REMOTE_TASKS, "task_id session_id hand_id tool args_digest"),
        ("detail_mode", _F.TOOL_DISPLAY),
        *_all(
            _F.REMOTE_TASKS,
            "status created_at started_at finished_at updated_at log_bytes truncated stale error",
        ),
    ),
    "approval_audits": (
        *_all(_F.APPROVALS, "approval_id conversation_id request_id run_id"),
        *_LIFECYCLE_COLUMNS,
        *_all(
            _F.APPROVALS,
            "tool reason args_digest status decision actor_id actor_label source resolution_reason"
            " created_at expires_at resolved_at",
        ),
    ),
    "tool_display_projections": _all(
        _F.TOOL_DISPLAY,
        "conversation_id request_id ordinal tool detail_mode args_digest args_bytes args_truncated"
        " args_projection result_projection output_bytes output_digest truncated error_category success"
        " complete projection_version scan_warnings created_at completed_at",
    ),
    "management_audits": _all(
        _F.MANAGEMENT_AUDITS,
        "id request_id source actor operation target_type target_id target_label status code message"
        " created_at",
    ),
    "security_decisions": _all(
        _F.LIFECYCLE,
        "id trace_id span_id request_id conversation_id group_id principal_id node_id action_kind"
        " resource_name target_node input_digest risk_labels decision reason_code rule_id policy_version"
        " approval_id run_id details_redacted created_at",
    ),
    "lifecycle_outbox": _all(
        _F.LIFECYCLE,
        "id event_type schema_version trace_id span_id subject_id payload_redacted attempts available_at"
        " created_at delivered_at dead_letter_at last_error",
    ),
}

# Named indexes: name -> (table, feature). SQLite's own `sqlite_autoindex_*` are not listed.
INDEXES: Final[Mapping[str, tuple[str, Feature]]] = {
    "idx_messages_session": ("messages", _F.CORE),
    "idx_remote_runs_session": ("remote_runs", _F.REMOTE_RUNS),
    "idx_remote_runs_hand": ("remote_runs", _F.REMOTE_RUNS),
    "idx_remote_runs_status": ("remote_runs", _F.REMOTE_RUNS),
    "idx_remote_run_events_run": ("remote_run_events", _F.REMOTE_RUNS),
    "idx_remote_run_progress_unique": ("remote_run_events", _F.RUN_PROGRESS),
    "idx_remote_tasks_session": ("remote_tasks", _F.REMOTE_TASKS),
    "idx_remote_tasks_hand": ("remote_tasks", _F.REMOTE_TASKS),
    "idx_remote_tasks_status": ("remote_tasks", _F.REMOTE_TASKS),
    "idx_approval_audits_conversation": ("approval_audits", _F.APPROVALS),
    "idx_approval_audits_status": ("approval_audits", _F.APPROVALS),
    "idx_management_audits_request": ("management_audits", _F.MANAGEMENT_AUDITS),
    "idx_management_audits_created": ("management_audits", _F.MANAGEMENT_AUDITS),
    "idx_messages_session_seq": ("messages", _F.MESSAGE_REQUEST_IDS),
    "idx_security_decisions_trace": ("security_decisions", _F.LIFECYCLE),
    "idx_security_decisions_conversation": ("security_decisions", _F.LIFECYCLE),
    "idx_lifecycle_outbox_due": ("lifecycle_outbox", _F.LIFECYCLE),
    "idx_context_summaries_session_to": ("context_summaries", _F.COMPACTION),
    "idx_session_runtime_pending": ("session_runtime", _F.COMPACTION),
    "idx_tool_display_conversation": ("tool_display_projections", _F.TOOL_DISPLAY),
}

# Tables SQLite itself creates (AUTOINCREMENT keeps sqlite_sequence; ANALYZE the sqlite_stat tables).
_INTERNAL_PREFIX: Final = "sqlite_"


def feature_columns(feature: Feature) -> tuple[tuple[str, str], ...]:
    """The (table, column) pairs `feature` added."""
    return tuple(
        (table, name) for table, columns in CATALOGUE.items() for name, added in columns if added is feature
    )


def columns_at(table: str, generation: Generation) -> tuple[str, ...]:
    """The columns `table` has at `generation` (HEAD order; empty when the table does not exist yet)."""
    return tuple(name for name, added in CATALOGUE[table] if BY_FEATURE[added].index <= generation.index)


@dataclass(frozen=True, slots=True)
class SchemaGeneration:
    """The answer: the newest generation detected, every feature found and what looked odd."""

    generation: Generation | None
    features: frozenset[Feature]
    partial: frozenset[Feature]
    notes: tuple[str, ...]
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # as found, in table order
    indexes: frozenset[str] = frozenset()

    @property
    def format_version(self) -> str | None:
        """The date of the newest schema change detected (the report's `format_version`)."""
        return self.generation.date if self.generation is not None else None

    @property
    def is_half_pi(self) -> bool:
        """The store has the `sessions` and `messages` tables (CONTRACT §1 recognition)."""
        return "sessions" in self.columns and "messages" in self.columns

    def has(self, feature: Feature) -> bool:
        return feature in self.features

    def has_column(self, table: str, column: str) -> bool:
        return column in self.columns.get(table, ())


def detect_generation(connection: sqlite3.Connection) -> SchemaGeneration:
    """Read sqlite_master and `PRAGMA table_info` on `connection` and classify the schema."""
    tables: dict[str, tuple[str, ...]] = {}
    indexes: set[str] = set()
    rows = connection.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')"
    ).fetchall()
    for kind, name in sorted((str(row[0]), str(row[1])) for row in rows):
        if kind == "index":
            indexes.add(name)
            continue
        info = connection.execute("SELECT name FROM pragma_table_info(?)", (name,)).fetchall()
        tables[name] = tuple(str(row[0]) for row in info)
    return classify(tables, indexes)


def classify(columns: Mapping[str, Sequence[str]], indexes: Collection[str] = ()) -> SchemaGeneration:
    """Classify a schema given as table -> column names plus index names (pure; see `detect_generation`)."""
    found = {table: tuple(names) for table, names in columns.items()}
    notes: list[str] = []
    present: set[Feature] = set()
    partial: set[Feature] = set()
    for generation in GENERATIONS:
        wanted = feature_columns(generation.feature)
        missing = [f"{table}.{name}" for table, name in wanted if name not in found.get(table, ())]
        if not missing:
            present.add(generation.feature)
        elif len(missing) < len(wanted):
            partial.add(generation.feature)
            notes.append(
                f"feature {generation.feature} ({generation.date}) is partial: missing {', '.join(missing)}"
            )
    newest = max((BY_FEATURE[feature] for feature in present), key=lambda item: item.index, default=None)
    if newest is not None:
        for generation in GENERATIONS[: newest.index]:
            if generation.feature not in present and generation.feature not in partial:
                notes.append(
                    f"feature {generation.feature} ({generation.date}) is absent while the later"
                    f" {newest.feature} ({newest.date}) is present"
                )
    notes.extend(_unknown_names(found, frozenset(indexes), present))
    return SchemaGeneration(
        generation=newest,
        features=frozenset(present),
        partial=frozenset(partial),
        notes=tuple(notes),
        columns=found,
        indexes=frozenset(indexes),
    )


def _unknown_names(
    found: Mapping[str, tuple[str, ...]], indexes: frozenset[str], present: set[Feature]
) -> list[str]:
    notes: list[str] = []
    for table, names in found.items():
        if table.startswith(_INTERNAL_PREFIX):
            continue
        if table not in CATALOGUE:
            notes.append(f"unknown table {table}")
            continue
        known = {name for name, _ in CATALOGUE[table]}
        notes.extend(f"unknown column {table}.{name}" for name in names if name not in known)
    for name in sorted(indexes):
        if name.startswith(_INTERNAL_PREFIX):
            continue
        if name not in INDEXES:
            notes.append(f"unknown index {name}")
    for name, (table, feature) in INDEXES.items():
        if feature in present and table in found and name not in indexes:
            notes.append(f"index {name} of feature {feature} is missing")
    return notes
