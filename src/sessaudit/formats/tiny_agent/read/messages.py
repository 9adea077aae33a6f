"""Message and configuration shapes (spec §7, §9.3, §11): validated exactly, canonicalised without copies."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from json.encoder import encode_basestring as encode_string
from typing import Any, Final

import orjson

from sessaudit.formats.tiny_agent.read.digests import DIGEST_PATTERN
from sessaudit.formats.tiny_agent.read.shapes import (
    INVALID_FACT,
    INVALID_TRANSCRIPT,
    MISSING,
    Violation,
    js_string,
    require_exact,
    require_object,
    require_string,
    show,
)

# --- messages (spec §7) ----------------------------------------------------------------------

USER_KEYS: Final = frozenset(("role", "content"))
TOOL_KEYS: Final = frozenset(("role", "content", "tool_call_id"))
ASSISTANT_KEYS: Final = frozenset(("role", "content", "tool_calls"))
CALL_KEYS: Final = frozenset(("id", "type", "function"))
FUNCTION_KEYS: Final = frozenset(("name", "arguments"))

Call = tuple[str, str, str]  # provider call id, tool name, raw arguments text


class Message:
    """A validated message: role, content, its calls (assistant) or the call it answers (tool)."""

    __slots__ = ("calls", "content", "role", "tool_call_id")

    def __init__(self, role: str, content: str | None, calls: tuple[Call, ...], tool_call_id: str) -> None:
        self.role = role
        self.content = content
        self.calls = calls
        self.tool_call_id = tool_call_id


def parse_message(value: Any, pointer: str) -> Message:
    """Validate a message exactly as the reducer does; INVALID_FACT, or INVALID_TRANSCRIPT for repeated
    call ids."""
    message = require_object(value, INVALID_FACT, pointer, "message")
    role = message.get("role", MISSING)
    if role == "user":
        if not USER_KEYS.issuperset(message):
            require_exact(message, USER_KEYS, INVALID_FACT, pointer, "user message")
        content = require_string(
            message.get("content", MISSING), INVALID_FACT, pointer + "/content", "content"
        )
        return Message("user", content, (), "")
    if role == "tool":
        if not TOOL_KEYS.issuperset(message):
            require_exact(message, TOOL_KEYS, INVALID_FACT, pointer, "tool message")
        content = message.get("content", MISSING)
        if type(content) is not str:
            raise Violation(
                INVALID_FACT,
                pointer + "/content",
                f"tool message content: expected a string, found {show(content)}",
            )
        answered = require_string(
            message.get("tool_call_id", MISSING), INVALID_FACT, pointer + "/tool_call_id", "tool_call_id"
        )
        return Message("tool", content, (), answered)
    if role != "assistant":
        raise Violation(
            INVALID_FACT,
            pointer + "/role",
            f"message role: expected user, assistant or tool, found {show(role)}",
        )
    if not ASSISTANT_KEYS.issuperset(message):
        require_exact(message, ASSISTANT_KEYS, INVALID_FACT, pointer, "assistant message")
    content = message.get("content", MISSING)
    if content is not None and type(content) is not str:
        raise Violation(
            INVALID_FACT,
            pointer + "/content",
            f"assistant content: expected a string or null, found {show(content)}",
        )
    raw_calls = message.get("tool_calls", MISSING)
    if raw_calls is MISSING:
        return Message("assistant", content, (), "")
    if type(raw_calls) is not list or not raw_calls:
        raise Violation(
            INVALID_FACT,
            pointer + "/tool_calls",
            f"tool_calls: expected a non-empty array, found {show(raw_calls)}",
        )
    calls = tuple([parse_call(raw, pointer, index) for index, raw in enumerate(raw_calls)])
    if len({call[0] for call in calls}) != len(calls):
        seen: set[str] = set()
        repeated = ""
        for call_id, _, _ in calls:
            if call_id in seen:
                repeated = call_id
                break
            seen.add(call_id)
        raise Violation(
            INVALID_TRANSCRIPT,
            pointer + "/tool_calls",
            f"tool call id {show(repeated)} appears twice in one assistant message",
            evidence={"tool_call_id": repeated},
        )
    return Message("assistant", content, calls, "")


def parse_call(value: Any, base: str, index: int) -> Call:
    """One tool call of an assistant message at `{base}/tool_calls/{index}`, validated exactly."""
    if (
        type(value) is dict
        and len(value) == 3
        and value.get("type") == "function"
        and type(function := value.get("function")) is dict
        and len(function) == 2
        and type(call_id := value.get("id")) is str
        and call_id
        and type(name := function.get("name")) is str
        and name
        and type(arguments := function.get("arguments")) is str
    ):
        return (call_id, name, arguments)  # the common, valid shape; anything else takes the exact path
    pointer = f"{base}/tool_calls/{index}"
    call = require_object(value, INVALID_FACT, pointer, "tool call")
    if not CALL_KEYS.issuperset(call):
        require_exact(call, CALL_KEYS, INVALID_FACT, pointer, "tool call")
    if call.get("type", MISSING) != "function":
        raise Violation(
            INVALID_FACT,
            pointer + "/type",
            f'tool call type: expected "function", found {show(call.get("type", MISSING))}',
        )
    function = require_object(call.get("function", MISSING), INVALID_FACT, pointer + "/function", "function")
    if not FUNCTION_KEYS.issuperset(function):
        require_exact(function, FUNCTION_KEYS, INVALID_FACT, pointer + "/function", "function")
    call_id = require_string(call.get("id", MISSING), INVALID_FACT, pointer + "/id", "tool call id")
    name = require_string(
        function.get("name", MISSING), INVALID_FACT, pointer + "/function/name", "tool name"
    )
    arguments = function.get("arguments", MISSING)
    if type(arguments) is not str:
        raise Violation(
            INVALID_FACT,
            pointer + "/function/arguments",
            f"tool call arguments: expected a string, found {show(arguments)}",
        )
    return (call_id, name, arguments)


def canonical_message(message: Message) -> bytes:
    """The canonical JSON (§11) of a validated message as UTF-8, built directly: its values are strings or
    null and its keys are fixed ASCII, so sorted keys and a string encoder that escapes exactly `"`, `\\`
    and the C0 controls (lowercase `\\u00xx` but for \\b \\f \\n \\r \\t) give tiny-agent's form.
    orjson's string encoder is that encoder (a test holds it to the stdlib's `encode_basestring` for
    every code point), writing UTF-8 at once; a string it refuses (a lone surrogate, which strict
    decoding never lets through) takes the stdlib path and fails there as it always did."""
    try:
        return _canonical_message(message, _encode_utf8)
    except orjson.JSONEncodeError:
        return _canonical_message(message, _encode_via_stdlib)


def _encode_utf8(value: str) -> bytes:
    return orjson.dumps(value)


def _encode_via_stdlib(value: str) -> bytes:
    return encode_string(value).encode()


def _canonical_message(message: Message, encode: Callable[[str], bytes]) -> bytes:
    content = b"null" if message.content is None else encode(message.content)
    if message.role == "tool":
        call_id = encode(message.tool_call_id)
        return b'{"content":' + content + b',"role":"tool","tool_call_id":' + call_id + b"}"
    if message.role == "user":
        return b'{"content":' + content + b',"role":"user"}'
    if not message.calls:
        return b'{"content":' + content + b',"role":"assistant"}'
    calls = b",".join(
        b'{"function":{"arguments":'
        + encode(arguments)
        + b',"name":'
        + encode(name)
        + b'},"id":'
        + encode(call_id)
        + b',"type":"function"}'
        for call_id, name, arguments in message.calls
    )
    return b'{"content":' + content + b',"role":"assistant","tool_calls":[' + calls + b"]}"


# --- configuration snapshots (spec §9.3) ---------------------------------------------------

SNAPSHOT_KEYS: Final = frozenset(
    ("model", "systemPromptDigest", "tools", "adapterIdentity", "routingIdentity", "outputOptionsDigest")
)
TOOL_DECLARATION_KEYS: Final = frozenset(("name", "definitionDigest"))


def parse_configuration(value: Any, pointer: str) -> tuple[str, frozenset[str]]:
    """Validate a configurationSnapshot; return the sha256 digest of its normalised canonical form and the
    declared tool names. Digest fields go through String() first, exactly as the reducer reads them.

    Snapshots repeat from attempt to attempt: one already accepted is recognised by its orjson encoding,
    which differs for any difference of value, type (1, 1.0, true, "1") or key order, so the answer is
    the same as validating it again."""
    try:
        written = orjson.dumps(value) if type(value) is dict else None
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: validate it the long way
        written = None
    if written is not None:
        known = _ACCEPTED.get(written)
        if known is not None:
            return known
    known = _parse_configuration(value, pointer)
    if written is not None:
        if len(_ACCEPTED) >= 256:
            _ACCEPTED.clear()
        _ACCEPTED[written] = known
    return known


def _parse_configuration(value: Any, pointer: str) -> tuple[str, frozenset[str]]:
    snapshot = require_object(value, INVALID_FACT, pointer, "configurationSnapshot")
    if not SNAPSHOT_KEYS.issuperset(snapshot):
        require_exact(snapshot, SNAPSHOT_KEYS, INVALID_FACT, pointer, "configurationSnapshot")
    model = require_string(snapshot.get("model", MISSING), INVALID_FACT, pointer + "/model", "model")
    system_prompt = js_string(snapshot.get("systemPromptDigest", MISSING))
    output_options = js_string(snapshot.get("outputOptionsDigest", MISSING))
    for name, text in (("systemPromptDigest", system_prompt), ("outputOptionsDigest", output_options)):
        if DIGEST_PATTERN.match(text) is None:
            raise Violation(
                INVALID_FACT,
                f"{pointer}/{name}",
                f'{name}: expected "sha256:" and 64 lowercase hex digits, found '
                f"{show(snapshot.get(name, MISSING))}",
            )
    raw_tools = snapshot.get("tools", MISSING)
    if type(raw_tools) is not list:
        raise Violation(
            INVALID_FACT, pointer + "/tools", f"tools: expected an array, found {show(raw_tools)}"
        )
    names: set[str] = set()
    tools: list[tuple[str, str]] = []
    for index, raw in enumerate(raw_tools):
        where = f"{pointer}/tools/{index}"
        tool = require_object(raw, INVALID_FACT, where, "tool declaration")
        if not TOOL_DECLARATION_KEYS.issuperset(tool):
            require_exact(tool, TOOL_DECLARATION_KEYS, INVALID_FACT, where, "tool declaration")
        name = require_string(tool.get("name", MISSING), INVALID_FACT, where + "/name", "tool name")
        if name in names:
            raise Violation(INVALID_FACT, where + "/name", f"tool {show(name)} is declared twice")
        names.add(name)
        definition = js_string(tool.get("definitionDigest", MISSING))
        if DIGEST_PATTERN.match(definition) is None:
            raise Violation(
                INVALID_FACT,
                where + "/definitionDigest",
                "definitionDigest: expected a sha256 digest, found "
                f"{show(tool.get('definitionDigest', MISSING))}",
            )
        tools.append((definition, name))
    adapter = require_string(
        snapshot.get("adapterIdentity", MISSING),
        INVALID_FACT,
        pointer + "/adapterIdentity",
        "adapterIdentity",
    )
    routing = require_string(
        snapshot.get("routingIdentity", MISSING),
        INVALID_FACT,
        pointer + "/routingIdentity",
        "routingIdentity",
    )
    declared = ",".join(
        f'{{"definitionDigest":"{digest}","name":{encode_string(name)}}}' for digest, name in tools
    )
    canonical = (
        f'{{"adapterIdentity":{encode_string(adapter)},"model":{encode_string(model)},'
        f'"outputOptionsDigest":"{output_options}","routingIdentity":{encode_string(routing)},'
        f'"systemPromptDigest":"{system_prompt}","tools":[{declared}]}}'
    )
    known = _DIGESTS.get(canonical)
    if known is None:
        if len(_DIGESTS) >= 256:
            _DIGESTS.clear()
        digest = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        known = _DIGESTS[canonical] = (digest, frozenset(names))
    return known


# Snapshots repeat from attempt to attempt; their canonical text is the key, so a hit is exact (the
# canonical text lists every tool name). Attempts keep the shared digest and name set, not copies.
_DIGESTS: dict[str, tuple[str, frozenset[str]]] = {}
# Accepted snapshots by their orjson encoding (see parse_configuration).
_ACCEPTED: dict[bytes, tuple[str, frozenset[str]]] = {}
