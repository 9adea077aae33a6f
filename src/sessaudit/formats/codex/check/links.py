"""The links between a rollout's lines (spec §3, §5, §7): session_meta first (SA806), calls and outputs
paired by call_id (SA808 repeated, SA809 an output without its call), the cumulative token totals never
decreasing (SA810; the context-window fill excepted) and each growth matching its last usage (SA811), the
parts of each usage within their whole (SA812), times never going back (SA813), and the file name agreeing
with the session_meta (SA814)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from sessaudit.formats.codex.check.copies import Segments
from sessaudit.formats.codex.read.layout import name_parts
from sessaudit.formats.codex.read.lines import Record, RolloutFile
from sessaudit.formats.codex.spec.records import CALLS, OUTPUTS, USAGE_FIELDS
from sessaudit.model import Finding
from sessaudit.rules import finding
from sessaudit.times import moment_from_text

WIDEST_OFFSET: Final = timedelta(hours=14)


@dataclass(slots=True)
class Links:
    """What the checks learned: the call lines by call_id, and the call_ids that have an output."""

    calls: dict[str, Record] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)


def usage_of(value: Any) -> dict[str, int] | None:
    """A usage object's five counts (a missing one is 0), or None when it is not an object of integers."""
    if not isinstance(value, dict):
        return None
    counts: dict[str, int] = {}
    for name in USAGE_FIELDS:
        count = value.get(name, 0)
        if not isinstance(count, int) or isinstance(count, bool):
            return None
        counts[name] = count
    return counts


def token_info(record: Record) -> Mapping[str, Any] | None:
    """A token_count event's `info` object, or None (not a token_count, or info null)."""
    if not record.is_event("token_count"):
        return None
    info = record.payload.get("info")
    return info if isinstance(info, dict) else None


def is_fill(total: Mapping[str, int], info: Mapping[str, Any]) -> bool:
    """Codex's context-window fill (spec §5): the total set to {total_tokens = window, others 0}."""
    window = info.get("model_context_window")
    others = [total[name] for name in USAGE_FIELDS if name != "total_tokens"]
    return isinstance(window, int) and total["total_tokens"] == window and not any(others)


def check_links(file: RolloutFile, segments: Segments) -> Links:
    links = Links()
    records = file.records
    found = links.findings
    if records and segments.meta != 0:
        first = records[0]
        said = (
            "has no session_meta"
            if segments.meta is None
            else (f"opens with a {first.kind} line; its session_meta is line {records[segments.meta].line}")
        )
        found.append(finding("SA806", f"the rollout {said}", **first.where("/type")))
    _pairs(records, links)
    _totals(records, found)
    _times(records, found)
    if segments.meta is not None:
        found.extend(_name(file, records[segments.meta]))
    return links


def _pairs(records: list[Record], links: Links) -> None:
    outputs: dict[str, Record] = {}
    for record in records:
        if record.kind != "response_item":
            continue
        call_id = record.call_id
        if call_id is None:
            continue
        if record.item in CALLS:
            if call_id in links.calls:
                first = links.calls[call_id]
                links.findings.append(
                    finding(
                        "SA808",
                        f"line {record.line}: call {call_id} was already made on line {first.line}",
                        **record.where("/payload/call_id"),
                        evidence={"call_id": call_id, "first_line": first.line},
                    )
                )
                continue
            links.calls[call_id] = record
        elif record.item in OUTPUTS:
            if call_id in outputs:
                first = outputs[call_id]
                links.findings.append(
                    finding(
                        "SA808",
                        f"line {record.line}: call {call_id} was already answered on line {first.line}",
                        **record.where("/payload/call_id"),
                        evidence={"call_id": call_id, "first_line": first.line},
                    )
                )
                continue
            outputs[call_id] = record
            if call_id not in links.calls:
                links.findings.append(
                    finding(
                        "SA809",
                        f"line {record.line}: output for call {call_id}, which no earlier line makes; "
                        "Codex drops it before the next request",
                        **record.where("/payload/call_id"),
                        evidence={"call_id": call_id},
                    )
                )
            else:
                links.answered.add(call_id)


def _totals(records: list[Record], found: list[Finding]) -> None:
    previous: dict[str, int] | None = None
    previous_line = 0
    for record in records:
        info = token_info(record)
        if info is None:
            continue
        total = usage_of(info.get("total_token_usage"))
        last = usage_of(info.get("last_token_usage"))
        for name, counts in (("total_token_usage", total), ("last_token_usage", last)):
            if counts is not None:
                found.extend(_parts(record, name, counts))
        if total is None:
            continue
        if previous is not None and total != previous:
            fell = [name for name in USAGE_FIELDS if total[name] < previous[name]]
            if fell and not is_fill(total, info):
                shown = ", ".join(f"{name} {previous[name]} → {total[name]}" for name in fell)
                found.append(
                    finding(
                        "SA810",
                        f"line {record.line}: total_token_usage fell below line {previous_line}'s ({shown})",
                        **record.where("/payload/info/total_token_usage"),
                        evidence={
                            "line": previous_line,
                            "fell": {name: [previous[name], total[name]] for name in fell},
                        },
                    )
                )
            elif not fell and last is not None:
                grew = {name: total[name] - previous[name] for name in USAGE_FIELDS}
                if grew != last:
                    found.append(
                        finding(
                            "SA811",
                            f"line {record.line}: total_token_usage grew by {grew['total_tokens']} "
                            f"tokens since line {previous_line} but last_token_usage says "
                            f"{last['total_tokens']}; the ledger counts the growth",
                            **record.where("/payload/info/last_token_usage"),
                            evidence={"grew": grew, "last": last},
                        )
                    )
        previous, previous_line = total, record.line


def _parts(record: Record, name: str, counts: Mapping[str, int]) -> list[Finding]:
    broken = []
    if counts["cached_input_tokens"] > counts["input_tokens"]:
        broken.append("cached_input_tokens > input_tokens")
    if counts["reasoning_output_tokens"] > counts["output_tokens"]:
        broken.append("reasoning_output_tokens > output_tokens")
    if counts["total_tokens"] != counts["input_tokens"] + counts["output_tokens"] and any(
        counts[field] for field in ("input_tokens", "output_tokens")
    ):
        broken.append("total_tokens ≠ input_tokens + output_tokens")
    if not broken:
        return []
    return [
        finding(
            "SA812",
            f"line {record.line}: {name} has {'; '.join(broken)}",
            **record.where(f"/payload/info/{name}"),
            evidence=dict(counts),
        )
    ]


def _times(records: list[Record], found: list[Finding]) -> None:
    latest = None
    latest_line = 0
    for record in records:
        moment = moment_from_text(record.timestamp)
        if moment is None:
            continue
        if latest is not None and moment < latest:
            found.append(
                finding(
                    "SA813",
                    f"line {record.line}: timestamp {record.timestamp} is earlier than line {latest_line}'s",
                    **record.where("/timestamp"),
                )
            )
            continue
        latest, latest_line = moment, record.line


def _name(file: RolloutFile, meta: Record) -> list[Finding]:
    parts = name_parts(file.real_path)
    if parts is None:
        return []
    local, named_id = parts
    problems = []
    own_id = meta.payload.get("id")
    if isinstance(own_id, str) and own_id.lower() != named_id:
        problems.append(f"names session {named_id}, its session_meta {own_id}")
    started = moment_from_text(meta.payload.get("timestamp")) or moment_from_text(meta.timestamp)
    if started is not None:
        apart = abs(local - started.replace(tzinfo=None))
        if apart > WIDEST_OFFSET:
            problems.append(f"gives the local start {local:%Y-%m-%dT%H:%M:%S}, {apart} from its UTC start")
    if not problems:
        return []
    return [
        finding(
            "SA814",
            f"the file name {'; '.join(problems)}",
            **meta.where("/payload/id"),
            evidence={"named_id": named_id, "named_local_time": f"{local:%Y-%m-%dT%H:%M:%S}"},
        )
    ]
