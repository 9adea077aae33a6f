"""`--current FILE` for Claude Code: tool replay policies that override the built-in table (spec/tools.py).

The file is one object with `tools: [{"name", "replay": "safe" | "never", ...}]` for every session, or a map
from session id to such an object, validated by schemas/claude-code-current.v1.schema.json with every
problem located. Other keys are allowed: a tiny-agent configuration (whose tools have name and replay too)
is such a file. The option is shared with tiny-agent; the extras key, `claude_code_tools`, is this
format's own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

from sessaudit.formats.claude_code.spec.tools import BUILT_IN_TABLE, ReplayPolicy, ToolTable
from sessaudit.plugin import VerifyOptions
from sessaudit.resources import schema_validator
from sessaudit.userfiles import Problem, UserFileError, pointer_token, read_json_file, schema_problems

SCHEMA_FILE: Final = "claude-code-current.v1.schema.json"
EXTRA: Final = "claude_code_tools"  # the VerifyOptions extra holding the loaded ToolOverride


class ToolTableError(UserFileError):
    """A `--current` file that cannot be read or is not a Claude Code tool table."""


@dataclass(frozen=True)
class ToolOverride:
    """A loaded `--current` file: one override for every session, or one per session id."""

    source: str
    default: Mapping[str, ReplayPolicy] | None = None
    sessions: Mapping[str, Mapping[str, ReplayPolicy]] = field(default_factory=dict)

    def for_session(self, session_id: str | None) -> ToolTable:
        """The table a session's open calls are judged by (the built-in one when the file has none for it)."""
        override = self.default if self.default is not None else self.sessions.get(session_id or "")
        return ToolTable(override, self.source) if override else BUILT_IN_TABLE


def tool_table(options: VerifyOptions, session_id: str | None) -> ToolTable:
    """The table for a session under these options (`--current` given or not)."""
    loaded = options.extra(EXTRA)
    return loaded.for_session(session_id) if isinstance(loaded, ToolOverride) else BUILT_IN_TABLE


def load_tool_override(path: Path) -> ToolOverride:
    """Read, parse (strict JSON) and validate a `--current` file; raise ToolTableError."""
    return parse_tool_override(read_json_file(path, ToolTableError), source=str(path))


def parse_tool_override(document: Any, *, source: str = "<current>") -> ToolOverride:
    """Validate an already parsed `--current` document (either shape); raise ToolTableError with every
    problem at once."""
    errors = list(schema_validator(SCHEMA_FILE).iter_errors(document))
    if errors:
        raise ToolTableError.of(source, _schema_problems(document, errors))
    problems: list[Problem] = []
    if isinstance(document, dict) and "tools" in document:
        default = _policies(document, "", problems)
        if problems:
            raise ToolTableError.of(source, problems)
        return ToolOverride(source, default=default)
    sessions = {
        session_id: _policies(value, "/" + pointer_token(session_id), problems)
        for session_id, value in cast(dict[str, Any], document).items()
    }
    if problems:
        raise ToolTableError.of(source, problems)
    return ToolOverride(source, sessions=sessions)


def _schema_problems(document: Any, errors: list[Any]) -> list[Problem]:
    """The problems inside the branch of `oneOf` the document's shape asks for (one table when it is not
    an object or has `tools`, else a map by session id)."""
    branch = 0 if not isinstance(document, dict) or "tools" in document else 1
    chosen = [
        sub_error
        for error in errors
        for sub_error in (error.context or [error])
        if not error.context
        or (sub_error.relative_schema_path and sub_error.relative_schema_path[0] == branch)
    ]
    return schema_problems(chosen or errors)


def _policies(table: dict[str, Any], pointer: str, problems: list[Problem]) -> dict[str, ReplayPolicy]:
    """A schema-valid table's policies by tool name; a name given twice is a problem (which would win?)."""
    policies: dict[str, ReplayPolicy] = {}
    for index, tool in enumerate(table["tools"]):
        if tool["name"] in policies:
            problems.append((f"{pointer}/tools/{index}/name", f"tool {tool['name']!r} is named twice"))
            continue
        policies[tool["name"]] = tool["replay"]
    return policies
