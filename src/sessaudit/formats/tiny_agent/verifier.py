"""The tiny-agent format's entry point, verify_tiny_agent_file: a file goes to the verifier of its version, v1
(a `"type":"session"` header, v1/) or v2 (verify_tiny_agent, the pass of v2/). Each version's verifier is
imported when a file of it is met: a v2 session never loads v1/, a v1 session never loads v2/."""

from __future__ import annotations

from typing import BinaryIO

from sessaudit.plugin import DEFAULT_OPTIONS, LineTap, SourceOutcome, VerifyOptions
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
        from sessaudit.formats.tiny_agent.v1.verifier import verify_tiny_agent_v1

        return verify_tiny_agent_v1(path, real_path, stream, size, options.limits)
    return verify_tiny_agent(path, real_path, stream, size, options, tap)


def verify_tiny_agent(
    path: str,
    real_path: str,
    stream: BinaryIO,
    size: int,
    options: VerifyOptions = DEFAULT_OPTIONS,
    tap: LineTap | None = None,
) -> SourceOutcome:
    """Verify the first `size` bytes of a tiny-agent session (v2; a v1 or newer header is unsupported).
    A `tap` sees the header and every transaction line once it is checked (not the lines after an
    unsupported header, a line over --max-line-bytes, or those after --max-findings).

    The fast path (v2/fast.py) tries first: it answers only for a session it proves accepted, and any
    doubt sends the file to the exact pass (the tap resumed after the lines it has seen). With
    SESSAUDIT_CHECK_FAST_PATH=1 the exact pass answers and the fast path runs beside it, compared
    (`differential_check`)."""
    from sessaudit.formats.tiny_agent.v2 import fast
    from sessaudit.formats.tiny_agent.v2.verification import _Verification

    if fast.checking():
        exact = _Verification(path, real_path, stream, size, options, tap).run()
        fast.differential_check(exact, path, real_path, stream, size, options)
        return exact
    return fast.verify_fast_first(path, real_path, stream, size, options, tap)
