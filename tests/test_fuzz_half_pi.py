"""Property fuzzing (issue 9): Half-Pi stores with page-level byte mutations of the database and its -wal."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz_targets import (
    HALF_PI_SEEDS,
    PAGE_EDITS,
    RAW_EDITS,
    PageEdit,
    check_audit,
    fuzz_settings,
    half_pi_template,
    mutate,
    run_half_pi,
)

# found by bench/fuzz.py: one bit flipped in a b-tree page header made a later query (not integrity_check)
# fail with "database disk image is malformed", which escaped the verifier as an internal error
FLIPPED_PAGE_HEADER = [PageEdit("flip", 1, 0, b"\x00", 0)]


@fuzz_settings(120)
@given(st.sampled_from(HALF_PI_SEEDS), PAGE_EDITS, st.one_of(st.none(), RAW_EDITS))
@example("after-restart-recovery", FLIPPED_PAGE_HEADER, None)
@example("crash-image-wal", [PageEdit("flip", 3, 0, b"\x00", 0)], None)
# found by bench/fuzz.py: bytes 0xff written into sqlite_master's SQL text made the sqlite3 module fail to
# decode SQLite's own error message (UnicodeDecodeError, not a DatabaseError) when the copy was first read
@example("after-restart-recovery", [PageEdit("overwrite", 1116, 244, b"\xff\xff\xff\xff", 0)], None)
def test_mutated_stores_get_a_valid_report(
    seed: str, edits: list[PageEdit], wal_edits: list[Any] | None
) -> None:
    run_half_pi(seed, edits, wal_edits)


def test_a_page_sqlite_cannot_read_is_store_damaged_not_an_internal_error() -> None:

    template = half_pi_template("after-restart-recovery")

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        shutil.copytree(template.parent.parent, home)
        database = home / "db" / template.name
        database.write_bytes(mutate(database.read_bytes(), FLIPPED_PAGE_HEADER))
        report = check_audit([str(database)]).report
    assert [item.rule for item in report.findings] == ["SA682"]
    assert "could not read the store" in report.findings[0].message
    assert report.sources[0].verdict.value == "corrupt"
