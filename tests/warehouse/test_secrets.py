"""No credential ever reaches the warehouse: Half-Pi's token tables are never read, so no token or key
appears in any column of any table, nor in the Parquet dataset."""

from __future__ import annotations

from pathlib import Path

import duckdb

from sessaudit.formats.half_pi.build.parts import ToolCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.warehouse.loader import LoadOptions, load_warehouse
from sessaudit.warehouse.schema import SOURCE_TABLES, table_columns
from tests.warehouse.conftest import inside


def _store_with_credentials(root: Path) -> list[str]:
    builder = StoreBuilder(root / "home" / "db" / "half-pi.db", seed=31)
    hand = builder.hand_credential("hand-1")
    face = builder.face_token("laptop")
    legacy = builder.hand_token("old-hand", hand_id="hand-1")
    builder.management_audit("hand.add", target_label="hand-1")
    chat = builder.session("/home/dev/calc").user("why does add() fail?")
    builder.admitted(chat, "why does add() fail?")
    call = ToolCall("call_1", "read_file", '{"path":"calc.py"}')
    chat.assistant("", calls=[call], results=["def add(a, b):\n    return a - b\n"])
    builder.local_tool(chat, "read_file", {"path": "calc.py"}, outcome="succeeded")
    chat.assistant("add() subtracts; it should return a + b.")
    builder.finish()
    secrets = [hand.token, hand.application_key, face.token, face.application_key, legacy.token]
    assert all(len(secret) >= 16 for secret in secrets)
    return secrets


def test_no_secret_value_reaches_the_database_or_the_dataset(tmp_path: Path) -> None:
    secrets = _store_with_credentials(tmp_path)
    with inside(tmp_path):
        result = load_warehouse(["home"], Path("w.duckdb"), LoadOptions(parquet=Path("dataset")))
    assert result.rows["facts"] > 10 and result.rows["sources"] == 1
    assert any(item.rule == "SA689" for item in result.report.findings)  # the store does hold credentials
    connection = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        tables = [table for table in table_columns()]
        for table in tables:
            for column, kind in table_columns()[table]:
                if kind not in ("VARCHAR", "JSON", "VARCHAR[]"):
                    continue
                text = f'CAST("{column}" AS VARCHAR)'
                for secret in secrets:
                    found = connection.execute(
                        f"SELECT count(*) FROM {table} WHERE contains({text}, $secret)", {"secret": secret}
                    ).fetchone()
                    assert found == (0,), f"{table}.{column} holds a secret"
        kinds = {kind for (kind,) in connection.execute("SELECT DISTINCT kind FROM facts").fetchall()}
        assert not kinds & {"hand_tokens", "hand_credentials", "face_tokens"}
    finally:
        connection.close()
    database = (tmp_path / "w.duckdb").read_bytes()
    dataset = b"".join(path.read_bytes() for path in (tmp_path / "dataset").rglob("*") if path.is_file())
    for secret in secrets:
        assert secret.encode() not in database and secret.encode() not in dataset
    assert set(SOURCE_TABLES) <= {path.name for path in (tmp_path / "dataset").iterdir()}
