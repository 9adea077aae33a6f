"""The builder's values: one model response's token usage, the kinds of tool call, the git info of a session,
a finished family, JSON aliases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

JsonObject = dict[str, Any]
CallKind = Literal["function", "custom", "local_shell"]
FileKind = Literal["session", "fork", "subagent"]

USAGE_FIELDS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
)
# Shell-like tools: their runs are framed by exec_command_begin/end events.
SHELL_TOOLS: Final = frozenset({"shell", "shell_command", "exec_command", "container.exec", "local_shell"})


@dataclass(frozen=True, slots=True)
class Usage:
    """One model response's true usage. `input_tokens` includes `cached_input_tokens`, `output_tokens`
    includes `reasoning_output_tokens`; `total_tokens` is input plus output."""

    input_tokens: int
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0

    def __post_init__(self) -> None:
        if (
            min(self.input_tokens, self.cached_input_tokens, self.output_tokens, self.reasoning_output_tokens)
            < 0
        ):
            raise ValueError(f"negative usage: {self}")
        if self.cached_input_tokens > self.input_tokens:
            raise ValueError(f"cached input exceeds input: {self}")
        if self.reasoning_output_tokens > self.output_tokens:
            raise ValueError(f"reasoning output exceeds output: {self}")

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_output_tokens + other.reasoning_output_tokens,
        )

    def as_json(self) -> JsonObject:
        """The five fields in the order Codex writes them."""
        return {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_output_tokens": self.reasoning_output_tokens,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_json(cls, value: JsonObject) -> Usage:
        return cls(
            value["input_tokens"],
            value["cached_input_tokens"],
            value["output_tokens"],
            value["reasoning_output_tokens"],
        )


ZERO: Final = Usage(0)


@dataclass(frozen=True, slots=True)
class Git:
    """The `git` object of `session_meta`."""

    commit_hash: str
    branch: str
    repository_url: str | None = None

    def as_json(self) -> JsonObject:
        value: JsonObject = {"commit_hash": self.commit_hash, "branch": self.branch}
        if self.repository_url is not None:
            value["repository_url"] = self.repository_url
        return value


@dataclass(frozen=True, slots=True)
class Built:
    """A finished family: the paths written and its manifest entry."""

    files: tuple[Path, ...]
    truth: JsonObject
