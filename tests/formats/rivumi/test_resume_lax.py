"""Native resume reads session.json laxly, as Rivumi's pydantic models do: it accepts what Rivumi accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.scenarios import PENDING_APPROVAL, build_run
from sessaudit.formats.rivumi.native.resume import native_resume
from tests.formats.rivumi.runs import set_manifest


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"step": "3"}, None),
        ({"last_event_sequence": "18"}, None),
        ({"terminal": "false"}, None),
        ({"step": "three"}, "session.json does not match the supported schema"),
        ({"terminal": "yes"}, "session.json does not match the supported schema"),  # phase is not terminal
        ({"surprise": 1}, "session.json does not match the supported schema"),
    ],
)
def test_native_resume_reads_the_manifest_laxly(
    tmp_path: Path, fields: dict[str, Any], message: str | None
) -> None:
    run_dir = build_run(tmp_path, crash=PENDING_APPROVAL).run_dir
    set_manifest(run_dir, **fields)
    contents = {
        name: (run_dir / name).read_bytes() for name in ("session.json", "request.json", "events.jsonl")
    }
    answer = native_resume(str(run_dir), contents)
    assert (answer.ok, answer.message) == (message is None, message)
