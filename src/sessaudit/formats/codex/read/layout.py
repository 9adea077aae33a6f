"""Where rollouts lie (spec §1): `<home>/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl` and the
flat `<home>/archived_sessions/`. Light: the plugin uses it to recognise files, so it reads nothing.
`Rollouts` indexes a home's rollouts by the session id in their names, once per process and home (a fork's
parent is looked up there)."""

from __future__ import annotations

import os
import re
import threading
from datetime import datetime
from typing import ClassVar, Final

UUID: Final = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
NAME: Final = re.compile(
    rf"rollout-([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}-[0-9]{{2}}-[0-9]{{2}})-({UUID})\.jsonl"
)
DATE_PART: Final = re.compile(r"[0-9]{4}|[0-9]{2}")


def name_parts(real_path: str) -> tuple[datetime, str] | None:
    """The local time and the session id a `rollout-<local time>-<uuid>.jsonl` name holds, or None."""
    found = NAME.fullmatch(os.path.basename(real_path))
    if found is None:
        return None
    try:
        local = datetime.strptime(found.group(1), "%Y-%m-%dT%H-%M-%S")
    except ValueError:
        return None
    return local, found.group(2).lower()


def home_of(real_path: str) -> str | None:
    """The Codex home a rollout lies in: the folder holding `sessions/YYYY/MM/DD/` or `archived_sessions/`
    above it, or None when the file lies elsewhere."""
    parent = os.path.dirname(real_path)
    if os.path.basename(parent) == "archived_sessions":
        return os.path.dirname(parent)
    parts = parent.split(os.sep)
    if len(parts) >= 4 and parts[-4] == "sessions" and all(DATE_PART.fullmatch(part) for part in parts[-3:]):
        return os.sep.join(parts[:-4])
    return None


def in_home(real_path: str) -> bool:
    """A rollout-named file in a Codex home's `sessions/YYYY/MM/DD/` or `archived_sessions/`."""
    return name_parts(real_path) is not None and home_of(real_path) is not None


class Rollouts:
    """Every rollout of a Codex home by the session id in its name (a walk of `sessions/` and
    `archived_sessions/`, done once per home and process; several files for one id are all kept)."""

    _cache: ClassVar[dict[str, dict[str, list[str]]]] = {}
    _lock = threading.Lock()

    @classmethod
    def of(cls, home: str) -> dict[str, list[str]]:
        with cls._lock:
            index = cls._cache.get(home)
            if index is None:
                index = cls._cache[home] = cls._walk(home)
            return index

    @staticmethod
    def _walk(home: str) -> dict[str, list[str]]:
        index: dict[str, list[str]] = {}
        for folder in ("sessions", "archived_sessions"):
            for top, directories, names in os.walk(os.path.join(home, folder)):
                directories.sort()
                for name in sorted(names):
                    parts = name_parts(name)
                    if parts is not None:
                        index.setdefault(parts[1], []).append(os.path.join(top, name))
        return index

    @classmethod
    def find(cls, real_path: str, session_id: str) -> list[str]:
        """The rollouts of the home `real_path` lies in named after `session_id` (none outside a home)."""
        home = home_of(real_path)
        if home is None:
            return []
        return [path for path in cls.of(home).get(session_id.lower(), []) if path != real_path]
