"""SA686: one finding per store (at the database) naming every file of the store and its mode."""

from __future__ import annotations

import os
from pathlib import Path

from sessaudit.engine import audit
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.read.store_files import wide_modes
from tests.formats.half_pi.test_builder import crash_scenario


def wal_store(tmp_path: Path) -> Path:
    builder = StoreBuilder(tmp_path / "home" / "db" / "half-pi.db", seed=7)
    crash_scenario(builder)
    return Path(builder.finish(keep_wal=True).path)


def test_wide_files_of_one_store_are_one_finding_at_the_database(tmp_path: Path) -> None:
    store = wal_store(tmp_path)
    names = [store.name + suffix for suffix in ("", "-wal", "-shm") if Path(str(store) + suffix).exists()]
    assert names[:2] == ["half-pi.db", "half-pi.db-wal"]
    for name, mode in zip(names, (0o644, 0o600, 0o640), strict=False):
        os.chmod(store.parent / name, mode)
    findings = [item for item in audit([str(store)]).report.findings if item.rule == "SA686"]
    assert len(findings) == 1
    (item,) = findings
    assert item.location.path == str(store)
    expected = {"half-pi.db": "0644", "half-pi.db-wal": "0600", "half-pi.db-shm": "0640"}
    shown = {name: expected[name] for name in names}
    assert item.evidence["modes"] == shown
    for name, mode in shown.items():
        assert f"{name} {mode}" in item.message
    assert item.evidence["wide"] == [name for name in names if shown[name] != "0600"]


def test_a_store_at_0600_has_no_sa686(tmp_path: Path) -> None:
    store = wal_store(tmp_path)
    for suffix in ("", "-wal", "-shm"):
        if Path(str(store) + suffix).exists():
            os.chmod(str(store) + suffix, 0o600)
    assert not [item for item in audit([str(store)]).report.findings if item.rule == "SA686"]


def test_wide_modes_message() -> None:
    assert wide_modes([("half-pi.db", 0o100600)]) is None
    message, evidence = wide_modes([("half-pi.db", 0o100644)]) or ("", {})
    assert message == "the store's files have modes half-pi.db 0644: it is wider than 0600"
    assert evidence == {"modes": {"half-pi.db": "0644"}, "wide": ["half-pi.db"]}
