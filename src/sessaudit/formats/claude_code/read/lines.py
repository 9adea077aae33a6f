"""One transcript file, read once and read-only: its lines decoded as strict JSON (spec §2), its hash
(sessaudit.jsonrecords with Claude Code's codes).

Framing problems are findings here: a complete line that is not strict JSON (SA701), a torn last line
(SA702), a last line that is whole but lacks its LF (SA703), a value that is not an object (SA704), a line
over the line limit (SA010) or nested too deep (SA011)."""

from __future__ import annotations

from typing import Final

from sessaudit.jsonrecords import Codes, JsonRecord, RecordFile, TooLarge, read_records
from sessaudit.limits import Limits

__all__ = ["CODES", "Record", "TooLarge", "TranscriptFile", "read_transcript"]

CODES: Final = Codes("SA701", "SA702", "SA703", "SA704", "Claude Code skips it on resume")


class Record(JsonRecord):
    """One decoded object line of a transcript."""

    __slots__ = ()

    @property
    def kind(self) -> str | None:
        kind = self.value.get("type")
        return kind if isinstance(kind, str) else None

    @property
    def uuid(self) -> str | None:
        uuid = self.value.get("uuid")
        return uuid if isinstance(uuid, str) else None


TranscriptFile = RecordFile[Record]


def read_transcript(path: str, real_path: str, kind: str, limits: Limits) -> TranscriptFile:
    """Read `real_path` (reported as `path`); OSError when it cannot be opened, TooLarge when it is over
    `--max-file-bytes` (its records are all held in memory, with the session's other files). `kind` is
    "session" or "subagent"."""
    return read_records(path, real_path, kind, limits, CODES, Record)
