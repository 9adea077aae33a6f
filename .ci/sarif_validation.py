"""CI: SARIF for the Microsoft SARIF multitool to validate, and the verdict on what it says.

`python .ci/sarif_validation.py corpus FILE` writes one SARIF log with the findings of every golden JSON
report of the test corpus (tests/golden/**/*.json: the rules and location shapes the verifiers produce).
`python .ci/sarif_validation.py check VALIDATION.sarif` reads the multitool's own SARIF output
(`Sarif.Multitool validate ... -o VALIDATION.sarif`; its exit code is 0 even when it finds errors) and
fails on any error, and on any warning not in ACCEPTED_WARNINGS (docs/decisions.md, "CI outputs")."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# warnings sessaudit's SARIF carries by design; any other warning fails CI like an error
ACCEPTED_WARNINGS = {
    # `tool.driver.informationUri` must be an absolute URI and sessaudit has no web address yet
    "SARIF2005": "no informationUri: sessaudit has no web address",
    # a finding about a whole file, a SQLite row or a JSON pointer has no text region to name
    "SARIF2017": "no region for whole-file, row and JSON-pointer findings",
}


def write_corpus(target: Path) -> int:
    """One SARIF log holding every finding and source of the golden reports (one log, not one per report:
    the validator needs about a second per log, and the shapes are the same)."""
    from sessaudit.engine import summarise
    from sessaudit.model import Report
    from sessaudit.reporters.sarif import render_sarif

    reports = []
    for path in sorted((REPO / "tests" / "golden").rglob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(document, dict) and document.get("schema") == "sessaudit/report/v1":
            reports.append(Report.model_validate(document))
    sources = [source for report in reports for source in report.sources]
    findings = [item for report in reports for item in report.findings]
    merged = reports[0].model_copy(
        update={
            "sources": sources,
            "skipped": [item for report in reports for item in report.skipped],
            "findings": findings,
            "summary": summarise(sources, findings),
            "baseline": None,
        }
    )
    target.write_text(render_sarif(merged), encoding="utf-8")
    return len(reports)


def _where(result: dict[str, Any]) -> str:
    for location in result.get("locations", []):
        physical = location.get("physicalLocation", {})
        uri = physical.get("artifactLocation", {}).get("uri", "?")
        line = physical.get("region", {}).get("startLine")
        return f"{uri}:{line}" if line else uri
    return "?"


def _message(result: dict[str, Any], templates: dict[tuple[str, str], str]) -> str:
    """The message text, or its template (the rule's `messageStrings`) filled with its arguments."""
    message = result.get("message", {})
    if "text" in message:
        return str(message["text"])
    arguments = [str(value) for value in message.get("arguments", [])]
    template = templates.get((result.get("ruleId", ""), message.get("id", "")))
    if template is None:
        return f"{message.get('id', '?')} {arguments}"
    for number, value in enumerate(arguments):
        template = template.replace(f"{{{number}}}", value)
    return template


def _templates(run: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {
        (rule["id"], key): str(value.get("text", ""))
        for rule in run.get("tool", {}).get("driver", {}).get("rules", [])
        for key, value in rule.get("messageStrings", {}).items()
    }


def check(validation: Path, out: Any = sys.stdout) -> int:
    """0 when the validator found no error and only accepted warnings; otherwise 1 (each problem printed)."""
    log = json.loads(validation.read_text(encoding="utf-8"))
    problems: list[str] = []
    tally: Counter[tuple[str, str]] = Counter()
    for run in log.get("runs", []):
        templates = _templates(run)
        for invocation in run.get("invocations", []):
            if invocation.get("executionSuccessful") is False:
                problems.append("the validator reports an unsuccessful execution")
            for key in ("toolExecutionNotifications", "toolConfigurationNotifications"):
                for note in invocation.get(key, []):
                    if note.get("level", "warning") == "error":
                        problems.append(f"validator {key}: {_message(note, templates)}")
        for result in run.get("results", []):
            level = result.get("level", "warning")
            rule = result.get("ruleId", "?")
            tally[(level, rule)] += 1
            if level == "error" or (level == "warning" and rule not in ACCEPTED_WARNINGS):
                problems.append(f"{level} {rule} {_where(result)}: {_message(result, templates)}")
    for (level, rule), count in sorted(tally.items()):
        accepted = (
            f" (accepted: {ACCEPTED_WARNINGS[rule]})"
            if level == "warning" and rule in ACCEPTED_WARNINGS
            else ""
        )
        print(f"  {count:6d} {level:7} {rule}{accepted}", file=out)
    for problem in problems[:50]:
        print(f"SARIF validation: {problem}", file=out)
    if len(problems) > 50:
        print(f"SARIF validation: ... and {len(problems) - 50} more", file=out)
    return 1 if problems else 0


def main(arguments: list[str]) -> int:
    if len(arguments) == 2 and arguments[0] == "corpus":
        print(f"{arguments[1]}: the findings of {write_corpus(Path(arguments[1]))} golden reports")
        return 0
    if len(arguments) == 2 and arguments[0] == "check":
        return check(Path(arguments[1]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
