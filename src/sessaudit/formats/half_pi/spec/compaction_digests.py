"""Half-Pi's compaction digests (spec §6.5 tool-message compact projections, §6.6 framed digests of
context summaries), recomputed from plain values; text is hashed as UTF-8 as `approval_digests` does."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Final

from sessaudit.formats.half_pi.spec.approval_digests import utf8_bytes
from sessaudit.formats.half_pi.spec.gojson import GoJSONError, Struct, decode_first, marshal, marshal_bytes

TOOL_PROJECTION_LIMIT: Final = 4096
TOOL_PROJECTION_VERSION: Final = "compact-tool-v1"
REASON_CATEGORIES: Final = frozenset({"denied", "cancelled", "timed_out", "not_found", "failed"})
SUMMARY_DOMAIN: Final = "half-pi:compact-summary:v1"
SOURCE_DOMAIN: Final = "half-pi:compact-source:v1"
CONTRACT_DOMAIN: Final = "half-pi:compact-contract:v1"
MANUAL_REBASE_DOMAIN: Final = "half-pi:compact-manual-rebase:v1"
SOURCE_MESSAGE_FIELDS: Final = (
    "role",
    "content",
    "request_id",
    "tool_id",
    "tool_calls",
    "compact_projection",
)


# §6.5 tool-message compact projection ------------------------------------------------------------------


def normalize_reason(success: bool, reason: str) -> str:
    """`reason_category`: '' on success, else the reason when it is a known category, else `failed`."""
    if success:
        return ""
    return reason if reason in REASON_CATEGORIES else "failed"


def output_fields(content: str | bytes) -> tuple[int, str]:
    """(`output_bytes`, `output_digest`) a tool row's projection must carry for its `content`."""
    data = utf8_bytes(content)
    return len(data), "sha256:" + hashlib.sha256(data).hexdigest()


def tool_projection(
    tool: str,
    content: str,
    *,
    success: bool,
    reason_category: str = "",
    facts: Mapping[str, Any] | None = None,
) -> str:
    """A `compact_projection` as Half-Pi writes it for already projected facts (the facts fall back to
    `{}` when the whole would exceed 4096 bytes, as Half-Pi's projector does)."""
    output_bytes, output_digest = output_fields(content)

    def build(chosen: Mapping[str, Any]) -> str:
        return marshal(
            Struct.of(
                facts=dict(chosen),
                output_bytes=output_bytes,
                output_digest=output_digest,
                reason_category=normalize_reason(success, reason_category),
                success=success,
                tool=tool,
                version=TOOL_PROJECTION_VERSION,
            )
        )

    encoded = build(facts or {})
    if len(encoded.encode("utf-8")) > TOOL_PROJECTION_LIMIT:
        encoded = build({})
    if len(encoded.encode("utf-8")) > TOOL_PROJECTION_LIMIT:
        raise GoJSONError("tool projection exceeds 4096 bytes")
    return encoded


def tool_projection_problem(text: str | bytes) -> str | None:
    """Why the store would refuse a non-empty `compact_projection` (size, shape, canonical form), or None.

    The store decodes it with UseNumber into a map and requires Marshal to give back the same bytes.
    """
    data = utf8_bytes(text)
    if len(data) > TOOL_PROJECTION_LIMIT:
        return f"it is {len(data)} bytes, over the 4096-byte limit"
    try:
        value, rest = decode_first(data, use_number=True)
    except GoJSONError as error:
        return f"it is not JSON ({error.message})"
    if not isinstance(value, dict):
        return "it is not a JSON object"
    if rest.strip(" \t\n\r"):
        return "it holds more than one JSON value"
    if marshal_bytes(value) != data:
        return "it is not canonical Go JSON (sorted keys, compact, Go's escaping)"
    return None


def display_streams(output: str, error: str) -> tuple[str, str]:
    """(stdout, stderr) of a finished tool as the Face display sees them: stdout blanked when both agree."""
    return ("" if output == error else output), error


def display_output_fields(stdout: str | bytes, stderr: str | bytes) -> tuple[int, str]:
    """(`output_bytes`, `output_digest`) of a tool_display_projections row: over stdout + stderr."""
    return output_fields(utf8_bytes(stdout) + utf8_bytes(stderr))


# §6.6 compaction digests ------------------------------------------------------------------------------


def framed_digest(*fields: str | bytes) -> str:
    """`sha256:` + hex over each field as an 8-byte big-endian byte length, then its UTF-8 bytes."""
    hasher = hashlib.sha256()
    for field in fields:
        data = utf8_bytes(field)
        hasher.update(len(data).to_bytes(8, "big"))
        hasher.update(data)
    return "sha256:" + hasher.hexdigest()


def summary_digest(summary: str | bytes) -> str:
    """`context_summaries.summary_digest`."""
    return framed_digest(SUMMARY_DOMAIN, summary)


def source_digest(session_id: str, to_seq: int, messages: Iterable[Mapping[str, Any]]) -> str:
    """`context_summaries.source_digest` over messages 1..to_seq (rows with seq and the six text columns).

    ValueError unless the messages are exactly seq 1..to_seq in order, as Half-Pi requires.
    """
    fields: list[str | bytes] = [SOURCE_DOMAIN, session_id, "1", str(to_seq)]
    count = 0
    for expected, message in enumerate(messages, start=1):
        if message["seq"] != expected:
            raise ValueError(
                f"compact source is not contiguous: seq {message['seq']} where {expected} is due"
            )
        fields.append(str(expected))
        fields.extend(message[name] for name in SOURCE_MESSAGE_FIELDS)
        count = expected
    if not session_id or to_seq < 1 or count != to_seq:
        raise ValueError(f"compact source holds {count} messages for to_seq {to_seq}")
    return framed_digest(*fields)


def contract_digest(
    source: str,
    projection_version: str,
    policy_version: str,
    profile: str,
    generation_mode: str,
    parent_summary_id: str,
    generation_key: str,
) -> str:
    """`context_summaries.contract_digest` (the first argument is the node's source_digest)."""
    return framed_digest(
        CONTRACT_DOMAIN,
        source,
        projection_version,
        policy_version,
        profile,
        generation_mode,
        parent_summary_id,
        generation_key,
    )


def manual_rebase_key(principal: str, request_id: str) -> str:
    """The `generation_key` of a manual rebase compaction (Half-Pi's compact engine, not in the spec)."""
    return framed_digest(MANUAL_REBASE_DOMAIN, principal, request_id)
