"""The policy applied to a report after the audit: `--select`/`--ignore`, `--severity` overrides and
`--baseline`, from flags and the configuration file (flags win), and the gates on verdicts and run
conditions (`--fail-on-verdict`, `--fail-on-condition`). Verdicts are never touched (CONTRACT §3):
only which findings are shown, their levels, the summary counts and so the exit code."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sessaudit.config import (
    CONDITION_CHOICES,
    NO_CONFIG,
    VERDICT_CHOICES,
    Config,
    ConfigError,
    find_config,
    load_config,
)
from sessaudit.engine import summarise
from sessaudit.model import BaselineOutcome, Finding, Report, Settings
from sessaudit.rules import catalogue, find_rule
from sessaudit.verdicts import Severity

if TYPE_CHECKING:  # sessaudit.baseline (fingerprints, its schema) is imported only when a baseline is used
    from sessaudit.baseline import Baseline

_PREFIX: Final = re.compile(r"SA[0-9]{0,3}")
_SEPARATORS: Final = re.compile(r"[\s,]+")
_FULL_CODE: Final = 3  # a code's digits: a code or a name is the most specific selector


class PolicyError(Exception):
    """A bad `--select`/`--ignore`/`--severity` value, configuration or baseline: a usage error (exit 2)."""


@dataclass(frozen=True, slots=True)
class Selector:
    """A rule code (`SA104`), a code prefix (`SA1`, `SA` for all) or a rule name (`blank-line`)."""

    text: str
    prefix: str
    specificity: int  # how many digits the prefix pins; more specific selectors win

    def matches(self, code: str) -> bool:
        return code.upper().startswith(self.prefix)


ALL_RULES: Final = Selector("SA", "SA", 0)


def parse_selector(text: str, origin: str) -> Selector:
    """One selector; an unknown code, prefix or name raises PolicyError naming where it was given."""
    value = text.strip()
    entry = find_rule(value)
    if entry is not None:
        return Selector(value, entry.code, _FULL_CODE)
    prefix = value.upper()
    if _PREFIX.fullmatch(prefix) and any(rule.code.startswith(prefix) for rule in catalogue().rules):
        return Selector(value, prefix, len(prefix) - 2)
    raise PolicyError(
        f"{origin}: unknown rule {value!r} (a code like SA104, a code prefix like SA1, or a name like "
        "blank-line; see `sessaudit rules`)"
    )


def parse_selectors(values: Iterable[str], origin: str) -> tuple[Selector, ...]:
    """Selectors from values that may each hold several, separated by commas or spaces."""
    return tuple(
        parse_selector(text, origin) for value in values for text in _SEPARATORS.split(value) if text
    )


def parse_severity(value: str, origin: str) -> tuple[Selector, Severity]:
    """`CODE=LEVEL` (CODE a code, prefix or name; LEVEL error, warning or note)."""
    code, separator, level = value.partition("=")
    if not separator or not code.strip() or not level.strip():
        raise PolicyError(f"{origin} {value!r}: expected CODE=LEVEL (LEVEL one of error, warning, note)")
    return parse_selector(code, origin), _level(level, f"{origin} {value!r}")


def _level(text: str, origin: str) -> Severity:
    try:
        return Severity(text.strip().lower())
    except ValueError:
        raise PolicyError(f"{origin}: unknown level {text.strip()!r} (one of error, warning, note)") from None


@dataclass(frozen=True, slots=True)
class Policy:
    """Which rules report, at which level, against which baseline, and the `--fail-on` threshold."""

    select: tuple[Selector, ...] = (ALL_RULES,)
    ignore: tuple[Selector, ...] = ()
    severity: tuple[tuple[Selector, Severity], ...] = ()  # later entries win among equally specific ones
    baseline: Baseline | None = None
    fail_on: str = "error"
    config: Path | None = None
    fail_on_verdict: tuple[str, ...] = ()
    fail_on_condition: tuple[str, ...] = ()
    verdict_origin: str = "--fail-on-verdict"
    condition_origin: str = "--fail-on-condition"

    def settings(self, report: Report) -> Settings:
        """The report's `settings`: what this policy is made of, as given (its other fields kept)."""
        return report.settings.model_copy(
            update={
                "config": str(self.config) if self.config is not None else None,
                "select": [] if self.select == (ALL_RULES,) else [item.text for item in self.select],
                "ignore": [item.text for item in self.ignore],
                "severity": {selector.text: level.value for selector, level in self.severity},
                "fail_on": self.fail_on,
                "fail_on_verdict": list(self.fail_on_verdict),
                "fail_on_condition": list(self.fail_on_condition),
                "baseline": self.baseline.source if self.baseline is not None else None,
            }
        )

    def enabled(self, code: str) -> bool:
        """The most specific matching selector decides; between equally specific ones `ignore` wins."""
        best, chosen = -1, False
        for selector in self.select:
            if selector.matches(code) and selector.specificity > best:
                best, chosen = selector.specificity, True
        for selector in self.ignore:
            if selector.matches(code) and selector.specificity >= best:
                best, chosen = selector.specificity, False
        return chosen

    def level(self, item: Finding) -> Severity:
        """The finding's level after `--severity` overrides (the most specific, then the last, wins)."""
        best, level = -1, item.severity
        for selector, value in self.severity:
            if selector.matches(item.rule) and selector.specificity >= best:
                best, level = selector.specificity, value
        return level


@dataclass(frozen=True, slots=True)
class Applied:
    """The report as shown and gated, and the findings a `--write-baseline` records (selected, levels
    overridden, baselined ones included, SA020 notes left out)."""

    report: Report
    current: list[Finding]


def resolve_policy(
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    severity: Sequence[str] | None = None,
    baseline: Path | None = None,
    fail_on: str | None = None,
    fail_on_verdict: Sequence[str] | None = None,
    fail_on_condition: Sequence[str] | None = None,
    config_file: Path | None = None,
    no_config: bool = False,
    start: Path | None = None,
) -> Policy:
    """The policy from the flags and the configuration file (`--config`, else the nearest one from
    `start`, default the working directory; none with `--no-config`). Raises PolicyError."""
    config = _config(config_file, no_config, start)
    if select is not None:
        chosen_select = parse_selectors(select, "--select")
    elif config.select is not None:
        chosen_select = parse_selectors(config.select, config.origin("select"))
    else:
        chosen_select = (ALL_RULES,)
    if not chosen_select:
        raise PolicyError(f"{'--select' if select is not None else config.origin('select')}: no rule given")
    if ignore is not None:
        chosen_ignore = parse_selectors(ignore, "--ignore")
    else:
        chosen_ignore = parse_selectors(config.ignore or (), config.origin("ignore"))
    overrides = [
        (
            parse_selector(code, config.origin(f"severity.{code}")),
            _level(level, config.origin(f"severity.{code}")),
        )
        for code, level in config.severity.items()
    ]
    overrides += [parse_severity(value, "--severity") for value in severity or ()]
    return Policy(
        select=chosen_select,
        ignore=chosen_ignore,
        severity=tuple(overrides),
        baseline=_baseline(baseline, config),
        fail_on=fail_on or config.fail_on or "error",
        config=config.path,
        fail_on_verdict=_gate(fail_on_verdict, config.fail_on_verdict, "--fail-on-verdict", VERDICT_CHOICES),
        fail_on_condition=_gate(
            fail_on_condition, config.fail_on_condition, "--fail-on-condition", CONDITION_CHOICES
        ),
        verdict_origin="--fail-on-verdict"
        if fail_on_verdict is not None
        else config.origin("fail-on-verdict"),
        condition_origin=(
            "--fail-on-condition" if fail_on_condition is not None else config.origin("fail-on-condition")
        ),
    )


def _gate(
    flag: Sequence[str] | None, configured: tuple[str, ...] | None, name: str, choices: tuple[str, ...]
) -> tuple[str, ...]:
    """A gate's values: the flag's (comma- or space-separated, repeatable; an empty value gates nothing
    and so switches the file's gate off), else the file's; in the order of `choices`, without repeats."""
    if flag is None:
        values = list(configured or ())
    else:
        values = [text for value in flag for text in _SEPARATORS.split(value.strip().lower()) if text]
        wrong = [text for text in values if text not in choices]
        if wrong:
            raise PolicyError(f"{name}: {', '.join(map(repr, wrong))}: not one of {', '.join(choices)}")
    return tuple(choice for choice in choices if choice in values)


def gate_failures(report: Report, policy: Policy) -> list[str]:
    """Why the verdict and condition gates fail the audit (exit 1), one line per source or run: a source
    fails `--fail-on-verdict` when its verdict or any of its sessions' is listed; an open run fails
    `--fail-on-condition` when any of its conditions (not only the first) is listed."""
    lines: list[str] = []
    for source in report.sources:
        found = {source.verdict.value} | {session.verdict.value for session in source.sessions}
        hit = [value for value in policy.fail_on_verdict if value in found]
        if hit:
            lines.append(f"{policy.verdict_origin}: {source.path}: {', '.join(hit)}")
        for session in source.sessions:
            for run in session.runs:
                if run.recovery is None:
                    continue
                present = {run.recovery.condition, *run.recovery.conditions}
                matched = [value for value in policy.fail_on_condition if value in present]
                if matched:
                    lines.append(
                        f"{policy.condition_origin}: {source.path}: run {run.run_id}: {', '.join(matched)}"
                    )
    return lines


def _config(config_file: Path | None, no_config: bool, start: Path | None) -> Config:
    if config_file is not None and no_config:
        raise PolicyError("--config and --no-config exclude each other")
    try:
        if config_file is not None:
            return load_config(config_file)
        if no_config:
            return NO_CONFIG
        found = find_config(start or Path.cwd())
        return load_config(found) if found is not None else NO_CONFIG
    except ConfigError as error:
        raise PolicyError(str(error)) from None


def _baseline(flag: Path | None, config: Config) -> Baseline | None:
    path = flag if flag is not None else config.baseline
    if path is None:
        return None
    from sessaudit.baseline import BaselineFileError, load_baseline

    try:
        return load_baseline(path)
    except BaselineFileError as error:
        origin = "--baseline" if flag is not None else config.origin("baseline")
        raise PolicyError(f"{origin}: {error}") from None


def apply_policy(report: Report, policy: Policy, base: Path | None = None) -> Applied:
    """Filter and re-level the findings, split them against the baseline, recount the summary. Sources
    and their verdicts are returned as they are."""
    selected = [_leveled(item, policy) for item in report.findings if policy.enabled(item.rule)]
    outcome: BaselineOutcome | None = None
    findings = selected
    if policy.baseline is not None:
        from sessaudit.baseline import ABSENT_RULE, compare

        # entries of rules this run does not report are not expected, so never reported absent
        expected = replace(
            policy.baseline,
            entries=tuple(entry for entry in policy.baseline.entries if policy.enabled(entry.rule)),
        )
        comparison = compare(selected, expected, base)
        absent = [_leveled(item, policy) for item in comparison.absent if policy.enabled(ABSENT_RULE)]
        findings = sorted(comparison.new + absent, key=Finding.sort_key)
        outcome = BaselineOutcome(
            path=policy.baseline.source,
            matched=comparison.matched,
            new=len(comparison.new),
            absent=comparison.absent_count,
        )
    shown = report.model_copy(
        update={
            "findings": findings,
            "summary": summarise(report.sources, findings),
            "baseline": outcome,
            "settings": policy.settings(report),
        }
    )
    return Applied(report=shown, current=selected)


def _leveled(item: Finding, policy: Policy) -> Finding:
    level = policy.level(item)
    return item if level is item.severity else item.model_copy(update={"severity": level})
