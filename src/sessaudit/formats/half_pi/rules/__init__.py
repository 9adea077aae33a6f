"""The Half-Pi rules (SA6xx) of the catalogue, spec `formats/half-pi.md`: the store as a whole, and the
invariants of its §10 (each rule's doc names its level: H and P are errors, S warnings)."""

from __future__ import annotations

from sessaudit.formats.half_pi.rules.history import HISTORY_RULES
from sessaudit.formats.half_pi.rules.runs import RUNS_RULES
from sessaudit.formats.half_pi.rules.store import STORE_RULES
from sessaudit.rulebase import Rule

HALF_PI_RULES: tuple[Rule, ...] = tuple(
    sorted(HISTORY_RULES + RUNS_RULES + STORE_RULES, key=lambda rule: rule.code)
)
