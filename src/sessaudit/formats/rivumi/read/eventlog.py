"""What verify_events hands on: the committed events of one Rivumi events.jsonl, its findings, usage
ledger and framing facts (spec §2, CONTRACT §4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessaudit.formats.rivumi.read.ledger import UsageRow
from sessaudit.model import Finding, Usage


@dataclass(slots=True)
class Event:
    """A committed event that decoded to an object (its envelope may still be faulty)."""

    line: int
    byte_offset: int
    sequence: int | None
    event_type: str | None
    data: dict[str, Any]
    record: dict[str, Any]
    terminated: bool = True


@dataclass(slots=True)
class EventLog:
    """What verify_events found: the events, findings in file order, the ledger and the framing facts."""

    path: str
    events: list[Event] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    usage_rows: list[UsageRow] = field(default_factory=list)
    bytes_read: int = 0
    sha256: str = ""
    line_count: int = 0
    torn_tail_bytes: int = 0  # bytes after the last LF that are not a complete event
    torn_tail_offset: int | None = None
    missing_final_newline: bool = False
    run_id: str | None = None
    task_id: str | None = None

    @property
    def last_sequence(self) -> int | None:
        """The last event's sequence in file order (what Rivumi's resume compares with the manifest)."""
        for event in reversed(self.events):
            if event.sequence is not None:
                return event.sequence
        return None

    @property
    def usage(self) -> Usage:
        rows = self.usage_rows
        return Usage.of(
            input=sum(row.input for row in rows),
            output=sum(row.output for row in rows),
            cache_read=sum(row.cache_read for row in rows),
            cache_write=0,
        )
