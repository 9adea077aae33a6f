"""The manifest's primary-lane `model_usage` cross-checked against the log's ledger (issue 4 §7)."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.rivumi.read.eventlog import EventLog
from sessaudit.model import Finding
from sessaudit.rules import finding

_COMPARED: Final = ("input_tokens", "output_tokens", "cached_input_tokens")


def cross_check_usage(path: str, manifest: dict[str, Any], log: EventLog) -> list[Finding]:
    """A finding when the manifest's primary-lane totals differ from the log's; never counted.

    Skipped when the manifest is ahead of the log (its snapshot then includes an event the log lost) and
    when the manifest predates `model_usage` (no key) or holds a malformed one (the schema reports that).
    """
    records = manifest.get("model_usage")
    last = manifest.get("last_event_sequence")
    log_last = log.last_sequence if log.last_sequence is not None else -1
    if not isinstance(records, list) or not isinstance(last, int) or last > log_last:
        return []
    recorded = dict.fromkeys(_COMPARED, 0)
    for record in records:
        if not isinstance(record, dict) or record.get("lane") != "primary":
            continue
        usage = record.get("usage")
        if not isinstance(usage, dict):
            return []
        for key in _COMPARED:
            value = usage.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int):
                return []
            recorded[key] += value
    rows = [row for row in log.usage_rows if row.lane == "primary"]
    counted = {
        "input_tokens": sum(row.input_total for row in rows),
        "output_tokens": sum(row.output for row in rows),
        "cached_input_tokens": sum(row.cache_read for row in rows),
    }
    differing = {
        key: {"manifest": recorded[key], "log": counted[key]}
        for key in _COMPARED
        if recorded[key] != counted[key]
    }
    if not differing:
        return []
    summary = ", ".join(f"{key} {value['manifest']} vs {value['log']}" for key, value in differing.items())
    return [
        finding(
            "SA541",
            f"primary-lane model_usage disagrees with the log's model.completed events: {summary}",
            path=path,
            pointer="/model_usage",
            evidence=differing,
        )
    ]
