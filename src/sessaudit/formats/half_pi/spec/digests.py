"""Every Half-Pi digest of spec §6, recomputed from plain values (SQLite row values, parsed JSON, raw text).

Choices where the spec leaves room (each one follows Half-Pi's Go code at the spec's commit):

- Parsed args (a claim, a test) are digested as a model-originated call: every number becomes a float64
  before it is written (`1.0` → `1`, 2**53 + 1 → 9007199254740992). REPL-originated calls keep number
  literals, which only differs for literals a float64 does not write back identically.
- Raw args text (`messages.tool_calls[*].Args`) follows the agent exactly: Go's Unmarshal into a float64
  map (deleting `confirm` unless the tool owns it), falling back to the raw text when that fails (a
  number beyond float64, a non-object), then the runtime's UseNumber parse, which needs one object
  (empty text reads as `{}`; trailing text passes unless it starts with another object or null), a
  boolean `confirm`, and writes numbers verbatim. None means Half-Pi would refuse the call: no digest.
- Only `use_hand` owns `confirm` (the one tool declaring OwnsConfirm); unknown tools do not.
- Text fields (framed digests, text digests) are hashed as UTF-8; a lone surrogate from `surrogateescape`
  stands for its original byte.
- A remote background digest takes `max_runtime_ms` as given; use_hand's range check (1 ms .. 24 h)
  belongs to the caller that decides whether the call could have run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from sessaudit.formats.half_pi.spec.gojson import (
    GoJSONError,
    Number,
    Struct,
    decode,
    decode_first,
    decodes_as_empty_struct,
    marshal,
    marshal_bytes,
    to_float64_values,
)

LOCAL_DIGEST_PATTERN: Final = re.compile(r"^sha256:[0-9a-f]{64}\Z")
REMOTE_DIGEST_PATTERN: Final = re.compile(r"^[0-9a-f]{64}\Z")
OWNS_CONFIRM: Final = frozenset({"use_hand"})
MAX_TASK_RUNTIME_MS: Final = 24 * 60 * 60 * 1000
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
# security_decisions columns copied into the security.decision payload under the same name.
USE_HAND_PARAMETERS: Final = {
    "tool": "string",
    "args": "object",
    "hand_id": "string",
    "confirm": "boolean",
    "timeout_ms": "integer",
    "background": "boolean",
    "task_timeout_ms": "integer",
}
_INT64_MAX: Final = 2**63 - 1


# Compact lifecycle payload structs: field order, and the fields tagged omitempty.
def text_digest(text: str | bytes) -> str:
    """`sha256:` + hex of the UTF-8 bytes: message, assistant_response and raw-args input digests (§6.4)."""
    return "sha256:" + hashlib.sha256(_utf8(text)).hexdigest()


# §6.2 local tool approvals ----------------------------------------------------------------------------


def canonical_args(tool: str, args: Mapping[str, Any] | None) -> str:
    """The §6.2 preimage of parsed args: float64 numbers, sorted keys, `confirm` gone unless `tool` owns it.

    None (no args) reads as `{}`. GoJSONError when Half-Pi could not have frozen these args: a number
    beyond float64, or an owned `confirm` that is not a boolean.
    """
    if args is None:
        return "{}"
    normalized: dict[str, Any] = to_float64_values(args)
    if tool in OWNS_CONFIRM:
        if "confirm" in normalized and not isinstance(normalized["confirm"], bool):
            raise GoJSONError(f"tool {tool} confirm must be boolean", "/confirm")
    else:
        normalized.pop("confirm", None)
    return marshal(normalized)


def local_approval_digest(tool: str, args: Mapping[str, Any] | None) -> str:
    """`approval_audits.args_digest` of a local tool call with these parsed args (§6.2)."""
    return text_digest(canonical_args(tool, args))


def canonical_raw_args(tool: str, raw: str | bytes) -> str | None:
    """The §6.2 preimage of a model's raw Args text, as the agent and runtime build it; None if refused."""
    frozen = _runtime_args(tool, _agent_clean(tool, raw))
    return None if frozen is None else marshal(frozen)


def local_approval_digest_from_raw(tool: str, raw: str | bytes) -> str | None:
    """The digest Half-Pi stored for a call whose raw Args text is `raw`; None if Half-Pi refused it."""
    canonical = canonical_raw_args(tool, raw)
    return None if canonical is None else text_digest(canonical)


def display_args_digest(tool: str, raw: str | bytes) -> str:
    """`tool_display_projections.args_digest` and the REPL's debug digest: the agent's cleaned args."""
    return text_digest(_agent_clean(tool, raw))


# §6.3 remote approvals via use_hand ----------------------------------------------------------------


def remote_approval_preimage(
    run_id: str, hand_id: str, tool: str, args: Mapping[str, Any], max_runtime_ms: int | None = None
) -> str:
    """J of §6.3 for parsed inner args: the fixed-order struct, with the background fields when given."""
    return marshal(_remote_struct(run_id, hand_id, tool, _inner_args(tool, args), max_runtime_ms))


def remote_approval_digest(
    run_id: str, hand_id: str, tool: str, args: Mapping[str, Any], max_runtime_ms: int | None = None
) -> str:
    """`approval_audits.args_digest` of a remote approval (bare 64 hex, §6.3) for parsed inner args."""
    return hashlib.sha256(
        remote_approval_preimage(run_id, hand_id, tool, args, max_runtime_ms).encode("utf-8")
    ).hexdigest()


def remote_approval_digest_from_use_hand(raw: str | bytes, run_id: str, active_hand: str = "") -> str | None:
    """The remote digest of a use_hand call from its raw Args text; None if Half-Pi refused the call.

    `run_id` is the run the Mind created (approval_audits.run_id); `active_hand` the session's default
    Hand, used when the call names none.
    """
    params = _runtime_args("use_hand", _agent_clean("use_hand", raw))
    if params is None or not _matches_use_hand_schema(params):
        return None
    tool, inner = params["tool"], params["args"]
    hand_id = params.get("hand_id") or active_hand
    if not tool or not hand_id:
        return None
    max_runtime_ms: int | None = None
    if params.get("background", False):
        max_runtime_ms = _integer(params.get("task_timeout_ms"))
        if max_runtime_ms is None or not 1 <= max_runtime_ms <= MAX_TASK_RUNTIME_MS:
            return None
    if "confirm" in inner and not isinstance(inner["confirm"], bool):
        return None
    if tool not in OWNS_CONFIRM:
        inner.pop("confirm", None)
    return hashlib.sha256(
        marshal_bytes(_remote_struct(run_id, hand_id, tool, inner, max_runtime_ms))
    ).hexdigest()


# §6.5 tool-message compact projection ------------------------------------------------------------------


def normalize_reason(success: bool, reason: str) -> str:
    """`reason_category`: '' on success, else the reason when it is a known category, else `failed`."""
    if success:
        return ""
    return reason if reason in REASON_CATEGORIES else "failed"


def output_fields(content: str | bytes) -> tuple[int, str]:
    """(`output_bytes`, `output_digest`) a tool row's projection must carry for its `content`."""
    data = _utf8(content)
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
    data = _utf8(text)
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
    return output_fields(_utf8(stdout) + _utf8(stderr))


# §6.6 compaction digests ------------------------------------------------------------------------------


def framed_digest(*fields: str | bytes) -> str:
    """`sha256:` + hex over each field as an 8-byte big-endian byte length, then its UTF-8 bytes."""
    hasher = hashlib.sha256()
    for field in fields:
        data = _utf8(field)
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


# internals ---------------------------------------------------------------------------------------------


def _utf8(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        return text
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ValueError("text holds a lone surrogate that stands for no byte") from None


def _agent_clean(tool: str, raw: str | bytes) -> str | bytes:
    """The agent's first pass: Unmarshal into a float64 map, drop `confirm` unless owned, Marshal again;
    the raw text unchanged when Unmarshal fails or gives no map."""
    try:
        value = decode(raw)
    except GoJSONError:
        return raw
    if not isinstance(value, dict):
        return raw
    if tool not in OWNS_CONFIRM:
        value.pop("confirm", None)
    return marshal(value)


def _runtime_args(tool: str, text: str | bytes) -> dict[str, Any] | None:
    """The runtime's freeze: one object read with UseNumber, a boolean `confirm` (dropped unless owned)."""
    if len(text) == 0:
        text = "{}"
    try:
        value, rest = decode_first(text, use_number=True)
    except GoJSONError:
        return None
    if not isinstance(value, dict) or decodes_as_empty_struct(rest):
        return None
    if "confirm" in value:
        if not isinstance(value["confirm"], bool):
            return None
        if tool not in OWNS_CONFIRM:
            del value["confirm"]
    return value


def _inner_args(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Parsed inner args as the remote digest sees them: float64 numbers (the outer use_hand call went
    through the agent), a boolean `confirm`, dropped unless the remote tool owns it."""
    inner: dict[str, Any] = to_float64_values(args)
    if "confirm" in inner:
        if not isinstance(inner["confirm"], bool):
            raise GoJSONError(f"tool {tool} confirm must be boolean", "/confirm")
        if tool not in OWNS_CONFIRM:
            del inner["confirm"]
    return inner


def _remote_struct(
    run_id: str, hand_id: str, tool: str, args: Mapping[str, Any], max_runtime_ms: int | None
) -> Struct:
    fields: list[tuple[str, Any]] = [("run_id", run_id), ("hand_id", hand_id), ("tool", tool), ("args", args)]
    if max_runtime_ms is not None:
        if isinstance(max_runtime_ms, bool) or not isinstance(max_runtime_ms, int):
            raise TypeError("max_runtime_ms must be an int")
        fields += [("background", True), ("task_id", run_id), ("max_runtime_ms", max_runtime_ms)]
    return Struct(tuple(fields))


def _matches_use_hand_schema(params: Mapping[str, Any]) -> bool:
    """use_hand's declared schema as the runtime checks it: known keys, required tool and args, types."""
    if "tool" not in params or "args" not in params:
        return False
    for name, value in params.items():
        kind = USE_HAND_PARAMETERS.get(name)
        if kind is None:
            return False
        if kind == "string" and not isinstance(value, str):
            return False
        if kind == "boolean" and not isinstance(value, bool):
            return False
        if kind == "object" and not isinstance(value, dict):
            return False
        if kind == "integer" and _integer(value) is None:
            return False
    return True


def _integer(value: Any) -> int | None:
    """An integer literal (no fraction, no exponent) that fits an int64, as use_hand reads one."""
    if not isinstance(value, Number) or any(mark in value.literal for mark in ".eE"):
        return None
    number = int(value.literal or "0")
    return number if -_INT64_MAX - 1 <= number <= _INT64_MAX else None
