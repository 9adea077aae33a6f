"""Tool replay policies for formats whose logs name tools but not their effects: a format's built-in table,
and `--current FILE` overriding it for the tools the file names.

A `--current` file for such a format is one object with `tools: [{"name", "replay": "safe" | "never",
...}]` for every session, or a map from session id to such an object, validated by the format's schema
with every problem located. Other keys are allowed, so another format's configuration whose tools have
name and replay is such a file too. Each format keeps its own table, its words for it and its schema."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from sessaudit.resources import schema_validator
from sessaudit.userfiles import Problem, UserFileError, pointer_token, read_json_file, schema_problems

ReplayPolicy = Literal["safe", "never"]


class ToolTableError(UserFileError):
    """A `--current` file that cannot be read or is not a tool table of the format."""


@dataclass(frozen=True, slots=True)
class ToolTable:
    """The replay policies one session's open calls are judged by: `override` (from the `--current` file
    `source`) for the tools it names, the format's built-in table (`built_in`, described as
    `built_in_words`) for the others."""

    built_in: Callable[[str], ReplayPolicy]
    built_in_words: str
    override: Mapping[str, ReplayPolicy] = field(default_factory=dict)
    source: str | None = None

    def policy(self, name: str) -> ReplayPolicy:
        found = self.override.get(name)
        return found if found is not None else self.built_in(name)

    def decided(self, names: Iterable[str]) -> str:
        """Which table decided these tools' policies, in words (a recovery's `assumes`)."""
        named = sorted(set(names))
        overridden = [name for name in named if name in self.override]
        others = [name for name in named if name not in self.override]
        if not overridden:
            return f"tool replay policies: {self.built_in_words}"
        said = f"tool replay policies: --current {self.source} for {', '.join(overridden)}"
        return f"{said}; {self.built_in_words} for {', '.join(others)}" if others else said


@dataclass(frozen=True)
class ToolOverride:
    """A loaded `--current` file: one override for every session, or one per session id."""

    built_in: ToolTable
    source: str
    default: Mapping[str, ReplayPolicy] | None = None
    sessions: Mapping[str, Mapping[str, ReplayPolicy]] = field(default_factory=dict)

    def for_session(self, session_id: str | None) -> ToolTable:
        """The table a session's open calls are judged by (the built-in one when the file has none for it)."""
        override = self.default if self.default is not None else self.sessions.get(session_id or "")
        if not override:
            return self.built_in
        return ToolTable(self.built_in.built_in, self.built_in.built_in_words, override, self.source)


def load_tool_override(path: Path, built_in: ToolTable, schema_file: str) -> ToolOverride:
    """Read, parse (strict JSON) and validate a `--current` file; raise ToolTableError."""
    document = read_json_file(path, ToolTableError)
    return parse_tool_override(document, built_in, schema_file, source=str(path))


def parse_tool_override(
    document: Any, built_in: ToolTable, schema_file: str, *, source: str = "<current>"
) -> ToolOverride:
    """Validate an already parsed `--current` document (either shape) against `schema_file`; raise
    ToolTableError with every problem at once."""
    errors = list(schema_validator(schema_file).iter_errors(document))
    if errors:
        raise ToolTableError.of(source, _schema_problems(document, errors))
    problems: list[Problem] = []
    if isinstance(document, dict) and "tools" in document:
        default = _policies(document, "", problems)
        if problems:
            raise ToolTableError.of(source, problems)
        return ToolOverride(built_in, source, default=default)
    sessions = {
        session_id: _policies(value, "/" + pointer_token(session_id), problems)
        for session_id, value in cast(dict[str, Any], document).items()
    }
    if problems:
        raise ToolTableError.of(source, problems)
    return ToolOverride(built_in, source, sessions=sessions)


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
