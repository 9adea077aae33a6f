"""One rollout file, read once and read-only (sessaudit.jsonrecords with this format's codes): each
complete line decoded as strict JSON; SA801 (not strict JSON), SA802 (torn last line), SA803 (whole last
line without LF), SA804 (not an object), SA010/SA011/SA012 from the core."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.jsonrecords import Codes, JsonRecord, RecordFile, TooLarge, read_records
from sessaudit.limits import Limits

__all__ = ["CODES", "Record", "RolloutFile", "TooLarge", "read_rollout"]

CODES: Final = Codes(
    "SA801", "SA802", "SA803", "SA804", "Codex skips a line it cannot parse when it resumes the session"
)


class Record(JsonRecord):
    """One decoded object line of a rollout: `{"timestamp", "type", "payload"}` (spec §3)."""

    __slots__ = ()

    @property
    def kind(self) -> str | None:
        """The line's `type` (session_meta, response_item, event_msg, turn_context, compacted)."""
        kind = self.value.get("type")
        return kind if isinstance(kind, str) else None

    @property
    def payload(self) -> dict[str, Any]:
        """The line's payload object ({} when it has none)."""
        payload = self.value.get("payload")
        return payload if isinstance(payload, dict) else {}

    @property
    def item(self) -> str | None:
        """The payload's `type` (a response item's or an event's kind), or None."""
        kind = self.payload.get("type")
        return kind if isinstance(kind, str) else None

    @property
    def timestamp(self) -> str | None:
        stamp = self.value.get("timestamp")
        return stamp if isinstance(stamp, str) else None

    def is_event(self, *names: str) -> bool:
        return self.kind == "event_msg" and self.item in names

    def is_item(self, *names: str) -> bool:
        return self.kind == "response_item" and self.item in names

    @property
    def call_id(self) -> str | None:
        call_id = self.payload.get("call_id")
        return call_id if isinstance(call_id, str) else None


RolloutFile = RecordFile[Record]


def read_rollout(path: str, real_path: str, limits: Limits) -> RolloutFile:
    """Read `real_path` (reported as `path`); OSError when it cannot be opened, TooLarge when it is over
    `--max-file-bytes` (its records are all held in memory)."""
    return read_records(path, real_path, "rollout", limits, CODES, Record)
