"""What every format verifier returns to the engine, and the input it is handed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessaudit.model import Finding, Session


@dataclass(slots=True)
class FileRead:
    """One file a verifier read: its path as reported, the byte range verified and that range's hash."""

    path: str
    real_path: str
    bytes: int
    sha256: str


@dataclass(slots=True)
class SourceOutcome:
    """A verifier's answer for one source; the engine adds evidence re-hashing and the source verdict."""

    format: str
    format_version: str | None
    files: list[FileRead]
    sessions: list[Session] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    native: dict[str, Any] = field(default_factory=dict)
