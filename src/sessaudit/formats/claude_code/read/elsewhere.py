"""Looking a uuid or a tool_use id up in the project's other transcript files (spec §7: "index every file
in the project before judging"). Only what the session's own files leave unresolved is looked up, with a
byte search of each other file (read-only, up to the size limit); those files are not verified here
(each is a source of its own)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from sessaudit.evidence import open_evidence, read_chunks
from sessaudit.formats.claude_code.read.layout import project_files, session_stem


class Elsewhere:
    """The other files of a session file's project directory (and their sub-agent folders), read lazily."""

    def __init__(self, real_path: str, own: Iterable[str], max_bytes: int) -> None:
        self._real_path = real_path
        self._own = set(own)
        self._max_bytes = max_bytes
        self._contents: list[tuple[str, bytes]] | None = None

    def _files(self) -> list[tuple[str, bytes]]:
        if self._contents is None:
            self._contents = []
            for path in self._candidates():
                try:
                    stream, size = open_evidence(path)
                except OSError:
                    continue
                with stream:
                    if size > self._max_bytes:
                        continue
                    self._contents.append((path, b"".join(read_chunks(stream, size))))
        return self._contents

    def _candidates(self) -> list[str]:
        found: list[str] = []
        for path in project_files(self._real_path):
            if path in self._own:
                continue
            found.append(path)
            stem = session_stem(path)
            folder = os.path.join(os.path.dirname(path), stem or "", "subagents")
            if stem is not None and os.path.isdir(folder):
                for top, directories, names in os.walk(folder):
                    directories.sort()
                    found.extend(os.path.join(top, name) for name in sorted(names) if name.endswith(".jsonl"))
        return [path for path in found if path not in self._own]

    def _find(self, key: str, value: str) -> list[str]:
        pattern = re.compile(rb'"' + key.encode() + rb'"\s*:\s*"' + re.escape(value.encode()) + rb'"')
        return [os.path.basename(path) for path, data in self._files() if pattern.search(data)]

    def record(self, uuid: str) -> list[str]:
        """The names of the other files holding a record with this uuid."""
        return self._find("uuid", uuid)

    def tool_use(self, call_id: str) -> list[str]:
        """The names of the other files holding a tool_use block with this id."""
        return self._find("id", call_id)
