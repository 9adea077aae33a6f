"""What a format plugin gives `sessaudit load` (FormatPlugin.warehouse): its row extraction, and optionally
the ways to extract in the verifier's own pass (one read) or beside it in another process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sessaudit.model import Finding, Source
from sessaudit.warehouse.drafts import Extraction

# (source, real path, its findings, source id, into, max line bytes): add the verified history's rows to
# `into`; raise sessaudit.warehouse.extract.EvidenceChanged when the evidence is no longer what was verified
Extractor = Callable[[Source, str, list[Finding], str, Extraction, int], None]


class OnePass(Protocol):
    """A LineTap (sessaudit.plugin) that extracts each line's rows as the verifier checks it."""

    into: Extraction

    def __call__(self, line: Any, value: Any, session_id: str | None, findings: list[Finding]) -> None: ...

    def complete(self, source: Source, findings: list[Finding]) -> bool:
        """Whether the rows extracted are the verified history's exactly (then `into` is finished)."""
        ...


class BesidePass(Protocol):
    """Extracts every line of a file while another process verifies it; `matches` says whether the rows
    are the verified history's exactly."""

    def extract(self, real_path: str, source_id: str, into: Extraction, max_line_bytes: int) -> None: ...

    def matches(self, source: Source, findings: list[Finding]) -> bool: ...


@dataclass(frozen=True, slots=True)
class WarehousePart:
    extract: Extractor
    one_pass: Callable[[str, str, Extraction], OnePass] | None = None  # (path, source id, into)
    beside: Callable[[], BesidePass] | None = None
    # a session's loaded facts are counted as its message rows (as the report counts them), not all rows
    counts_messages: bool = False
