"""SARIF 2.1.0 (`--format sarif`): one run, the rule catalogue as `tool.driver.rules`, deterministic."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from sessaudit.model import Finding, Report
from sessaudit.rulebase import Rule
from sessaudit.rules import RULES, find_rule
from sessaudit.verdicts import Verdict

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
RULES_DOC = "docs/rules.md"
FINGERPRINT_KEY = "sessauditFinding/v1"
_DIGITS = re.compile(r"[0-9]+")


def help_uri(code: str) -> str:
    """The rule's section of the generated rule page, as a repository-relative URI reference."""
    return f"{RULES_DOC}#{code.lower()}"


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


def fingerprint(item: Finding, uri: str) -> str:
    """A fingerprint stable across runs and across growth of the log elsewhere: the rule, the artifact,
    the session, the finding's anchor (seq, else table/rowid, else JSON pointer, else line), and the message
    with whitespace collapsed and every run of digits replaced by `#` (offsets and counts inside a message
    move when a log grows; the anchor already pins the place)."""
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
    parts = (item.rule, uri, location.session_id or "", anchor, message)
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def _text(value: str) -> dict[str, str]:
    return {"text": value}


def _rule_descriptor(entry: Rule) -> dict[str, Any]:
    uri = help_uri(entry.code)
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
            "text": f"{entry.summary} {entry.doc} See {uri}.",
            "markdown": f"**{entry.summary}**\n\n{entry.doc}\n\n[{entry.code} {entry.name}]({uri})",
        },
        "helpUri": uri,
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
    """A Half-Pi row (table and rowid) and a JSON pointer have no line: they are logical locations."""
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


def sarif_document(report: Report, base: Path | None = None) -> dict[str, Any]:
    """The SARIF log of `report`; artifact URIs relative to `base` (default: the working directory)."""
    index = {entry.code: position for position, entry in enumerate(RULES)}
    fingerprints: dict[str, int] = {}
    results = []
    for item in sorted(report.findings, key=Finding.sort_key):
        uri = artifact_uri(item.location.path, base) if item.location.path is not None else None
        results.append(_result(item, index, uri, fingerprints))
    notifications = _notifications(report, base)
    invocation: dict[str, Any] = {"executionSuccessful": not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": report.tool.name,
                        "version": report.tool.version,
                        "rules": [_rule_descriptor(entry) for entry in RULES],
                    }
                },
                "invocations": [invocation],
                "results": results,
                "properties": {"summary": report.summary.model_dump(mode="json")},
            }
        ],
    }


def render_sarif(report: Report) -> str:
    return json.dumps(sarif_document(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
