"""JSON files the user hands sessaudit (`--current`, `--claims`): read strictly, every problem located."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sessaudit.strictjson import LineProblem, loads_strict

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

_LONGEST_REASON: Final = 300


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


def error_pointer(error: ValidationError) -> str:
    """The JSON Pointer (RFC 6901) of the value a schema error is about."""
    return "".join("/" + pointer_token(str(part)) for part in error.absolute_path)


def pointer_token(token: str) -> str:
    """One JSON Pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def describe_schema_error(error: ValidationError) -> str:
    """jsonschema's message in plainer words, without a long echo of the offending value."""
    found = short_value(error.instance)
    if error.validator == "type":
        return f"expected {error.validator_value}, found {found}"
    if error.validator == "enum":
        return f"{found} is not one of {', '.join(map(repr, error.validator_value))}"
    if error.validator == "pattern":
        return f"{found} does not match {error.validator_value}"
    if error.validator == "minLength":
        return f"{found} should be non-empty"
    reason: str = error.message
    return reason if len(reason) <= _LONGEST_REASON else reason[: _LONGEST_REASON - 1] + "…"


def short_value(value: Any) -> str:
    """A value as a finding may quote it: objects and arrays by kind, others by a short repr."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
