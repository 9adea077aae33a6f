"""Go encoding/json output and reading (Half-Pi spec §6.1) against vectors written by hand from Go's rules."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessaudit.formats.half_pi.spec.gojson import (
    GoJSONError,
    Number,
    Struct,
    decode,
    decode_first,
    decodes_as_empty_struct,
    format_float64,
    go_utf8_decode,
    marshal,
    marshal_bytes,
    quote,
    to_float64_values,
)

# --- strings -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", '"plain"'),
        ("a && b", '"a \\u0026\\u0026 b"'),
        ("<script>", '"\\u003cscript\\u003e"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("C:\\temp", '"C:\\\\temp"'),
        ("/path/ok", '"/path/ok"'),  # Go never escapes the solidus
        ("line\u2028para\u2029", '"line\\u2028para\\u2029"'),
        ("\n\r\t", '"\\n\\r\\t"'),
        ("\b\f", '"\\b\\f"'),  # Go >= 1.22 short forms (Half-Pi builds with Go 1.25)
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
        ("\x0b", '"\\u000b"'),
        ("del\x7f", '"del\x7f"'),  # DEL is not a control character to Go's encoder
        ("é中文", '"é中文"'),
        ("😀", '"😀"'),
        ("\ufffd", '"\ufffd"'),  # a real U+FFFD is raw
        ("", '""'),
    ],
)
def test_strings_are_escaped_as_go_writes_them(text: str, expected: str) -> None:
    assert marshal(text) == expected
    assert quote(text) == expected


def test_non_ascii_is_raw_utf8_bytes() -> None:
    assert marshal_bytes("é😀") == b'"\xc3\xa9\xf0\x9f\x98\x80"'


def test_a_lone_surrogate_stands_for_an_invalid_byte_written_as_an_escape() -> None:
    # b"a\xffb" read with surrogateescape is "a\udcffb"; Go's encoder writes each invalid byte as \ufffd.
    text = b"a\xffb".decode("utf-8", "surrogateescape")
    assert marshal(text) == '"a\\ufffdb"'
    assert marshal("\ud800") == '"\\ufffd"'


# --- numbers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (-1.5, "-1.5"),
        (0.1, "0.1"),
        (123456789.125, "123456789.125"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (2.5e21, "2.5e+21"),
        (1e100, "1e+100"),
        (1e-6, "0.000001"),
        (1.5e-6, "0.0000015"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-1e-7, "-1e-7"),
        (1e-10, "1e-10"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (float(2**53), "9007199254740992"),
        (12345678901234567890.0, "12345678901234567000"),
        (100.0, "100"),
        (0.000123, "0.000123"),
    ],
)
def test_float64_formatting(value: float, expected: str) -> None:
    assert format_float64(value) == expected
    assert marshal(value) == expected


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused(value: float) -> None:
    with pytest.raises(GoJSONError, match="unsupported value"):
        marshal({"x": [value]})


def test_integers_print_their_digits_and_float64_rounds_them() -> None:
    assert marshal(2**53) == "9007199254740992"
    assert marshal(2**53 + 1) == "9007199254740993"  # a Go int64
    assert marshal(to_float64_values(2**53 + 1)) == "9007199254740992"  # a float64 after Unmarshal
    assert marshal(decode("9007199254740993")) == "9007199254740992"
    assert marshal(decode("9007199254740993", use_number=True)) == "9007199254740993"
    assert marshal(-7) == "-7"


def test_numbers_keep_their_literal() -> None:
    assert marshal([Number("1.0"), Number("1e3"), Number("-0"), Number("")]) == "[1.0,1e3,-0,0]"
    with pytest.raises(GoJSONError):
        Number("01")
    with pytest.raises(GoJSONError):
        Number("1.")


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_reads_back_exactly(value: float) -> None:
    text = format_float64(value)
    assert float(text) == value and math.copysign(1, float(text)) == math.copysign(1, value)
    assert not text.endswith(".0") and "e-0" not in text


# --- objects, arrays, structs ------------------------------------------------------------------------


def test_map_keys_sort_by_utf8_bytes_at_every_level() -> None:
    value = {"é": 1, "a": {"b": 1, "B": 2, "á": 3}, "Z": 3, "aa": 4, "": 5}
    assert marshal(value) == '{"":5,"Z":3,"a":{"B":2,"b":1,"á":3},"aa":4,"é":1}'


def test_astral_keys_sort_after_bmp_keys_as_in_utf8() -> None:
    # UTF-16 code-unit order would put U+1F600 (D83D …) before U+FFFF; UTF-8 byte order does not.
    assert marshal({"😀": 1, "\uffff": 2, "\ue000": 3}) == '{"\ue000":3,"\uffff":2,"😀":1}'


def test_keys_are_escaped_like_strings() -> None:
    assert marshal({"<&>": "x"}) == '{"\\u003c\\u0026\\u003e":"x"}'


def test_empty_values_and_nil() -> None:
    assert marshal({}) == "{}"
    assert marshal([]) == "[]"
    assert marshal(None) == "null"
    assert marshal(Struct(())) == "{}"
    assert marshal([True, False, None]) == "[true,false,null]"


def test_structs_keep_declaration_order_and_maps_inside_them_are_sorted() -> None:
    value = Struct.of(run_id="r", hand_id="h", args={"z": 1, "a": [2.5, {"y": None, "x": "<"}]})
    assert marshal(value) == '{"run_id":"r","hand_id":"h","args":{"a":[2.5,{"x":"\\u003c","y":null}],"z":1}}'


@pytest.mark.parametrize("value", [{1: "x"}, {"a": {1, 2}}, b"bytes", object()])
def test_values_go_cannot_write_from_these_types_are_refused(value: Any) -> None:
    with pytest.raises(GoJSONError):
        marshal(value)


# --- reading --------------------------------------------------------------------------------------------


def test_decode_reads_numbers_as_float64_or_as_literals() -> None:
    assert decode('{"a":1,"b":1.0,"c":1e3,"d":-0}') == {"a": 1.0, "b": 1.0, "c": 1000.0, "d": -0.0}
    assert marshal(decode('{"a":1,"b":1.0,"c":1e3,"d":-0}')) == '{"a":1,"b":1,"c":1000,"d":-0}'
    assert marshal(decode('{"b":1.0,"c":1e3}', use_number=True)) == '{"b":1.0,"c":1e3}'
    assert decode("1e-400") == 0.0  # an underflow reads as zero, no error
    with pytest.raises(GoJSONError, match="out of float64 range"):
        decode('{"a":1e400}')
    assert decode('{"a":1e400}', use_number=True) == {"a": Number("1e400")}


@pytest.mark.parametrize(
    "text",
    ["NaN", '{"a":Infinity}', "-Infinity", '\ufeff{"a":1}', '{"a":1} x', '{"a":1}{}', "", "   ", "[1,]"],
)
def test_decode_refuses_what_go_refuses(text: str) -> None:
    with pytest.raises(GoJSONError):
        decode(text)


def test_duplicate_keys_keep_the_last_value() -> None:
    assert decode('{"a":1,"b":2,"a":3}') == {"a": 3.0, "b": 2.0}


def test_lone_surrogate_escapes_read_as_replacement_characters() -> None:
    assert decode('"\\ud800\\u0041"') == "\ufffdA"
    assert decode('"\\udc00"') == "\ufffd"
    assert decode('"\\ud83d\\ude00"') == "😀"
    assert decode('["\\ud800\\ud83d\\ude00"]') == ["\ufffd😀"]
    # Keys repaired in document order: the later of the colliding keys wins, as Go assigns them.
    assert decode('{"\\ud800":1,"\\udc00":2,"\\ud800":3}') == {"\ufffd": 3.0}
    assert marshal(decode('{"k":"\\ud800"}')) == '{"k":"\ufffd"}'


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"plain", "plain"),
        (b"\xff", "\ufffd"),
        (b"a\xe2\x82b", "a\ufffd\ufffdb"),  # a truncated sequence: one U+FFFD per byte, as Go
        (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),  # an encoded surrogate
        (b"\xc0\x80", "\ufffd\ufffd"),  # an overlong encoding
        (b"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"),  # above U+10FFFF
        (b"\xe2\x82", "\ufffd\ufffd"),
        (b"\xc3\xa9\xff\xc3\xa9", "é\ufffdé"),
    ],
)
def test_invalid_utf8_becomes_one_replacement_per_byte(data: bytes, expected: str) -> None:
    assert go_utf8_decode(data) == expected


def test_decode_of_bytes_repairs_invalid_utf8_inside_strings() -> None:
    assert decode(b'{"p":"a\xe2\x82b"}') == {"p": "a\ufffd\ufffdb"}
    assert marshal_bytes(decode(b'{"p":"\xff"}')) == b'{"p":"\xef\xbf\xbd"}'
    with pytest.raises(GoJSONError):
        decode(b'{"p":1}\xff')


def test_decode_first_reads_one_value_of_a_stream() -> None:
    assert decode_first('  {"a":1} {"b":2}', use_number=True) == ({"a": Number("1")}, ' {"b":2}')
    with pytest.raises(GoJSONError, match="EOF"):
        decode_first(" \n")


@pytest.mark.parametrize(
    ("rest", "fills"),
    [
        ("", False),
        ("  \n", False),
        ("{}", True),
        (' {"x":1}', True),
        ("null", True),
        ("nullx", True),  # the value is complete before the junk
        ("[1]", False),
        ('"s"', False),
        ("5", False),
        ("true", False),
        ("x", False),
        ('{"a":', False),
    ],
)
def test_a_second_decode_into_an_empty_struct(rest: str, fills: bool) -> None:
    assert decodes_as_empty_struct(rest) is fills


def test_to_float64_values_locates_an_overflow() -> None:
    assert to_float64_values({"a": [1, Number("2.50")], "b": "\ud800"}) == {"a": [1.0, 2.5], "b": "\ufffd"}
    with pytest.raises(GoJSONError) as caught:
        to_float64_values({"a": [0, 10**400]})
    assert caught.value.pointer == "/a/1"
    with pytest.raises(GoJSONError) as caught:
        to_float64_values({"x/y": math.inf})
    assert caught.value.pointer == "/x~1y"


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_decode_reads_back_what_marshal_writes(value: Any) -> None:
    expected = to_float64_values(value)
    assert decode(marshal(value)) == expected
    assert marshal(decode(marshal(value))) == marshal(expected)
