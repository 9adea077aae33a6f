"""Configuration from `sessaudit.toml` (top-level keys) or `[tool.sessaudit]` in `pyproject.toml`."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final, get_args

from sessaudit.model import Condition
from sessaudit.verdicts import Verdict

CONFIG_FILE: Final = "sessaudit.toml"
PYPROJECT_FILE: Final = "pyproject.toml"
FAIL_ON_CHOICES: Final = ("error", "warning", "note", "never")
VERDICT_CHOICES: Final = tuple(item.value for item in Verdict)
CONDITION_CHOICES: Final[tuple[str, ...]] = get_args(Condition)
KNOWN_KEYS: Final = (
    "baseline",
    "fail-on",
    "fail-on-condition",
    "fail-on-verdict",
    "ignore",
    "select",
    "severity",
)


class ConfigError(Exception):
    """A configuration file that cannot be read or holds an unknown key or a wrong value (exit 2)."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        super().__init__(f"{source}: {key}: {reason}" if key else f"{source}: {reason}")


@dataclass(frozen=True, slots=True)
class Config:
    """What a configuration file says; None where it says nothing. `baseline` is resolved against the
    file's folder; `origin(key)` names a key for error messages (`pyproject.toml: tool.sessaudit.select`)."""

    path: Path | None = None
    table: str = ""
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    severity: dict[str, str] = field(default_factory=dict)
    fail_on: str | None = None
    fail_on_verdict: tuple[str, ...] | None = None
    fail_on_condition: tuple[str, ...] | None = None
    baseline: Path | None = None

    def origin(self, key: str) -> str:
        return f"{self.path}: {self.table}{key}"


NO_CONFIG: Final = Config()


def find_config(start: Path) -> Path | None:
    """The nearest configuration for `start` (the working directory): in each folder `sessaudit.toml`,
    else a `pyproject.toml` with a `[tool.sessaudit]` table. Inside a git repository (`start` or a parent
    holds `.git`) the folders from `start` up to the repository root are searched; outside one only
    `start` itself, so a settings file in a shared parent (`/tmp`, a home folder) is never applied
    unasked (`--config FILE` names one explicitly)."""
    folder = start.resolve()
    for candidate_folder in _search_folders(folder):
        candidate = candidate_folder / CONFIG_FILE
        if candidate.is_file():
            return _shortest(candidate)
        candidate = candidate_folder / PYPROJECT_FILE
        if candidate.is_file():
            tool = _read_toml(_shortest(candidate)).get("tool")
            if isinstance(tool, dict) and "sessaudit" in tool:
                return _shortest(candidate)
    return None


def _search_folders(folder: Path) -> list[Path]:
    """`folder` and its parents up to the nearest one holding `.git`; only `folder` when none does."""
    chain = [folder, *folder.parents]
    for index, candidate in enumerate(chain):
        if (candidate / ".git").exists():
            return chain[: index + 1]
    return [folder]


def _shortest(path: Path) -> Path:
    """The path relative to the working directory (`sessaudit.toml`, `../pyproject.toml`) when possible,
    so messages and SA020 locations read as the user would type them."""
    try:
        return Path(os.path.relpath(path))
    except ValueError:  # another drive
        return path


def load_config(path: Path) -> Config:
    """Read and check one configuration file (a `pyproject.toml` by name: its `[tool.sessaudit]`)."""
    document = _read_toml(path)
    if path.name == PYPROJECT_FILE:
        tool = document.get("tool", {})
        settings = tool.get("sessaudit") if isinstance(tool, dict) else None
        if not isinstance(settings, dict):
            raise ConfigError(str(path), "tool.sessaudit", "no such table")
        return _parse(path, "tool.sessaudit.", settings)
    return _parse(path, "", document)


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when a settings file is found: most audits read none

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as problem:
        raise ConfigError(str(path), "", f"cannot be read: {problem.strerror or problem}") from None
    except UnicodeDecodeError as problem:
        raise ConfigError(str(path), "", f"is not UTF-8 (byte {problem.start})") from None
    except tomllib.TOMLDecodeError as problem:
        raise ConfigError(str(path), "", f"is not TOML: {problem}") from None


def _parse(path: Path, table: str, settings: dict[str, Any]) -> Config:
    def fail(key: str, reason: str) -> ConfigError:
        return ConfigError(str(path), f"{table}{key}", reason)

    unknown = sorted(key for key in settings if key not in KNOWN_KEYS)
    if unknown:  # every unknown key at once: a typo'd key must not be found one run at a time
        raise ConfigError(
            str(path),
            ", ".join(f"{table}{key}" for key in unknown),
            f"unknown key{'s' if len(unknown) > 1 else ''} (known: {', '.join(KNOWN_KEYS)})",
        )

    def codes(key: str) -> tuple[str, ...] | None:
        value = settings.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise fail(key, f"expected an array of rule codes, prefixes or names, found {_kind(value)}")
        return tuple(value)

    severity = settings.get("severity", {})
    if not isinstance(severity, dict):
        raise fail("severity", f"expected a table of CODE = LEVEL, found {_kind(severity)}")
    for code, level in severity.items():
        if not isinstance(level, str):
            raise fail(f"severity.{code}", f"expected a level (error, warning, note), found {_kind(level)}")
    fail_on = settings.get("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON_CHOICES:
        raise fail("fail-on", f"{fail_on!r} is not one of {', '.join(FAIL_ON_CHOICES)}")
    gates = {
        key: _choices(settings.get(key), choices, partial(fail, key))
        for key, choices in (("fail-on-verdict", VERDICT_CHOICES), ("fail-on-condition", CONDITION_CHOICES))
    }
    baseline = settings.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline):
        raise fail("baseline", f"expected a file name, found {_kind(baseline)}")
    return Config(
        path=path,
        table=table,
        select=codes("select"),
        ignore=codes("ignore"),
        severity=dict(severity),
        fail_on=fail_on,
        fail_on_verdict=gates["fail-on-verdict"],
        fail_on_condition=gates["fail-on-condition"],
        baseline=path.parent / baseline if baseline is not None else None,
    )


def _choices(
    value: Any, choices: tuple[str, ...], fail: Callable[[str], ConfigError]
) -> tuple[str, ...] | None:
    """A `fail-on-verdict` or `fail-on-condition` array: every value one of `choices`."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail(f"expected an array of {', '.join(choices)}, found {_kind(value)}")
    wrong = [item for item in value if item not in choices]
    if wrong:
        raise fail(f"{', '.join(map(repr, wrong))}: not one of {', '.join(choices)}")
    return tuple(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {value!r}" if value else "an empty string"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"
