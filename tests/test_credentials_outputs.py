"""Half-Pi credential secrets reach no output: report formats, seeds, baseline, stderr, DuckDB, Parquet."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from tests.content_corpus import half_pi_store

TIME = "2026-07-30 12:00:00"
# (table, label, token, application key, scopes): valid ones and broken ones (which findings name)
CREDENTIALS = (
    (
        "hand_credentials",
        "hand-9",
        "0123456789abcdef0123456789abcdef",
        "fedcba9876543210fedcba9876543210",
        None,
    ),
    (
        "hand_credentials",
        "hand-8",
        "Secret-Token-Not-Hex-0123456789a",
        "DEADBEEFDEADBEEFDEADBEEFDEADBEEF",
        None,
    ),
    (
        "hand_credentials",
        "hand-7",
        "c0ffee00c0ffee00c0ffee00c0ffee00",
        "c0ffee00c0ffee00c0ffee00c0ffee00",
        None,
    ),
    (
        "face_tokens",
        "tablet",
        "feedfacefeedfacefeedfacefeedface",
        "0badc0de0badc0de0badc0de0badc0de",
        '["face:chat"]',
    ),
    ("face_tokens", "watch", "short-secret-7f3a", "b16b00b5b16b00b5b16b00b5b16b00b5", '["face:chat","x"]'),
)
LEGACY_TOKEN = "legacy-plaintext-hand-token-0042"
FORMATS = ("console", "json", "sarif", "junit", "github")
runner = CliRunner()


def _add_credentials(builder: StoreBuilder, *, valid_only: bool = False) -> None:
    for table, label, token, key, scopes in CREDENTIALS[:1] if valid_only else CREDENTIALS:
        columns = "label, token, application_key, created_at" + (", scopes" if scopes is not None else "")
        values = (label, token, key, TIME) + ((scopes,) if scopes is not None else ())
        marks = ", ".join("?" for _ in values)
        builder.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)
    builder.execute(
        "INSERT INTO hand_tokens (label, token, created_at) VALUES ('old', ?, ?)", (LEGACY_TOKEN, TIME)
    )


def _secrets(store: Path) -> list[str]:
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT token, application_key FROM hand_credentials UNION ALL"
            " SELECT token, application_key FROM face_tokens UNION ALL SELECT token, '' FROM hand_tokens"
        ).fetchall()
    finally:
        connection.close()
    return [str(value) for row in rows for value in row if value]


def _fragments(secret: str, size: int = 12) -> set[str]:
    pieces = {secret, secret.lower()}
    pieces.update(secret[index : index + size] for index in range(len(secret) - size + 1))
    return pieces | {piece.lower() for piece in pieces}


@pytest.mark.parametrize("redact", [False, True])
@pytest.mark.parametrize("valid_only", [False, True], ids=["broken-credentials", "valid-credentials"])
def test_no_credential_in_any_output(tmp_path: Path, redact: bool, valid_only: bool) -> None:
    """Broken credentials make findings that name them (and a corrupt store: no seeds); valid ones
    leave the store verifiable, so its open runs' seeds are written and searched too."""
    root = tmp_path / "evidence"
    files = half_pi_store(root, "hello", lambda builder: _add_credentials(builder, valid_only=valid_only))
    store = next(path for path in files if path.name.endswith(".db"))
    secrets = _secrets(store)
    assert len(secrets) >= (2 if valid_only else 2 * len(CREDENTIALS)) + 1
    out = tmp_path / "out"
    out.mkdir()
    arguments = ["verify", str(root), "--jobs", "1", "--seeds-dir", str(out / "seeds")]
    arguments += [item for name in FORMATS for item in ("--report", f"{name}={out / ('report.' + name)}")]
    arguments += ["--write-baseline", str(out / "baseline.json"), *(["--redact"] if redact else [])]
    result = runner.invoke(app, arguments, env={"GITHUB_STEP_SUMMARY": str(out / "summary.md")})
    assert result.exit_code in (0, 1), result.output
    texts = {"stdout+stderr": result.output}
    seed = runner.invoke(app, ["seed", str(store), *(["--redact"] if redact else [])])
    texts["seed"] = seed.output
    db = tmp_path / "w.duckdb"
    loaded = runner.invoke(
        app, ["load", str(root), "--db", str(db), "--jobs", "1", "--parquet", str(out / "pq")]
    )
    assert loaded.exit_code in (0, 1), loaded.output
    texts["load"] = loaded.output
    for path in sorted(out.rglob("*")):
        if path.is_file():
            texts[str(path.relative_to(out))] = path.read_bytes().decode("utf-8", "replace")
    assert any(name.startswith("seeds/") for name in texts) is valid_only
    assert any(name.endswith(".parquet") for name in texts)
    with duckdb.connect(str(db), read_only=True) as connection:
        tables = [
            row[0]
            for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()
        ]
        for table in tables:
            texts[f"duckdb:{table}"] = repr(connection.execute(f'SELECT * FROM "{table}"').fetchall())
    assert "SA689" in texts["report.json"]  # the credentials were seen and counted
    leaks = sorted(
        (name, secret)
        for name, text in texts.items()
        for secret in secrets
        if any(fragment in text or fragment in text.lower() for fragment in _fragments(secret))
    )
    assert leaks == []
    # the search would see a secret: each one is there in the store's own bytes
    raw = "".join(path.read_bytes().decode("latin-1") for path in files)
    assert all(secret in raw for secret in secrets)
