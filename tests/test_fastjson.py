"""The orjson fast path of decode_line against the exact decoder: the same value (types too) or the same
finding (rule, message, column, pointer), for arbitrary lines, and the fast path really taken."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sessaudit.fastjson import SLOW, fast_decode
from sessaudit.strictjson import MAX_DEPTH, LineProblem, decode_line, decode_line_exact
from tests.fuzz_targets import INTERESTING_BYTES, fuzz_settings

BOM = b"\xef\xbb\xbf"


def same(left: Any, right: Any) -> bool:
    """Equal with the same types all the way down; floats by bits (so -0.0 differs from 0.0). Iterative,
    for values nested as deep as the decoders allow."""
    stack = [(left, right)]
    while stack:
        one, other = stack.pop()
        if type(one) is not type(other):
            return False
        if isinstance(one, dict):
            if list(one) != list(other):
                return False
            stack.extend((one[key], other[key]) for key in one)
        elif isinstance(one, list):
            if len(one) != len(other):
                return False
            stack.extend(zip(one, other, strict=True))
        elif isinstance(one, float):
            if one.hex() != other.hex():
                return False
        elif one != other:
            return False
    return True


def outcome(decode: Any, data: bytes, strip_bom: bool) -> tuple[Any, ...]:
    try:
        return ("value", decode(data, strip_bom=strip_bom))
    except LineProblem as problem:
        return ("problem", problem.rule, problem.message, problem.column, problem.pointer)


def check(data: bytes, strip_bom: bool = False) -> None:
    fast = outcome(decode_line, data, strip_bom)
    exact = outcome(decode_line_exact, data, strip_bom)
    if fast[0] == "value" and exact[0] == "value":
        assert same(fast[1], exact[1]), (data, fast, exact)
    else:
        assert fast == exact, data


# --- JSON-like text built from pieces that probe every strict rule -----------------------------------
KEYS = [b'"a"', b'"\\u0061"', b'"b"', b'"a:b"', b'"\\u003a"', b'":"', b'"\\/"', b'"/"', b'"\\ud83d\\ude00"']
STRINGS = [
    b'""',
    b'"x"',
    b'":"',
    b'"\\u003a"',
    b'"\\u003A"',
    b'"\\\\u003a"',
    b'"\\\\"',
    b'"\\""',
    b'"\\ud800"',
    b'"\\udc00"',
    b'"\\ud83d\\ude00"',
    b'"\\ud83dx"',
    b'"\\\\ud800"',
    '"\U0001f600é\u2028"'.encode(),
    b'"\xed\xa0\x80"',
    b'"\xc0\xaf"',
    b'"\x01"',
    b'"\x7f"',
    b'"\\u001b"',
    b'"\t"',
    b'"\\x"',
    b'"1234567890123456789"',
    '"\ufeff"'.encode(),
]
NUMBERS = [
    b"0",
    b"-0",
    b"-0.0",
    b"1.0",
    b"1e2",
    b"1E+2",
    b"1.5e-3",
    b"01",
    b"1.",
    b".5",
    b"+1",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"9007199254740993",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-9223372036854775808",
    b"-9223372036854775809",
    b"123456789012345678901234567890",
    b"1" * 4400,
    b"0.1000000000000000055511151231257827",
    b"2.2250738585072011e-308",
    b"4.9406564584124654e-324",
    b"2.4703282292062328e-324",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"true",
    b"false",
    b"null",
    b"nul",
    b"True",
    b"nulll",
    b"-",
    b"1e",
    b"1e+",
    b"-01",
    b"00",
    b"0x1",
    b"1_000",
    b"-.5",
    b"1.5.",
    b"1.5e3.2",
]
SPACES = [b"", b"", b"", b" ", b"\t", b"\r", b"\n", b"\x0c", b"\xc2\xa0"]

space = st.sampled_from(SPACES)
scalar = st.one_of(st.sampled_from(STRINGS), st.sampled_from(NUMBERS))


def _array(items: list[tuple[bytes, bytes]]) -> bytes:
    return b"[" + b",".join(before + item for before, item in items) + b"]"


def _object(members: list[tuple[bytes, bytes, bytes]]) -> bytes:
    return b"{" + b",".join(key + gap + b":" + value for key, gap, value in members) + b"}"


texts = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(st.tuples(space, inner), max_size=4).map(_array),
        st.lists(st.tuples(st.sampled_from(KEYS), space, inner), max_size=4).map(_object),
    ),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(texts))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        position = draw(st.integers(min_value=0, max_value=len(data)))
        if draw(st.booleans()) and data:
            del data[position : position + draw(st.integers(min_value=1, max_value=3))]
        else:
            data[position:position] = draw(st.sampled_from(INTERESTING_BYTES))
    return bytes(data)


# --- real JSON values written the ways writers write them ---------------------------------------------
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=15,
)


def _written(value: Any, style: str) -> bytes:
    if style == "orjson":
        return orjson.dumps(value)
    if style == "compact":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    if style == "ascii":
        return json.dumps(value).encode()
    return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", " ").encode()


def _integers(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [number for item in value.values() for number in _integers(item)]
    if isinstance(value, list):
        return [number for item in value for number in _integers(item)]
    return [value] if type(value) is int else []


@st.composite
def written_values(draw: st.DrawFn) -> bytes:
    value = draw(json_values)
    style = draw(st.sampled_from(["compact", "ascii", "spaced", "orjson"]))
    if style == "orjson" and not all(-(2**63) <= number < 2**64 for number in _integers(value)):
        style = "compact"  # orjson writes no integer beyond 64 bits
    return _written(value, style)


@fuzz_settings(1500)
@given(st.one_of(texts, mutated(), written_values(), st.binary(max_size=64)), st.booleans())
@example(b'{"a":1,"a":2}', False)
@example(b'{"a":1,"\\u0061":2}', False)
@example(b'{"a":1,"a":"\\u003a"}', False)  # the colon count alone would miss this duplicate
@example(b'{"a":1, "a":"\\u003A"}', False)
@example(b'{"a":{"b":1,"b":2}}', False)
@example(b'{"x":[{"a":1},{"a":1}]}', False)
@example(b'"\\ud800"', False)
@example(b'"\xed\xa0\x80"', False)
@example(b"18446744073709551616", False)
@example(b"[18446744073709551616]", False)
@example(b"[-9223372036854775809]", False)
@example(b"[ 18446744073709551616 ]", False)
@example(b"1e400", False)
@example(b"[1.0, -0, -0.0, 1E2]", False)
@example(b"01", False)
@example(b"NaN", False)
@example(BOM + b'{"a":1}', True)
@example(BOM + b'{"a":1}', False)
@example(BOM + BOM + b"1", True)
@example(b'{"a":1}\r', False)
@example(b"", False)
@example(b" ", False)
@example(b'"\x01"', False)
def test_fast_path_agrees_with_the_exact_decoder(data: bytes, strip_bom: bool) -> None:
    check(data, strip_bom)


@fuzz_settings(800)
@given(
    st.one_of(
        st.floats(allow_nan=False, allow_infinity=False).flatmap(
            lambda number: st.sampled_from(
                [repr(number), f"{number:.17g}", f"{number:.20e}", f"{number:.25f}", f"{number:E}"]
            )
        ),
        st.from_regex(r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
    )
)
@example("0.1000000000000000055511151231257827021181583404541015625")
@example("2.47032822920623272088e-324")
@example("179769313486231580793728971405301e276")
def test_number_tokens_read_the_same(token: str) -> None:
    for text in (token, f"[{token}]", f'{{"n": {token}}}', f"[{token},{token}]"):
        check(text.encode())


@pytest.mark.parametrize("depth", [255, 256, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 1023, 1024, 1100])
@pytest.mark.parametrize("shape", ["arrays", "objects", "mixed"])
def test_deep_nesting_agrees_around_every_limit(depth: int, shape: str) -> None:
    if shape == "arrays":
        data = b"[" * depth + b"]" * depth
    elif shape == "objects":
        data = b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
    else:
        data = b'[{"a":' * (depth // 2) + b"0" + b"}]" * (depth // 2)
    check(data)


def test_many_shallow_brackets_keep_the_fast_path() -> None:
    data = b'{"calls":[' + b",".join([b'{"a":[1]}'] * 2000) + b"]}"
    assert fast_decode(data, MAX_DEPTH) is not SLOW
    check(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"kind":"entry","seq":3,"id":"01a2","timestamp":1796029923412,"entry":{"content":"a: b"}}',
        '[{"text":"caf\u00e9 \U0001f600 \\u001b[0m","n":-1.5e-07,"ok":true,"none":null}]'.encode(),
        b'{"kind": "entry", "seq": 3, "list": [1, 2.5, "x:y"]}',  # tier 2: spaces, as Python writes
        b'{"escaped":"\\u00e9\\n","float":1.0E2}',  # tier 2: escapes and a number orjson writes otherwise
    ],
)
def test_ordinary_lines_take_the_fast_path(data: bytes) -> None:
    assert fast_decode(data, MAX_DEPTH) is not SLOW
    check(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1,"a":2}',
        b'{"a":1, "a":"\\u003a"}',
        b"[18446744073709551616]",
        b"[-9223372036854775809]",
        b'{"x": 1}\r',
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    ],
)
def test_lines_the_fast_path_cannot_prove_take_the_exact_path(data: bytes) -> None:
    assert fast_decode(data, MAX_DEPTH) is SLOW
    check(data)
