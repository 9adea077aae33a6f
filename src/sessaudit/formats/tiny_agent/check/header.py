"""The header line (spec §4, CONTRACT §1): a v2 header, a legacy v1 header, a newer version, or corruption."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from sessaudit.formats.tiny_agent.check.observations import Observation
from sessaudit.formats.tiny_agent.read.digests import is_uuid7, uuid7_millis
from sessaudit.formats.tiny_agent.read.shapes import (
    MISSING,
    Violation,
    is_safe_integer,
    require_exact,
    require_id,
    require_integer,
    require_object,
    require_string,
    show,
)
from sessaudit.framing import Line

INVALID_HEADER: Final = "INVALID_HEADER"
UNSUPPORTED_VERSION: Final = "UNSUPPORTED_VERSION"
HEADER_KEYS: Final = frozenset(
    ("kind", "version", "id", "createdAt", "cwd", "provider", "model", "environmentIdentity")
)


class HeaderOutcome:
    """What line 1 says: the session id and format version as far as known, and whether it is usable."""

    __slots__ = (
        "created_at",
        "environment",
        "format_version",
        "native_code",
        "session_id",
        "unsupported",
        "violation",
    )

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.format_version: str | None = None
        self.created_at = 0
        self.environment = ""
        self.unsupported: str | None = None  # the SA003 message for a v1 or newer header
        self.native_code: str | None = None
        self.violation: Violation | None = None


def read_header(value: Any) -> HeaderOutcome:
    outcome = HeaderOutcome()
    if type(value) is dict:
        if is_uuid7(value.get("id")):
            outcome.session_id = value["id"]
        version = value.get("version", MISSING)
        if is_safe_integer(version, 2) and version == 2:
            outcome.format_version = "2"
        if value.get("type") == "session" and type(version) in (int, float) and version == 1:
            outcome.format_version = "1"
            outcome.native_code = INVALID_HEADER
            outcome.unsupported = (
                "a legacy tiny-agent v1 session: the v1 verifier is not in this release, so it is not "
                "verified; tiny-agent's v2 reducer rejects it (INVALID_HEADER, line 1)"
            )
            return outcome
    try:
        outcome.created_at, outcome.environment = _validate(value)
    except Violation as violation:
        version = value.get("version", MISSING) if type(value) is dict else MISSING
        if violation.code == UNSUPPORTED_VERSION and is_safe_integer(version, 3):
            outcome.format_version = str(int(version))
            outcome.native_code = UNSUPPORTED_VERSION
            outcome.unsupported = (
                f"a tiny-agent header of version {int(version)}: this release verifies version 2 only "
                "(tiny-agent's v2 reducer answers UNSUPPORTED_VERSION)"
            )
        else:
            outcome.violation = violation
    return outcome


def _validate(value: Any) -> tuple[int, str]:
    """tiny-agent's header check order: object → key set → kind → version → id → createdAt → strings."""
    header = require_object(value, INVALID_HEADER, "", "header")
    try:
        if not HEADER_KEYS.issuperset(header):
            require_exact(header, HEADER_KEYS, INVALID_HEADER, "", "header")
    except Violation as violation:
        if "type" in header:
            violation.message += ' (a legacy v1 header has "type")'
        raise
    kind = header.get("kind", MISSING)
    if kind != "header":
        raise Violation(INVALID_HEADER, "/kind", f'kind: expected "header", found {show(kind)}', rule="SA201")
    version = header.get("version", MISSING)
    if not (version == 2 and type(version) is not bool and type(version) in (int, float)):
        raise Violation(
            UNSUPPORTED_VERSION,
            "/version",
            f"version: expected 2, found {show(version)}",
            rule="SA202",
            evidence={"found": version if version is not MISSING else None},
        )
    require_id(header.get("id", MISSING), "/id", "header id", INVALID_HEADER)
    created_at = require_integer(header.get("createdAt", MISSING), INVALID_HEADER, "/createdAt", "createdAt")
    for name in ("cwd", "provider", "model"):
        require_string(header.get(name, MISSING), INVALID_HEADER, f"/{name}", name)
    environment = require_string(
        header.get("environmentIdentity", MISSING),
        INVALID_HEADER,
        "/environmentIdentity",
        "environmentIdentity",
    )
    return created_at, environment


def observations(outcome: HeaderOutcome, value: dict[str, Any], line: Line) -> Iterator[Observation]:
    """SA111 integral floats and SA402 id time ≠ createdAt on a valid v2 header."""
    for name in ("version", "createdAt"):
        if type(value[name]) is float:
            yield (
                "SA111",
                1,
                line.offset,
                None,
                f"/{name}",
                f"{name} is written as {value[name]!r}",
                {"field": name},
            )
    session_id = outcome.session_id
    if session_id is not None and uuid7_millis(session_id) != outcome.created_at:
        yield (
            "SA402",
            1,
            line.offset,
            None,
            "/id",
            f"the header id carries time {uuid7_millis(session_id)}, createdAt is {outcome.created_at}",
            {"id_millis": uuid7_millis(session_id), "created_at": outcome.created_at},
        )
