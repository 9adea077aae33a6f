"""Baselines (`--write-baseline FILE`, `--baseline FILE`): known findings by fingerprint and count, so
only new findings fail the gate and known ones that disappeared are reported as notes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

from sessaudit.fingerprints import FINGERPRINT_KEY, finding_uri, fingerprint
from sessaudit.jsonout import pretty_json
from sessaudit.model import Finding
from sessaudit.resources import schema_validator
from sessaudit.rules import finding
from sessaudit.userfiles import UserFileError, read_json_file, schema_problems

SCHEMA_FILE: Final = "baseline.v1.schema.json"
BASELINE_SCHEMA_ID: Final = "sessaudit/baseline/v1"
ABSENT_RULE: Final = "SA020"


class BaselineFileError(UserFileError):
    """A `--baseline` file that cannot be read or is not a valid baseline document."""


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One accepted finding: its fingerprint and how many identical findings are accepted; the rest is
    for people reading the file. `pointer` is where the entry sits in the file (`/findings/<i>`)."""

    fingerprint: str
    count: int
    rule: str
    name: str
    path: str | None
    message: str
    pointer: str = ""


@dataclass(frozen=True, slots=True)
class Baseline:
    """A loaded baseline; `source` is the file as named (the location of SA020 notes)."""

    source: str
    entries: tuple[BaselineEntry, ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Findings split against a baseline: `new` ones count, `matched` ones do not, `absent` are SA020 notes
    for baseline occurrences that no longer occur (`absent_count` occurrences in all)."""

    new: list[Finding]
    matched: list[Finding]
    absent: list[Finding]
    absent_count: int


def load_baseline(path: Path, *, source: str | None = None) -> Baseline:
    """Read, parse (strict JSON) and validate a baseline file; raise BaselineFileError."""
    return parse_baseline(read_json_file(path, BaselineFileError), source=source or str(path))


def parse_baseline(document: Any, *, source: str = "<baseline>") -> Baseline:
    """Validate an already parsed baseline document; raise BaselineFileError with every problem at once."""
    if not _plainly_valid(document):  # the schema is the authority; it also locates the problems
        errors = list(schema_validator(SCHEMA_FILE).iter_errors(document))
        if errors:
            raise BaselineFileError.of(source, schema_problems(errors))
    entries: list[BaselineEntry] = []
    seen: dict[str, str] = {}
    repeated: list[tuple[str, str]] = []
    for index, item in enumerate(document["findings"]):
        pointer = f"/findings/{index}"
        if item["fingerprint"] in seen:  # counts say how many; a repeated entry is ambiguous
            repeated.append(
                (
                    f"{pointer}/fingerprint",
                    f"repeats the fingerprint of {seen[item['fingerprint']]} (use its count instead)",
                )
            )
            continue
        seen[item["fingerprint"]] = pointer
        entries.append(
            BaselineEntry(
                fingerprint=item["fingerprint"],
                count=int(item["count"]),  # the schema's integer admits 2.0
                rule=item["rule"],
                name=item["name"],
                path=item["path"],
                message=item["message"],
                pointer=pointer,
            )
        )
    if repeated:
        raise BaselineFileError.of(source, repeated)
    return Baseline(source=source, entries=tuple(entries))


_DOCUMENT_KEYS: Final = frozenset({"schema", "fingerprint", "findings"})
_ENTRY_KEYS: Final = frozenset({"fingerprint", "count", "rule", "name", "path", "message"})
_HEX64: Final = re.compile(r"[0-9a-f]{64}")
_CODE: Final = re.compile(r"SA[0-9]{3}")


def _plainly_valid(document: Any) -> bool:
    """A fast check, never more lenient than the schema (a test proves it), so a large baseline skips
    jsonschema's per-value cost; False sends the document to the schema for a located error."""
    if not isinstance(document, dict) or document.keys() != _DOCUMENT_KEYS:
        return False
    if document["schema"] != BASELINE_SCHEMA_ID or document["fingerprint"] != FINGERPRINT_KEY:
        return False
    findings = document["findings"]
    if not isinstance(findings, list):
        return False
    for item in findings:
        if not isinstance(item, dict) or item.keys() != _ENTRY_KEYS:
            return False
        count, path = item["count"], item["path"]
        if (
            not isinstance(item["fingerprint"], str)
            or not _HEX64.fullmatch(item["fingerprint"])
            or type(count) is not int
            or count < 1
            or not isinstance(item["rule"], str)
            or not _CODE.fullmatch(item["rule"])
            or not isinstance(item["name"], str)
            or not (path is None or isinstance(path, str))
            or not isinstance(item["message"], str)
        ):
            return False
    return True


class _UriCache:
    """Artifact URIs by path for one pass (a large audit has many findings per file)."""

    def __init__(self, base: Path | None) -> None:
        self.base = base
        self.known: dict[str | None, str] = {}

    def of(self, item: Finding) -> str:
        path = item.location.path
        if path not in self.known:
            self.known[path] = finding_uri(item, self.base)
        return self.known[path]


def baseline_entries(findings: Iterable[Finding], base: Path | None = None) -> list[BaselineEntry]:
    """The entries recording `findings`: one per fingerprint with its count, sorted by path, rule and
    fingerprint; SA020 notes (about a baseline itself) are never recorded."""
    counts: Counter[str] = Counter()
    first: dict[str, tuple[Finding, str]] = {}
    uris = _UriCache(base)
    for item in sorted(findings, key=Finding.sort_key):
        if item.rule == ABSENT_RULE:
            continue
        uri = uris.of(item)
        value = fingerprint(item, uri)
        counts[value] += 1
        first.setdefault(value, (item, uri))
    entries = [
        BaselineEntry(
            fingerprint=value,
            count=counts[value],
            rule=item.rule,
            name=item.name,
            path=unquote(uri) if uri else None,
            message=item.message,
        )
        for value, (item, uri) in first.items()
    ]
    entries.sort(key=lambda entry: (entry.path or "", entry.rule, entry.fingerprint))
    return entries


def baseline_document(findings: Iterable[Finding], base: Path | None = None) -> dict[str, Any]:
    """The baseline document (schemas/baseline.v1.schema.json) accepting every finding given."""
    return {
        "schema": BASELINE_SCHEMA_ID,
        "fingerprint": FINGERPRINT_KEY,
        "findings": [
            {
                "fingerprint": entry.fingerprint,
                "count": entry.count,
                "rule": entry.rule,
                "name": entry.name,
                "path": entry.path,
                "message": entry.message,
            }
            for entry in baseline_entries(findings, base)
        ],
    }


def render_baseline(findings: Iterable[Finding], base: Path | None = None) -> str:
    """The baseline file's text: deterministic (entries sorted, keys sorted), ending in a newline."""
    document = baseline_document(findings, base)
    return pretty_json(document)


def compare(findings: Iterable[Finding], baseline: Baseline, base: Path | None = None) -> Comparison:
    """Split `findings` against `baseline`: per fingerprint the first `count` findings (in report order)
    are matched, any further one is new; entries with occurrences left over become SA020 notes."""
    left = {entry.fingerprint: entry.count for entry in baseline.entries}
    new: list[Finding] = []
    matched: list[Finding] = []
    uris = _UriCache(base)
    for item in sorted(findings, key=Finding.sort_key):
        value = fingerprint(item, uris.of(item))
        if left.get(value, 0) > 0:
            left[value] -= 1
            matched.append(item)
        else:
            new.append(item)
    absent = [
        _absent_note(entry, baseline.source, left[entry.fingerprint])
        for entry in baseline.entries
        if left[entry.fingerprint] > 0
    ]
    return Comparison(
        new=new,
        matched=matched,
        absent=absent,
        absent_count=sum(count for count in left.values() if count > 0),
    )


def _absent_note(entry: BaselineEntry, source: str, missing: int) -> Finding:
    where = f" in {entry.path}" if entry.path else ""
    times = "" if entry.count == 1 else f" ({missing} of its {entry.count} occurrences)"
    return finding(
        ABSENT_RULE,
        f"baselined {entry.rule} ({entry.name}){where} no longer occurs{times}: {entry.message}",
        path=source,
        pointer=entry.pointer,
        evidence={
            "fingerprint": entry.fingerprint,
            "rule": entry.rule,
            "path": entry.path,
            "baseline_count": entry.count,
            "found": entry.count - missing,
        },
    )
