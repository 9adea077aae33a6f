"""SARIF 2.1.0 (`--format sarif`): one run, the rule catalogue as `tool.driver.rules`, deterministic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessaudit.baseline import ABSENT_RULE
from sessaudit.fingerprints import FINGERPRINT_KEY, artifact_uri, fingerprint
from sessaudit.jsonout import pretty_json
from sessaudit.model import Finding, Report
from sessaudit.reporters.timing import AuditTimes, sarif_time
from sessaudit.rulebase import Rule
from sessaudit.rules import catalogue, find_rule
from sessaudit.verdicts import Verdict

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
RULES_DOC = "docs/rules.md"
__all__ = ["FINGERPRINT_KEY", "artifact_uri", "fingerprint", "render_sarif", "sarif_document"]


def rule_page(code: str) -> str:
    """The rule's section of the generated rule page, as a reference relative to the sessaudit sources.

    It goes into the rule's `help`, never into `helpUri`: SARIF (§3.49.12) wants an absolute URI there and
    sessaudit has no canonical web address; `sessaudit rules CODE` prints the same text anywhere."""
    return f"{RULES_DOC}#{code.lower()}"


def _text(value: str) -> dict[str, str]:
    return {"text": value}


def _rule_descriptor(entry: Rule) -> dict[str, Any]:
    page = rule_page(entry.code)
    where = f"see {page} in the sessaudit sources, or run `sessaudit rules {entry.code}`"
    properties: dict[str, Any] = {"tags": sorted(entry.formats) or ["input"]}
    if entry.verdict is not None:
        properties["verdict"] = entry.verdict.value
    if entry.native_code is not None:
        properties["nativeCode"] = entry.native_code
    return {
        "id": entry.code,
        "name": entry.name,
        "shortDescription": _text(entry.summary),
        "fullDescription": _text(entry.doc),
        "help": {
            "text": f"{entry.summary} {entry.doc} How to fix: {entry.fix} "
            f"{entry.code} {entry.name}: {where}.",
            "markdown": f"**{entry.summary}**\n\n{entry.doc}\n\n**How to fix.** {entry.fix}\n\n"
            f"{entry.code} `{entry.name}`: {where}.",
        },
        "defaultConfiguration": {"level": entry.severity.value},
        "properties": properties,
    }


def _physical_location(item: Finding, uri: str) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    region: dict[str, int] = {}
    if item.location.line is not None and item.location.line >= 1:
        region["startLine"] = item.location.line
    if item.location.byte_offset is not None and item.location.byte_offset >= 0:
        region["byteOffset"] = item.location.byte_offset
    if region:
        physical["region"] = region
    return physical


def _logical_locations(item: Finding) -> list[dict[str, str]]:
    """A store's row (table and rowid) and a JSON pointer have no line: they are logical locations."""
    location = item.location
    logical: list[dict[str, str]] = []
    if location.table is not None:
        row = f"/{location.rowid}" if location.rowid is not None else ""
        logical.append(
            {
                "fullyQualifiedName": f"{location.table}{row}",
                "name": str(location.rowid) if location.rowid is not None else location.table,
                "kind": "element" if location.rowid is not None else "object",
            }
        )
    if location.pointer is not None:
        logical.append({"fullyQualifiedName": location.pointer or "/", "kind": "element"})
    return logical


def _result(
    item: Finding, index: dict[str, int], uri: str | None, fingerprints: dict[str, int]
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": item.rule,
        "level": item.severity.value,
        "message": _text(item.message),
    }
    if item.rule in index:
        result["ruleIndex"] = index[item.rule]
    location: dict[str, Any] = {}
    if uri is not None:
        location["physicalLocation"] = _physical_location(item, uri)
    logical = _logical_locations(item)
    if logical:
        location["logicalLocations"] = logical
    # a finding without a path is about the run as a whole: no location (SARIF §3.27.12)
    if location:
        result["locations"] = [location]
    value = fingerprint(item, uri or "")
    fingerprints[value] = fingerprints.get(value, 0) + 1
    if fingerprints[value] > 1:  # identical findings stay distinct, in their (sorted) order
        value = f"{value}:{fingerprints[value]}"
    result["partialFingerprints"] = {FINGERPRINT_KEY: value}
    properties = {
        key: getattr(item.location, key)
        for key in ("session_id", "seq", "pointer", "table", "rowid")
        if getattr(item.location, key) is not None
    }
    if item.native_code is not None:
        properties["native_code"] = item.native_code
    if item.evidence:
        properties["evidence"] = item.evidence
    if properties:
        result["properties"] = properties
    return result


def _notifications(report: Report, base: Path | None) -> list[dict[str, Any]]:
    """Inputs that could not be read: every finding whose rule makes a source unreadable, and every
    unreadable source without one."""
    notes: list[dict[str, Any]] = []
    explained: set[str] = set()
    for item in report.findings:
        entry = find_rule(item.rule)
        if entry is None or entry.verdict is not Verdict.UNREADABLE:
            continue
        note: dict[str, Any] = {
            "level": "error",
            "message": _text(item.message),
            "descriptor": {"id": item.rule},
        }
        if item.location.path is not None:
            explained.add(item.location.path)
            location = {"artifactLocation": {"uri": artifact_uri(item.location.path, base)}}
            note["locations"] = [{"physicalLocation": location}]
        notes.append(note)
    for source in report.sources:
        if source.verdict is Verdict.UNREADABLE and source.path not in explained:
            location = {"artifactLocation": {"uri": artifact_uri(source.path, base)}}
            notes.append(
                {
                    "level": "error",
                    "message": _text(f"{source.path} could not be read"),
                    "locations": [{"physicalLocation": location}],
                }
            )
    return notes


def _baseline_states(report: Report) -> list[tuple[Finding, str | None]]:
    """Results in report order with their SARIF `baselineState` (§3.27.24) when a baseline was given:
    findings the baseline holds are `unchanged` (and suppressed externally, so they gate nothing), SA020
    notes stand for baseline findings that are `absent`, every other finding is `new`."""
    if report.baseline is None:
        return [(item, None) for item in sorted(report.findings, key=Finding.sort_key)]
    states: list[tuple[Finding, str | None]] = [
        (item, "absent" if item.rule == ABSENT_RULE else "new") for item in report.findings
    ]
    states += [(item, "unchanged") for item in report.baseline.matched]
    return sorted(states, key=lambda pair: pair[0].sort_key())


def sarif_document(
    report: Report, base: Path | None = None, times: AuditTimes | None = None
) -> dict[str, Any]:
    """The SARIF log of `report`; artifact URIs relative to `base` (default: the working directory); the
    invocation's start and end times only when `times` is given (`--timestamps`)."""
    index = {entry.code: position for position, entry in enumerate(catalogue().rules)}
    fingerprints: dict[str, int] = {}
    results = []
    for item, state in _baseline_states(report):
        uri = artifact_uri(item.location.path, base) if item.location.path is not None else None
        result = _result(item, index, uri, fingerprints)
        if state is not None:
            result["baselineState"] = state
        if state == "unchanged" and report.baseline is not None:
            result["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": f"in the baseline {report.baseline.path}",
                }
            ]
        results.append(result)
    notifications = _notifications(report, base)
    invocation: dict[str, Any] = {
        "executionSuccessful": not notifications,
        # what decided the results and the gate (the settings file, selectors, overrides, baseline, gates);
        # never the command line, which may hold paths and values the report does not otherwise show
        "properties": {"settings": report.settings.model_dump(mode="json")},
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    if times is not None:
        invocation["startTimeUtc"] = sarif_time(times.start)
        invocation["endTimeUtc"] = sarif_time(times.end)
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": report.tool.name,
                        "version": report.tool.version,
                        "rules": [_rule_descriptor(entry) for entry in catalogue().rules],
                    }
                },
                "invocations": [invocation],
                "results": results,
                "properties": {"summary": report.summary.model_dump(mode="json")},
            }
        ],
    }


def render_sarif(report: Report, times: AuditTimes | None = None) -> str:
    document = sarif_document(report, times=times)
    return pretty_json(document)
