"""No recovery plan and no seed from a corrupt history (every format; CONTRACT §4 `corrupt`: fail closed).

A format withholds its runs' plans and seeds itself, with its own words for what its source system says
(`withheld_reason`); `withhold_corrupt` is the engine's net for a corrupt source whose format did not."""

from __future__ import annotations

import os
from collections.abc import Iterable

from sessaudit.model import Finding, Session
from sessaudit.rules import rule
from sessaudit.verdicts import Verdict

NO_PLAN = "no recovery plan and no seed"


def first_corrupting(findings: Iterable[Finding]) -> Finding | None:
    """The first finding (report order) whose rule makes the verdict `corrupt`."""
    ordered = sorted(findings, key=Finding.sort_key)
    return next((item for item in ordered if rule(item.rule).verdict is Verdict.CORRUPT), None)


def place_of(item: Finding, *, file: str | None = None) -> str:
    """`runs/r1/events.jsonl line 5, byte 2543, seq 7`: the finding's file (or `file` instead: "" for
    none) and place in it."""
    where = item.location
    parts = [where.path or "(no file)" if file is None else file, *where.parts()]
    return " ".join(part for part in (parts[0], ", ".join(parts[1:])) if part)


def cited(item: Finding, *, file: str | None = None) -> str:
    """A finding in one line: rule code and name, place, message."""
    place = place_of(item, file=file)
    return f"{item.rule} {item.name}" + (f" [{place}]" if place else "") + f": {item.message}"


def withheld_reason(
    first: Finding | None, *, native: str | None = None, known: str | None = None, in_file: bool = True
) -> str:
    """The warning of a withheld recovery: why (the first corrupting finding, in its file's name when
    `in_file`, what the source system says) and how far the open state is known."""
    file = os.path.basename(first.location.path or "") if first is not None and in_file else ""
    why = (
        f"the history is corrupt (first: {cited(first, file=file)})"
        if first is not None
        else "the history is corrupt"
    )
    parts = [f"{NO_PLAN}: {why}"]
    if native:
        parts.append(native)
    parts.append(known or "the open state shown is known only as far as the records verified before it")
    return "; ".join(parts)


def withhold_corrupt(sessions: list[Session], findings: list[Finding]) -> list[Session]:
    """Sessions of a corrupt source with every recovery's plan, seed and seed kind withheld (those the
    format left in place get a warning naming the first corrupting finding)."""
    first = first_corrupting(findings)
    reason = withheld_reason(first)
    result: list[Session] = []
    for session in sessions:
        runs = []
        for run in session.runs:
            recovery = run.recovery
            if recovery is not None and (
                recovery.seed is not None
                or recovery.native_plan is not None
                or recovery.seed_kind is not None
            ):
                run = run.model_copy(update={"recovery": recovery.withheld(reason)})
            runs.append(run)
        result.append(session.model_copy(update={"runs": runs}))
    return result
