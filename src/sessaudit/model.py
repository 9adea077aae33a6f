"""The audit's data model: report, source, session, run, recovery and finding (frozen pydantic)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sessaudit.verdicts import Severity, Verdict

REPORT_SCHEMA_ID = "sessaudit/report/v1"


class Frozen(BaseModel):
    # every key is always written, so the report schema lists every key as required
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)


class Location(Frozen):
    """Where a finding points: a file and, as far as known, line, byte offset, seq, JSON pointer, row."""

    path: str | None = None
    session_id: str | None = None
    line: int | None = None
    byte_offset: int | None = None
    seq: int | None = None
    pointer: str | None = None
    table: str | None = None
    rowid: int | None = None

    def parts(self) -> list[str]:
        """The place in words, as far as known: `line 5`, `byte 2543`, `seq 7`, `messages row 3`, `/seq`."""
        parts = []
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.byte_offset is not None:
            parts.append(f"byte {self.byte_offset}")
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        if self.table is not None:
            parts.append(f"{self.table} row {self.rowid}")
        if self.pointer:
            parts.append(self.pointer)
        return parts


class Finding(Frozen):
    rule: str
    name: str
    severity: Severity
    message: str
    location: Location
    native_code: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)

    def sort_key(self) -> tuple[str, int, int, str]:
        """CONTRACT §4: findings are sorted by (path, line or rowid, rule); byte offset breaks ties."""
        place = self.location.line if self.location.line is not None else self.location.rowid
        return (
            self.location.path or "",
            place if place is not None else -1,
            self.location.byte_offset if self.location.byte_offset is not None else -1,
            self.rule,
        )


class FileEvidence(Frozen):
    path: str
    bytes: int
    sha256: str
    unchanged: bool


class Usage(Frozen):
    """One meaning across formats (CONTRACT §4): `input` excludes cached input; `input_total` includes it."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    input_total: int = 0

    @classmethod
    def of(cls, *, input: int, output: int, cache_read: int, cache_write: int) -> Usage:
        return cls(
            input=input,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            input_total=input + cache_read + cache_write,
        )


class PendingEffect(Frozen):
    tool_call_id: str
    tool_name: str
    arguments: Any
    intent_id: str | None
    result_slot: str | None
    replay_policy: Literal["safe", "never"] | None
    replay_key: str | None = None


Condition = Literal[
    "effect-unknown",
    "remote-run-in-flight",
    "abort-pending",
    "effect-replayable",
    "attempts-exhausted",
    "model-request-open",
    "approval-pending",
    "tool-not-started",
    "task-stale",
    "awaiting-terminal",
    "step-pending",
]

# CONTRACT §4: `condition` is the first applicable in this order.
CONDITION_ORDER: tuple[Condition, ...] = (
    "effect-unknown",
    "remote-run-in-flight",
    "abort-pending",
    "effect-replayable",
    "attempts-exhausted",
    "model-request-open",
    "approval-pending",
    "tool-not-started",
    "task-stale",
    "awaiting-terminal",
    "step-pending",
)

SEED_KIND: dict[Condition, Literal["replay", "fork"]] = {
    "effect-unknown": "fork",
    "remote-run-in-flight": "fork",
    "abort-pending": "replay",
    "effect-replayable": "replay",
    "attempts-exhausted": "fork",
    "model-request-open": "replay",
    "approval-pending": "replay",
    "tool-not-started": "replay",
    "task-stale": "fork",
    "awaiting-terminal": "replay",
    "step-pending": "replay",
}


def order_conditions(conditions: set[Condition] | list[Condition]) -> list[Condition]:
    """Conditions in the contract's order of precedence, without repeats."""
    present = set(conditions)
    return [condition for condition in CONDITION_ORDER if condition in present]


SEED_SCHEMA_ID = "sessaudit/seed/v1"


class SeedSource(Frozen):
    path: str
    format: str
    format_version: str | None
    sha256: str | None


class ForkPoint(Frozen):
    """The last committed record of the run (or the one `--sequence N` names)."""

    seq: int | None
    line: int | None
    byte_offset: int | None
    fact_id: str | None


class SeedContext(Frozen):
    messages: list[Any]


class Seed(Frozen):
    """A seed (CONTRACT §5, `schemas/seed.v1.schema.json`): how to continue a run without guessing."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, json_schema_serialization_defaults_required=True
    )

    schema_: str = Field(default=SEED_SCHEMA_ID, alias="schema")
    seed_kind: Literal["replay", "fork"]
    redacted: bool = False
    source: SeedSource
    session_id: str | None
    run_id: str
    condition: Condition
    fork_point: ForkPoint
    pending_effects: list[PendingEffect]
    replay: dict[str, Any] | None
    context: SeedContext
    next_facts: list[Any]
    side_effects_replayed: bool = False
    assumes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    native: Any = None
    native_text: str | None = None


class Recovery(Frozen):
    """What is open in a run and how to continue it. A run of a corrupt history keeps its condition as far
    as the verified records go, but gets no native plan, no seed and no seed kind (all None): a warning
    says why (`withheld`); nothing may be continued from a history its source system would refuse."""

    condition: Condition
    conditions: list[Condition]
    seed_kind: Literal["replay", "fork"] | None
    assumes: list[str] = Field(default_factory=list)
    pending_effects: list[PendingEffect] = Field(default_factory=list)
    native_plan: dict[str, Any] | None = None
    warnings: list[str] = Field(default_factory=list)
    seed: Seed | None = None

    def offered_seed_kind(self) -> Literal["replay", "fork"]:
        """The seed kind of a recovery that offers a seed (a withheld one has none: never seeded)."""
        if self.seed_kind is None:
            raise ValueError(
                f"no seed is offered for a {self.condition} recovery: {'; '.join(self.warnings)}"
            )
        return self.seed_kind

    def withheld(self, reason: str) -> Recovery:
        """This recovery with no native plan, no seed and no seed kind; `reason` leads its warnings."""
        warnings = [reason, *(item for item in self.warnings if item != reason)]
        return self.model_copy(
            update={"native_plan": None, "seed": None, "seed_kind": None, "warnings": warnings}
        )


RunKind = Literal["run", "compaction", "turn", "remote-run", "approval", "task", "request"]
RunState = Literal["completed", "failed", "aborted", "cancelled", "lost", "open"]


class Run(Frozen):
    run_id: str
    kind: RunKind
    state: RunState
    recovery: Recovery | None = None
    # when the run last wrote, as its own records say (UTC ISO-8601 with milliseconds, `...Z`); None where
    # the format records no time for it. Relative times ("3 h ago") are the console's, never the JSON's.
    last_written_at: str | None = None


class Session(Frozen):
    session_id: str | None
    verdict: Verdict
    facts: int
    last_seq: int | None
    repaired_length: int | None = None
    torn_tail_bytes: int = 0
    usage: Usage = Field(default_factory=Usage)
    native: dict[str, Any] = Field(default_factory=dict)
    runs: list[Run] = Field(default_factory=list)


class Source(Frozen):
    path: str
    format: str | None
    format_version: str | None
    files: list[FileEvidence]
    sha256: str | None
    evidence_unchanged: bool
    verdict: Verdict
    native: dict[str, Any] = Field(default_factory=dict)
    sessions: list[Session] = Field(default_factory=list)


# the words of a skipped entry that may hold a session log and could not be read (it makes the audit
# incomplete); the console lists such entries always, the others only with --show-skipped
SKIPPED_UNREAD = "could not be read"


class Skipped(Frozen):
    path: str
    reason: str


class Tool(Frozen):
    name: str = "sessaudit"
    version: str


class Summary(Frozen):
    sources: int
    verdicts: dict[str, int]
    session_verdicts: dict[str, int]
    findings: dict[str, int]


class BaselineOutcome(Frozen):
    """How the findings compare with `--baseline FILE`: the findings it holds (`matched`) are kept out of
    the report's `findings` and never count for the exit code; `new` findings are in `findings`; `absent`
    baseline occurrences that no longer occur are reported as SA020 notes."""

    path: str
    matched: list[Finding]
    new: int
    absent: int


class Settings(Frozen):
    """What decided which findings are shown and what fails the audit: the settings file applied
    (None with `--no-config` or when none was found) and every selector, severity override, baseline and
    gate in force, flags and file merged. Selectors are as given (`SA1`, `blank-line`)."""

    config: str | None = None
    select: list[str] = Field(default_factory=list)  # empty: every rule
    ignore: list[str] = Field(default_factory=list)
    severity: dict[str, str] = Field(default_factory=dict)  # selector -> level
    fail_on: str = "error"
    fail_on_verdict: list[str] = Field(default_factory=list)
    fail_on_condition: list[str] = Field(default_factory=list)
    baseline: str | None = None
    allow_empty: bool = False


class Report(Frozen):
    """The JSON report of CONTRACT §4 (`schemas/report.v1.schema.json`)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, json_schema_serialization_defaults_required=True
    )

    schema_: str = Field(default=REPORT_SCHEMA_ID, alias="schema")
    tool: Tool
    sources: list[Source]
    skipped: list[Skipped]
    findings: list[Finding]
    summary: Summary
    baseline: BaselineOutcome | None = None  # set only with --baseline
    settings: Settings = Field(default_factory=Settings)
