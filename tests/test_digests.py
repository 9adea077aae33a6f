"""tiny-agent canonical JSON and digests (§11, checked against §17), UUIDv7 ids and safe integers."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, strategies

from sessaudit.formats.tiny_agent.read.digests import (
    DIGEST_PATTERN,
    MAX_SAFE_INTEGER,
    UUID7_PATTERN,
    canonical_json,
    is_integral_float,
    is_safe_integer,
    is_uuid7,
    javascript_number,
    sha256_digest,
    uuid7_millis,
)

# The configuration snapshot of spec §17 (`SNAP`), typed from the spec.
_SNAPSHOT = {
    "model": "deepseek/deepseek-v4-flash-0731",
    "systemPromptDigest": "sha256:e16202309c92180728dd7fd1c59f16004a6d5ee245538c28d2a9a22edf2dd2ab",
    "tools": [
        {
            "name": "read",
            "definitionDigest": "sha256:8555dab7f52fa2791ffec88ea298321f88bc9f5887ad7c7d8e9a967c8e91137d",
        },
        {
            "name": "bash",
            "definitionDigest": "sha256:8930f3ca6a0fceb5bd70753252d99cae94f0af83cd518db8dde10a848400d181",
        },
    ],
    "adapterIdentity": "openrouter:chat-completions:v1",
    "routingIdentity": "openrouter:deepseek/deepseek-v4-flash-0731",
    "outputOptionsDigest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
}

# The five message entries of spec §17 that its compaction covers, as {sourceEntryId, message} pairs.
_COMPACTION_SOURCE = [
    {
        "sourceEntryId": "01a029fc-5d8a-7101-8002-00005eed0002",
        "message": {"role": "user", "content": "Why does the cart test fail?"},
    },
    {
        "sourceEntryId": "01a029fc-6104-7107-8008-00005eed0008",
        "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_00_kQ3vX9pLr2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"src/cart.js"}'},
                },
                {
                    "id": "call_01_Zt7mB1sWq8",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command":"npm test"}'},
                },
            ],
        },
    },
    {
        "sourceEntryId": "01a029fc-6109-710a-800b-00005eed000b",
        "message": {
            "role": "tool",
            "tool_call_id": "call_00_kQ3vX9pLr2",
            "content": "export function total(items) { ... }",
        },
    },
    {
        "sourceEntryId": "01a029fc-6113-710c-800d-00005eed000d",
        "message": {
            "role": "tool",
            "tool_call_id": "call_01_Zt7mB1sWq8",
            "content": (
                "Operation interrupted after execution status became unknown; the tool was not replayed."
            ),
        },
    },
    {
        "sourceEntryId": "01a029fd-4c90-7110-8011-00005eed0011",
        "message": {
            "role": "assistant",
            "content": "total() sums price without quantity; multiply by item.qty.",
        },
    },
]


# --- the spec's own digests -------------------------------------------------------------------------


def test_configuration_digest_of_the_spec_example() -> None:
    assert (
        sha256_digest(_SNAPSHOT) == "sha256:bea4b0fac52c26ba876ab62cc054265f1b8cb4aa0d8e7e16831c5406348e615b"
    )


def test_source_digest_of_the_spec_example() -> None:
    assert (
        sha256_digest(_COMPACTION_SOURCE)
        == "sha256:8a11c049f5879f2bbb33a128324bc2c433d6e1f0c715e080c7e875c930950bb6"
    )


# --- canonical form ---------------------------------------------------------------------------------


def test_no_whitespace_and_keys_sorted() -> None:
    assert canonical_json({"b": [1, {"d": None, "c": True}], "a": False, "B": "x"}) == (
        b'{"B":"x","a":false,"b":[1,{"c":true,"d":null}]}'
    )


def test_keys_sort_by_utf16_code_units_not_code_points() -> None:
    # U+1F600 is D83D DE00 in UTF-16, which sorts before U+E000 and U+FFFF; by code point it sorts after.
    value = {"\uffff": 3, "\ue000": 2, "\U0001f600": 1, "z": 0}
    assert canonical_json(value) == '{"z":0,"\U0001f600":1,"\ue000":2,"\uffff":3}'.encode()
    assert sorted(value) == ["z", "\ue000", "\uffff", "\U0001f600"]


def test_strings_escape_only_what_the_spec_lists() -> None:
    value = '"\\/\b\t\n\f\r\x00\x1f\x7fé\u2028\U0001f600'
    expected = '"\\"\\\\/\\b\\t\\n\\f\\r\\u0000\\u001f\x7fé\u2028\U0001f600"'.encode()
    assert canonical_json(value) == expected


@pytest.mark.parametrize("value", ["a\ud800", ["\udc00"], {"\ud800": 1}, {"\ud800": 1, "é": 2}])
def test_lone_surrogate_is_a_value_error(value: Any) -> None:
    with pytest.raises(ValueError, match=r"lone surrogate U\+D[8C]00"):
        canonical_json(value)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (0, "0"),
        (-7, "-7"),
        (True, "true"),
        (None, "null"),
        (1.0, "1"),
        (-0.0, "0"),
        (100.0, "100"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (0.1, "0.1"),
        (1e-6, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (-1.25e-7, "-1.25e-7"),
        (123456789.125, "123456789.125"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float("inf"), "null"),
        (float("-inf"), "null"),
        (float("nan"), "null"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (2**60, "1152921504606847000"),
        (-(2**64), "-18446744073709552000"),
        (10**400, "null"),
    ],
)
def test_numbers_are_written_as_javascript_json_stringify_writes_them(value: object, written: str) -> None:
    assert canonical_json(value) == written.encode()


def test_tuples_are_arrays_and_other_objects_are_refused() -> None:
    assert canonical_json((1, "a")) == b'[1,"a"]'
    with pytest.raises(TypeError):
        canonical_json({1: "a"})
    with pytest.raises(TypeError):
        canonical_json({1, 2})


def test_digest_has_the_digest_format() -> None:
    assert DIGEST_PATTERN.match(sha256_digest({})) is not None
    # §17's outputOptionsDigest is the digest of an empty object.
    assert sha256_digest({}) == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


_JSON_VALUES = strategies.recursive(
    strategies.none()
    | strategies.booleans()
    | strategies.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | strategies.floats(allow_nan=False, allow_infinity=False)
    | strategies.text(),
    lambda children: (
        strategies.lists(children, max_size=4)
        | strategies.dictionaries(strategies.text(max_size=4), children, max_size=5)
    ),
    max_leaves=25,
)


@given(_JSON_VALUES)
def test_canonical_json_round_trips_and_is_a_fixed_point(value: Any) -> None:
    written = canonical_json(value)
    # An integral float is written as JavaScript writes it (1.0 → 1, 3.3e16 → 33000000000000000), so
    # integers are compared as floats.
    parsed = json.loads(written, parse_int=float)
    assert parsed == value
    assert canonical_json(parsed) == written


@given(strategies.dictionaries(strategies.text(max_size=3), strategies.integers(0, 9), max_size=8))
def test_keys_come_out_in_utf16_order(value: dict[str, int]) -> None:
    keys = list(json.loads(canonical_json(value)))
    assert keys == sorted(value, key=lambda key: key.encode("utf-16-be"))


@given(strategies.floats(allow_nan=False, allow_infinity=False))
def test_javascript_number_round_trips(value: float) -> None:
    written = javascript_number(value)
    assert float(written) == value
    assert not written.endswith(".0") and "e+0" not in written and "e-0" not in written


# --- identifiers and integers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("01a029fc-5d80-71a2-8001-00005eed0001", True),
        ("018f0000-0000-7000-b000-000000000004", True),
        ("01A029FC-5D80-71A2-8001-00005EED0001", False),
        ("01a029fc-5d80-41a2-8001-00005eed0001", False),
        ("01a029fc-5d80-71a2-c001-00005eed0001", False),
        ("01a029fc-5d80-71a2-8001-00005eed0001\n", False),
        ("01a029fc5d8071a2800100005eed0001", False),
        (1, False),
        (None, False),
    ],
)
def test_is_uuid7(value: object, expected: bool) -> None:
    assert is_uuid7(value) is expected
    if isinstance(value, str):
        assert (UUID7_PATTERN.match(value) is not None) is expected


def test_uuid7_millis_reads_the_48_bit_timestamp() -> None:
    # The §17 header id was made from its createdAt, 1787410800000.
    assert uuid7_millis("01a029fc-5d80-71a2-8001-00005eed0001") == 1787410800000
    with pytest.raises(ValueError):
        uuid7_millis("not-a-uuid")


def test_digest_pattern() -> None:
    assert DIGEST_PATTERN.match("sha256:" + "0" * 64) is not None
    assert DIGEST_PATTERN.match("sha256:" + "A" * 64) is None
    assert DIGEST_PATTERN.match("sha256:" + "0" * 64 + "\n") is None
    assert DIGEST_PATTERN.match("sha1:" + "0" * 64) is None


@pytest.mark.parametrize(
    ("value", "safe", "integral_float"),
    [
        (1, True, False),
        (0, True, False),
        (-0.0, True, True),
        (1.0, True, True),
        (1.5, False, False),
        (MAX_SAFE_INTEGER, True, False),
        (-MAX_SAFE_INTEGER, True, False),
        (MAX_SAFE_INTEGER + 1, False, False),
        (float(MAX_SAFE_INTEGER + 1), False, True),
        (1e300, False, True),
        (True, False, False),
        (float("inf"), False, False),
        (float("nan"), False, False),
        ("1", False, False),
        (None, False, False),
    ],
)
def test_safe_integers_follow_javascript(value: object, safe: bool, integral_float: bool) -> None:
    assert is_safe_integer(value) is safe
    assert is_integral_float(value) is integral_float


def test_max_safe_integer() -> None:
    assert MAX_SAFE_INTEGER == 9007199254740991
    assert math.isclose(float(MAX_SAFE_INTEGER), 2.0**53 - 1)
