"""The canonical form of a message (§11) is written with orjson's string encoder: it must escape exactly as
the stdlib encoder the digests were written with (and checked against tiny-agent's vectors) does."""

from __future__ import annotations

import sys
from json.encoder import encode_basestring

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessaudit.formats.tiny_agent.read.messages import Message, canonical_message, parse_message

NOT_SURROGATE = st.characters(blacklist_categories=("Cs",))


def test_every_code_point_is_escaped_as_the_stdlib_does() -> None:
    for start in range(0, sys.maxunicode + 1, 4096):
        text = "".join(chr(code) for code in range(start, min(start + 4096, sys.maxunicode + 1)))
        text = "".join(character for character in text if not 0xD800 <= ord(character) <= 0xDFFF)
        assert orjson.dumps(text) == encode_basestring(text).encode(), hex(start)


@given(st.text(alphabet=NOT_SURROGATE))
def test_any_string_is_escaped_as_the_stdlib_does(text: str) -> None:
    assert orjson.dumps(text) == encode_basestring(text).encode()


def _stdlib_form(message: Message) -> bytes:
    """The form as it was written before orjson: f-strings over the stdlib encoder."""
    encode = encode_basestring
    content = "null" if message.content is None else encode(message.content)
    if message.role == "tool":
        return f'{{"content":{content},"role":"tool","tool_call_id":{encode(message.tool_call_id)}}}'.encode()
    if message.role == "user":
        return f'{{"content":{content},"role":"user"}}'.encode()
    if not message.calls:
        return f'{{"content":{content},"role":"assistant"}}'.encode()
    calls = ",".join(
        f'{{"function":{{"arguments":{encode(arguments)},"name":{encode(name)}}},'
        f'"id":{encode(call_id)},"type":"function"}}'
        for call_id, name, arguments in message.calls
    )
    return f'{{"content":{content},"role":"assistant","tool_calls":[{calls}]}}'.encode()


TEXT = st.text(alphabet=NOT_SURROGATE, max_size=40)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, object]:
    role = draw(st.sampled_from(["user", "assistant", "tool"]))
    content = draw(st.one_of(st.none(), TEXT)) if role == "assistant" else draw(TEXT)
    message: dict[str, object] = {"role": role, "content": content}
    if role == "tool":
        message["tool_call_id"] = draw(TEXT)
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = [
            {"id": draw(TEXT), "type": "function", "function": {"name": draw(TEXT), "arguments": draw(TEXT)}}
            for _ in range(draw(st.integers(1, 3)))
        ]
    return message


@given(messages())
def test_the_canonical_message_is_the_stdlib_form(raw: dict[str, object]) -> None:
    try:
        message = parse_message(raw, "")
    except Exception:  # a shape the format refuses (an empty name, say) is not what this test is about
        return
    assert canonical_message(message) == _stdlib_form(message)


def test_a_lone_surrogate_still_fails_as_before() -> None:
    message = parse_message({"role": "user", "content": "a\ud800b"}, "")
    with pytest.raises(UnicodeEncodeError):
        canonical_message(message)
