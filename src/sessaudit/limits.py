"""Resource limits (issue 9): how much one input may make sessaudit hold, walk or report, and their findings.

Every reader gets its limits through `VerifyOptions.limits`; an input over a limit is never half-trusted:
it gets a finding with verdict `unreadable` that names the limit and the flag that raises it, and the audit
is incomplete (exit 3, CONTRACT §3). The defaults and why they were chosen: docs/decisions.md, "Hardening".
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Final

from sessaudit.model import Finding

MIB: Final = 1024 * 1024

# The rules of this module (catalogue: rules.py, SA010–SA013).
LINE_TOO_LONG: Final = "SA010"
NESTING_TOO_DEEP: Final = "SA011"
FILE_TOO_LARGE: Final = "SA012"
TOO_MANY_FILES: Final = "SA013"
TOO_MANY_FINDINGS: Final = "SA014"
LIMIT_RULES: Final = frozenset(
    {LINE_TOO_LONG, NESTING_TOO_DEEP, FILE_TOO_LARGE, TOO_MANY_FILES, TOO_MANY_FINDINGS}
)

DEFAULT_MAX_LINE_BYTES: Final = 32 * MIB
DEFAULT_MAX_FILE_BYTES: Final = 128 * MIB
DEFAULT_MAX_FILES: Final = 100_000
DEFAULT_MAX_FINDINGS: Final = 10_000


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one audit (picklable: `--jobs` workers get a copy)."""

    # bytes of one JSONL line (without its LF) that a reader holds and decodes: `--max-line-bytes`
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    # bytes of a file that a reader must hold whole (a run directory's event log and JSON files, a store's
    # database or -wal, whose tables are read whole): `--max-file-bytes`. Streamed logs are not held.
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # directory entries one walk of a named directory looks at: `--max-files`
    max_files: int = DEFAULT_MAX_FILES
    # findings one source may record; past it, checking stops (the rest is only hashed): `--max-findings`
    max_findings: int = DEFAULT_MAX_FINDINGS

    def __post_init__(self) -> None:
        for name in ("max_line_bytes", "max_file_bytes", "max_files", "max_findings"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


DEFAULT_LIMITS: Final = Limits()
# For re-reading a verified prefix (seeds, digests): its lines already passed the audit's line limit, which
# may be above the default, so the re-read must not cut them at the default.
REREAD_LINE_BYTES: Final = sys.maxsize


def size_text(count: int) -> str:
    """`33554432 bytes (32 MiB)`: exact, with a readable size where it is a whole number of MiB."""
    if count >= MIB and count % MIB == 0:
        return f"{count} bytes ({count // MIB} MiB)"
    return f"{count} bytes"


def over_limit(findings: list[Finding]) -> list[Finding]:
    """The findings that say an input is over a limit (each makes the audit incomplete)."""
    return [item for item in findings if item.rule in LIMIT_RULES]


def incomplete_reason(path: str, findings: list[Finding]) -> str | None:
    """One line for the audit's `incomplete` list when `findings` hold a limit finding, else None."""
    names = sorted({item.rule for item in over_limit(findings)})
    if not names:
        return None
    return f"{path}: over a limit ({', '.join(names)}); not fully verified"


def line_too_long_message(number: int, length: int, limit: int) -> str:
    """SA010's message: the line, its length and the limit with the flag that raises it."""
    return (
        f"line {number} is {length} bytes long (without its LF), over the --max-line-bytes limit of "
        f"{size_text(limit)}: it was hashed but not read or verified"
    )


def too_many_findings_message(limit: int, line: int) -> str:
    """SA014's message: where checking stopped, and the flag that raises the limit."""
    return (
        f"{limit} findings were recorded (the --max-findings limit); checking stopped at line {line} and the "
        "rest of the file was hashed but not verified"
    )
