"""`--current FILE`: the agent configuration in use now, for one session or a fleet (CONTRACT §2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, cast

from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.resources import schema_validator
from sessaudit.userfiles import UserFileError, pointer_token, read_json_file, schema_problems

SCHEMA_FILE: Final = "current.v1.schema.json"
# A top-level object with any of these keys is one configuration; any other object is a fleet map.
CONFIGURATION_KEYS: Final = frozenset(
    ("configurationDigest", "environmentIdentity", "tools", "configurationSnapshot")
)

Replay = Literal["safe", "never"]


class CurrentFileError(UserFileError):
    """A `--current` file that cannot be read or is not a valid configuration."""


@dataclass(frozen=True)
class CurrentTool:
    """A tool declared now, with the replay contract a started call of unknown outcome is judged by."""

    name: str
    definition_digest: str
    replay: Replay
    replay_key: str


@dataclass(frozen=True)
class CurrentConfiguration:
    """The configuration the agent would use if it resumed now (tiny-agent's planner `current`)."""

    configuration_digest: str
    environment_identity: str
    tools: tuple[CurrentTool, ...]
    configuration_snapshot: dict[str, Any] | None = None
    _by_name: dict[str, CurrentTool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, CurrentTool] = {}
        for tool in self.tools:
            by_name.setdefault(tool.name, tool)  # the first declaration wins, as in tiny-agent's lookup
        object.__setattr__(self, "_by_name", by_name)

    def tool(self, name: str) -> CurrentTool | None:
        """The declaration of a tool by name, or None when the tool is not declared now."""
        return self._by_name.get(name)

    def as_json(self) -> dict[str, Any]:
        """The configuration in the file's shape (camelCase keys)."""
        document: dict[str, Any] = {
            "configurationDigest": self.configuration_digest,
            "environmentIdentity": self.environment_identity,
            "tools": [
                {
                    "name": tool.name,
                    "definitionDigest": tool.definition_digest,
                    "replay": tool.replay,
                    "replayKey": tool.replay_key,
                }
                for tool in self.tools
            ],
        }
        if self.configuration_snapshot is not None:
            document["configurationSnapshot"] = self.configuration_snapshot
        return document


@dataclass(frozen=True)
class CurrentSource:
    """A loaded `--current` file: one configuration for every session, or one per session id."""

    source: str
    default: CurrentConfiguration | None = None
    sessions: Mapping[str, CurrentConfiguration] = field(default_factory=dict)

    def for_session(self, session_id: str | None) -> CurrentConfiguration | None:
        """The configuration that applies to a session, or None (plan as if nothing changed)."""
        if self.default is not None:
            return self.default
        if session_id is None:
            return None
        return self.sessions.get(session_id)


def load_current(path: Path) -> CurrentSource:
    """Read, parse (strict JSON) and validate a `--current` file; raise CurrentFileError."""
    return parse_current(read_json_file(path, CurrentFileError), source=str(path))


def parse_current(document: Any, *, source: str = "<current>") -> CurrentSource:
    """Validate an already parsed `--current` document (either shape); raise CurrentFileError."""
    errors = list(schema_validator(SCHEMA_FILE).iter_errors(document))
    if errors:
        raise _schema_error(source, document, errors)
    if isinstance(document, dict) and CONFIGURATION_KEYS.intersection(document):
        return CurrentSource(source, default=_configuration(document, "", source))
    sessions = {
        session_id: _configuration(value, "/" + pointer_token(session_id), source)
        for session_id, value in cast(dict[str, Any], document).items()
    }
    return CurrentSource(source, sessions=sessions)


def configuration_from_json(document: Any, *, source: str = "<current>") -> CurrentConfiguration:
    """One configuration object (e.g. a planner fixture's `current`); raise CurrentFileError."""
    if not isinstance(document, dict) or not CONFIGURATION_KEYS.intersection(document):
        raise CurrentFileError(
            source, "", "expected one configuration object, found a fleet map or no object"
        )
    loaded = parse_current(document, source=source).default
    assert loaded is not None
    return loaded


def _schema_error(source: str, document: Any, errors: list[Any]) -> CurrentFileError:
    """Every problem inside the branch of `oneOf` that the document's shape asks for, at once."""
    branch = 0 if not isinstance(document, dict) or CONFIGURATION_KEYS.intersection(document) else 1
    candidates = [
        sub_error
        for error in errors
        for sub_error in (error.context or [error])
        if not error.context
        or (sub_error.relative_schema_path and sub_error.relative_schema_path[0] == branch)
    ]
    problems = schema_problems(candidates or errors)
    return CurrentFileError.of(source, problems)


def _configuration(document: dict[str, Any], pointer: str, source: str) -> CurrentConfiguration:
    """A schema-valid configuration object, with the checks the schema cannot make."""
    tools: list[CurrentTool] = []
    seen: set[str] = set()
    for index, tool in enumerate(document["tools"]):
        if tool["name"] in seen:
            raise CurrentFileError(
                source, f"{pointer}/tools/{index}/name", f"tool {tool['name']!r} is declared twice"
            )
        seen.add(tool["name"])
        tools.append(CurrentTool(tool["name"], tool["definitionDigest"], tool["replay"], tool["replayKey"]))
    snapshot = document.get("configurationSnapshot")
    if snapshot is not None:
        actual = sha256_digest(snapshot)
        if actual != document["configurationDigest"]:
            raise CurrentFileError(
                source,
                f"{pointer}/configurationDigest",
                f"does not match configurationSnapshot, whose canonical JSON digests to {actual}",
            )
        declared = {tool.name: tool.definition_digest for tool in tools}
        snapshotted = {tool["name"]: tool["definitionDigest"] for tool in snapshot["tools"]}
        if declared != snapshotted or len(snapshotted) != len(snapshot["tools"]):
            raise CurrentFileError(
                source,
                f"{pointer}/configurationSnapshot/tools",
                "the snapshot's tools (name, definitionDigest) differ from the declared tools",
            )
    return CurrentConfiguration(
        configuration_digest=document["configurationDigest"],
        environment_identity=document["environmentIdentity"],
        tools=tuple(tools),
        configuration_snapshot=snapshot,
    )
