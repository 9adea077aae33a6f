"""Credential secrets never leave the credential tables: no token or application key in any violation."""

from __future__ import annotations

import json
from pathlib import Path

from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.check.sql_checks import Violation
from tests.formats.half_pi.test_checks_history import build_scenario, opened_violations

TIME = "2026-07-30 12:00:00"
# (table, label, token, application key, scopes or None, created_at, valid)
CREDENTIALS = (
    (
        "hand_credentials",
        "hand-2",
        "0123456789abcdef0123456789abcdef",
        "fedcba9876543210fedcba9876543210",
        None,
        TIME,
        True,
    ),
    (
        "hand_credentials",
        "hand-3",
        "Secret-Token-Not-Hex-0123456789a",
        "DEADBEEFDEADBEEFDEADBEEFDEADBEEF",
        None,
        TIME,
        False,
    ),
    (
        "hand_credentials",
        "hand-4",
        "c0ffee00c0ffee00c0ffee00c0ffee00",
        "c0ffee00c0ffee00c0ffee00c0ffee00",
        None,
        TIME,
        False,
    ),
    (
        "hand_credentials",
        "/bad label",
        "abad1deaabad1deaabad1deaabad1dea",
        "5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e",
        None,
        TIME,
        False,
    ),
    (
        "hand_credentials",
        "hand-5",
        "short-secret-7f3a",
        "b16b00b5b16b00b5b16b00b5b16b00b5",
        None,
        TIME,
        False,
    ),
    (
        "face_tokens",
        "tablet",
        "feedfacefeedfacefeedfacefeedface",
        "0badc0de0badc0de0badc0de0badc0de",
        '["face:chat","feedfacefeedfacefeedfacefeedface"]',
        TIME,
        False,
    ),
    (
        "face_tokens",
        "laptop",
        "1337c0de1337c0de1337c0de1337c0de",
        "d15ea5e0d15ea5e0d15ea5e0d15ea5e0",
        '["face:approve","face:chat"]',
        "yesterday",
        False,
    ),
    (
        "face_tokens",
        "watch",
        "a11ce0b0a11ce0b0a11ce0b0a11ce0b0",
        "0ddba11e0ddba11e0ddba11e0ddba11e",
        '["face:chat"]',
        TIME,
        True,
    ),
)
LEGACY_TOKEN = "legacy-plaintext-hand-token-0042"


def _output_text(violations: list[Violation]) -> str:
    parts = []
    for item in violations:
        parts += [item.message, repr(item), json.dumps(item.evidence, ensure_ascii=False, default=str)]
    return "\n".join(parts)


def _fragments(secret: str, size: int = 12) -> set[str]:
    """The secret, its lowercase form and every `size`-character piece of it."""
    pieces = {secret, secret.lower()}
    pieces.update(secret[index : index + size] for index in range(len(secret) - size + 1))
    pieces.update(piece.lower() for piece in list(pieces))
    return pieces


def test_no_secret_appears_in_any_violation(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=5)
    build_scenario(builder)
    for table, label, token, key, scopes, created, _ in CREDENTIALS:
        columns = "label, token, application_key, created_at" + (", scopes" if scopes is not None else "")
        values = (label, token, key, created) + ((scopes,) if scopes is not None else ())
        marks = ", ".join("?" for _ in values)
        builder.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)
    builder.execute(
        "INSERT INTO hand_tokens (label, token, created_at) VALUES ('old', ?, ?)", (LEGACY_TOKEN, TIME)
    )
    # other findings beside the credential ones, so that messages of every kind are searched
    builder.execute("UPDATE messages SET content = 'edited' WHERE rowid = 1")
    builder.execute("UPDATE session_groups SET work_dir = '/elsewhere' WHERE rowid = 1")
    secrets = [
        str(value)
        for row in builder.connection.execute(
            "SELECT token, application_key FROM hand_credentials UNION ALL"
            " SELECT token, application_key FROM face_tokens UNION ALL SELECT token, '' FROM hand_tokens"
        )
        for value in row
        if value
    ]
    assert len(secrets) == 2 * (len(CREDENTIALS) + 2) + 1  # ours, the scenario's hand-1 and phone, legacy
    path = builder.finish().path

    violations = opened_violations(path, tmp_path)

    text = _output_text(violations)
    for secret in secrets:
        for fragment in _fragments(secret):
            assert fragment not in text, "a credential secret leaked into a violation"
    flagged = {
        (item.table, (item.evidence or {}).get("label")) for item in violations if item.rule == "SA624"
    }
    expected = {
        (table, label if not label.startswith("/") else None)
        for table, label, *_, valid in CREDENTIALS
        if not valid
    }
    assert flagged == expected
    assert {item.rule for item in violations} >= {"SA609", "SA619", "SA624"}
    credential_messages = [item.message for item in violations if item.rule == "SA624"]
    assert any("token and application_key are the same" in message for message in credential_messages)
    assert any("not shown" in message for message in credential_messages)
