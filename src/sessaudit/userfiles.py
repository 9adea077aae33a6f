"""JSON files the user hands sessaudit (`--current`, `--claims`, `--baseline`): read strictly, every
problem located, and all problems of a file reported at once (a typo'd key found one run at a time is a
key that someone, someday, stops fixing and starts ignoring)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

from sessaudit.strictjson import LineProblem, loads_strict

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

_LONGEST_REASON: Final = 300
_INDEX: Final = re.compile(r"[0-9]+")

Problem = tuple[str, str]  # (JSON pointer, reason)


class UserFileError(Exception):
    """A user-supplied file that cannot be read or is not valid; names the file and the JSON pointer of
    each problem, every problem found at once in pointer order (`pointer` and `reason`: the first one's;
    the CLI turns it into exit 2)."""

    def __init__(self, source: str, pointer: str, reason: str, *more: Problem) -> None:
        self.source = source
        self.problems: tuple[Problem, ...] = ((pointer, reason), *more)
        self.pointer = pointer
        self.reason = reason
        if not more:
            super().__init__(f"{source}: {pointer or '(the document)'}: {reason}")
        else:
            listed = "; ".join(f"{where or '(the document)'}: {why}" for where, why in self.problems)
            super().__init__(f"{source}: {len(self.problems)} problems: {listed}")

    @classmethod
    def of(cls, source: str, problems: Iterable[Problem]) -> Self:
        """One error for all of `problems` (at least one), sorted by pointer, repeats dropped."""
        ordered = sorted(set(problems), key=lambda item: (pointer_order(item[0]), item[1]))
        return cls(source, *ordered[0], *ordered[1:])


def pointer_order(pointer: str) -> tuple[tuple[int, int, str], ...]:
    """A sort key for JSON pointers that puts `/claims/2` before `/claims/10`."""
    return tuple(
        (0, int(token), "") if _INDEX.fullmatch(token) else (1, 0, token) for token in pointer.split("/")[1:]
    )


def schema_problems(
    errors: Sequence[ValidationError], describe: Callable[[ValidationError], str] | None = None
) -> list[Problem]:
    """Every schema error as (pointer, reason); an object's keys the schema does not know each get their
    own problem at their own pointer, with the keys it knows."""
    problems: list[Problem] = []
    for error in errors:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            patterns = error.schema.get("patternProperties", {}) if isinstance(error.schema, dict) else {}
            where = error_pointer(error)
            unknown = [
                key
                for key in error.instance
                if key not in known and not any(re.search(pattern, key) for pattern in patterns)
            ]
            listed = f" (known: {', '.join(known)})" if known else ""
            problems += [(f"{where}/{pointer_token(key)}", f"unknown key{listed}") for key in unknown]
            if unknown:
                continue
        problems.append((error_pointer(error), (describe or describe_schema_error)(error)))
    return problems


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
