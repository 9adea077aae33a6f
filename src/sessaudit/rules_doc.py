"""docs/rules.md, derived from the rule catalogue and from the examples the golden corpora give
(`docs/rule-examples.json`); tests fail when either committed file is stale."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sessaudit.rulebase import Rule
from sessaudit.rules import catalogue
from sessaudit.verdicts import Verdict

# Why a verdict effect matters to the reader of a report (CONTRACT §4 "Verdicts", §3 exit codes).
_WHY_VERDICT: dict[Verdict, str] = {
    Verdict.CORRUPT: (
        "Verdict effect **corrupt**: a committed record violates the format (sessaudit fails closed). "
        "The input is not what its writer would have produced, so neither its history nor a recovery "
        "plan can be trusted past the reported place without a person's decision."
    ),
    Verdict.UNREADABLE: (
        "Verdict effect **unreadable**: sessaudit could not read or fully verify what it was asked to, "
        "so the audit is incomplete (exit 3) and says nothing about the unread part."
    ),
    Verdict.UNSUPPORTED: (
        "Verdict effect **unsupported**: the input (or the part this release cannot verify) was not "
        "verified, so the audit is incomplete (exit 3); its contents may be fine or broken."
    ),
    Verdict.NEEDS_RECOVERY: (
        "Verdict effect **needs-recovery**: the history is intact but work was left open; "
        "continuing blindly may repeat or lose a step. `runs[].recovery` and `sessaudit seed` say "
        "how to continue."
    ),
    Verdict.REPAIRABLE: (
        "Verdict effect **repairable**: a crash artefact the source system repairs by itself on its "
        "next open; the history is intact."
    ),
}
_WHY_LEVEL = {
    "error": "At its default level **error** it fails the audit (exit 1).",
    "warning": "At its default level **warning** it is reported but fails the audit only with "
    "`--fail-on warning`.",
    "note": "At its default level **note** it is information only (it fails the audit only with "
    "`--fail-on note`).",
}
_NO_VERDICT = (
    "No verdict effect: the finding does not change the session's verdict; it points at something a "
    "person should look at."
)

# Rules without a verdict effect that still make the audit incomplete (engine: evidence changed while read).
_INCOMPLETE = {"SA004"}
_INCOMPLETE_WHY = (
    "No verdict effect (the verdict describes the bytes as first read), but the audit is incomplete "
    "(exit 3): the evidence is no longer what was verified."
)

_CORPUS_SOURCES = {
    "tests/golden/reports": "built by `tests/test_golden_reports.py`, case `{case}`",
    "tests/golden/examples.report.json": "the committed `examples/` directory",
}
# a format's own golden corpus, tests/golden/<format>/, is built by its tests' cases.py
_FORMAT_CORPUS = re.compile(r"tests/golden/(?P<format>[a-z][a-z0-9-]*)/")


def load_examples(path: Path) -> dict[str, dict[str, Any]]:
    """The corpus examples committed in `docs/rule-examples.json`, by rule code."""
    document = json.loads(path.read_text(encoding="utf-8"))
    examples: dict[str, dict[str, Any]] = document["examples"]
    return examples


def why_it_matters(rule: Rule) -> str:
    if rule.code in _INCOMPLETE:
        return _INCOMPLETE_WHY
    effect = _WHY_VERDICT[rule.verdict] if rule.verdict is not None else _NO_VERDICT
    return f"{effect} {_WHY_LEVEL[rule.severity.value]}"


def console_place(location: Mapping[str, Any]) -> str:
    """A finding's place as the console report prints it (`[line 3, byte 671, seq 3, /record/attempt]`)."""
    parts = []
    if location.get("line") is not None:
        parts.append(f"line {location['line']}")
    if location.get("byte_offset") is not None:
        parts.append(f"byte {location['byte_offset']}")
    if location.get("seq") is not None:
        parts.append(f"seq {location['seq']}")
    if location.get("table") is not None:
        parts.append(f"{location['table']} row {location.get('rowid')}")
    if location.get("pointer"):
        parts.append(location["pointer"])
    return f" [{', '.join(parts)}]" if parts else ""


def _corpus_example(example: Mapping[str, Any]) -> list[str]:
    golden = example["golden"]
    corpus = next((prefix for prefix in _CORPUS_SOURCES if golden.startswith(prefix)), None)
    if corpus is not None:
        built_by = _CORPUS_SOURCES[corpus].format(case=example["case"])
    else:
        own = _FORMAT_CORPUS.match(golden)
        assert own is not None, golden
        folder = own["format"].replace("-", "_")
        built_by = f"built by `tests/formats/{folder}/cases.py`, case `{example['case']}`"
    location = example["location"]
    path = location.get("path") or "(no file)"
    lines = [f"From the golden report `{golden}` (its input: {built_by}).", ""]
    if example.get("input_line") is not None:
        shown = example["input_line"]
        cut = " (excerpt)" if example.get("input_line_cut") else ""
        lines += [
            f"Input `{path}`, line {location['line']}{cut}:",
            "",
            "```text",
            shown or "(an empty line)",
            "```",
            "",
        ]
    lines += [
        "Finding (console report):",
        "",
        "```text",
        f"  {path}",
        f"    {example['severity']:<7} {example['rule']} {example['name']}{console_place(location)}: "
        f"{example['message']}",
        "```",
    ]
    return lines


def rules_markdown(examples: Mapping[str, Mapping[str, Any]]) -> str:
    lines = [
        "# Rules",
        "",
        "Generated from the rule catalogue (`src/sessaudit/rules.py`) and the examples the golden",
        "corpora give (`docs/rule-examples.json`); do not edit by hand.",
        "Regenerate with `python -m pytest tests/test_rules.py --update-golden`.",
        "",
        "A rule's *verdict effect* is catalogue data: `--severity` overrides change a finding's level",
        "and the exit code, never a verdict. Each rule below says what it checks, why it matters, shows",
        "an example and how to fix it. Examples are real findings taken from the project's golden",
        "reports where one exists; the others are marked *hand-written*.",
        "",
        "| code | name | default level | verdict effect | native code | summary |",
        "|---|---|---|---|---|---|",
    ]
    for rule in catalogue().rules:
        verdict = rule.verdict.value if rule.verdict else "–"
        native = f"`{rule.native_code}`" if rule.native_code else "–"
        lines.append(
            f"| [{rule.code}](#{rule.code.lower()}) | `{rule.name}` | {rule.severity.value} | {verdict} "
            f"| {native} "
            f"| {rule.summary} |"
        )
    lines.append("")
    for rule in catalogue().rules:
        formats = ", ".join(rule.formats) if rule.formats else "any input (not format-specific)"
        lines += [
            f"## {rule.code}",
            "",
            f"**`{rule.name}`** — {rule.summary}",
            "",
            f"Applies to: {formats}.",
            "",
            "**What it checks.** " + rule.doc,
            "",
            "**Why it matters.** " + why_it_matters(rule),
            "",
        ]
        example = examples.get(rule.code)
        if example is not None:
            lines += ["**Example.**", "", *_corpus_example(example), ""]
        elif rule.example:
            lines += ["**Example** (hand-written).", "", rule.example, ""]
        else:
            lines += ["**Example.** None yet.", ""]
        lines += ["**How to fix.** " + (rule.fix or "Not documented yet."), ""]
    return "\n".join(lines)
