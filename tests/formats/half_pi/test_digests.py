"""Half-Pi digests (spec §6): each test states the exact preimage as a literal and hashes that literal."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from sessaudit.formats.half_pi.spec.approval_digests import (
    LOCAL_DIGEST_PATTERN,
    REMOTE_DIGEST_PATTERN,
    canonical_args,
    canonical_raw_args,
    display_args_digest,
    local_approval_digest,
    local_approval_digest_from_raw,
    remote_approval_digest,
    remote_approval_digest_from_use_hand,
    remote_approval_preimage,
    text_digest,
)
from sessaudit.formats.half_pi.spec.compaction_digests import (
    contract_digest,
    display_output_fields,
    display_streams,
    framed_digest,
    manual_rebase_key,
    normalize_reason,
    output_fields,
    source_digest,
    summary_digest,
    tool_projection,
    tool_projection_problem,
)
from sessaudit.formats.half_pi.spec.gojson import GoJSONError
from sessaudit.formats.half_pi.spec.outbox_payloads import compact_event_payload, security_decision_payload


def sha(preimage: str | bytes) -> str:
    return hashlib.sha256(preimage.encode("utf-8") if isinstance(preimage, str) else preimage).hexdigest()


# --- §6.2 local approvals -------------------------------------------------------------------------------

WRITE_ARGS = {"path": "notes/a&b.txt", "content": "<b>hi</b>\n", "mode": 420.0, "confirm": True}
WRITE_PREIMAGE = '{"content":"\\u003cb\\u003ehi\\u003c/b\\u003e\\n","mode":420,"path":"notes/a\\u0026b.txt"}'


def test_local_digest_is_sha256_of_sorted_go_json_without_confirm() -> None:
    assert canonical_args("write_file", WRITE_ARGS) == WRITE_PREIMAGE
    digest = local_approval_digest("write_file", WRITE_ARGS)
    assert digest == "sha256:" + sha(WRITE_PREIMAGE)
    assert LOCAL_DIGEST_PATTERN.match(digest) and len(digest) == 71


def test_spec_number_examples_normalise_through_float64() -> None:
    # §6.2: `1.0` becomes `1`, `1e3` becomes `1000`, `12345678901234567890` becomes `12345678901234567000`.
    args = {"a": 1.0, "b": 1e3, "c": 12345678901234567890, "d": 2**53 + 1, "e": 0.1, "f": 1e-7, "g": 1e21}
    expected = '{"a":1,"b":1000,"c":12345678901234567000,"d":9007199254740992,"e":0.1,"f":1e-7,"g":1e+21}'
    assert canonical_args("calc", args) == expected


def test_empty_or_absent_args_digest_as_an_empty_object() -> None:
    assert canonical_args("list", None) == canonical_args("list", {}) == "{}"
    assert local_approval_digest("list", None) == "sha256:" + sha("{}")


def test_use_hand_owns_confirm_and_needs_it_boolean() -> None:
    assert canonical_args("use_hand", {"tool": "ls", "args": {}, "confirm": True}) == (
        '{"args":{},"confirm":true,"tool":"ls"}'
    )
    with pytest.raises(GoJSONError, match="confirm must be boolean"):
        canonical_args("use_hand", {"tool": "ls", "args": {}, "confirm": "yes"})
    # Other tools lose confirm whatever its type: the agent deletes it before the runtime looks.
    assert canonical_args("bash", {"command": "ls", "confirm": "yes"}) == '{"command":"ls"}'


def test_nested_values_and_unicode_in_args() -> None:
    args = {"z": [{"é": "\u2028", "a": None}], "A": "😀", "n": -0.0}
    assert canonical_args("t", args) == '{"A":"😀","n":-0,"z":[{"a":null,"é":"\\u2028"}]}'


@pytest.mark.parametrize(
    ("tool", "raw", "expected"),
    [
        (
            "bash",
            '{"command":"ls && echo <ok>","timeout":30.0,"confirm":true}',
            '{"command":"ls \\u0026\\u0026 echo \\u003cok\\u003e","timeout":30}',
        ),
        ("bash", ' {"b" : 1e3 , "a" : [ 1.50 ] } ', '{"a":[1.5],"b":1000}'),
        ("bash", '{"a":1,"a":2}', '{"a":2}'),
        ("bash", "", "{}"),
        ("bash", "{}", "{}"),
        ("bash", '{"confirm":"yes"}', "{}"),
        ("use_hand", '{"confirm":true,"tool":"ls","args":{}}', '{"args":{},"confirm":true,"tool":"ls"}'),
        # A number beyond float64 makes the agent's Unmarshal fail: the raw text goes on, numbers verbatim.
        ("bash", '{"b":1.0,"a":1e400}', '{"a":1e400,"b":1.0}'),
        # Trailing text fails Unmarshal; the runtime's stream decoder only refuses a second object or null.
        ("bash", '{"a":1.0} x', '{"a":1.0}'),
        ("bash", '{"a":1.0} [2]', '{"a":1.0}'),
        ("bash", '{"a":"\\ud800"}', '{"a":"\ufffd"}'),
    ],
)
def test_raw_args_follow_the_agent_and_the_runtime(tool: str, raw: str, expected: str) -> None:
    assert canonical_raw_args(tool, raw) == expected
    assert local_approval_digest_from_raw(tool, raw) == "sha256:" + sha(expected)


@pytest.mark.parametrize(
    ("tool", "raw"),
    [
        ("bash", "null"),
        ("bash", "[1]"),
        ("bash", '"text"'),
        ("bash", "   "),
        ("bash", '{"a":1} {"b":2}'),
        ("bash", '{"a":1} null'),
        ("bash", '{"a":1e400,"confirm":"yes"}'),  # the fallback path reaches the runtime's boolean check
        ("use_hand", '{"tool":"ls","args":{},"confirm":1}'),
        ("bash", "{"),
    ],
)
def test_raw_args_half_pi_refuses_have_no_digest(tool: str, raw: str) -> None:
    assert canonical_raw_args(tool, raw) is None
    assert local_approval_digest_from_raw(tool, raw) is None


def test_raw_bytes_with_invalid_utf8_digest_with_replacement_characters() -> None:
    assert canonical_raw_args("bash", b'{"p":"a\xffb"}') == '{"p":"a\ufffdb"}'
    assert local_approval_digest_from_raw("bash", b'{"p":"a\xffb"}') == "sha256:" + sha(
        b'{"p":"a\xef\xbf\xbdb"}'
    )


def test_raw_and_parsed_args_agree() -> None:
    raw = '{"content":"<b>hi</b>\\n","path":"notes/a&b.txt","mode":420,"confirm":true}'
    assert local_approval_digest_from_raw("write_file", raw) == local_approval_digest(
        "write_file", WRITE_ARGS
    )


def test_display_digest_is_the_agent_cleaned_args() -> None:
    assert display_args_digest("use_hand", '{"tool":"ls","args":{"n":1.0},"confirm":true}') == (
        "sha256:" + sha('{"args":{"n":1},"confirm":true,"tool":"ls"}')
    )
    assert display_args_digest("bash", '{"a":1e400}') == "sha256:" + sha('{"a":1e400}')


# --- §6.3 remote approvals ------------------------------------------------------------------------------

RUN = "0123456789abcdef"
INNER = {"cmd": "make && make test", "timeout": 1.0, "confirm": True}
FOREGROUND = (
    '{"run_id":"0123456789abcdef","hand_id":"laptop","tool":"exec_command",'
    '"args":{"cmd":"make \\u0026\\u0026 make test","timeout":1}}'
)
BACKGROUND = (
    '{"run_id":"0123456789abcdef","hand_id":"laptop","tool":"exec_command",'
    '"args":{"cmd":"make \\u0026\\u0026 make test","timeout":1},'
    '"background":true,"task_id":"0123456789abcdef","max_runtime_ms":60000}'
)


def test_remote_digest_is_bare_hex_over_the_fixed_order_struct() -> None:
    assert remote_approval_preimage(RUN, "laptop", "exec_command", INNER) == FOREGROUND
    digest = remote_approval_digest(RUN, "laptop", "exec_command", INNER)
    assert digest == sha(FOREGROUND)
    assert REMOTE_DIGEST_PATTERN.match(digest)


def test_background_runs_add_background_task_id_and_max_runtime() -> None:
    assert remote_approval_preimage(RUN, "laptop", "exec_command", INNER, 60000) == BACKGROUND
    assert remote_approval_digest(RUN, "laptop", "exec_command", INNER, 60000) == sha(BACKGROUND)


def test_remote_inner_confirm_must_be_boolean() -> None:
    with pytest.raises(GoJSONError, match="confirm must be boolean"):
        remote_approval_digest(RUN, "laptop", "exec_command", {"confirm": "yes"})
    assert (
        remote_approval_preimage(RUN, "h", "t", {})
        == '{"run_id":"0123456789abcdef","hand_id":"h","tool":"t","args":{}}'
    )


def test_use_hand_raw_args_give_the_same_remote_digest() -> None:
    raw = (
        '{"tool":"exec_command","hand_id":"laptop",'
        '"args":{"cmd":"make && make test","timeout":1,"confirm":true}}'
    )
    assert remote_approval_digest_from_use_hand(raw, RUN) == sha(FOREGROUND)
    # The Hand comes from the session's active hand when the call names none.
    raw = '{"tool":"exec_command","confirm":true,"args":{"cmd":"make && make test","timeout":1.0}}'
    assert remote_approval_digest_from_use_hand(raw, RUN, active_hand="laptop") == sha(FOREGROUND)
    raw = (
        '{"tool":"exec_command","hand_id":"laptop","background":true,"task_timeout_ms":6e4,'
        '"args":{"cmd":"make && make test","timeout":1}}'
    )
    assert remote_approval_digest_from_use_hand(raw, RUN) == sha(BACKGROUND)


@pytest.mark.parametrize(
    "raw",
    [
        '{"tool":"exec_command","args":{}}',  # no Hand named and no active Hand
        '{"tool":"","hand_id":"h","args":{}}',
        '{"hand_id":"h","args":{}}',
        '{"tool":"t","hand_id":"h"}',
        '{"tool":"t","hand_id":"h","args":[]}',
        '{"tool":"t","hand_id":"h","args":{},"extra":1}',
        '{"tool":"t","hand_id":"h","args":{},"timeout_ms":1.5}',
        '{"tool":"t","hand_id":"h","args":{},"background":true}',
        '{"tool":"t","hand_id":"h","args":{},"background":true,"task_timeout_ms":86400001}',
        '{"tool":"t","hand_id":"h","args":{},"background":true,"task_timeout_ms":0}',
        '{"tool":"t","hand_id":"h","args":{"confirm":"yes"}}',
        '{"tool":"t","hand_id":null,"args":{}}',
    ],
)
def test_use_hand_calls_half_pi_refuses_have_no_remote_digest(raw: str) -> None:
    assert remote_approval_digest_from_use_hand(raw, RUN) is None


# --- §6.4 text digests ----------------------------------------------------------------------------------


def test_text_digests_hash_the_utf8_text() -> None:
    assert text_digest("héllo") == "sha256:" + sha(b"h\xc3\xa9llo")
    assert text_digest("") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert text_digest(b"a\xff".decode("utf-8", "surrogateescape")) == "sha256:" + sha(b"a\xff")


# --- §6.5 tool projections ------------------------------------------------------------------------------

OK_DIGEST = "sha256:2689367b205c16ce32ed4200942b8b8b1e262dfc70d9bc9fbc77c49699a4f1df"  # sha256("ok")


def test_tool_projection_is_the_sorted_struct() -> None:
    assert output_fields("ok") == (2, OK_DIGEST)
    expected = (
        '{"facts":{"count":3,"path":"a\\u0026b"},"output_bytes":2,"output_digest":"' + OK_DIGEST + '",'
        '"reason_category":"","success":true,"tool":"read_file","version":"compact-tool-v1"}'
    )
    assert tool_projection("read_file", "ok", success=True, facts={"path": "a&b", "count": 3}) == expected
    assert tool_projection_problem(expected) is None


def test_failed_projection_normalises_its_reason_and_oversized_facts_are_dropped() -> None:
    assert normalize_reason(True, "denied") == ""
    assert normalize_reason(False, "denied") == "denied"
    assert normalize_reason(False, "boom") == "failed"
    text = tool_projection("bash", "ok", success=False, reason_category="boom", facts={"big": "x" * 5000})
    assert text == (
        '{"facts":{},"output_bytes":2,"output_digest":"' + OK_DIGEST + '",'
        '"reason_category":"failed","success":false,"tool":"bash","version":"compact-tool-v1"}'
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a":1.0,"b":[true,null]}', None),  # UseNumber: the literal 1.0 is canonical
        ("{}", None),
        ('{"b":1,"a":2}', "not canonical"),
        ('{"a": 1}', "not canonical"),
        ('{"a":"\\u00e9"}', "not canonical"),
        ('{"a":"\\/"}', "not canonical"),
        ('{"a":"<"}', "not canonical"),
        ('{"a":1,"a":1}', "not canonical"),
        ("{} ", "not canonical"),
        ("[]", "not a JSON object"),
        ("null", "not a JSON object"),
        ('{"a":1}{}', "more than one JSON value"),
        ("{", "not JSON"),
        ('{"a":"' + "x" * 4090 + '"}', "over the 4096-byte limit"),
    ],
)
def test_projection_problems_as_the_store_sees_them(text: str, problem: str | None) -> None:
    found = tool_projection_problem(text)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_display_output_digest_covers_stdout_then_stderr() -> None:
    assert display_streams("same", "same") == ("", "same")
    assert display_streams("out", "") == ("out", "")
    assert display_output_fields("ab", "c") == (3, "sha256:" + sha("abc"))


# --- §6.6 compaction digests ----------------------------------------------------------------------------


def test_summary_digest_frames_each_field_with_its_byte_length() -> None:
    preimage = (
        b"\x00\x00\x00\x00\x00\x00\x00\x1ahalf-pi:compact-summary:v1\x00\x00\x00\x00\x00\x00\x00\x03S\xc3\xa9"
    )
    assert summary_digest("Sé") == "sha256:" + sha(preimage)
    assert framed_digest() == "sha256:" + sha(b"")


MESSAGES: list[dict[str, Any]] = [
    {
        "seq": 1,
        "role": "user",
        "content": "hi",
        "request_id": "r1",
        "tool_id": "",
        "tool_calls": "null",
        "compact_projection": "",
    },
    {
        "seq": 2,
        "role": "assistant",
        "content": "",
        "request_id": "r1",
        "tool_id": "",
        "tool_calls": "[]",
        "compact_projection": "",
    },
]


def test_source_digest_frames_the_session_range_and_each_message() -> None:
    def field(text: bytes) -> bytes:
        return len(text).to_bytes(8, "big") + text

    preimage = b"".join(
        field(part)
        for part in (
            b"half-pi:compact-source:v1",
            b"s1",
            b"1",
            b"2",
            b"1",
            b"user",
            b"hi",
            b"r1",
            b"",
            b"null",
            b"",
            b"2",
            b"assistant",
            b"",
            b"r1",
            b"",
            b"[]",
            b"",
        )
    )
    assert preimage[:8] == b"\x00\x00\x00\x00\x00\x00\x00\x19"
    assert source_digest("s1", 2, MESSAGES) == "sha256:" + sha(preimage)


@pytest.mark.parametrize(
    ("to_seq", "messages"),
    [(3, MESSAGES), (1, MESSAGES), (2, MESSAGES[1:]), (2, [MESSAGES[0], MESSAGES[0]]), (0, [])],
)
def test_source_digest_needs_exactly_seq_1_to_to_seq(to_seq: int, messages: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError):
        source_digest("s1", to_seq, messages)


def test_contract_digest_and_manual_rebase_key() -> None:
    source = "sha256:" + "ab" * 32
    preimage = (
        b"\x00\x00\x00\x00\x00\x00\x00\x1bhalf-pi:compact-contract:v1"
        + b"\x00\x00\x00\x00\x00\x00\x00\x47"
        + source.encode()
        + b"\x00\x00\x00\x00\x00\x00\x00\x11compact-source-v1"
        + b"\x00\x00\x00\x00\x00\x00\x00\x0acompact-v1"
        + b"\x00\x00\x00\x00\x00\x00\x00\x07default"
        + b"\x00\x00\x00\x00\x00\x00\x00\x04full"
        + b"\x00\x00\x00\x00\x00\x00\x00\x00"
        + b"\x00\x00\x00\x00\x00\x00\x00\x00"
    )
    assert contract_digest(source, "compact-source-v1", "compact-v1", "default", "full", "", "") == (
        "sha256:" + sha(preimage)
    )
    key = (
        b"\x00\x00\x00\x00\x00\x00\x00\x20half-pi:compact-manual-rebase:v1"
        + b"\x00\x00\x00\x00\x00\x00\x00\x03p:1"
        + b"\x00\x00\x00\x00\x00\x00\x00\x02r9"
    )
    assert manual_rebase_key("p:1", "r9") == "sha256:" + sha(key)


# --- §6.7 outbox payloads -------------------------------------------------------------------------------

DECISION_ROW: dict[str, Any] = {
    "id": "e" * 32,
    "trace_id": "t" * 32,
    "span_id": "s" * 32,
    "request_id": "<req&1>",
    "conversation_id": "c1",
    "group_id": "g1",
    "principal_id": "",
    "node_id": "mind",
    "action_kind": "tool",
    "resource_name": "bash",
    "target_node": "",
    "input_digest": "sha256:" + "0" * 64,
    "risk_labels": '["fs:write","net"]',
    "decision": "succeeded",
    "reason_code": "",
    "rule_id": "",
    "policy_version": "v1",
    "approval_id": "a1",
    "run_id": "",
    "details_redacted": '{"duration_ms":12,"execution_outcome":"succeeded"}',
    "created_at": 1700000000000,
}
DECISION_PAYLOAD = (
    '{"action_kind":"tool","approval_id":"a1","conversation_id":"c1","decision":"succeeded",'
    '"details":{"duration_ms":12,"execution_outcome":"succeeded"},"event_id":"' + "e" * 32 + '",'
    '"group_id":"g1","input_digest":"sha256:' + "0" * 64 + '","node_id":"mind","policy_version":"v1",'
    '"principal_id":"","reason_code":"","request_id":"\\u003creq\\u00261\\u003e","resource_name":"bash",'
    '"risk_labels":["fs:write","net"],"rule_id":"","run_id":"","span_id":"' + "s" * 32 + '",'
    '"target_node":"","trace_id":"' + "t" * 32 + '"}'
)


def test_security_decision_payload_is_rebuilt_byte_for_byte() -> None:
    assert security_decision_payload(DECISION_ROW) == DECISION_PAYLOAD
    parsed = dict(
        DECISION_ROW,
        risk_labels=["fs:write", "net"],
        details_redacted={"duration_ms": 12, "execution_outcome": "succeeded"},
    )
    assert security_decision_payload(parsed) == DECISION_PAYLOAD


def test_security_decision_payload_keeps_an_empty_details_object_and_label_list() -> None:
    row = dict(DECISION_ROW, risk_labels="[]", details_redacted="{}")
    assert '"details":{},' in security_decision_payload(row)
    assert '"risk_labels":[],' in security_decision_payload(row)
    with pytest.raises(GoJSONError):
        security_decision_payload(dict(DECISION_ROW, details_redacted="{"))


def test_compact_payloads_are_structs_in_field_order() -> None:
    started = {
        "trigger": "automatic",
        "from_seq": 1,
        "to_seq": 9,
        "generation_mode": "full",
        "source_digest": "sha256:x",
        "attempt": 1,
    }
    assert compact_event_payload("compact.started", started) == (
        '{"trigger":"automatic","from_seq":1,"to_seq":9,"generation_mode":"full","source_digest":"sha256:x",'
        '"attempt":1}'
    )
    failed = {
        "trigger": "manual",
        "reason": "provider_error",
        "duration_ms": 5,
        "retry_scheduled": False,
        "from_seq": 0,
        "to_seq": 4,
        "source_digest": "",
    }
    assert compact_event_payload("compact.failed", failed) == (
        '{"trigger":"manual","reason":"provider_error","duration_ms":5,"retry_scheduled":false,"to_seq":4}'
    )
    assert compact_event_payload("compact.requested", {"trigger": "automatic"}) == '{"trigger":"automatic"}'
    with pytest.raises(ValueError, match="no field"):
        compact_event_payload("compact.requested", {"trigger": "manual", "extra": 1})
    with pytest.raises(KeyError):
        compact_event_payload("compact.started", {"trigger": "manual"})
