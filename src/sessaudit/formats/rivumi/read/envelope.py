"""Pure checks of one event's envelope fields and data values (spec §2.2, §2.3)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sessaudit.formats.rivumi.spec.eventtypes import (
    APPROVAL_EVENT_TYPES,
    BOOLEAN_KEYS,
    COUNT_KEYS,
    ENUM_KEYS,
    REASONS,
    STRING_LIST_KEYS,
)


def value_problem(event_type: str, key: str, value: Any) -> str | None:
    """Why a known data key's value is not what the loop writes, or None."""
    if key in BOOLEAN_KEYS and not isinstance(value, bool):
        return "must be true or false"
    if key in COUNT_KEYS and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        return "must be a non-negative integer"
    if key in STRING_LIST_KEYS and not (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return "must be an array of strings"
    allowed = ENUM_KEYS.get(key)
    if (
        allowed is not None
        and event_type != "hook.completed"
        and event_type != "hook.denied"
        and not (isinstance(value, str) and value in allowed)  # an array or object is unhashable
    ):
        return f"is {short(value)!r}, not one of {', '.join(sorted(allowed))}"
    if (
        key == "reason"
        and event_type in APPROVAL_EVENT_TYPES
        and not (isinstance(value, str) and value in REASONS)
    ):
        return f"is {short(value)!r}, not one of {', '.join(sorted(REASONS))}"
    return None


def envelope_type_problems(record: dict[str, Any]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for key in ("event_type", "run_id"):
        if key in record and not (isinstance(record[key], str) and record[key]):
            problems.append((key, "must be a non-empty string"))
    if "task_id" in record and not (record["task_id"] is None or isinstance(record["task_id"], str)):
        problems.append(("task_id", "must be a string or null"))
    sequence = record.get("sequence", 0)
    if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0:
        problems.append(("sequence", "must be a non-negative JSON integer"))
    if "data" in record and not isinstance(record["data"], dict):
        problems.append(("data", "must be an object"))
    if "event_id" in record and not isinstance(record["event_id"], str):
        problems.append(("event_id", "must be a string"))
    created_at = record.get("created_at", "")
    if "created_at" in record and not (isinstance(created_at, str) and parse_datetime(created_at)):
        problems.append(("created_at", "must be an ISO-8601 datetime string"))
    return problems


def parse_datetime(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > 80:
        return value[:77] + "..."
    if isinstance(value, dict | list):
        return type(value).__name__
    return value


def pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
