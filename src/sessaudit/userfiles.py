"""JSON files the user hands sessaudit (`--current`, `--claims`): read strictly, every problem located."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessaudit.strictjson import LineProblem, loads_strict


class UserFileError(Exception):
    """A user-supplied file that cannot be read or is not valid; names the file and the JSON pointer of the
    problem (the CLI turns it into exit 2)."""

    def __init__(self, source: str, pointer: str, reason: str) -> None:
        self.source = source
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"{source}: {pointer or '(the document)'}: {reason}")


def read_json_file(path: Path, error: type[UserFileError]) -> Any:
    """The file's JSON document (UTF-8, an optional BOM, strict JSON); problems raise `error`."""
    source = str(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as problem:
        raise error(source, "", f"cannot be read: {problem.strerror or problem}") from None
    except UnicodeDecodeError as problem:
        raise error(source, "", f"is not UTF-8 (byte {problem.start})") from None
    try:
        return loads_strict(text)
    except LineProblem as problem:
        where = f" at character {problem.column}" if problem.column is not None else ""
        raise error(source, problem.pointer or "", f"is not JSON{where}: {problem.message}") from None
