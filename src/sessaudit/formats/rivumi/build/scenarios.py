"""Ready-made runs for tests and golden files: the standard task, and the crash windows the issue names."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sessaudit.formats.rivumi.build.parts import Crash, CrashMode, Killed, TokenCounts, ToolCall
from sessaudit.formats.rivumi.build.run_builder import RunBuilder


@dataclass(slots=True)
class Script:
    """The standard task: read calc.py, edit it, answer, verify, finish."""

    decisions: tuple[str, str] = ("allow_once", "allow_session")
    verification_ok: bool = True

    def run(self, builder: RunBuilder) -> None:
        builder.start()
        (read,) = builder.model_turn(tool_calls=[ToolCall("read_file", {"path": "calc.py"}, "read")])
        builder.tool_call(read, decision=self.decisions[0], output="def add(a, b):\n    return a - b\n")
        edit = ToolCall("replace_text", {"new": "a + b", "old": "a - b", "path": "calc.py"}, "modify")
        (edit,) = builder.model_turn(tool_calls=[edit], usage=TokenCounts(700, 30, cached_input_tokens=512))
        builder.tool_call(edit, decision=self.decisions[1], output="replaced 1 occurrence")
        builder.model_turn(content="Fixed add() to return a + b.", usage=TokenCounts(760, 12, 640, 4))
        builder.verify(ok=self.verification_ok)
        builder.finish()


def build_run(
    run_root: Path, *, seed: int = 0, crash: Crash | None = None, script: Script | None = None
) -> RunBuilder:
    """Build the standard run (optionally killed at `crash`); the builder's run_dir is the run."""
    builder = RunBuilder(run_root, seed=seed, crash=crash)
    with contextlib.suppress(Killed):
        (script or Script()).run(builder)
    return builder


# The crash windows the issue names, as ready-made crashes of the standard run.
KILLED_AFTER_TOOL_STARTED: Final = Crash(event_type="tool.started", occurrence=2)
MANIFEST_AHEAD_AT_TERMINAL: Final = Crash(event_type="run.completed", mode=CrashMode.BEFORE_APPEND)
MANIFEST_AHEAD_OVER_TOOL_STARTED: Final = Crash(
    event_type="tool.completed", occurrence=2, mode=CrashMode.BEFORE_APPEND
)
TORN_LAST_LINE: Final = Crash(event_type="model.completed", occurrence=3, mode=CrashMode.TORN)
NO_FINAL_NEWLINE: Final = Crash(event_type="run.completed", mode=CrashMode.NO_NEWLINE)
PENDING_APPROVAL: Final = Crash(event_type="approval.requested", occurrence=3)
