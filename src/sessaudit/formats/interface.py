"""What every format verifier returns to the engine, and the input it is handed."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from sessaudit.framing import Line
from sessaudit.limits import DEFAULT_LIMITS, Limits
from sessaudit.model import Finding, Session

if TYPE_CHECKING:  # annotations only: both import jsonschema, which a plain verify never needs
    from sessaudit.current import CurrentSource
    from sessaudit.formats.half_pi.claims.claims_file import Claim


@dataclass(slots=True)
class FileRead:
    """One file a verifier read: its path as reported, the byte range verified and that range's hash."""

    path: str
    real_path: str
    bytes: int
    sha256: str
    # the file's size when it was opened; more than `bytes` when the file shrank while it was read
    opened_bytes: int | None = None


@dataclass(slots=True)
class SourceOutcome:
    """A verifier's answer for one source; the engine adds evidence re-hashing and the source verdict."""

    format: str
    format_version: str | None
    files: list[FileRead]
    sessions: list[Session] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    native: dict[str, Any] = field(default_factory=dict)
    answered_claims: list[int] = field(default_factory=list)  # `--claims` indices this source answered


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """What a verifier may be told beyond the bytes: the current configuration and a chosen fork point."""

    current: CurrentSource | None = None
    fork_run: str | None = None  # `sessaudit seed --run`: the run whose seed `fork_sequence` moves
    fork_sequence: int | None = None  # `sessaudit seed --sequence N`
    claims: tuple[Claim, ...] = ()  # `--claims FILE`, parsed
    claims_path: str | None = None
    limits: Limits = DEFAULT_LIMITS  # `--max-line-bytes` and the other resource limits (sessaudit.limits)
    allow_empty: bool = False  # `--allow-empty`: a named directory without a session log does not make the
    # audit incomplete (its SA006 note is still reported)


DEFAULT_OPTIONS = VerifyOptions()

# A line's value, handed to a LineTap, when the line could not be decoded.
UNDECODED: Final[Any] = object()


class LineTap(Protocol):
    """Sees each line a line-by-line verifier has just checked, in order, with its decoded value (or
    UNDECODED), the session id its header gave, and the findings so far (a list that only grows while the
    file is read). `sessaudit load` extracts rows this way in the verifier's own pass."""

    def __call__(self, line: Line, value: Any, session_id: str | None, findings: list[Finding]) -> None: ...


def source_sha256(files: list[FileRead]) -> str | None:
    """One file: its hash; several: sha256 of `<sha256>  <relative path>\\n` lines sorted by path.

    Paths are relative to the first file's folder (a Rivumi run directory, a Half-Pi store's folder), so
    the hash does not depend on how the source was named on the command line."""
    if not files:
        return None
    if len(files) == 1:
        return files[0].sha256
    root = os.path.dirname(files[0].path)
    lines = sorted(f"{item.sha256}  {os.path.relpath(item.path, root or '.')}\n" for item in files)
    return hashlib.sha256("".join(lines).encode()).hexdigest()
