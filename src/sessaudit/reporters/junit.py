"""JUnit XML (`--format junit`): a testsuite per source, a testcase per session, a failure per error."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable

from sessaudit.model import Finding, Report, Source
from sessaudit.reporters.timing import AuditTimes, junit_time
from sessaudit.verdicts import Severity

OTHER_SUITE = "sessaudit"
# characters XML 1.0 cannot carry at all, even escaped; then CR, DEL, C1 controls and bidi controls, which
# XML carries but which would reach a terminal or a CI page raw
_NOT_XML = re.compile(
    "[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
    "|[\r\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def xml_safe(text: str) -> str:
    return _NOT_XML.sub(
        lambda match: (
            f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else f"\\u{ord(match.group()):04x}"
        ),
        text,
    )


def owns(source: Source, path: str | None) -> bool:
    """Whether a finding's path belongs to `source`: the source itself, one of its files, or inside it."""
    if path is None:
        return False
    if path == source.path or any(item.path == path for item in source.files):
        return True
    return path.startswith(source.path.rstrip("/") + "/")


def place(item: Finding) -> str:
    """`path:line` with byte offset, seq, pointer and row as far as known."""
    location = item.location
    text = location.path or "(no path)"
    if location.line is not None:
        text += f":{location.line}"
    extra = details(item)
    return f"{text} {extra}" if extra else text


def details(item: Finding) -> str:
    """`(byte …, seq …, pointer …, table …, rowid …)` as far as known, or an empty string."""
    location = item.location
    known = [
        f"{label} {value}"
        for label, value in (
            ("byte", location.byte_offset),
            ("seq", location.seq),
            ("pointer", location.pointer),
            ("table", location.table),
            ("rowid", location.rowid),
        )
        if value is not None
    ]
    return f"({', '.join(known)})" if known else ""


def _testcase(suite: ElementTree.Element, classname: str, name: str, findings: Iterable[Finding]) -> int:
    """Add one testcase; returns its number of failures (error findings)."""
    case = ElementTree.SubElement(
        suite, "testcase", {"classname": xml_safe(classname), "name": xml_safe(name)}
    )
    failures = 0
    others = []
    for item in findings:
        if item.severity is Severity.ERROR:
            failure = ElementTree.SubElement(
                case, "failure", {"message": xml_safe(f"{item.rule} {item.name}"), "type": item.rule}
            )
            failure.text = xml_safe(f"{place(item)}: {item.message}")
            failures += 1
        else:
            others.append(f"{item.severity.value} {item.rule} {item.name} {place(item)}: {item.message}")
    if others:  # warnings and notes do not fail a test; a consumer still shows them
        ElementTree.SubElement(case, "system-out").text = xml_safe("\n".join(others))
    return failures


def _suite(root: ElementTree.Element, name: str, attributes: dict[str, str]) -> ElementTree.Element:
    return ElementTree.SubElement(root, "testsuite", {"name": xml_safe(name), **attributes})


def _close(suite: ElementTree.Element, failures: int) -> tuple[int, int]:
    tests = len(suite.findall("testcase"))
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    return tests, failures


def render_junit(report: Report, times: AuditTimes | None = None) -> str:
    """`times` (`--timestamps`): every testsuite gets the audit's start as `timestamp` (UTC), the root the
    audit's duration as `time`; without it the document is a function of the report alone."""
    root = ElementTree.Element("testsuites", {"name": "sessaudit"})
    findings = sorted(report.findings, key=Finding.sort_key)
    claimed: set[int] = set()
    totals = [0, 0]
    for source in report.sources:
        classname = f"sessaudit.{source.format or 'unknown'}"
        suite = _suite(root, source.path, {})
        properties = ElementTree.SubElement(suite, "properties")
        for key, value in (("format", source.format or ""), ("verdict", source.verdict.value)):
            ElementTree.SubElement(properties, "property", {"name": key, "value": value})
        mine = [
            (position, item) for position, item in enumerate(findings) if owns(source, item.location.path)
        ]
        claimed.update(position for position, _ in mine)
        session_ids = {session.session_id for session in source.sessions if session.session_id is not None}
        failures = 0
        source_level = [item for _, item in mine if item.location.session_id not in session_ids]
        if source_level or not source.sessions:
            failures += _testcase(suite, classname, source.path, source_level)
        for number, session in enumerate(source.sessions, start=1):
            name = session.session_id or f"session {number}"
            own = [
                item
                for _, item in mine
                if session.session_id is not None and item.location.session_id == name
            ]
            failures += _testcase(suite, classname, name, own)
        tests, failures = _close(suite, failures)
        totals = [totals[0] + tests, totals[1] + failures]
    rest = [item for position, item in enumerate(findings) if position not in claimed]
    if rest:  # findings about no source (e.g. a claims file): one testcase per path
        suite = _suite(root, OTHER_SUITE, {})
        failures = 0
        for path in sorted({item.location.path or "(no path)" for item in rest}):
            failures += _testcase(
                suite,
                OTHER_SUITE,
                path,
                [item for item in rest if (item.location.path or "(no path)") == path],
            )
        tests, failures = _close(suite, failures)
        totals = [totals[0] + tests, totals[1] + failures]
    root.set("tests", str(totals[0]))
    root.set("failures", str(totals[1]))
    root.set("errors", "0")
    if times is not None:
        root.set("time", f"{times.seconds:.3f}")
        for suite in root.findall("testsuite"):
            suite.set("timestamp", junit_time(times.start))
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'
