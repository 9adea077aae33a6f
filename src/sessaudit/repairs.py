"""What every native repair (`sessaudit seed PATH --native --output FILE`) shares: its exit statuses, the
refusal that carries one, the verified bytes of the evidence, lines encoded as the agents write them, and
the one way the new file is created (never an existing path, never through a symlink, fsynced, 0600).

Exit status: 0 written; 1 nothing written because the history is corrupt or nothing is open; 2 a usage
error (the output exists, no such run, no such line, a folder named); 3 the source could not be read or
changed while it was read."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from sessaudit.evidence import open_evidence
from sessaudit.outputsafety import safe
from sessaudit.plugin import FileRead, SourceOutcome, VerifyOptions
from sessaudit.withheld import cited, first_corrupting

WRITTEN: Final = 0
NOT_WRITTEN: Final = 1
USAGE: Final = 2
UNREADABLE: Final = 3


class Refused(Exception):
    """Why nothing was written, with the exit status."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def refuse_existing(output: str) -> None:
    if os.path.lexists(output):
        raise Refused(USAGE, f"{safe(output)} exists; the repaired copy is only ever written to a new file")


def verified_bytes(real: str, verified: FileRead, *reads: FileRead) -> bytes:
    """The file's bytes, as verified: the same length and sha256 as `verified` and every other read."""
    stream, _ = open_evidence(real)
    with stream:
        data: bytes = stream.read()
    digest = hashlib.sha256(data).hexdigest()
    if len(data) != verified.bytes or digest != verified.sha256 or any(r.sha256 != digest for r in reads):
        raise Refused(UNREADABLE, f"{safe(verified.path)} changed while it was read; nothing written")
    return data


def json_line(line: dict[str, Any]) -> bytes:
    """One compact JSON line, UTF-8 as the agents write it; \\u escapes where a copied string holds a lone
    surrogate (the only form that stays valid UTF-8)."""
    try:
        return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(line, separators=(",", ":")).encode()


def utc_ms(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and `Z`."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def write_new(output: str, body: bytes) -> None:
    """Create `output` (never an existing file, never through a symlink) and write `body` to it; a partial
    file is removed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(output, flags, 0o600)
    except FileExistsError:
        raise Refused(
            USAGE, f"{safe(output)} exists; the repaired copy is only ever written to a new file"
        ) from None
    except OSError as error:
        raise Refused(USAGE, f"cannot create {safe(output)}: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(body)
            stream.flush()
            os.fsync(stream.fileno())
    except BaseException:
        os.unlink(output)
        raise


def say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


Verify = Callable[[str, str, VerifyOptions], SourceOutcome]


def run_repair(repair: Callable[[], str]) -> int:
    """Run a native repair: what it wrote (or why nothing was) said on stderr; the exit status."""
    try:
        said = repair()
    except Refused as refusal:
        say(f"sessaudit: --native: {refusal}")
        return refusal.code
    say(f"sessaudit: {said}")
    return WRITTEN


def verified_source(
    path: str, output: str, run: str | None, sequence: int | None, verify: Verify, name_it: str
) -> tuple[str, SourceOutcome]:
    """The real path and the verification of the source a repair reads: refused when the output exists,
    when a folder is named (`name_it` says what to name instead), when it cannot be read, or when its
    history is corrupt."""
    refuse_existing(output)
    real = os.path.realpath(path)
    if os.path.isdir(real):
        raise Refused(USAGE, f"{safe(path)} is a folder: name {name_it}")
    outcome = verify(path, real, VerifyOptions(fork_run=run, fork_sequence=sequence))
    if not outcome.files:
        problem = outcome.findings[0].message if outcome.findings else f"cannot read {path}"
        raise Refused(UNREADABLE, safe(problem))
    first = first_corrupting(outcome.findings)
    if first is not None:
        why = f"the history is corrupt; first corrupting finding: {safe(cited(first))}"
        raise Refused(NOT_WRITTEN, f"no repair of {safe(path)}: {why}")
    return real, outcome
