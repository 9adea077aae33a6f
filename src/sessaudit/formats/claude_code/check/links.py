"""The links between records (spec §1.6, §4.1, §7): unique uuids per file (SA709), parents that resolve
(SA710), tool results that answer a call (SA711), one sessionId per file outside resume copies (SA712),
time that does not run backwards in a file (SA713)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sessaudit.formats.claude_code.read.elsewhere import Elsewhere
from sessaudit.formats.claude_code.read.lines import Record, TranscriptFile
from sessaudit.formats.claude_code.spec.records import content_blocks
from sessaudit.model import Finding
from sessaudit.rules import finding
from sessaudit.times import moment_from_text


@dataclass(slots=True)
class Links:
    findings: list[Finding] = field(default_factory=list)
    # tool_use id -> (record, block index) per file path, and the ids answered per file path
    calls: dict[str, dict[str, tuple[Record, int]]] = field(default_factory=dict)
    answered: dict[str, set[str]] = field(default_factory=dict)


def tool_uses(record: Record) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, block) for i, block in enumerate(_blocks(record)) if block.get("type") == "tool_use"]


def tool_results(record: Record) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, block) for i, block in enumerate(_blocks(record)) if block.get("type") == "tool_result"]


def _blocks(record: Record) -> list[Mapping[str, Any]]:
    return content_blocks(record.value) if record.kind in ("user", "assistant") else []


def check_links(files: list[TranscriptFile], session_id: str, elsewhere: Elsewhere) -> Links:
    links = Links()
    session_uuids = {record.uuid for file in files for record in file.records if record.uuid}
    for file in files:
        others = {
            block.get("id")
            for other in files
            if other is not file
            for record in other.records
            for _, block in tool_uses(record)
        }
        _file_links(file, session_id, session_uuids, others, elsewhere, links)
    return links


def _file_links(
    file: TranscriptFile,
    session_id: str,
    session_uuids: set[str],
    session_calls: set[Any],
    elsewhere: Elsewhere,
    links: Links,
) -> None:
    first: dict[str, Record] = {}
    calls = links.calls.setdefault(file.path, {})
    answered = links.answered.setdefault(file.path, set())
    expected = session_id if file.kind == "session" else _first_session(file)
    previous: tuple[datetime, Record] | None = None
    file_calls = {block.get("id") for record in file.records for _, block in tool_uses(record)}
    for record in file.records:
        uuid = record.uuid
        if uuid is not None:
            if uuid in first:
                links.findings.append(
                    finding(
                        "SA709",
                        f"line {record.line} repeats uuid {uuid} of line {first[uuid].line}",
                        **record.where("/uuid"),
                        evidence={"uuid": uuid, "first_line": first[uuid].line},
                    )
                )
            else:
                first[uuid] = record
        parent = record.value.get("parentUuid")
        if isinstance(parent, str) and parent not in session_uuids and not elsewhere.record(parent):
            links.findings.append(
                finding(
                    "SA710",
                    f"line {record.line}: parentUuid {parent} is in none of the session's files nor in its "
                    "project directory",
                    **record.where("/parentUuid"),
                    evidence={"parent_uuid": parent},
                )
            )
        leaf = record.value.get("leafUuid") if record.kind == "summary" else None
        if isinstance(leaf, str) and leaf not in session_uuids and not elsewhere.record(leaf):
            links.findings.append(
                finding(
                    "SA715",
                    f"line {record.line}: the summary's leafUuid {leaf} is in none of the session's files "
                    "nor in its project directory",
                    **record.where("/leafUuid"),
                    evidence={"leaf_uuid": leaf},
                )
            )
        sid = record.value.get("sessionId")
        if (
            isinstance(sid, str)
            and expected is not None
            and sid != expected
            and not (uuid is not None and elsewhere.record(uuid))
        ):
            links.findings.append(
                finding(
                    "SA712",
                    f"line {record.line}: sessionId {sid} is not the file's ({expected}) and the record is "
                    "no copy of one in another file",
                    **record.where("/sessionId"),
                    evidence={"session_id": sid, "expected": expected},
                )
            )
        stamp = moment_from_text(record.value.get("timestamp"))
        if stamp is not None:
            if previous is not None and stamp < previous[0]:
                links.findings.append(
                    finding(
                        "SA713",
                        f"line {record.line}: timestamp {record.value['timestamp']} is earlier than line "
                        f"{previous[1].line}'s ({previous[1].value['timestamp']})",
                        **record.where("/timestamp"),
                    )
                )
            previous = (stamp, record)
        for index, block in tool_uses(record):
            if isinstance(block.get("id"), str):
                calls.setdefault(block["id"], (record, index))
        for index, block in tool_results(record):
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str):
                continue
            answered.add(call_id)
            if call_id in calls:
                continue
            later = call_id in file_calls
            if not later and (call_id in session_calls or elsewhere.tool_use(call_id)):
                continue  # issued in another file of the session or of the project (resume, continue)
            problem = "before its tool_use" if later else "which no earlier tool_use issued"
            links.findings.append(
                finding(
                    "SA711",
                    f"line {record.line}: tool_result answers {call_id}, {problem}",
                    **record.where(f"/message/content/{index}/tool_use_id"),
                    evidence={"tool_use_id": call_id},
                )
            )


def _first_session(file: TranscriptFile) -> str | None:
    for record in file.records:
        sid = record.value.get("sessionId")
        if isinstance(sid, str):
            return sid
    return None
