"""pretty_json: the bytes of `json_safe(json.dumps(indent=2, sort_keys=True, ensure_ascii=False)) + "\\n"`,
written by orjson where it writes the same and by the json module otherwise."""

from __future__ import annotations

import collections
import enum
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sessaudit import jsonout
from sessaudit.jsonout import pretty_json
from sessaudit.outputsafety import JSON_UNSAFE, json_safe

GOLDEN = Path(__file__).parent / "golden"


def _reference(document: object) -> str:
    return json_safe(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"


def _refuse_json_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on the test fails if pretty_json takes the json.dumps path."""

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("json.dumps was called: the orjson path was not taken")

    monkeypatch.setattr(json, "dumps", refuse)


class Text(str):
    pass


class Number(int):
    pass


class Level(enum.IntEnum):
    LOW = 1


class Colour(enum.Enum):
    RED = "red"


Pair = collections.namedtuple("Pair", "left right")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (1.0, "1.0"),
        (0.1, "0.1"),
        (-0.0, "-0.0"),
        (1e-7, "1e-07"),
        (1e-5, "1e-05"),
        (0.0001, "0.0001"),
        (1e22, "1e+22"),
        (5e-324, "5e-324"),
        (0.30000000000000004, "0.30000000000000004"),
        (1.2345678901234568e17, "1.2345678901234568e+17"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_floats_are_written_as_python_repr(value: float, expected: str) -> None:
    assert pretty_json(value) == expected + "\n"
    assert pretty_json({"x": [value]}) == '{\n  "x": [\n    ' + expected + "\n  ]\n}\n"


def test_floats_orjson_writes_otherwise_take_the_json_module() -> None:
    assert jsonout._orjson_writes_alike([1.0, 0.1, 1e16, -0.0])
    for value in (1e-7, 1e-5, float("nan"), float("inf"), float("-inf")):
        assert not jsonout._orjson_writes_alike({"a": ["x", value]})


def test_non_ascii_and_unsafe_characters() -> None:
    document = {"text": "é😀\u2028\u2029 \x7f\x85\x9b \u061c\u200e\u200f\u202a\u202e\u2066\u2069 ok"}
    assert pretty_json(document) == (
        '{\n  "text": "é😀\\u2028\\u2029 \\u007f\\u0085\\u009b'
        ' \\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069 ok"\n}\n'
    )


def test_control_characters_and_json_escapes() -> None:
    assert pretty_json('\x00\x01\x08\t\n\x0b\x0c\r\x1b\x1f"\\/') == (
        '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001b\\u001f\\"\\\\/"\n'
    )


def test_lone_surrogates_are_escaped() -> None:
    assert pretty_json({"\ud800": "x\udfff"}) == '{\n  "\\ud800": "x\\udfff"\n}\n'


def test_every_character_as_value_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson escapes and sorts every code point as json.dumps does (lone surrogates aside): checked
    against json.dumps computed before it is switched off."""
    characters = [chr(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF]
    documents = ["".join(characters), {character: 0 for character in reversed(characters)}]
    expected = [_reference(document) for document in documents]
    _refuse_json_module(monkeypatch)
    assert [pretty_json(document) for document in documents] == expected


def test_json_unsafe_holds_no_ascii_below_del() -> None:
    """pretty_json searches only the text's characters from DEL up for json_safe's: valid while this holds."""
    assert JSON_UNSAFE.search("".join(map(chr, range(0x7F)))) is None


def test_each_unsafe_character_is_escaped_on_the_orjson_path(monkeypatch: pytest.MonkeyPatch) -> None:
    characters = [chr(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF]
    unsafe = JSON_UNSAFE.findall("".join(characters))
    assert len(unsafe) == 47
    documents = [{"k": f"a{character}é—b"} for character in unsafe]
    expected = [_reference(document) for document in documents]
    assert expected[0] == '{\n  "k": "a\\u007fé—b"\n}\n'
    _refuse_json_module(monkeypatch)
    assert [pretty_json(document) for document in documents] == expected
    assert pretty_json({"k": "é — “ok” ©"}) == '{\n  "k": "é — “ok” ©"\n}\n'


def test_keys_sort_by_code_point() -> None:
    # U+FFFF sorts before U+1F600 by code point and by UTF-8 bytes, after it by UTF-16 code units
    document = {"\U0001f600": 1, "\uffff": 2, "b": 3, "B": 4, "é": 5, "a": 6, "ab": 7, "": 8, "\ue000": 9}
    assert pretty_json(document) == (
        '{\n  "": 8,\n  "B": 4,\n  "a": 6,\n  "ab": 7,\n  "b": 3,\n  "é": 5,\n'
        '  "\ue000": 9,\n  "\uffff": 2,\n  "\U0001f600": 1\n}\n'
    )


def test_keys_that_are_not_str() -> None:
    assert pretty_json({10: "a", 9: "b"}) == '{\n  "9": "b",\n  "10": "a"\n}\n'
    assert pretty_json({True: 1, False: 0}) == '{\n  "false": 0,\n  "true": 1\n}\n'
    assert pretty_json({2.5: "a", 1e-07: "b"}) == '{\n  "1e-07": "b",\n  "2.5": "a"\n}\n'
    assert pretty_json({None: 1}) == '{\n  "null": 1\n}\n'
    assert pretty_json({Text("k"): 1}) == '{\n  "k": 1\n}\n'


def test_empty_containers_tuples_and_nesting() -> None:
    document = {"a": {}, "b": [], "c": [{}, [], [[1]], ()], "d": (1, ("x",)), "e": {"f": {"g": None}}}
    assert pretty_json(document) == (
        "{\n"
        '  "a": {},\n'
        '  "b": [],\n'
        '  "c": [\n'
        "    {},\n"
        "    [],\n"
        "    [\n"
        "      [\n"
        "        1\n"
        "      ]\n"
        "    ],\n"
        "    []\n"
        "  ],\n"
        '  "d": [\n'
        "    1,\n"
        "    [\n"
        '      "x"\n'
        "    ]\n"
        "  ],\n"
        '  "e": {\n'
        '    "f": {\n'
        '      "g": null\n'
        "    }\n"
        "  }\n"
        "}\n"
    )
    assert pretty_json({}) == "{}\n"
    assert pretty_json([]) == "[]\n"
    assert pretty_json(()) == "[]\n"


def test_scalars_at_the_top() -> None:
    assert [pretty_json(value) for value in ("x", 0, -1, True, False, None)] == [
        '"x"\n',
        "0\n",
        "-1\n",
        "true\n",
        "false\n",
        "null\n",
    ]


def test_big_ints() -> None:
    document = [2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**40]
    assert pretty_json(document) == (
        "[\n  18446744073709551615,\n  18446744073709551616,\n  -9223372036854775808,\n"
        "  -9223372036854775809,\n  10000000000000000000000000000000000000000\n]\n"
    )


def test_subclasses_and_other_types_take_the_json_module() -> None:
    document = {"a": Text("t"), "b": Number(7), "c": Level.LOW, "d": Pair(1, 2)}
    assert not jsonout._orjson_writes_alike(document)
    assert pretty_json(document) == '{\n  "a": "t",\n  "b": 7,\n  "c": 1,\n  "d": [\n    1,\n    2\n  ]\n}\n'
    with pytest.raises(TypeError, match="Object of type Colour is not JSON serializable"):
        pretty_json({"colour": Colour.RED})
    with pytest.raises(TypeError, match="Object of type UUID is not JSON serializable"):
        pretty_json([uuid.UUID(int=1)])
    with pytest.raises(TypeError, match="'<' not supported between instances of"):
        pretty_json({"a": 1, 2: 3})


def _nested(depth: int) -> list[Any]:
    document: list[Any] = []
    for _ in range(depth - 1):
        document = [document]
    return document


@pytest.mark.parametrize("depth", [254, 255, 300])
def test_deep_nesting(depth: int) -> None:
    """orjson writes 254 levels and refuses more; the json module writes the deeper ones."""
    assert jsonout._orjson_writes_alike(_nested(depth)) is (depth <= 254)
    opening = "".join("  " * level + "[\n" for level in range(depth - 1))
    closing = "".join("  " * level + "]\n" for level in reversed(range(depth - 1)))
    assert pretty_json(_nested(depth)) == opening + "  " * (depth - 1) + "[]\n" + closing


def test_shared_members_and_cycles() -> None:
    shared = {"k": [1]}
    assert jsonout._orjson_writes_alike({"a": shared, "b": shared})
    assert pretty_json({"a": shared, "b": shared}) == (
        '{\n  "a": {\n    "k": [\n      1\n    ]\n  },\n  "b": {\n    "k": [\n      1\n    ]\n  }\n}\n'
    )
    cycle: dict[str, Any] = {}
    cycle["self"] = [cycle, cycle]
    assert not jsonout._orjson_writes_alike(cycle)
    with pytest.raises(ValueError, match="Circular reference detected"):
        pretty_json(cycle)


@pytest.mark.parametrize("name", ["examples.report.json", "examples.sarif"])
def test_golden_reports_take_the_orjson_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (GOLDEN / name).read_text(encoding="utf-8")
    _refuse_json_module(monkeypatch)
    assert pretty_json(json.loads(text)) == text


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text()
    | st.text(st.characters(codec="utf-8"))
    | st.sampled_from(["\x7f", "\u2028", "\u202e", "\ud800", "é", "\U0001f600", "\uffff", "\x00"])
)
_KEYS = st.text() | st.sampled_from(["", "a", "\uffff", "\U0001f600", "\ue000", "\ud800"])
_DOCUMENTS = st.recursive(
    _JSON_SCALARS,
    lambda children: st.lists(children) | st.dictionaries(_KEYS, children) | st.tuples(children, children),
    max_leaves=40,
)


@settings(max_examples=500, deadline=None)
@given(_DOCUMENTS)
@example({"\U0001f600": 1.0, "\uffff": [1e-07, {}], "": [[], 2**64]})
@example([float("nan"), {"a": -0.0}, "\u2029"])
def test_same_text_as_json_dumps(document: Any) -> None:
    assert pretty_json(document) == _reference(document)
