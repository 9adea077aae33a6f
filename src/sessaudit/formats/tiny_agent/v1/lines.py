"""Shape checks of one decoded legacy v1 line (spec §15.1): header, message, compaction and interruption."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

HEADER_KEYS: Final = frozenset(
    {"type", "version", "id", "createdAt", "cwd", "provider", "model", "timestamp"}
)
USAGE_KEYS: Final = ("input", "output", "cacheRead", "cacheWrite")
MAX_SAFE_INTEGER: Final = 2**53 - 1

# The v1 CLI's fixed tool-result texts (spec §15.1); the aborted ones have no final period, unlike v2's.
ABORTED: Final = "Operation aborted"
ABORTED_BEFORE_EXECUTION: Final = "Operation aborted before execution"
TRUNCATED: Final = (
    "Error: Tool call arguments were truncated by the model token limit; the tool was not executed."
)
# Texts only tiny-agent's v2 store writes (spec §8.5); in a v1 file they mean another writer was involved.
V2_ONLY_TEXTS: Final = frozenset(
    {
        "Operation aborted before execution.",
        "Operation interrupted after execution status became unknown; the tool was not replayed.",
        "Error: Tool arguments were invalid; the tool was not executed.",
        "Error: Unknown tool; the tool was not executed.",
    }
)

HEADER, LINE, MESSAGE, USAGE, COMPACTION, INTERRUPTION = "SA150", "SA151", "SA152", "SA156", "SA157", "SA158"
NUMBER_TOKEN = "SA111"

# [0-9], not \d: Python's \d also matches other scripts' digits, which int() would then accept.
_INSTANT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z")
_UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NOT_AN_INSTANT = "is not an ISO-8601 UTC instant with milliseconds (Date.toISOString)"


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem of a line: a rule code, a message and, when known, a JSON pointer into the line."""

    code: str
    message: str
    pointer: str | None = None


@dataclass(frozen=True, slots=True)
class Tokens:
    input: int
    output: int
    cache_read: int
    cache_write: int


@dataclass(frozen=True, slots=True)
class Call:
    index: int
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class UserMessage:
    pass


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    calls: tuple[Call, ...]
    has_text: bool  # non-blank content: without calls the CLI returns it as the answer, else it throws
    usage: Tokens | None


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    tool_name: str | None
    content: str | None


@dataclass(frozen=True, slots=True)
class Compaction:
    compacted: int | None
    kept: int | None
    usage: Tokens | None


@dataclass(frozen=True, slots=True)
class Interruption:
    phase: str | None
    tool_call_id: str | None


Event = UserMessage | AssistantMessage | ToolResult | Compaction | Interruption


@dataclass(slots=True)
class Reading:
    """What one line says: its problems, the event it records (None when unusable) and its time in ms."""

    issues: list[Issue] = field(default_factory=list)
    event: Event | None = None
    timestamp: int | None = None
    is_message: bool = False  # v1's resume pushes every message line into the model context, valid or not


@dataclass(frozen=True, slots=True)
class Header:
    session_id: str | None
    created_at: int | None  # ms since the epoch, when createdAt is a valid instant
    id_time: int | None  # the 48-bit time of the id, when it is a valid UUIDv7
    issues: list[Issue]


def describe(value: Any) -> str:
    """A JSON value's kind, for messages."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return "an array" if isinstance(value, list) else "an object"


def json_text(value: Any, limit: int = 80) -> str:
    """A short JSON rendering of a value, for messages."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def instant(value: Any) -> int | None:
    """Milliseconds since the epoch of a `Date.toISOString()` string such as `2026-11-29T20:25:07.234Z`."""
    match = _INSTANT.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second, millisecond = (int(part) for part in match.groups())
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    return (moment - _EPOCH) // timedelta(milliseconds=1) + millisecond


class _Checker:
    """Collects the issues of one object under one rule code."""

    def __init__(self, issues: list[Issue], code: str) -> None:
        self.issues = issues
        self.code = code

    def flag(self, message: str, pointer: str | None = None, code: str | None = None) -> None:
        self.issues.append(Issue(code or self.code, message, pointer))

    def keys(
        self, value: dict[str, Any], allowed: set[str] | frozenset[str], where: str, at: str = ""
    ) -> None:
        for key in sorted(value.keys() - allowed):
            self.flag(f"{where} has an unexpected key {key!r}", f"{at}/{key}")

    def string(
        self, value: dict[str, Any], key: str, where: str, at: str = "", *, empty: bool = False
    ) -> bool:
        item = value.get(key)
        if isinstance(item, str) and (empty or item):
            return True
        self.flag(
            f"{where}'s {key} is {describe(item)}, not a{'' if empty else ' non-empty'} string", f"{at}/{key}"
        )
        return False

    def count(self, value: Any, what: str, pointer: str, least: int = 0) -> int | None:
        """A safe integer ≥ `least`, else None with an issue; `1.0` counts as 1, as in JavaScript (SA111)."""
        if isinstance(value, float) and value.is_integer() and least <= value <= MAX_SAFE_INTEGER:
            self.flag(
                f"{what} is written with a fraction or exponent ({value!r}); JavaScript reads it as "
                f"{int(value)}, but the v1 writer (JSON.stringify) never writes an integer this way",
                pointer,
                NUMBER_TOKEN,
            )
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_SAFE_INTEGER:
            wanted = "a non-negative safe integer" if least == 0 else f"a safe integer ≥ {least}"
            self.flag(f"{what} is {describe(value)}, not {wanted}", pointer)
            return None
        return value


def read_header(value: Any) -> Header:
    """Check line 1 against `{type:"session", version:1, id, createdAt, cwd, provider, model, timestamp}`."""
    check = _Checker([], HEADER)
    if not isinstance(value, dict):
        check.flag(f"the header is {describe(value)}, not a JSON object")
        return Header(None, None, None, check.issues)
    if value.get("type") != "session":
        check.flag(f'the header\'s type must be "session", found {json_text(value.get("type"))}', "/type")
    for key in sorted(HEADER_KEYS - value.keys()):
        check.flag(f"the header has no {key!r}", f"/{key}")
    check.keys(value, HEADER_KEYS, "the header")
    if "version" in value:
        version = check.count(value["version"], "the header's version", "/version")
        if version is not None and version != 1:
            check.flag(f"a v1 header's version must be 1, found {version}", "/version")
    session_id = value.get("id")
    valid_id = isinstance(session_id, str) and _UUID7.fullmatch(session_id) is not None
    if "id" in value and not valid_id:
        check.flag(f"the header id {json_text(session_id)} is not a lowercase UUIDv7", "/id")
    for key in ("createdAt", "timestamp"):
        if key in value and instant(value[key]) is None:
            check.flag(f"the header's {key} {json_text(value[key])} {_NOT_AN_INSTANT}", f"/{key}")
    for key in ("cwd", "provider", "model"):
        if key in value:
            check.string(value, key, "the header")
    name = session_id if isinstance(session_id, str) else None
    id_time = int(session_id[:8] + session_id[9:13], 16) if isinstance(session_id, str) and valid_id else None
    return Header(name, instant(value.get("createdAt")), id_time, check.issues)


def read_line(value: Any) -> Reading:
    """Check one line after the header and say which event it records."""
    reading = Reading()
    check = _Checker(reading.issues, LINE)
    if not isinstance(value, dict):
        check.flag(f"the line is {describe(value)}, not a JSON object")
        return reading
    if "timestamp" not in value:
        check.flag("the line has no timestamp", "/timestamp")
    else:
        reading.timestamp = instant(value["timestamp"])
        if reading.timestamp is None:
            check.flag(f"the timestamp {json_text(value['timestamp'])} {_NOT_AN_INSTANT}", "/timestamp")
    kind = value.get("type")
    if kind == "message":
        reading.is_message = True
        reading.event = _message(value, _Checker(reading.issues, MESSAGE))
    elif kind == "compaction":
        reading.event = _compaction(value, _Checker(reading.issues, COMPACTION))
    elif kind == "interruption":
        reading.event = _interruption(value, _Checker(reading.issues, INTERRUPTION))
    elif kind == "session":
        check.flag("a second session header; the header is line 1 only", "/type")
    else:
        found = f"unknown line type {json_text(kind)}" if "type" in value else "the line has no type"
        check.flag(f"{found}; v1 writes message, compaction and interruption lines", "/type")
    return reading


def read_usage(value: dict[str, Any], issues: list[Issue]) -> Tokens | None:
    """`usage`: exactly input, output, cacheRead and cacheWrite, each a non-negative safe integer."""
    check = _Checker(issues, USAGE)
    usage = value.get("usage")
    if not isinstance(usage, dict):
        check.flag(f"usage is {describe(usage)}, not an object", "/usage")
        return None
    numbers: list[int | None] = []
    for key in USAGE_KEYS:
        if key not in usage:
            check.flag(f"usage has no {key!r}", f"/usage/{key}")
        numbers.append(check.count(usage[key], f"usage.{key}", f"/usage/{key}") if key in usage else None)
    check.keys(usage, set(USAGE_KEYS), "usage", "/usage")
    input_, output, cache_read, cache_write = numbers
    if input_ is None or output is None or cache_read is None or cache_write is None:
        return None
    return Tokens(input_, output, cache_read, cache_write)


def _message(value: dict[str, Any], check: _Checker) -> Event | None:
    message = value.get("message")
    if not isinstance(message, dict):
        check.flag(f"message is {describe(message)}, not an object", "/message")
        return None
    role = message.get("role")
    if role == "user":
        check.keys(value, {"type", "message", "timestamp"}, "a user message line")
        check.keys(message, {"role", "content"}, "a user message", "/message")
        check.string(message, "content", "a user message", "/message", empty=True)
        return UserMessage()
    if role == "assistant":
        return _assistant(value, message, check)
    if role == "tool":
        check.keys(value, {"type", "message", "timestamp", "toolName"}, "a tool result line")
        check.keys(message, {"role", "tool_call_id", "content"}, "a tool result", "/message")
        has_content = check.string(message, "content", "a tool result", "/message", empty=True)
        has_name = check.string(value, "toolName", "a tool result line")
        if not check.string(message, "tool_call_id", "a tool result", "/message"):
            return None
        return ToolResult(
            message["tool_call_id"],
            value["toolName"] if has_name else None,
            message["content"] if has_content else None,
        )
    found = f"role {json_text(role)}" if "role" in message else "no role"
    check.flag(f"a message with {found}; v1 writes user, assistant and tool messages", "/message/role")
    return None


def _assistant(value: dict[str, Any], message: dict[str, Any], check: _Checker) -> AssistantMessage | None:
    # The provider's object is written as received: unknown keys (refusal, reasoning, …) are accepted.
    check.keys(value, {"type", "message", "usage", "timestamp"}, "an assistant message line")
    usage = read_usage(value, check.issues) if "usage" in value else None
    if "usage" not in value:
        check.flag(
            "an assistant message line has no usage; the v1 CLI writes one with every answer", "/usage", USAGE
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        check.flag(
            f"an assistant message's content is {describe(content)}, not a string or null", "/message/content"
        )
    raw_calls = (
        message.get("tool_calls") or []
    )  # the CLI treats null and [] as "no calls" (`tool_calls?.length`)
    if not isinstance(raw_calls, list):
        check.flag(f"tool_calls is {describe(raw_calls)}, not an array", "/message/tool_calls")
        return None
    calls: list[Call] = []
    for index, raw in enumerate(raw_calls):
        call = _call(index, raw, check)
        if call is not None and any(earlier.call_id == call.call_id for earlier in calls):
            check.flag(
                f"tool call id {json_text(call.call_id)} is used twice in one answer",
                f"/message/tool_calls/{index}/id",
            )
            call = None
        if call is None:
            return None
        calls.append(call)
    return AssistantMessage(tuple(calls), isinstance(content, str) and bool(content.strip()), usage)


def _call(index: int, raw: Any, check: _Checker) -> Call | None:
    at = f"/message/tool_calls/{index}"
    where = f"tool call {index}"
    if not isinstance(raw, dict):
        check.flag(f"{where} is {describe(raw)}, not an object", at)
        return None
    if raw.get("type") != "function":
        check.flag(f'{where} has type {json_text(raw.get("type"))}, not "function"', f"{at}/type")
    function = raw.get("function")
    name: str = ""
    arguments: Any = None
    if not isinstance(function, dict):
        check.flag(f"{where}'s function is {describe(function)}, not an object", f"{at}/function")
    else:
        if check.string(function, "name", f"{where}'s function", f"{at}/function"):
            name = function["name"]
        arguments = function.get("arguments")
        check.string(function, "arguments", f"{where}'s function", f"{at}/function", empty=True)
    if not check.string(raw, "id", where, at):
        return None
    return Call(
        index, raw["id"], name, arguments if isinstance(arguments, str) else json_text(arguments, 10**9)
    )


def _compaction(value: dict[str, Any], check: _Checker) -> Compaction:
    check.keys(
        value,
        {"type", "summary", "compactedMessages", "keptMessages", "usage", "timestamp"},
        "a compaction line",
    )
    # The CLI writes the summary model's content as is: null, or no key at all when the provider sent none.
    if value.get("summary") is not None:
        check.string(value, "summary", "a compaction line", empty=True)
    numbers: list[int | None] = []
    for key, least in (("compactedMessages", 1), ("keptMessages", 0)):
        if key not in value:
            check.flag(f"a compaction line has no {key}", f"/{key}")
        numbers.append(check.count(value[key], key, f"/{key}", least) if key in value else None)
    return Compaction(numbers[0], numbers[1], read_usage(value, check.issues))


def _interruption(value: dict[str, Any], check: _Checker) -> Interruption:
    check.keys(value, {"type", "phase", "toolCallId", "reason", "timestamp"}, "an interruption line")
    phase, call_id = value.get("phase"), value.get("toolCallId")
    if phase not in ("model", "tool", "compact"):
        check.flag(f'phase {json_text(phase)} is not "model", "tool" or "compact"', "/phase")
        phase = None
    if value.get("reason") != "escape":
        check.flag(f'reason {json_text(value.get("reason"))} is not "escape"', "/reason")
    if phase == "tool":
        if not check.string(value, "toolCallId", "a tool-phase interruption"):
            call_id = None
    elif "toolCallId" in value:
        check.flag(
            f"toolCallId belongs to tool-phase interruptions only, found with phase {json_text(phase)}",
            "/toolCallId",
        )
        call_id = None
    return Interruption(phase, call_id if isinstance(call_id, str) else None)
