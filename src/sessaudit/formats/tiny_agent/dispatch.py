"""Send a tiny-agent file to the verifier of its version: a v1 `"type":"session"` header, else v2."""

from __future__ import annotations

from typing import BinaryIO

from sessaudit.formats.interface import DEFAULT_OPTIONS, LineTap, SourceOutcome, VerifyOptions
from sessaudit.formats.tiny_agent.legacy_v1 import verify_tiny_agent_v1
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.strictjson import LineProblem, decode_line

# The header is line 1; a header longer than this is not one a v1 writer produced.
HEADER_PROBE_BYTES = 64 * 1024


def is_legacy_v1(stream: BinaryIO, size: int) -> bool:
    """Whether line 1 is a v1 header (`type` "session", `version` 1); the stream is left at offset 0."""
    head = stream.read(min(size, HEADER_PROBE_BYTES))
    stream.seek(0)
    end = head.find(b"\n")
    if end < 0:
        return False
    try:
        header = decode_line(head[:end], strip_bom=True)
    except LineProblem:
        return False
    return (
        isinstance(header, dict)
        and header.get("type") == "session"
        and type(header.get("version")) in (int, float)
        and header.get("version") == 1
    )


def verify_tiny_agent_file(
    path: str,
    real_path: str,
    stream: BinaryIO,
    size: int,
    options: VerifyOptions = DEFAULT_OPTIONS,
    tap: LineTap | None = None,
) -> SourceOutcome:
    """The engine's entry point for every tiny-agent source (CONTRACT §1 version routing); a `tap` sees
    the lines of a v2 session only (a v1 session never calls it)."""
    if is_legacy_v1(stream, size):
        return verify_tiny_agent_v1(path, real_path, stream, size, options.limits)
    return verify_tiny_agent(path, real_path, stream, size, options, tap)
