"""`--current FILE` for Codex: tool replay policies that override the built-in table (spec/tools.py), read
by sessaudit.tooltables against schemas/codex-current.v1.schema.json. The option is shared with the other
formats that take a tool table; the extras key, `codex_tools`, is this format's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from sessaudit.formats.codex.spec.tools import BUILT_IN_TABLE
from sessaudit.plugin import VerifyOptions
from sessaudit.tooltables import ToolOverride, ToolTable
from sessaudit.tooltables import load_tool_override as _load
from sessaudit.tooltables import parse_tool_override as _parse

SCHEMA_FILE: Final = "codex-current.v1.schema.json"
EXTRA: Final = "codex_tools"  # the VerifyOptions extra holding the loaded ToolOverride


def tool_table(options: VerifyOptions, session_id: str | None) -> ToolTable:
    """The table for a session under these options (`--current` given or not)."""
    loaded = options.extra(EXTRA)
    return loaded.for_session(session_id) if isinstance(loaded, ToolOverride) else BUILT_IN_TABLE


def load_tool_override(path: Path) -> ToolOverride:
    """Read, parse (strict JSON) and validate a `--current` file; raise ToolTableError."""
    return _load(path, BUILT_IN_TABLE, SCHEMA_FILE)


def parse_tool_override(document: Any, *, source: str = "<current>") -> ToolOverride:
    """Validate an already parsed `--current` document (either shape); raise ToolTableError."""
    return _parse(document, BUILT_IN_TABLE, SCHEMA_FILE, source=source)
