"""docs/rules.md, derived from the rule catalogue (a test fails when the committed page is stale)."""

from __future__ import annotations

from sessaudit.rules import RULES


def rules_markdown() -> str:
    lines = [
        "# Rules",
        "",
        "Generated from the rule catalogue (`src/sessaudit/rules.py`); do not edit by hand.",
        "Regenerate with `python -m pytest tests/test_rules.py --update-golden`.",
        "",
        "A rule's *verdict effect* is catalogue data: `--severity` overrides change a finding's level",
        "and the exit code, never a verdict.",
        "",
        "| code | name | default level | verdict effect | native code | summary |",
        "|---|---|---|---|---|---|",
    ]
    for rule in RULES:
        verdict = rule.verdict.value if rule.verdict else "–"
        native = f"`{rule.native_code}`" if rule.native_code else "–"
        lines.append(
            f"| [{rule.code}](#{rule.code.lower()}) | `{rule.name}` | {rule.severity.value} | {verdict} "
            f"| {native} "
            f"| {rule.summary} |"
        )
    lines.append("")
    for rule in RULES:
        lines += [f"## {rule.code}", "", f"**`{rule.name}`** — {rule.summary}", "", rule.doc, ""]
    return "\n".join(lines)
