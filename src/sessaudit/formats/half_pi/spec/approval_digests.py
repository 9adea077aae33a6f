"""Half-Pi's approval and input digests (spec §6.2–§6.4), recomputed from plain values (SQLite row values,
parsed JSON, raw text); the compaction digests of §6.5–§6.6 are in `compaction_digests`.

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
from collections.abc import Mapping
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
    return "sha256:" + hashlib.sha256(utf8_bytes(text)).hexdigest()


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


# internals ---------------------------------------------------------------------------------------------


def utf8_bytes(text: str | bytes) -> bytes:
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
