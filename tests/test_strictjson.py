"""Strict JSON of one line: every check of tiny-agent §3, in order, with exact columns and pointers."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings, strategies

from sessaudit.strictjson import MAX_DEPTH, LineProblem, _Locator, decode_line, loads_strict


def _problem(data: bytes, *, strip_bom: bool = False) -> LineProblem:
    with pytest.raises(LineProblem) as caught:
        decode_line(data, strip_bom=strip_bom)
    return caught.value


def _where(data: bytes, *, strip_bom: bool = False) -> tuple[str, int | None, str | None]:
    problem = _problem(data, strip_bom=strip_bom)
    return problem.rule, problem.column, problem.pointer


# --- the checks of decode_line, one by one ---------------------------------------------------------


def test_raw_utf8_encoded_surrogate_is_sa103() -> None:
    problem = _problem(b'{"a":"x\xed\xa0\x80"}')
    assert (problem.rule, problem.column, problem.pointer) == ("SA103", 7, None)
    assert "ED A0 80" in problem.message and "U+D800" in problem.message


def test_encoded_surrogate_wins_over_an_earlier_invalid_byte() -> None:
    # tiny-agent scans for surrogates before it decodes, so the later surrogate is what it reports.
    assert _where(b'{"a":"\xff","b":"\xed\xbf\xbf"}') == ("SA103", 14, None)


def test_ed_followed_by_a_non_continuation_byte_is_invalid_utf8_not_a_surrogate() -> None:
    assert _where(b'"\xed\xa0x"') == ("SA102", 1, None)


def test_invalid_utf8_reports_the_first_bad_byte() -> None:
    problem = _problem(b'{"caf\xc3\xa9":"\xc3("}')
    assert (problem.rule, problem.column) == ("SA102", 10)
    assert "C3" in problem.message


@pytest.mark.parametrize(
    ("data", "column"),
    [(b"\xff", 0), (b'"\xc0\xaf"', 1), (b'"\xf4\x90\x80\x80"', 1), (b'"abc\xe2\x82"', 4)],
)
def test_overlong_out_of_range_and_truncated_sequences_are_invalid_utf8(data: bytes, column: int) -> None:
    assert _where(data) == ("SA102", column, None)


def test_empty_line_is_sa104() -> None:
    assert _where(b"") == ("SA104", 0, None)


def test_line_ending_in_cr_is_sa105_at_the_cr() -> None:
    assert _where(b'{"a":1}\r') == ("SA105", 7, None)


def test_invalid_utf8_is_reported_before_the_cr() -> None:
    assert _where(b'"\xff"\r')[0] == "SA102"


def test_cr_between_tokens_is_whitespace() -> None:
    assert decode_line(b' \t{\r"a" :\t[1 ,\r2] } ') == {"a": [1, 2]}


def test_trailing_garbage_is_sa106_after_the_value() -> None:
    problem = _problem(b"[1,2] x")
    assert (problem.rule, problem.column, problem.pointer) == ("SA106", 6, None)
    assert "found 'x'" in problem.message


def test_duplicate_key_after_unescaping_is_sa107_at_the_second_key() -> None:
    problem = _problem(b'{"a":1,"\\u0061":2}')
    assert (problem.rule, problem.column, problem.pointer) == ("SA107", 7, "")
    assert problem.message == 'duplicate key "a" in top-level object'


def test_nested_duplicate_key_names_the_object_that_holds_it() -> None:
    problem = _problem(b'[{"kind":"record","record":{"kind":1,"k\\u0069nd":2}}]')
    assert (problem.rule, problem.column, problem.pointer) == ("SA107", 37, "/0/record")
    assert problem.message == 'duplicate key "kind" in object at /0/record'


def test_escaped_solidus_key_is_the_same_key_and_pointer_tokens_are_escaped() -> None:
    assert _where(b'{"a/b~":{"c/":1,"c\\/":2}}') == ("SA107", 16, "/a~1b~0")


def test_duplicate_key_column_counts_bytes_not_characters() -> None:
    assert _where('{"é":1,"é":2}'.encode()) == ("SA107", 8, "")


def test_the_same_key_in_sibling_objects_is_fine() -> None:
    assert decode_line(b'[{"id":1},{"id":2}]') == [{"id": 1}, {"id": 2}]


@pytest.mark.parametrize(
    ("data", "column", "pointer"),
    [
        (b'"\\ud800"', 1, ""),
        (b'{"x":["a","\\udc00"]}', 11, "/x/1"),
        (b'{"m":"\\ud800\\u0041"}', 6, "/m"),
        (b'{"m":"\\uDBFF\\uDBFF"}', 6, "/m"),
        (b'{"\\ud800":1}', 2, ""),
    ],
)
def test_escaped_lone_surrogate_is_sa108(data: bytes, column: int, pointer: str) -> None:
    assert _where(data) == ("SA108", column, pointer)


def test_an_escaped_surrogate_pair_is_one_character() -> None:
    assert decode_line(b'"\\ud83d\\ude00 \\uD83D\\uDE00"') == "\U0001f600 \U0001f600"


def test_an_escaped_backslash_before_ud800_is_not_an_escape() -> None:
    assert decode_line(b'"\\\\ud800"') == "\\ud800"


def test_a_lone_escape_after_an_escaped_backslash_is_still_found() -> None:
    # The text \\ud800 looks like a high surrogate escape before \udc00, but it is a backslash and text.
    assert _where(b'{"a":"\\\\ud800\\udc00"}') == ("SA108", 13, "/a")


@pytest.mark.parametrize(
    ("data", "column", "pointer", "fragment"),
    [
        (b'{"a":"b\x01"}', 7, "/a", "raw control character U+0001"),
        (b'["\t"]', 2, "/0", "raw control character U+0009"),
        (b'"\\x"', 1, "", "invalid escape '\\x'"),
        (b'"\\u12"', 1, "", "4 hex digits"),
        (b'"abc', 0, "", "unterminated string"),
        (b"NaN", 0, "", "NaN"),
        (b"[1,Infinity]", 3, "/1", "Infinity"),
        (b'{"a":-Infinity}', 5, "/a", "-Infinity"),
        (b"01", 1, None, "end of the line"),
        (b"[1.]", 2, "", "',' or ']'"),
        (b"[.5]", 1, "/0", "expected a JSON value"),
        (b"+1", 0, "", "expected a JSON value"),
        (b"[1,]", 3, "/1", "expected a JSON value"),
        (b'{"a":1,}', 7, "", "expected a string key"),
        (b'{"a" 1}', 5, "", "expected ':'"),
        (b'{"a":[1 2]}', 8, "/a", "',' or ']'"),
        (b"tru", 0, "", "expected a JSON value"),
        (b"'a'", 0, "", "expected a JSON value"),
        ("\u0661".encode(), 0, "", "U+0661"),
        (b"\xef\xbb\xbf{}", 0, "", "byte order mark"),
        (b" ", 1, "", "the end of the line"),
    ],
)
def test_non_json_is_sa106(data: bytes, column: int, pointer: str | None, fragment: str) -> None:
    problem = _problem(data)
    assert (problem.rule, problem.column, problem.pointer) == ("SA106", column, pointer)
    assert fragment in problem.message


def test_the_first_problem_in_text_order_is_reported() -> None:
    # The C decoder would meet the syntax error first; tiny-agent meets the duplicate key first.
    assert _where(b'{"a":1,"a":2,x}')[0] == "SA107"
    assert _where(b'{"a":"\\ud800","a":2}')[0] == "SA108"


def test_deep_nesting_is_the_limit_rule_sa011_naming_the_depth_and_never_a_crash() -> None:
    problem = _problem(b"[" * 100_000)
    assert (problem.rule, problem.column) == ("SA011", MAX_DEPTH)
    assert "100000" in problem.message and str(MAX_DEPTH) in problem.message


def test_valid_json_nested_past_the_limit_is_rejected_and_at_the_limit_accepted() -> None:
    assert decode_line(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    deep = b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1)
    problem = _problem(deep)
    assert (problem.rule, problem.column, problem.pointer) == ("SA011", 5 * MAX_DEPTH, "/a" * MAX_DEPTH)
    assert str(MAX_DEPTH + 1) in problem.message


def test_many_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"content": "[{" * 5_000})
    assert decode_line(text.encode()) == {"content": "[{" * 5_000}


def test_recursion_limit_of_a_deep_caller_is_the_limit_rule_not_a_crash() -> None:
    line = b"[" * 400 + b"]" * 400
    limit = sys.getrecursionlimit()

    def descend(depth: int) -> LineProblem | None:
        if depth:
            return descend(depth - 1)
        try:
            decode_line(line)
        except LineProblem as problem:
            return problem
        return None

    problem = descend(limit - 300)
    assert problem is not None and problem.rule == "SA011" and "400" in problem.message


# --- the byte order mark ---------------------------------------------------------------------------


def test_strip_bom_drops_the_mark_and_columns_still_count_from_the_first_byte() -> None:
    assert decode_line(b'\xef\xbb\xbf{"a":1}', strip_bom=True) == {"a": 1}
    assert _where(b'\xef\xbb\xbf{"a":1,"a":2}', strip_bom=True) == ("SA107", 10, "")
    assert _where(b"\xef\xbb\xbf[1,2] x", strip_bom=True) == ("SA106", 9, None)
    assert _where(b"\xef\xbb\xbf", strip_bom=True) == ("SA104", 3, None)


def test_strip_bom_without_a_mark_changes_nothing() -> None:
    assert decode_line(b"[1]", strip_bom=True) == [1]


# --- values ---------------------------------------------------------------------------------------


def test_numbers_keep_their_token_kind() -> None:
    value = decode_line(b"[1, -0, 1.0, 1e0, 1E+2, -2.5e-3, 9007199254740993, 1e400]")
    assert value == [1, 0, 1.0, 1.0, 100.0, -0.0025, 9007199254740993, float("inf")]
    assert [type(item) for item in value] == [int, int, float, float, float, float, int, float]


def test_an_integer_token_too_long_for_python_is_read_as_javascript_reads_it() -> None:
    assert decode_line(b"[" + b"9" * 5_000 + b", -" + b"1" * 5_000 + b", 7]") == [
        float("inf"),
        float("-inf"),
        7,
    ]


def test_other_literals_and_escapes() -> None:
    data = b'{"t":true,"f":false,"n":null,"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\xe2\x80\xa8\x7f"}'
    assert decode_line(data) == {"t": True, "f": False, "n": None, "s": '"\\/\b\f\n\r\té\u2028\x7f'}


def test_loads_strict_applies_the_same_rules_to_a_str() -> None:
    assert loads_strict('{"a":[1,2.0]}') == {"a": [1, 2.0]}
    with pytest.raises(LineProblem) as caught:
        loads_strict('{"é":1,"é":2}')
    assert (caught.value.rule, caught.value.column) == ("SA107", 8)


def test_loads_strict_rejects_raw_surrogate_code_points() -> None:
    with pytest.raises(LineProblem) as caught:
        loads_strict('{"a":"x\ud800"}')
    assert (caught.value.rule, caught.value.column, caught.value.pointer) == ("SA108", 7, "/a")


def test_line_problem_carries_its_fields() -> None:
    problem = LineProblem("SA106", "expected a JSON value", 3, "/a")
    assert (problem.rule, problem.message, problem.column, problem.pointer) == (
        "SA106",
        "expected a JSON value",
        3,
        "/a",
    )
    assert str(problem) == "SA106: expected a JSON value"


# --- properties -------------------------------------------------------------------------------------

_JSON_VALUES = strategies.recursive(
    strategies.none()
    | strategies.booleans()
    | strategies.integers()
    | strategies.floats(allow_nan=False, allow_infinity=False)
    | strategies.text(),
    lambda children: (
        strategies.lists(children, max_size=4)
        | strategies.dictionaries(strategies.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(value=_JSON_VALUES, ensure_ascii=strategies.booleans())
def test_any_json_document_decodes_to_its_value(value: Any, ensure_ascii: bool) -> None:
    assert decode_line(json.dumps(value, ensure_ascii=ensure_ascii).encode()) == value


_LINE_PIECES = strategies.sampled_from(
    [
        "{", "}", "[", "]", ",", ":", " ", "\r", '"a"', '"\\u0061"', '"b"', "1", "-0", "1.5", "1e5", "01",
        "true", "nul", "NaN", '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"\x01"', '"\\x"', '"\\/"', "é",
    ]
)  # fmt: skip


@settings(max_examples=400)
@given(pieces=strategies.lists(_LINE_PIECES, min_size=1, max_size=12))
def test_fast_path_and_locator_agree(pieces: list[str]) -> None:
    text = "".join(pieces)
    try:
        loads_strict(text)
        accepted = True
    except LineProblem:
        accepted = False
    try:
        _Locator(text, 0).run()
        located = True
    except LineProblem:
        located = False
    assert accepted == located


_STRING_PIECES = strategies.sampled_from(
    [
        "a",
        "u",
        "d800",
        "\\ud800",
        "\\uDBFF",
        "\\udc00",
        "\\uDFFF",
        "\\ud83d",
        "\\ude00",
        "\\\\",
        "\\u0041",
        "é",
    ]
)


@settings(max_examples=400)
@given(pieces=strategies.lists(_STRING_PIECES, max_size=8))
def test_surrogate_triggers_never_miss_a_lone_surrogate(pieces: list[str]) -> None:
    text = '{"k":["' + "".join(pieces) + '"]}'
    try:
        _Locator(text, 0).run()
        located = None
    except LineProblem as problem:
        located = problem.rule
    try:
        decode_line(text.encode())
        decoded = None
    except LineProblem as problem:
        decoded = problem.rule
    assert decoded == located


@given(data=strategies.binary(max_size=200), strip_bom=strategies.booleans())
def test_decode_line_raises_nothing_but_line_problem(data: bytes, strip_bom: bool) -> None:
    try:
        decode_line(data, strip_bom=strip_bom)
    except LineProblem as problem:
        assert problem.rule in {"SA102", "SA103", "SA104", "SA105", "SA106", "SA107", "SA108"}
        assert problem.column is not None and 0 <= problem.column <= len(data)


@given(
    data=strategies.lists(
        strategies.sampled_from(
            [b"{", b"}", b"[", b"]", b",", b":", b'"k"', b"1", b"\xed\xa0\x80", b"\\u", b'"', b"\xff"]
        )
    ).map(b"".join)
)
def test_structural_noise_raises_nothing_but_line_problem(data: bytes) -> None:
    try:
        decode_line(data)
    except LineProblem as problem:
        assert problem.column is not None and 0 <= problem.column <= len(data)
