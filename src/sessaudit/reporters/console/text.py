"""Text for a terminal: escaping, paths shortened in the middle, short pointers, times a person reads."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from sessaudit.outputsafety import safe

# an id a person copies: a UUID, or a run of 16+ hex digits (run ids, digests)
_ID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{16,}"
)
# a field ending in `_at` followed by epoch milliseconds (`accepted_at 1785412800303`)
_EPOCH_MILLISECONDS = re.compile(r"\b(\w+_at)([ =:]+)(\d{12,14})\b")
_POINTER_LIMIT = 60
ELLIPSIS = "…"


def shorten_path(path: str, limit: int) -> str:
    """`path` in at most `limit` characters where it can be: middle folders become "…" first, then the
    file name loses characters from its middle, but never inside an id (a UUID or long hex run), so what
    is left can still be searched for. When the ids alone are longer, they are kept whole (over `limit`)."""
    if len(path) <= limit:
        return path
    parts = path.split("/")
    name = parts[-1]
    # keep as many leading folders as fit, the file name always: a/b/…/name, then a/…/name, then …/name
    for keep in range(len(parts) - 2, -1, -1):
        candidate = "/".join([*parts[:keep], ELLIPSIS, name]) if keep < len(parts) - 1 else path
        if len(candidate) <= limit:
            return candidate
    prefix = f"{ELLIPSIS}/" if len(parts) > 1 else ""
    shortened = prefix + _shorten_name(name, limit - len(prefix))
    return shortened if len(shortened) <= limit else _shorten_name(name, limit)


def _shorten_name(name: str, limit: int) -> str:
    """Cut the text between ids from the front of the name (its start is a date or a kind, the id is
    what tells files apart), keeping every id and the extension whole."""
    if len(name) <= limit:
        return name
    ids = list(_ID.finditer(name))
    if not ids:
        keep = max(limit - 1, 2)
        head = keep // 2
        return name[:head] + ELLIPSIS + name[len(name) - (keep - head) :]
    first = ids[0].start()
    tail = name[first:]
    room = limit - len(tail) - 1
    if room < 8:  # too little of the name's start would be left to tell anything
        return ELLIPSIS + tail if first else tail
    return name[:room] + ELLIPSIS + tail


def short_pointer(pointer: str, limit: int = _POINTER_LIMIT) -> str:
    """A JSON pointer a person can read: long runs of one repeated step are counted
    (`/0/0/…/0 (512 levels)`), anything still over `limit` is cut in the middle."""
    if len(pointer) <= limit:
        return pointer
    steps = pointer.split("/")[1:]
    if steps and len(set(steps)) == 1:
        step = steps[0]
        return f"/{step}/{step}/{ELLIPSIS}/{step} ({len(steps)} levels)"
    head = limit // 2
    return f"{pointer[:head]}{ELLIPSIS}{pointer[-(limit - head - 1) :]} ({len(steps)} levels)"


def readable_epochs(text: str) -> str:
    """Epoch milliseconds in a message (`accepted_at 1785412800303`) also as ISO-8601 UTC."""

    def convert(match: re.Match[str]) -> str:
        try:
            moment = datetime.fromtimestamp(int(match.group(3)) / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}{iso(moment)}"

    return _EPOCH_MILLISECONDS.sub(convert, text)


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with milliseconds, as the report writes times (`2026-11-30T14:05:52.118Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def relative(moment: datetime, now: datetime) -> str:
    """`moment` from `now`'s point of view in the largest whole unit: `40 s ago`, `3 h ago`, `2 d ago`."""
    seconds = (now - moment).total_seconds()
    amount = abs(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if amount >= size:
            count = f"{int(amount // size)} {unit}"
            break
    else:
        count = f"{int(amount)} s"
    return f"{count} ago" if seconds >= 0 else f"{count} ahead of this clock"


def when(text: str | None, now: datetime | None) -> str:
    """A recorded time as a person reads it: ISO-8601 UTC, and how long ago when a clock is given."""
    if text is None:
        return "not recorded"
    moment = parse_time(text)
    if moment is None or now is None:
        return safe(text)
    return f"{safe(text)} ({relative(moment, now)})"


def short_json(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
