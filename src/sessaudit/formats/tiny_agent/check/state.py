"""The v2 reducer's compact state: operations, attempts, tool intents, open-run answers, an undo journal."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.tiny_agent.read.messages import Call

# Namespace tags (spec §6): a fact id maps to its entry ordinal (≥ 0) or FACT; reservations are negative.
# Ids are kept as the decoder's own str objects: no copies, no message bodies.
FACT: Final = -1
RESERVED_IDENTITY: Final = -2
RESERVED_TOOL_RESULT: Final = -3
RESERVED_COMPACTION_RESULT: Final = -4

# Entry kinds, one byte per entry ordinal.
USER: Final = 1
ASSISTANT: Final = 2
TOOL: Final = 3
COMPACTION: Final = 4

# The state of one call of an assistant answer (spec §12.2: untouched → started | resolved).
UNTOUCHED: Final = 0
STARTED: Final = 1
SYNTHETIC: Final = 2


class Place:
    """Where a fact sits: physical line, the line's byte offset, its index in an array line (-1 for a
    single-object line) and its seq."""

    __slots__ = ("index", "line", "offset", "seq")

    def __init__(self, line: int, offset: int, index: int, seq: int) -> None:
        self.line = line
        self.offset = offset
        self.index = index
        self.seq = seq

    @property
    def prefix(self) -> str:
        """The JSON Pointer of the fact within its line."""
        return f"/{self.index}" if self.index >= 0 else ""


class Attempt:
    """One stepAttempt (a physical model request) and how it was closed."""

    __slots__ = (
        "attempt_id",
        "closed",
        "context",
        "digest",
        "failed",
        "kind",
        "number",
        "operation",
        "settled_entry",
        "step",
        "stop_reason",
        "superseded",
        "tools",
        "usage_facts",
    )

    def __init__(
        self,
        attempt_id: str,
        operation: str,
        step: str,
        number: int,
        kind: str,
        context: str,
        digest: str,
        tools: frozenset[str],
    ) -> None:
        self.attempt_id = attempt_id
        self.operation = operation
        self.step = step
        self.number = number
        self.kind = kind
        self.context = context
        self.digest = digest
        self.tools = tools
        self.closed = False
        self.failed = False
        self.superseded = False
        self.settled_entry: str | None = None
        self.stop_reason: str | None = None
        self.usage_facts = 0


class Answer:
    """An assistant entry of the open run: its step, attempt, stop reason, calls and their states."""

    __slots__ = ("attempt", "calls", "entry_id", "has_text", "place", "states", "step", "stop_reason")

    def __init__(
        self,
        entry_id: str,
        step: str,
        attempt: Attempt,
        stop_reason: str,
        calls: tuple[Call, ...],
        has_text: bool,
        place: Place,
    ) -> None:
        self.entry_id = entry_id
        self.step = step
        self.attempt = attempt
        self.stop_reason = stop_reason
        self.calls = calls
        self.has_text = has_text
        self.place = place
        self.states = [UNTOUCHED] * len(calls)


class ToolIntent:
    """A toolStarted record (its fact id is the toolStartedId) and whether its result is still pending."""

    __slots__ = (
        "arguments",
        "assistant",
        "call_id",
        "environment",
        "index",
        "name",
        "operation",
        "pending",
        "place",
        "replay",
        "replay_key",
        "result_slot",
        "started_id",
        "step",
    )

    def __init__(
        self,
        started_id: str,
        operation: str,
        step: str,
        assistant: str,
        index: int,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        replay: str,
        replay_key: str,
        environment: str,
        result_slot: str,
        place: Place,
    ) -> None:
        self.started_id = started_id
        self.operation = operation
        self.step = step
        self.assistant = assistant
        self.index = index
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.replay = replay
        self.replay_key = replay_key
        self.environment = environment
        self.result_slot = result_slot
        self.place = place
        self.pending = True


class Operation:
    """A run or a compaction: its lifecycle and, while it is open, the state its rules need."""

    __slots__ = (
        "abort_requested",
        "answers",
        "compaction_attempt",
        "compaction_entry",
        "finished",
        "input_through",
        "intents",
        "kind",
        "last_answer",
        "latest_step",
        "operation_id",
        "outcome",
        "partition",
        "pending",
        "result_entry",
        "start",
        "step",
    )

    def __init__(
        self, operation_id: str, kind: str, input_through: str, result_entry: str | None, start: Place
    ) -> None:
        self.operation_id = operation_id
        self.kind = kind
        self.input_through = input_through
        self.result_entry = result_entry
        self.start = start
        self.finished = False
        self.outcome: str | None = None
        self.abort_requested = False
        self.step: Attempt | None = None
        self.latest_step: str | None = None
        self.answers: dict[str, Answer] = {}
        self.last_answer: Answer | None = None
        self.intents: list[ToolIntent] = []
        self.pending = 0
        self.compaction_entry: str | None = None
        self.compaction_attempt: Attempt | None = None
        # compactionStarted's declared partition: the last compacted id and the retained ids (SA417).
        self.partition: tuple[str, tuple[str, ...]] | None = None

    @property
    def status(self) -> str | None:
        """The current step's status as the reducer reports it: attempting, settled or failed."""
        step = self.step
        if step is None:
            return None
        if step.failed:
            return "failed"
        return "settled" if step.settled_entry is not None else "attempting"


_ABSENT: Final[Any] = object()


class Journal:
    """Undo records for the report-relevant state a transaction changes, so a rejected transaction leaves
    the state exactly as the last accepted one (tiny-agent applies a transaction to a clone)."""

    __slots__ = ("records",)

    def __init__(self) -> None:
        self.records: list[tuple[int, Any, Any, Any]] = []

    def set(self, target: Any, name: str, value: Any) -> None:
        self.records.append((0, target, name, getattr(target, name)))
        setattr(target, name, value)

    def put(self, container: Any, key: Any, value: Any) -> None:
        """container[key] = value for a dict or a list."""
        if isinstance(container, dict):
            self.records.append((1, container, key, container.get(key, _ABSENT)))
        else:
            self.records.append((1, container, key, container[key]))
        container[key] = value

    def remove(self, container: dict[Any, Any], key: Any) -> None:
        self.records.append((1, container, key, container.pop(key)))

    def append(self, container: list[Any], value: Any) -> None:
        self.records.append((2, container, None, None))
        container.append(value)

    def commit(self) -> None:
        self.records.clear()

    def rollback(self) -> None:
        for kind, target, key, old in reversed(self.records):
            if kind == 0:
                setattr(target, key, old)
            elif kind == 1:
                if old is _ABSENT:
                    del target[key]
                else:
                    target[key] = old
            else:
                target.pop()
        self.records.clear()
