"""The outbox payloads of spec §6.7, rebuilt byte for byte: a `security.decision` event from its
security_decisions row, and the `compact.*` events' structs in Go's field order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sessaudit.formats.half_pi.spec.gojson import Struct, decode, marshal

PAYLOAD_COLUMNS: Final = (
    "action_kind",
    "approval_id",
    "conversation_id",
    "decision",
    "group_id",
    "input_digest",
    "node_id",
    "policy_version",
    "principal_id",
    "reason_code",
    "request_id",
    "resource_name",
    "rule_id",
    "run_id",
    "span_id",
    "target_node",
    "trace_id",
)
# use_hand's declared parameters and their schema types (the runtime rejects any other key).
COMPACT_PAYLOAD_FIELDS: Final = {
    "compact.requested": ("trigger",),
    "compact.started": ("trigger", "from_seq", "to_seq", "generation_mode", "source_digest", "attempt"),
    "compact.completed": (
        "trigger",
        "summary_id",
        "from_seq",
        "to_seq",
        "before_estimated_tokens",
        "after_estimated_tokens",
        "summary_bytes",
        "source_digest",
        "duration_ms",
        "context_version",
        "reused",
    ),
    "compact.failed": (
        "trigger",
        "reason",
        "duration_ms",
        "retry_scheduled",
        "from_seq",
        "to_seq",
        "source_digest",
        "pending_attempt",
        "retry_not_before",
    ),
}
COMPACT_OMIT_EMPTY: Final = frozenset(
    {"from_seq", "to_seq", "source_digest", "pending_attempt", "retry_not_before"}
)


# §6.4 and shared helpers ------------------------------------------------------------------------------


def security_decision_payload(row: Mapping[str, Any]) -> str:
    """The `payload_redacted` of a security_decisions row's outbox event, byte for byte.

    `risk_labels` and `details_redacted` may be the column text (decoded with UseNumber, so integers
    keep their digits) or already parsed values. GoJSONError when a column is not JSON.
    """
    payload: dict[str, Any] = {name: row[name] for name in PAYLOAD_COLUMNS}
    payload["event_id"] = row["id"]
    payload["risk_labels"] = _json_column(row["risk_labels"])
    payload["details"] = _json_column(row["details_redacted"])
    return marshal(payload)


def compact_event_payload(event_type: str, values: Mapping[str, Any]) -> str:
    """The payload of a `compact.*` outbox event: Half-Pi's struct in field order, omitempty fields
    dropped when zero. KeyError for an unknown event type or a missing field, ValueError for an extra one."""
    order = COMPACT_PAYLOAD_FIELDS[event_type]
    extra = set(values).difference(order)
    if extra:
        raise ValueError(f"{event_type} payload has no field {sorted(extra)[0]!r}")
    fields: list[tuple[str, Any]] = []
    for name in order:
        if name in COMPACT_OMIT_EMPTY and values.get(name) in (None, 0, ""):
            continue
        fields.append((name, values[name]))
    return marshal(Struct(tuple(fields)))


def _json_column(value: Any) -> Any:
    if isinstance(value, str | bytes):
        return decode(value, use_number=True)
    return value
