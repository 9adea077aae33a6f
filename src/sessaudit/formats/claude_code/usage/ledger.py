"""The exact usage ledger of one Claude Code session: one row per API response (spec §5, §6, §9).

Input: the decoded records of the session's files (its transcript and its sub-agent files, both
layouts) with their line numbers, and optionally other sessions' files so that lines copied from them
on resume are recognised. No I/O here.

Rules, in order:

1. `<synthetic>` assistant lines (made by Claude Code, never an API response) are left out, and listed.
2. Lines with the same `uuid` are one record: a resume copy (same uuid, another session's file) or a
   replay. The record counts where it was made: a non-sidechain copy before a sidechain one, then the
   earliest file (files are ranked by their latest timestamp, then by the order given).
3. The lines of one response share `message.id` and, when present, `requestId`, and repeat the prompt
   counts (input, cache write, cache read; §5.2). A line continues the response of the nearest assistant
   line up its `parentUuid` chain (through tool results and progress lines) when that line has the same
   `message.id`, the same `requestId` and the same prompt counts; otherwise it starts a response.
4. Two responses with one `message.id` and the same prompt counts are one response seen twice when they
   share a `requestId` (a copy with new uuids) or when one is a sidechain and the other is not (a
   `/btw` replay, ccusage #913: the non-sidechain copy made it). Any other responses sharing a
   `message.id` are kept apart and flagged `shared_id` (a gateway returning one constant id and no
   `requestId`, ccusage #1635).
5. A response's usage is that of its line with the greatest total (input + output + cache write + cache
   read; ties: the later line), never a sum and never the first line (ccusage #705, #938). When that
   line has `stop_reason: null` the output is a placeholder the log never finalised: `placeholder`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from sessaudit.formats.claude_code.usage.tokens import ZERO, Tokens, read_tokens

SYNTHETIC_MODEL: Final = "<synthetic>"
MAX_WALK: Final = 10_000  # parent steps from an assistant line to the previous one (a cycle guard)

Location = tuple[str, int]  # (file path, 1-based line)
AGENT_NAME: Final = re.compile(r"agent-([^/\\]+)\.jsonl\Z")
# the source's `native` key (the verifier's): the files of the sessions it was resumed from, as read,
# [{"path", "bytes", "sha256"}] (paths as reported, beside the source's), so that the warehouse recognises
# the same copies
RESUMED_FROM: Final = "resumed_from"


def agent_of(path: str) -> str | None:
    """The agent id an `agent-<id>.jsonl` file name carries (spec §1.4), or None."""
    found = AGENT_NAME.search(path)
    return found.group(1) if found else None


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One file's decoded records as (line number, record); `agent_id` from an `agent-<id>.jsonl` name."""

    path: str
    records: Sequence[tuple[int, Mapping[str, Any]]]
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """One API response. `file`/`line` locate the line its usage is taken from; `lines` are all of its
    lines where it was made; `copies` its lines elsewhere (resume copies, replays), never counted."""

    message_id: str
    request_id: str | None
    session_id: str | None
    agent_id: str | None
    sidechain: bool
    model: str | None
    timestamp: str | None
    file: str
    line: int
    lines: tuple[Location, ...]
    tokens: Tokens
    stop_reason: str | None
    placeholder: bool
    copies: tuple[Location, ...] = ()
    shared_id: bool = False

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.message_id, self.request_id)

    @property
    def anthropic_id(self) -> bool:
        """Whether `message.id` looks like an Anthropic or Bedrock id (`msg_…`), not a gateway's."""
        return self.message_id.startswith("msg_")


@dataclass(frozen=True, slots=True)
class Ledger:
    """`responses`: made in the session's own files; `elsewhere`: made in the other files given and
    copied into the session's (not the session's usage); `skipped`: assistant lines with no usable
    `message.id` or `usage`, with the reason."""

    responses: tuple[Response, ...]
    elsewhere: tuple[Response, ...] = ()
    synthetic: tuple[Location, ...] = ()
    skipped: tuple[tuple[str, int, str], ...] = ()

    def totals(self) -> Tokens:
        total = ZERO
        for response in self.responses:
            total = total + response.tokens
        return total


@dataclass(slots=True)
class _Line:
    rank: tuple[str, int]
    own: bool  # in the session's files (not `others`)
    file: str
    line: int
    uuid: str | None
    parent: str | None
    message_id: str
    request_id: str | None
    session_id: str | None
    agent_id: str | None
    sidechain: bool
    model: str | None
    timestamp: str | None
    stop_reason: str | None
    tokens: Tokens
    copies: list[Location] = field(default_factory=list)


@dataclass(slots=True)
class _Segment:
    lines: list[_Line]
    copies: list[Location] = field(default_factory=list)

    @property
    def first(self) -> _Line:
        return self.lines[0]

    @property
    def sidechain(self) -> bool:
        return all(line.sidechain for line in self.lines)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _rank(file: TranscriptFile, index: int) -> tuple[str, int]:
    latest = max(
        (stamp for _, record in file.records if (stamp := _text(record.get("timestamp")))), default=""
    )
    return (latest, index)


def _assistant(
    record: Mapping[str, Any], file: TranscriptFile, number: int, rank: tuple[str, int], own: bool
) -> _Line | str:
    """The line's response data, or why it has none."""
    message = record.get("message")
    if not isinstance(message, Mapping):
        return "no message"
    if message.get("model") == SYNTHETIC_MODEL:
        return "synthetic"
    message_id = _text(message.get("id"))
    if not message_id:
        return "no message.id"
    tokens = read_tokens(message.get("usage"))
    if tokens is None:
        return "no usable usage"
    return _Line(
        rank,
        own,
        file.path,
        number,
        _text(record.get("uuid")),
        _text(record.get("parentUuid")),
        message_id,
        _text(record.get("requestId")) or None,
        _text(record.get("sessionId")),
        _text(record.get("agentId")) or file.agent_id,
        record.get("isSidechain") is True,
        _text(message.get("model")),
        _text(record.get("timestamp")),
        _text(message.get("stop_reason")),
        tokens,
    )


def build_ledger(files: Sequence[TranscriptFile], others: Sequence[TranscriptFile] = ()) -> Ledger:
    """The ledger of the session whose files are `files`; `others` are other sessions' files (e.g. the one
    it was resumed from) whose responses are recognised but not counted."""
    parents: dict[str, str | None] = {}
    by_uuid: dict[str, list[_Line]] = {}
    loose: list[_Line] = []
    synthetic: list[Location] = []
    skipped: list[tuple[str, int, str]] = []
    everything = [(file, True) for file in files] + [(file, False) for file in others]
    for index, (file, own) in enumerate(everything):
        rank = _rank(file, index)
        for number, record in file.records:
            uuid = _text(record.get("uuid"))
            if uuid is not None and uuid not in parents:
                parents[uuid] = _text(record.get("parentUuid"))
            if record.get("type") != "assistant":
                continue
            found = _assistant(record, file, number, rank, own)
            if isinstance(found, str):
                if own and found == "synthetic":
                    synthetic.append((file.path, number))
                elif own:
                    skipped.append((file.path, number, found))
            elif found.uuid is None:
                loose.append(found)
            else:
                by_uuid.setdefault(found.uuid, []).append(found)
    origins = loose
    for copies in by_uuid.values():
        copies.sort(key=lambda line: (line.sidechain, line.rank, line.line))
        origin = copies[0]
        origin.copies.extend((line.file, line.line) for line in copies[1:])
        origins.append(origin)
    origins.sort(key=lambda line: (line.rank, line.line))
    segments = _segments(origins, parents)
    # responses in the order they were made: their first line's time, then file and line
    own_paths = {file.path for file in files}
    merged = sorted(_merge(segments), key=lambda s: (s.first.timestamp or "", s.first.rank, s.first.line))
    made = [_response(segment) for segment in merged]
    sharing: dict[str, int] = {}
    for response, _ in made:
        sharing[response.message_id] = sharing.get(response.message_id, 0) + 1
    responses: list[Response] = []
    elsewhere: list[Response] = []
    for response, own in made:
        if sharing[response.message_id] > 1:
            response = replace(response, shared_id=True)
        if own:
            responses.append(response)
        elif any(path in own_paths for path, _ in response.copies):
            elsewhere.append(response)
    return Ledger(tuple(responses), tuple(elsewhere), tuple(synthetic), tuple(skipped))


def _segments(origins: list[_Line], parents: dict[str, str | None]) -> list[_Segment]:
    """Rule 3: lines → responses along the uuid chain."""
    of_uuid: dict[str, _Segment] = {}
    segments: list[_Segment] = []
    for line in origins:
        previous = _previous_assistant(line.parent, parents, of_uuid)
        segment = of_uuid.get(previous) if previous is not None else None
        if segment is None or not _continues(segment.lines[-1], line):
            segment = _Segment([])
            segments.append(segment)
        segment.lines.append(line)
        if line.uuid is not None:
            of_uuid[line.uuid] = segment
    return segments


def _previous_assistant(
    start: str | None, parents: dict[str, str | None], of_uuid: dict[str, _Segment]
) -> str | None:
    current, steps = start, 0
    while current is not None and steps < MAX_WALK:
        if current in of_uuid:
            return current
        current, steps = parents.get(current), steps + 1
    return None


def _continues(last: _Line, line: _Line) -> bool:
    return (
        last.message_id == line.message_id
        and last.request_id == line.request_id
        and last.tokens.prompt == line.tokens.prompt
    )


def _merge(segments: list[_Segment]) -> list[_Segment]:
    """Rule 4: one response seen twice is merged; responses left sharing a message.id are flagged."""
    by_id: dict[str, list[_Segment]] = {}
    for segment in segments:
        kept = by_id.setdefault(segment.first.message_id, [])
        twin = next((other for other in kept if _same_response(other, segment)), None)
        if twin is None:
            kept.append(segment)
            continue
        if twin.sidechain and not segment.sidechain:  # the parent made it; the sidechain replayed it
            twin.lines, segment.lines = segment.lines, twin.lines
        twin.copies.extend((line.file, line.line) for line in segment.lines)
        twin.copies.extend(location for line in segment.lines for location in line.copies)
    out: list[_Segment] = []
    for segment in segments:
        group = by_id[segment.first.message_id]
        if any(segment is kept for kept in group):
            out.append(segment)
    return out


def _same_response(kept: _Segment, other: _Segment) -> bool:
    a, b = kept.first, other.first
    if a.tokens.prompt != b.tokens.prompt:
        return False
    if a.request_id is not None and a.request_id == b.request_id:
        return True
    return kept.sidechain != other.sidechain


def _response(segment: _Segment) -> tuple[Response, bool]:
    """The segment's response, and whether it was made in the session's files."""
    lines = segment.lines
    best = max(range(len(lines)), key=lambda i: (lines[i].tokens.total, i))
    final = lines[best]
    copies = [*segment.copies, *(location for line in lines for location in line.copies)]
    response = Response(
        final.message_id,
        final.request_id,
        final.session_id,
        final.agent_id,
        final.sidechain,
        final.model,
        final.timestamp,
        final.file,
        final.line,
        tuple((line.file, line.line) for line in lines),
        final.tokens,
        final.stop_reason,
        final.stop_reason is None,
        tuple(copies),
        False,
    )
    return response, final.own
