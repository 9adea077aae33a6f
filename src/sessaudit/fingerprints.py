"""Finding fingerprints shared by SARIF `partialFingerprints` and baselines, so the two always agree."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from sessaudit.model import Finding

FINGERPRINT_KEY = "sessauditFinding/v1"
_DIGITS = re.compile(r"[0-9]+")


def artifact_uri(path: str, base: Path | None = None) -> str:
    """A finding's path as a URI reference: relative to the working directory with POSIX separators and
    percent-encoded; a path outside the working directory becomes an absolute `file://` URI."""
    posix = path.replace(os.sep, "/")
    if not PurePosixPath(posix).is_absolute() and not os.path.isabs(path):
        # every reserved character is encoded (":" too, so a first segment never reads as a scheme)
        return quote(posix, safe="/")
    working = (base or Path.cwd()).resolve()
    absolute = Path(path).resolve()
    try:
        return quote(absolute.relative_to(working).as_posix(), safe="/")
    except ValueError:
        return absolute.as_uri()


def finding_uri(item: Finding, base: Path | None = None) -> str:
    """The artifact URI of a finding's path; the empty string for a finding about no file."""
    return artifact_uri(item.location.path, base) if item.location.path is not None else ""


def fingerprint(item: Finding, uri: str) -> str:
    """A fingerprint stable across runs and across growth of the log elsewhere: the rule, the artifact,
    the session, the finding's anchor (seq, else table/rowid, else JSON pointer, else line), and the message
    with whitespace collapsed and every run of digits replaced by `#` (offsets and counts inside a message
    move when a log grows; the anchor already pins the place). The severity is left out, so a `--severity`
    override never turns a baselined finding into a new one."""
    location = item.location
    if location.seq is not None:
        anchor = f"seq={location.seq}"
    elif location.table is not None or location.rowid is not None:
        anchor = f"row={location.table}/{location.rowid}"
    elif location.pointer is not None:
        anchor = f"pointer={location.pointer}"
    elif location.line is not None:
        anchor = f"line={location.line}"
    else:
        anchor = ""
    message = _DIGITS.sub("#", " ".join(item.message.split()))
    parts = (item.rule, _normal_uri(uri), location.session_id or "", anchor, message)
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def _normal_uri(uri: str) -> str:
    """`./logs/a.jsonl` and `logs/a.jsonl` name one file: relative references are normalised."""
    if not uri or uri.startswith("file:"):
        return uri
    return posixpath.normpath(uri)
