"""The shapes Rivumi's resume reads (spec §2.2, §3.2, §3.3) as pydantic models, so pydantic itself decides.

Rivumi validates session.json and request.json with pydantic models in lax Python mode (after `json.loads`)
and each event line with a model in lax JSON mode. Which string, number or timestamp such a model accepts
is pydantic's business, not a spec's; these models, written from the spec and checked against Rivumi's
answers, let the same library answer: `"step": "3"` loads, `"updated_at": 1764000000` loads, `"bogus"` for
a datetime does not, NaN fails `>= 0`, a lone surrogate escape or 200 nested arrays make an event line
invalid JSON. Identifiers are stripped before they are compared (the cross-checks see the stripped value),
`prompt_version` is not. Effects are the adb873f set (no `modify_execute`, which came later).

Only validity matters to sessaudit; the manifest model also dumps as Rivumi's would (all fields, computed
token and cost totals left out), which places a claim's encoding failure (see resume.py).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Final, Literal, Self
from uuid import uuid4

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

Effect = Literal["read", "modify", "execute"]
Decision = Literal["allow_once", "allow_session", "deny", "cancel"]
Phase = Literal[
    "created",
    "preparing",
    "running",
    "waiting_approval",
    "verifying",
    "paused",
    "completed",
    "failed",
    "cancelled",
]
TERMINAL_PHASES: Final = frozenset({"completed", "failed", "cancelled"})


def _stripped_non_blank(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("blank after stripping")
    return stripped


def _argv_parts(value: tuple[str, ...]) -> tuple[str, ...]:
    if any(not part or "\x00" in part for part in value):
        raise ValueError("argv parts must be non-empty and NUL-free")
    return value


def _safe_patterns(value: tuple[str, ...]) -> tuple[str, ...]:
    """Each pattern stripped, backslashes made slashes, then refused when blank, absolute, climbing or NUL;
    duplicates are judged on the normalised strings."""
    patterns = tuple(raw.strip().replace("\\", "/") for raw in value)
    for pattern in patterns:
        path = PurePosixPath(pattern)
        if not pattern or path.is_absolute() or ".." in path.parts or "\x00" in pattern:
            raise ValueError(f"unsafe allowed path {pattern!r}")
    if len(set(patterns)) != len(patterns):
        raise ValueError("duplicate allowed paths")
    return patterns


def _random_hex() -> str:
    return uuid4().hex


def _now() -> datetime:
    return datetime.now(UTC)


NonEmpty = Annotated[str, Field(min_length=1)]
Identifier = Annotated[str, Field(min_length=1), AfterValidator(_stripped_non_blank)]
Count = Annotated[int, Field(ge=0)]
Amount = Annotated[float, Field(ge=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunEvent(_Strict):
    """One events.jsonl line, read in JSON mode."""

    event_type: NonEmpty
    run_id: NonEmpty
    task_id: str | None = None
    sequence: Count
    data: dict[str, Any] = Field(default_factory=dict)
    event_id: str = Field(default_factory=_random_hex)
    created_at: datetime = Field(default_factory=_now)


class ToolCall(_Strict):
    tool_call_id: NonEmpty = Field(default_factory=_random_hex)
    name: NonEmpty
    arguments: dict[str, Any] = Field(default_factory=dict)
    provider_metadata: dict[str, Any] = Field(default_factory=dict)


class VerificationCommand(_Strict):
    name: Identifier
    argv: Annotated[tuple[str, ...], Field(min_length=1), AfterValidator(_argv_parts)]
    timeout_seconds: Annotated[float, Field(gt=0)] = 300.0


class Message(_Strict):
    role: Literal["system", "user", "assistant"]
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    @model_validator(mode="after")
    def _content_fits_role(self) -> Self:
        if self.role == "assistant":
            if self.content is None and not self.tool_calls:
                raise ValueError("an assistant message needs content or tool calls")
        elif self.tool_calls or self.content is None:
            raise ValueError("a system or user message needs content and no tool calls")
        return self


class ToolObservation(_Strict):
    tool_call_id: NonEmpty
    name: NonEmpty
    ok: bool
    content: str = ""
    error: str | None = None

    @model_validator(mode="after")
    def _error_fits_outcome(self) -> Self:
        if (self.error is not None) if self.ok else not self.error:
            raise ValueError("ok needs no error; a failure needs one")
        return self


class Usage(_Strict):
    """Token counts; the computed `total_tokens` is output-only, so an input that has it is refused."""

    input_tokens: Count = 0
    output_tokens: Count = 0
    cached_input_tokens: Count = 0
    reasoning_tokens: Count = 0
    provider_total_tokens: Count | None = None


class CostBreakdown(_Strict):
    currency: Literal["USD"] = "USD"
    source: Literal["estimated", "authoritative"] = "estimated"
    provider: NonEmpty
    model: NonEmpty
    input_cost: Amount = 0.0
    cached_input_cost: Amount = 0.0
    output_cost: Amount = 0.0


class ModelUsageRecord(_Strict):
    lane: NonEmpty
    provider: NonEmpty
    model: NonEmpty
    usage: Usage = Field(default_factory=Usage)
    cost: CostBreakdown | None = None


class VerificationOutcome(_Strict):
    name: str
    argv: tuple[str, ...]
    ok: bool
    exit_code: int | None = None
    duration_seconds: Amount = 0.0
    output: str = ""


class ApprovalRequest(_Strict):
    request_id: NonEmpty = Field(default_factory=_random_hex)
    run_id: NonEmpty  # compared with the manifest's stripped run_id as it is, unstripped
    action_id: NonEmpty
    effect: Effect
    reason: Literal["model_tool", "final_verification"]
    policy_reason: Annotated[str, Field(max_length=2_000)] = ""
    preview: Annotated[str, Field(max_length=16_000)] = ""
    tool_call: ToolCall | None = None
    command: VerificationCommand | None = None

    @model_validator(mode="after")
    def _one_action(self) -> Self:
        if (self.tool_call is None) == (self.command is None):
            raise ValueError("exactly one of tool_call and command")
        if self.reason == "final_verification" and self.command is None:
            raise ValueError("a final verification approves a command")
        return self


class ApprovalAuditRecord(_Strict):
    request: ApprovalRequest
    decision: Decision
    decided_at: datetime = Field(default_factory=_now)


class SessionManifest(_Strict):
    """session.json, schema version 1 (adb873f)."""

    schema_version: Literal[1] = 1
    run_id: Identifier
    task_id: Identifier
    provider_name: Identifier
    model_id: Identifier
    protocol: Identifier
    prompt_version: NonEmpty = "m2-unversioned-patch"
    base_sha: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{40}$")]
    phase: Phase = "created"
    step: Count = 0
    messages: tuple[Message | ToolObservation, ...] = ()
    usage: Usage = Field(default_factory=Usage)
    model_usage: tuple[ModelUsageRecord, ...] = ()
    final_summary: str = ""
    last_action_fingerprint: str | None = None
    repeat_count: Count = 0
    last_event_sequence: Annotated[int, Field(ge=-1)] = -1
    verification: tuple[VerificationOutcome, ...] = ()
    pending_action: ApprovalRequest | None = None
    approval_history: tuple[ApprovalAuditRecord, ...] = ()
    granted_effects: frozenset[Effect] = frozenset()
    active_wall_time_seconds: Amount = 0.0
    active_started_at: datetime | None = None
    terminal: bool = False
    active_writer_token: str | None = None
    writer_claimed_at: datetime | None = None
    writer_heartbeat_at: datetime | None = None
    updated_at: datetime = Field(default_factory=_now)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.terminal != (self.phase in TERMINAL_PHASES):
            raise ValueError("terminal must match a terminal phase")
        if self.phase == "waiting_approval" and self.pending_action is None:
            raise ValueError("waiting_approval needs a pending action")
        if self.pending_action is not None and self.pending_action.run_id != self.run_id:
            raise ValueError("the pending action belongs to another run")
        return self


class Limits(_Strict):
    max_steps: Annotated[int, Field(ge=1)] = 12
    wall_time_seconds: Annotated[float, Field(gt=0)] = 900.0
    max_tool_output_bytes: Annotated[int, Field(ge=1)] = 200_000
    max_patch_bytes: Annotated[int, Field(ge=1)] = 100_000
    max_total_tokens: Annotated[int, Field(ge=1)] | None = None


class TaskContract(_Strict):
    """request.json. A missing task_id gets a fresh random id, which can never match the manifest's."""

    repository: Path
    instruction: Identifier
    allowed_paths: Annotated[tuple[str, ...], Field(min_length=1), AfterValidator(_safe_patterns)]
    verification: Annotated[tuple[VerificationCommand, ...], Field(min_length=1)]
    limits: Limits = Field(default_factory=Limits)
    task_id: Identifier = Field(default_factory=_random_hex)
    base_sha: Annotated[str, AfterValidator(_stripped_non_blank)] | None = None
