"""The v2 reducer's state object: the namespace, entries, operations, usage, the running source digest and
the transcript walk. The fact handlers (entries, records, steps, compaction, notes) are functions over it;
reducer.py's `Reducer` extends it with the transaction loop and calls them."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable
from typing import Any

from sessaudit.formats.tiny_agent.check.observations import Observations
from sessaudit.formats.tiny_agent.check.state import Attempt, Journal, Operation, Place, ToolIntent
from sessaudit.formats.tiny_agent.read.digests import UUID7_PATTERN
from sessaudit.formats.tiny_agent.read.messages import Message
from sessaudit.formats.tiny_agent.read.shapes import INVALID_TRANSCRIPT, Violation, invalid_id, show

# sourceDigest through a message entry, recomputed from the evidence.
RereadDigest = Callable[[str], str]
# The committed line starting at a byte offset, re-read from the evidence.
LineAt = Callable[[int], bytes]


class ReducerState:
    """What the reducer holds between transactions, and the helpers the fact handlers (entries, records,
    steps, compaction, notes) call on it; `Reducer` applies transactions to it."""

    def __init__(
        self,
        *,
        observations: Observations,
        reread_digest: RereadDigest,
        line_at: LineAt,
    ) -> None:
        self.created_at = 0
        self.environment = ""
        self.observations = observations
        self.reread_digest = reread_digest
        self.line_at = line_at
        self.journal = Journal()
        # One namespace (§6): fact id → entry ordinal or FACT; reserved ids → a negative reservation tag.
        self.namespace: dict[str, int] = {}
        # Per entry ordinal: its id, kind, and where its fact is (line offset, index in the array or -1).
        self.entry_ids: list[str] = []
        self.entry_kinds = bytearray()
        self.entry_offsets = array("q")
        self.entry_indexes = array("q")
        self.message_ids: list[str] = []
        self.source_hash = hashlib.sha256(b"[")
        self.operations: dict[str, Operation] = {}
        self.runs: list[Operation] = []
        self.current: Operation | None = None
        self.attempts: dict[str, Attempt] = {}
        self.steps: dict[str, Attempt] = {}  # step id → its attempt 1, for the open operation
        self.intent_operation: dict[str, str] = {}  # toolStartedId → operation id, for usage facts
        self.pending_intents: dict[str, ToolIntent] = {}
        self.active_boundary: str | None = None
        self.pending_calls: set[str] = set()
        self.transcript_problem: tuple[Violation, str] | None = None
        self.usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        self.next_seq: int | None = 1
        self.last_seen_seq: int | None = None
        self.last_timestamp: int | None = None
        self.last_user: str | None = None
        self.used_inputs: set[str] = set()
        self.verified_line = 1
        self.verified_seq: int | None = None
        self.fact_timestamp = 0  # the timestamp of the last fact applied
        # operation id → the timestamp of the last accepted transaction it wrote (its own or its input)
        self.last_written: dict[str, int] = {}

    def ref(self, value: Any, pointer: str, what: str) -> str:
        """A lowercase UUIDv7; every id already in the namespace was checked when it entered it."""
        if type(value) is not str or (value not in self.namespace and UUID7_PATTERN.match(value) is None):
            raise invalid_id(value, pointer, what)
        return value

    # --- the transcript (§12.3), incrementally ----------------------------------------------
    def transcript_message(self, message: Message, place: Place, pointer: str) -> None:
        """Append one message to the transcript walk; the first illegal message of the transaction is kept
        and reported only if every fact of the transaction applies (tiny-agent checks after the facts)."""
        pending = self.pending_calls
        problem: str | None = None
        if message.role == "assistant":
            if pending:
                problem = "an assistant message arrives while calls are unanswered: "
            else:
                pending.update(call[0] for call in message.calls)
        elif message.role == "tool":
            if message.tool_call_id in pending:
                pending.discard(message.tool_call_id)
            else:
                problem = f"tool result for {show(message.tool_call_id)} answers no pending call; pending: "
        elif pending:
            problem = "a user message arrives while calls are unanswered: "
        if problem is not None and self.transcript_problem is None:
            unanswered = sorted(pending)
            violation = Violation(
                INVALID_TRANSCRIPT,
                pointer,
                problem + (", ".join(unanswered) if unanswered else "none"),
                evidence={"unanswered": unanswered, "message_seq": place.seq},
            )
            self.transcript_problem = (violation, place.prefix)

    # --- entries and the source digest (§11) --------------------------------------------------
    def add_entry(self, entry_id: str, kind: int, place: Place) -> int:
        ordinal = len(self.entry_ids)
        self.entry_ids.append(entry_id)
        self.entry_kinds.append(kind)
        self.entry_offsets.append(place.offset)
        self.entry_indexes.append(place.index)
        return ordinal

    def hash_message(self, entry_id: str, canonical: bytes) -> None:
        """Extend the running sha256 of `[{message, sourceEntryId}, …]` by one message entry."""
        head = b',{"message":' if self.message_ids else b'{"message":'
        self.source_hash.update(head + canonical + b',"sourceEntryId":"' + entry_id.encode() + b'"}')
        self.message_ids.append(entry_id)

    def source_digest(self, through: str) -> str:
        """sourceDigest of every message entry from the start through `through` (a message entry)."""
        if self.message_ids and through == self.message_ids[-1]:
            hasher = self.source_hash.copy()
            hasher.update(b"]")
            return "sha256:" + hasher.hexdigest()
        return self.reread_digest(through)  # rare: a compaction that stops before the latest message
