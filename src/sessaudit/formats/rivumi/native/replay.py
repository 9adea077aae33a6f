"""What `rivumi sessions --replay-json` prints for an events.jsonl (spec §5.1–§5.2), byte for byte.

Spec-silent choices: "blank" lines are judged with bytes.strip() (ASCII whitespace); JSON is parsed with
Python's json (which, like Rivumi, takes duplicate keys and NaN); the whole log is normalised before the
size check, and duplicates and id drift are checked in one pass in sequence order.

Where Rivumi's CLI does not answer but crashes (an uncaught exception: a traceback on stderr, exit status 1,
nothing on stdout), the answer says so (`crash`, a message starting "Rivumi crashes: ") instead of inventing
a verdict: a line that is not valid UTF-8 (UnicodeDecodeError), an integer of more than 4,300 digits
(ValueError), nesting deep enough to exhaust Python's recursion limit (RecursionError), and output that
stdout cannot encode (UnicodeEncodeError: a lone surrogate, under the strict error handler of a UTF-8
locale; `stdout_errors` names another handler, e.g. the C.UTF-8 locale's "surrogateescape").
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

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
CRASH_PREFIX: Final = "Rivumi crashes: "
CRASH_STATUS: Final = 1
# Container depth (the bracket that opens it counted) at which Python 3.11's json raises RecursionError
# with the default limit of 1000, measured through Rivumi's CLI: 980 for an events.jsonl line read by
# `rivumi sessions`; 990 for session.json/request.json, read in a fresh worker thread at resume.
REPLAY_DEPTH_LIMIT: Final = 980
INT_DIGITS_LIMIT: Final = 4_300  # Python's default int_max_str_digits
_INT_LIMIT_MESSAGE: Final = (
    "Exceeds the limit ({limit} digits) for integer string conversion: value has {digits} digits; "
    "use sys.set_int_max_str_digits() to increase the limit"
)
_TOKENS: Final = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[{]|[\]}]|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?', re.DOTALL
)
_LONG_DIGITS: Final = re.compile(f"[0-9]{{{INT_DIGITS_LIMIT + 1}}}")
_Result = TypeVar("_Result")


class ReplayError(Exception):
    """Rivumi's replay error; the CLI prints `error: <message>` and exits 2."""


class RivumiCrash(Exception):
    """An exception Rivumi does not catch: its CLI prints a traceback and exits 1 (`name: detail`)."""

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"{name}: {detail}")
        self.name = name


@dataclass(frozen=True, slots=True)
class ReplayAnswer:
    """`crash`: the exception's name when Rivumi crashes instead of answering (then `ok` is False)."""

    ok: bool
    message: str | None
    state: dict[str, Any] | None
    text: str | None
    crash: str | None = field(default=None, compare=False)

    def as_native(self) -> dict[str, Any]:
        native = {"ok": self.ok, "message": self.message, "state": self.state, "text": self.text}
        return native if self.crash is None else {**native, "crash": self.crash}


def native_replay(
    data: bytes | None, *, events_path: str = "events.jsonl", stdout_errors: str = "strict"
) -> ReplayAnswer:
    """`data` None: events.jsonl is absent (the message names `events_path`; Rivumi names the path it
    built from its run root, which a verifier cannot know). `stdout_errors`: the error handler of the
    UTF-8 stdout Rivumi would print to."""
    try:
        if data is None:
            raise ReplayError(missing_log_message(events_path))
        state = reduce_events(load_jsonl(data))
        text = printable(canonical_text(state), stdout_errors)
    except ReplayError as error:
        return ReplayAnswer(False, str(error), None, None)
    except RivumiCrash as crash:
        return ReplayAnswer(False, CRASH_PREFIX + str(crash), None, None, crash.name)
    return ReplayAnswer(True, None, state, text)


def missing_log_message(events_path: str) -> str:
    return f"could not read event JSONL: [Errno 2] No such file or directory: {events_path!r}"


def canonical_text(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def printable(text: str, stdout_errors: str) -> str:
    """`text` when a UTF-8 stdout with the error handler `stdout_errors` can write it, else the crash."""
    try:
        text.encode("utf-8", stdout_errors)
    except UnicodeEncodeError as error:
        raise RivumiCrash("UnicodeEncodeError", str(error)) from None
    except LookupError:  # an unknown handler name: judged as the default, strict
        return printable(text, "strict")
    return text


def python_json(text: str, depth_limit: int) -> Any:
    """`json.loads(text)` as it runs in Rivumi's process, whose recursion budget allows `depth_limit - 1`
    nested containers; raises ValueError (json.JSONDecodeError) or RivumiCrash, never RecursionError.

    The first hazard in the text (a container at `depth_limit`, an integer over 4,300 digits) crashes
    Rivumi when its parser reaches it, i.e. when the text before it parses up to that point: `null` put in
    the hazard's place is then consumed, so an error (if any) lies beyond the hazard's position."""
    hazard = _first_hazard(text, depth_limit)
    if hazard is not None:
        position, crash = hazard
        try:
            _with_stack(json.loads, text[:position] + "null")
        except json.JSONDecodeError as error:
            if error.pos > position:
                raise crash from None
        else:
            raise crash
    return _with_stack(json.loads, text)


def _first_hazard(text: str, depth_limit: int) -> tuple[int, RivumiCrash] | None:
    if text.count("[") + text.count("{") < depth_limit and not _LONG_DIGITS.search(text):
        return None
    depth = 0
    for token in _TOKENS.finditer(text):
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if depth >= depth_limit:
                kind = "array" if first == "[" else "object"
                detail = (
                    f"maximum recursion depth exceeded while decoding a JSON {kind} from a unicode string"
                )
                return token.start(), RivumiCrash("RecursionError", detail)
        elif first in "]}":
            depth = max(depth - 1, 0)
        elif first != '"':
            number = token.group()
            digits = len(number.lstrip("-"))
            if digits > INT_DIGITS_LIMIT and not any(mark in number for mark in ".eE"):
                detail = _INT_LIMIT_MESSAGE.format(limit=INT_DIGITS_LIMIT, digits=digits)
                return token.start(), RivumiCrash("ValueError", detail)
    return None


def _with_stack(function: Callable[[str], _Result], text: str) -> _Result:
    """`function(text)`; when our own call stack is too deep for it, again on a fresh thread's stack."""
    try:
        return function(text)
    except RecursionError:
        pass
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, function(text)))
        except Exception as error:  # handed back to the caller's thread below
            outcome.append((False, error))

    worker = threading.Thread(target=run, name="sessaudit-deep-json")
    worker.start()
    worker.join()
    succeeded, value = outcome[0]
    if not succeeded:
        if isinstance(value, RecursionError):  # only with a lowered recursion limit: Rivumi would crash too
            raise RivumiCrash("RecursionError", str(value))
        raise value
    return value  # type: ignore[no-any-return]


def decode_line(piece: bytes) -> str:
    """A line's text as `json.loads(bytes)` decodes it (encoding detected, surrogates passed through)."""
    try:
        return piece.decode(json.detect_encoding(piece), "surrogatepass")
    except UnicodeDecodeError as error:
        raise RivumiCrash("UnicodeDecodeError", str(error)) from None


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
            value = python_json(decode_line(piece), REPLAY_DEPTH_LIMIT)
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
