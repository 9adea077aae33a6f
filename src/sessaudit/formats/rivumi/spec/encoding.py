"""Rivumi's byte encodings: sorted compact JSON, declaration-order dumps, datetimes, atomic writes."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FILE_MODE = 0o600


def dump_sorted(value: Any) -> str:
    """The atomic-JSON helper's and the event sink's form: sorted keys, compact, non-ASCII raw."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dump_declared(value: dict[str, Any], order: Sequence[str]) -> str:
    """A pydantic model dump: keys in declaration order (`order`, then any others), compact, raw."""
    ordered = {key: value[key] for key in order if key in value}
    ordered.update((key, item) for key, item in value.items() if key not in ordered)
    return json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)


def format_datetime(moment: datetime) -> str:
    """UTC as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, the fraction omitted when the microseconds are 0."""
    moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    return text + "Z"


def write_atomic(directory: Path, name: str, data: bytes, temp_suffix: str) -> None:
    """Write `name` through a temp file `.<name>.<suffix>` in the same directory, then rename over it."""
    temp = directory / f".{name}.{temp_suffix}"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        os.write(descriptor, data)
    finally:
        os.close(descriptor)
    os.replace(temp, directory / name)


def append_bytes(path: Path, data: bytes) -> None:
    """The event sink: O_APPEND, mode 0600, all bytes written."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)
