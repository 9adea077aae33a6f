"""What `rivumi sessions --replay-json` prints for an events.jsonl (spec §5.1–§5.2), byte for byte.

Spec-silent choices: "blank" lines are judged with bytes.strip() (ASCII whitespace); JSON is parsed with
Python's json (which, like Rivumi, takes duplicate keys and NaN); the whole log is normalised before the
size check, and duplicates and id drift are checked in one pass in sequence order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

MAX_LINE_BYTES: Final = 131_072
MAX_EVENTS: Final = 10_000
MAX_TEXT: Final = 16_000
TEXT_KEYS: Final = (
    "text",
    "summary",
    "terminal_reason",
    "reason",
    "error",
    "tool",
    "tool_name",
    "name",
    "model",
    "runtime",
    "provider",
    "base_sha",
    "model_override",
)
# the keys a replay shows as detail: the text keys except the free text and the override
DETAIL_KEYS: Final = tuple(key for key in TEXT_KEYS if key not in ("text", "model_override"))
ID_KEYS: Final = ("run_id", "conversation_id", "turn_id")
TURN_STARTS: Final = frozenset({"user.message", "turn_started"})
TURN_ENDS: Final = frozenset(
    {"turn.completed", "turn.failed", "turn.cancelled", "turn.interrupted", "turn_completed"}
)
TERMINAL_TYPES: Final = frozenset({"run.completed", "run.failed", "run.cancelled"}) | TURN_ENDS


class ReplayError(Exception):
    """Rivumi's replay error; the CLI prints `error: <message>` and exits 2."""


@dataclass(frozen=True, slots=True)
class ReplayAnswer:
    ok: bool
    message: str | None
    state: dict[str, Any] | None
    text: str | None

    def as_native(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.message, "state": self.state, "text": self.text}


def native_replay(data: bytes | None, *, events_path: str = "events.jsonl") -> ReplayAnswer:
    """`data` None: events.jsonl is absent (the message names `events_path`; Rivumi names the path it
    built from its run root, which a verifier cannot know)."""
    try:
        if data is None:
            raise ReplayError(missing_log_message(events_path))
        state = reduce_events(load_jsonl(data))
    except ReplayError as error:
        return ReplayAnswer(False, str(error), None, None)
    return ReplayAnswer(True, None, state, canonical_text(state))


def missing_log_message(events_path: str) -> str:
    return f"could not read event JSONL: [Errno 2] No such file or directory: {events_path!r}"


def canonical_text(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def load_jsonl(data: bytes) -> list[dict[str, Any]]:
    """The objects of an events.jsonl as Rivumi's `reduce_jsonl` loads them: LF-ended physical lines only."""
    records: list[dict[str, Any]] = []
    pieces = data.split(b"\n")
    for number, piece in enumerate(pieces, 1):
        terminated = number < len(pieces)
        if not piece.strip():
            continue
        if not terminated:
            raise ReplayError("event JSONL has a partial final line")
        if len(piece) > MAX_LINE_BYTES:
            raise ReplayError(f"event JSONL line {number} exceeds {MAX_LINE_BYTES} bytes")
        try:
            value = json.loads(piece)
        except ValueError:
            raise ReplayError(f"event JSONL line {number} is not valid JSON") from None
        if not isinstance(value, dict):
            raise ReplayError(f"event JSONL line {number} must contain an object")
        records.append(value)
    return records


def _bounded(key: str, value: str) -> str:
    if "\x00" in value:
        raise ReplayError(f"{key} cannot contain NUL")
    return value[:MAX_TEXT]


def _normalise(index: int, record: dict[str, Any]) -> dict[str, Any]:
    sequence = record.get("sequence")
    if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0:
        raise ReplayError(f"event {index} requires a non-negative integer sequence")
    event_type = record.get("event_type")
    if not isinstance(event_type, str) or not event_type.strip():
        raise ReplayError(f"event {index} requires event_type")
    event: dict[str, Any] = {"sequence": sequence, "event_type": event_type.strip()}
    for key in ID_KEYS:
        value = record.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ReplayError(f"event {index} has invalid {key}")
        event[key] = value.strip()
    data = record.get("data")
    if data is None:
        data = {}
    elif not isinstance(data, dict):
        raise ReplayError(f"event {index} data must be an object")
    top: dict[str, str] = {}
    for key in TEXT_KEYS:
        value = record.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ReplayError(f"event {index} has invalid {key}")
        top[key] = _bounded(key, value)
    event["_top"], event["_data"] = top, data
    return event


def _timeline_item(event: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {key: event[key] for key in ("sequence", "event_type", *ID_KEYS) if key in event}
    top, data = event["_top"], event["_data"]
    if top.get("text"):
        item["text"] = top["text"]
    elif isinstance(data.get("text"), str) and data["text"]:
        item["text"] = _bounded("data.text", data["text"])
    for source in (top, data):
        detail = next((key for key in DETAIL_KEYS if isinstance(source.get(key), str) and source[key]), None)
        if detail is not None:
            item["detail"] = _bounded(detail, source[detail])
            break
    return item


def reduce_events(records: list[dict[str, Any]]) -> dict[str, Any]:
    events = [_normalise(index, record) for index, record in enumerate(records)]
    if len(events) > MAX_EVENTS:
        raise ReplayError(f"event log exceeds {MAX_EVENTS} events")
    events.sort(key=lambda event: event["sequence"])
    seen: set[int] = set()
    fixed: dict[str, str] = {}
    active_turn: str | None = None
    completed: list[str] = []
    terminal: str | None = None
    timeline: list[dict[str, Any]] = []
    for event in events:
        if event["sequence"] in seen:
            raise ReplayError(f"duplicate event sequence: {event['sequence']}")
        seen.add(event["sequence"])
        for key in ("run_id", "conversation_id"):
            if key in event and fixed.setdefault(key, event[key]) != event[key]:
                raise ReplayError(f"event log contains multiple {key} values")
        event_type, turn = event["event_type"], event.get("turn_id")
        if isinstance(turn, str):
            if event_type in TURN_STARTS:
                active_turn = turn
            elif event_type in TURN_ENDS:
                if turn not in completed:
                    completed.append(turn)
                if active_turn == turn:
                    active_turn = None
        if event_type in TERMINAL_TYPES:
            terminal = event_type
        timeline.append(_timeline_item(event))
    state: dict[str, Any] = {
        "schema_version": 1,
        "first_sequence": events[0]["sequence"] if events else None,
        "last_sequence": events[-1]["sequence"] if events else None,
        "event_count": len(events),
        "run_id": fixed.get("run_id"),
        "conversation_id": fixed.get("conversation_id"),
        "active_turn_id": active_turn,
        "completed_turn_ids": completed,
        "terminal_event_type": terminal,
        "timeline": timeline,
    }
    return {key: value for key, value in state.items() if value is not None}
