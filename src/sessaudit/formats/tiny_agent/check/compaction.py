"""The compaction entry (spec §8.6) and sourceDigest (§11); sources are re-read from the evidence."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from sessaudit.formats.tiny_agent.check import notes
from sessaudit.formats.tiny_agent.check.state import COMPACTION, FACT, RESERVED_COMPACTION_RESULT, Place
from sessaudit.formats.tiny_agent.check.steps import lookup_operation
from sessaudit.formats.tiny_agent.read.messages import Message, canonical_message, parse_message
from sessaudit.formats.tiny_agent.read.shapes import (
    INVALID_FACT,
    INVALID_REFERENCE,
    INVALID_TRANSCRIPT,
    INVALID_TRANSITION,
    MISSING,
    Violation,
    require_exact,
    require_object,
    short_id,
    show,
)
from sessaudit.framing import LineReader
from sessaudit.limits import REREAD_LINE_BYTES
from sessaudit.strictjson import LineProblem, decode_line

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer_state import ReducerState

COMPACTION_ENTRY_KEYS: Final = frozenset(
    ("type", "operationId", "summary", "compactedThroughEntryId", "retainedTail")
)
RETAINED_KEYS: Final = frozenset(("sourceEntryId", "message"))


def source_item(entry_id: str, message: dict[str, Any], first: bool) -> bytes:
    """One `{message, sourceEntryId}` element of the sourceDigest array, with its separator."""
    head = b'{"message":' if first else b',{"message":'
    canonical = canonical_message(parse_message(message, ""))
    return head + canonical + b',"sourceEntryId":"' + entry_id.encode() + b'"}'


def apply_compaction(
    r: ReducerState, fact: dict[str, Any], entry: dict[str, Any], fact_id: str, place: Place
) -> int:
    """§8.6: the compaction entry at the provisioned result id, in the reducer's check order."""
    if r.namespace.get(fact_id, 0) != RESERVED_COMPACTION_RESULT:
        raise Violation(
            INVALID_REFERENCE,
            "/id",
            f"a compaction entry must use the provisioned compaction resultEntryId; {short_id(fact['id'])} "
            "is none",
            evidence={"id": fact["id"]},
        )
    if not COMPACTION_ENTRY_KEYS.issuperset(entry):
        require_exact(entry, COMPACTION_ENTRY_KEYS, INVALID_FACT, "/entry", "compaction entry")
    operation = lookup_operation(r, entry.get("operationId", MISSING), "/entry/operationId")
    current = r.current
    if operation.kind != "compaction" or current is not operation:
        raise Violation(
            INVALID_TRANSITION,
            "/entry/operationId",
            f"operation {short_id(entry['operationId'])} is not the open compaction",
            evidence={"operationId": entry["operationId"]},
        )
    if operation.result_entry != fact_id:
        raise Violation(
            INVALID_REFERENCE,
            "/id",
            f"the open compaction provisioned {short_id(operation.result_entry or '')}, not this id",
        )
    through = r.ref(
        entry.get("compactedThroughEntryId", MISSING),
        "/entry/compactedThroughEntryId",
        "compactedThroughEntryId",
    )
    boundary = r.namespace.get(through, FACT)
    if boundary < 0:
        raise Violation(
            INVALID_REFERENCE,
            "/entry/compactedThroughEntryId",
            f"compactedThroughEntryId {short_id(entry['compactedThroughEntryId'])} names no entry",
        )
    summary = entry.get("summary", MISSING)
    if type(summary) is not str:
        raise Violation(INVALID_FACT, "/entry/summary", f"summary: expected a string, found {show(summary)}")
    tail = entry.get("retainedTail", MISSING)
    if type(tail) is not list:
        raise Violation(
            INVALID_FACT, "/entry/retainedTail", f"retainedTail: expected an array, found {show(tail)}"
        )
    input_boundary = r.namespace[operation.input_through]
    if input_boundary < boundary:
        raise Violation(
            INVALID_REFERENCE,
            "/entry/compactedThroughEntryId",
            "compactedThroughEntryId lies after the compaction's inputThroughEntryId",
        )
    kinds = r.entry_kinds
    expected = [
        ordinal for ordinal in range(boundary + 1, input_boundary + 1) if kinds[ordinal] != COMPACTION
    ]
    retained: list[Message] = []
    sources = _Sources(r)
    for index, raw in enumerate(tail):
        where = f"/entry/retainedTail/{index}"
        item = require_object(raw, INVALID_FACT, where, "retained item")
        if not RETAINED_KEYS.issuperset(item):
            require_exact(item, RETAINED_KEYS, INVALID_FACT, where, "retained item")
        source_id = r.ref(item.get("sourceEntryId", MISSING), where + "/sourceEntryId", "sourceEntryId")
        raw_message = item.get("message", MISSING)
        message = parse_message(raw_message, where + "/message")
        if index >= len(expected) or r.entry_ids[expected[index]] != source_id:
            wanted = r.entry_ids[expected[index]] if index < len(expected) else None
            raise Violation(
                INVALID_REFERENCE,
                where + "/sourceEntryId",
                "retainedTail must list every message entry after compactedThroughEntryId through "
                f"inputThroughEntryId in order: expected {short_id(wanted) if wanted else 'no more items'}, "
                f"found {short_id(item['sourceEntryId'])}",
                evidence={"expected": wanted, "found": item["sourceEntryId"]},
            )
        source = sources.message(expected[index])
        if source is None or canonical_message(source) != canonical_message(message):
            raise Violation(
                INVALID_REFERENCE,
                where + "/message",
                f"the retained message differs from the message of entry {short_id(item['sourceEntryId'])}",
                evidence={"sourceEntryId": item["sourceEntryId"]},
            )
        retained.append(message)
    if len(tail) != len(expected):
        raise Violation(
            INVALID_REFERENCE,
            "/entry/retainedTail",
            f"retainedTail: expected {len(expected)} messages, found {len(tail)}",
            evidence={"expected": [r.entry_ids[ordinal] for ordinal in expected]},
        )
    _standalone_transcript(retained)
    step = operation.step
    if step is None or step.closed or step.kind != "compaction":
        raise Violation(
            INVALID_TRANSITION, "", "a compaction entry needs an open compaction attempt; there is none"
        )
    journal = r.journal
    journal.set(step, "closed", True)
    journal.set(step, "settled_entry", fact_id)
    journal.set(operation, "compaction_entry", fact_id)
    journal.set(operation, "compaction_attempt", step)
    r.namespace[fact_id] = FACT
    journal.set(r, "active_boundary", operation.input_through)
    notes.compaction_partition(r, operation, through, [r.entry_ids[ordinal] for ordinal in expected], place)
    return r.add_entry(fact_id, COMPACTION, place)


class _Sources:
    """Source messages of a retained tail, re-read from the evidence (bodies are never kept in memory)."""

    def __init__(self, r: ReducerState) -> None:
        self.r = r
        self.offset = -1
        self.value: Any = None

    def message(self, ordinal: int) -> Message | None:
        r = self.r
        offset = r.entry_offsets[ordinal]
        if offset != self.offset:
            self.offset = offset
            try:
                self.value = decode_line(r.line_at(offset))
            except LineProblem:
                self.value = None
        index = r.entry_indexes[ordinal]
        value = self.value
        try:
            fact = value[index] if index >= 0 else value
            return parse_message(fact["entry"]["message"], "")
        except (LookupError, TypeError, Violation):
            return None  # the evidence changed under us: the engine's re-hash reports it


def _standalone_transcript(messages: list[Message]) -> None:
    """§8.6 step 8: the retained tail on its own must be a legal transcript (§12.3)."""
    pending: set[str] = set()
    for index, message in enumerate(messages):
        if message.role == "assistant":
            legal = not pending
            pending.update(call[0] for call in message.calls)
        elif message.role == "tool":
            legal = message.tool_call_id in pending
            pending.discard(message.tool_call_id)
        else:
            legal = not pending
        if not legal:
            raise Violation(
                INVALID_TRANSCRIPT,
                f"/entry/retainedTail/{index}/message",
                f"the retained tail on its own is not a legal transcript at item {index} ({message.role} "
                "message)",
            )


class Rereader:
    """Reads earlier committed lines of the stream being verified, restoring the stream's position after.

    `line_end` (the end of the line being reduced) bounds every read, so nothing past the verified
    prefix is ever read; `body_offset` is where line 2 starts."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.body_offset = 0
        self.line_end = 0

    def line_at(self, offset: int) -> bytes:
        """The committed line starting at byte `offset`, without its LF."""
        stream = self.stream
        saved = stream.tell()
        try:
            stream.seek(offset)
            pieces = []
            remaining = self.line_end - offset
            while remaining > 0:
                chunk = stream.read(min(remaining, 1 << 16))
                if not chunk:
                    break
                end = chunk.find(b"\n")
                if end >= 0:
                    pieces.append(chunk[:end])
                    break
                pieces.append(chunk)
                remaining -= len(chunk)
            return b"".join(pieces)
        finally:
            stream.seek(saved)

    def source_digest(self, through: str) -> str:
        """sourceDigest (§11) of the message entries from the start of the session through `through`,
        recomputed from the file: for the rare compaction whose input stops before the latest message."""
        stream = self.stream
        saved = stream.tell()
        hasher = hashlib.sha256(b"[")
        first = True
        try:
            stream.seek(self.body_offset)
            length = self.line_end - self.body_offset
            for line in LineReader(stream, length, report_progress=False, max_line_bytes=REREAD_LINE_BYTES):
                try:
                    value = decode_line(line.data)
                except LineProblem:
                    break  # the evidence changed under us; the engine's re-hash reports it
                for fact in value if type(value) is list else [value]:
                    entry = fact.get("entry") if type(fact) is dict and fact.get("kind") == "entry" else None
                    if type(entry) is not dict or entry.get("type") != "message":
                        continue
                    hasher.update(source_item(fact["id"], entry["message"], first))
                    first = False
                    if fact["id"] == through:
                        hasher.update(b"]")
                        return "sha256:" + hasher.hexdigest()
        except (LookupError, TypeError, Violation):
            pass
        finally:
            stream.seek(saved)
        return "sha256:" + hasher.hexdigest()
