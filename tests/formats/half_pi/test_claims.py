"""`--claims FILE`: loading with located errors, and each claim's digest against the stored one."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sessaudit.formats.half_pi.claims.claims_file import (
    Claim,
    ClaimsFileError,
    claim_digest,
    load_claims,
    match_claim,
    parse_claims,
)
from sessaudit.resources import load_schema

LOCAL = {"approval_id": "0b95aa0c1d2e3f40", "tool": "write_file", "args": {"path": "a.txt", "n": 1.0}}
LOCAL_PREIMAGE = '{"n":1,"path":"a.txt"}'
REMOTE = {
    "approval_id": "1c06bb1d2e3f4051",
    "tool": "exec_command",
    "args": {"cmd": "ls <dir>"},
    "run_id": "0123456789abcdef",
    "hand_id": "laptop",
}
REMOTE_PREIMAGE = (
    '{"run_id":"0123456789abcdef","hand_id":"laptop","tool":"exec_command",'
    '"args":{"cmd":"ls \\u003cdir\\u003e"}}'
)
BACKGROUND_PREIMAGE = (
    REMOTE_PREIMAGE[:-1] + ',"background":true,"task_id":"0123456789abcdef","max_runtime_ms":60000}'
)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "claims.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def problem(document: Any) -> ClaimsFileError:
    with pytest.raises(ClaimsFileError) as caught:
        parse_claims(document, source="claims.json")
    return caught.value


def test_the_schema_is_draft_2020_12_with_its_id() -> None:
    schema = load_schema("claims.v1.schema.json")
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://sessaudit.dev/schemas/claims.v1.schema.json"


def test_a_local_and_a_remote_claim_load_in_order(tmp_path: Path) -> None:
    background = dict(REMOTE, background={"max_runtime_ms": 60000})
    claims = load_claims(write(tmp_path, {"claims": [LOCAL, REMOTE, background]}))
    assert [claim.kind for claim in claims] == ["local", "remote", "remote"]
    assert [claim.pointer for claim in claims] == ["/claims/0", "/claims/1", "/claims/2"]
    assert claims[0] == Claim(
        "0b95aa0c1d2e3f40", "write_file", {"path": "a.txt", "n": 1.0}, pointer="/claims/0"
    )
    assert claims[2].max_runtime_ms == 60000 and claims[1].max_runtime_ms is None
    assert claim_digest(claims[0]) == "sha256:" + sha(LOCAL_PREIMAGE)
    assert claim_digest(claims[1]) == sha(REMOTE_PREIMAGE)
    assert claim_digest(claims[2]) == sha(BACKGROUND_PREIMAGE)


def test_an_empty_run_id_is_a_local_claim_and_an_empty_list_is_valid() -> None:
    (claim,) = parse_claims({"claims": [dict(LOCAL, run_id="")]})
    assert claim.kind == "local" and claim_digest(claim) == "sha256:" + sha(LOCAL_PREIMAGE)
    assert parse_claims({"claims": []}) == []


def test_an_integral_float_runtime_is_read_as_an_integer() -> None:
    (claim,) = parse_claims({"claims": [dict(REMOTE, background={"max_runtime_ms": 60000.0})]})
    assert claim.max_runtime_ms == 60000 and isinstance(claim.max_runtime_ms, int)
    assert claim_digest(claim) == sha(BACKGROUND_PREIMAGE)


def test_a_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"claims": [LOCAL]}).encode())
    assert len(load_claims(path)) == 1


def test_match_names_both_digests() -> None:
    (claim,) = parse_claims({"claims": [LOCAL]})
    stored = "sha256:" + sha(LOCAL_PREIMAGE)
    answer = match_claim(claim, stored)
    assert (
        answer.matches and answer.claimed_digest == answer.stored_digest == stored and answer.claim is claim
    )
    other = "sha256:" + sha('{"n":2,"path":"a.txt"}')
    answer = match_claim(claim, other)
    assert not answer.matches and answer.claimed_digest == stored and answer.stored_digest == other


def test_a_local_claim_never_matches_the_remote_form_of_a_digest() -> None:
    (claim,) = parse_claims({"claims": [LOCAL]})
    assert not match_claim(claim, sha(LOCAL_PREIMAGE)).matches


def test_a_remote_claim_with_the_wrong_hand_does_not_match() -> None:
    (claim,) = parse_claims({"claims": [dict(REMOTE, hand_id="desktop")]})
    assert not match_claim(claim, sha(REMOTE_PREIMAGE)).matches


@pytest.mark.parametrize(
    ("document", "pointer", "reason"),
    [
        ([], "", "expected object"),
        ({}, "", "'claims' is a required property"),
        ({"claims": [LOCAL], "extra": 1}, "/extra", "unknown key (known: claims)"),
        ({"claims": {}}, "/claims", "expected array"),
        ({"claims": [dict(LOCAL, args=[1])]}, "/claims/0/args", "expected object"),
        ({"claims": [{"tool": "t", "args": {}}]}, "/claims/0", "'approval_id' is a required property"),
        ({"claims": [dict(LOCAL, approval_id="")]}, "/claims/0/approval_id", "should be non-empty"),
        ({"claims": [dict(LOCAL, note="x")]}, "/claims/0/note", "unknown key (known: approval_id, tool,"),
        ({"claims": [dict(LOCAL, hand_id="laptop")]}, "/claims/0", "hand_id belongs to a remote claim"),
        ({"claims": [dict(LOCAL, background={"max_runtime_ms": 5})]}, "/claims/0", "background belongs"),
        ({"claims": [dict(LOCAL, run_id="", hand_id="h")]}, "/claims/0/run_id", "needs a non-empty run_id"),
        ({"claims": [dict(REMOTE, hand_id=None)]}, "/claims/0/hand_id", "expected string"),
        ({"claims": [{k: v for k, v in REMOTE.items() if k != "hand_id"}]}, "/claims/0", "needs the hand_id"),
        (
            {"claims": [dict(REMOTE, background={"max_runtime_ms": 86400001})]},
            "/claims/0/background/max_runtime_ms",
            "maximum",
        ),
        (
            {"claims": [dict(REMOTE, background={"max_runtime_ms": 1.5})]},
            "/claims/0/background/max_runtime_ms",
            "expected integer",
        ),
        ({"claims": [dict(REMOTE, background={})]}, "/claims/0/background", "'max_runtime_ms' is a required"),
        (
            {"claims": [LOCAL, dict(LOCAL, args={"a": {"b/c": [1, 10**400]}})]},
            "/claims/1/args/a/b~1c/1",
            "out of float64 range",
        ),
        (
            {"claims": [dict(REMOTE, args={"confirm": "yes"})]},
            "/claims/0/args/confirm",
            "confirm must be boolean",
        ),
        (
            {"claims": [dict(LOCAL, tool="use_hand", args={"confirm": 1})]},
            "/claims/0/args/confirm",
            "confirm must be boolean",
        ),
    ],
)
def test_bad_documents_are_located(document: Any, pointer: str, reason: str) -> None:
    error = problem(document)
    assert error.pointer == pointer, error
    assert reason in error.reason, error
    assert str(error).startswith("claims.json: ")


def test_every_problem_of_a_claims_file_is_reported_at_once_in_pointer_order() -> None:
    # unknown keys are refused, never ignored: a misspelt hand_id or run_id would change what is checked
    document = {
        "claims": [
            LOCAL,
            dict(REMOTE, hand="laptop", comment="x"),
            dict(LOCAL, tool="use_hand", args={"confirm": 1}),
            {"approval_id": "", "tool": "t", "args": {}},
            *[LOCAL] * 6,
            dict(LOCAL, tol="write_file"),
        ],
        "version": 1,
    }
    error = problem(document)
    assert [pointer for pointer, _ in error.problems] == [
        "/claims/1/comment",
        "/claims/1/hand",
        "/claims/2/args/confirm",
        "/claims/3/approval_id",
        "/claims/10/tol",
        "/version",
    ]
    assert error.problems[0][1].startswith("unknown key (known: approval_id, tool, args, run_id, hand_id")
    assert "confirm must be boolean" in error.problems[2][1]
    assert (error.pointer, error.reason) == error.problems[0]
    assert str(error).startswith("claims.json: 6 problems: /claims/1/comment: unknown key (known: ")
    assert "; /version: unknown key (known: claims)" in str(error)


def test_the_cli_names_every_problem_of_a_claims_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sessaudit.cli import app

    path = write(tmp_path, {"claims": [dict(LOCAL, runid="r1"), dict(REMOTE, hand_ID="x")]})
    session = tmp_path / "s.jsonl"
    session.write_bytes(b"")
    result = CliRunner().invoke(app, ["verify", str(session), "--no-config", "--claims", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"sessaudit: --claims: {path}: 2 problems: /claims/0/runid: unknown key")
    assert "; /claims/1/hand_ID: unknown key" in result.stderr


def test_a_local_claim_may_carry_a_non_boolean_confirm_which_is_dropped() -> None:
    (claim,) = parse_claims({"claims": [dict(LOCAL, args={"confirm": "yes", "n": 1})]})
    assert claim_digest(claim) == "sha256:" + sha('{"n":1}')


def test_files_that_are_not_json_or_not_utf8_or_missing(tmp_path: Path) -> None:
    with pytest.raises(ClaimsFileError, match="is not JSON"):
        load_claims(write(tmp_path, '{"claims": [}'))
    with pytest.raises(ClaimsFileError) as caught:
        load_claims(write(tmp_path, '{"claims": [], "claims": []}'))
    assert "is not JSON" in caught.value.reason
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"claims": [{"approval_id": "\xe9"}]}')
    with pytest.raises(ClaimsFileError, match="is not UTF-8"):
        load_claims(path)
    with pytest.raises(ClaimsFileError, match="cannot be read"):
        load_claims(tmp_path / "missing.json")
