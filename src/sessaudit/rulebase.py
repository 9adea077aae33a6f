"""What a catalogue rule is; the catalogue itself is `sessaudit.rules` (the core's tables and each format
plugin's)."""

from __future__ import annotations

from dataclasses import dataclass

from sessaudit.verdicts import Severity, Verdict

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE
CORRUPT, UNREADABLE, UNSUPPORTED = Verdict.CORRUPT, Verdict.UNREADABLE, Verdict.UNSUPPORTED
NEEDS_RECOVERY, REPAIRABLE = Verdict.NEEDS_RECOVERY, Verdict.REPAIRABLE


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: Severity
    verdict: Verdict | None
    summary: str
    doc: str
    native_code: str | None = None
    formats: tuple[str, ...] = ()
    fix: str = ""  # how to fix it (docs/rules.md, `sessaudit rules CODE`, SARIF help)
    example: str = ""  # a hand-written example, for rules no test corpus finding illustrates


def _rule(
    code: str,
    name: str,
    severity: Severity,
    verdict: Verdict | None,
    summary: str,
    doc: str,
    native_code: str | None = None,
    formats: tuple[str, ...] = (),
    fix: str = "",
    example: str = "",
) -> Rule:
    return Rule(
        code,
        name,
        severity,
        verdict,
        summary,
        " ".join(doc.split()),
        native_code,
        formats,
        " ".join(fix.split()),
        example.strip("\n"),
    )
