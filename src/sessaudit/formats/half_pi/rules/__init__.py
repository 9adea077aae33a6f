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

# this format's passages in the core rules' texts, by place (sessaudit.rules.PLACES)
CORE_RULE_PHRASES: dict[str, str] = {
    "held-whole": "a Half-Pi store's tables are read whole from its database and `-wal`",
    "held-whole-memory": "about 3.5 times a Half-Pi store's size",
    "held-whole-notes": "A Half-Pi store is refused before it is copied.",
    "input-kinds": "Half-Pi store",
    "inputs": "a Half-Pi store",
    "inputs-named": "a Half-Pi store",
    "open-run-notes": (
        "Half-Pi: a pending approval, a non-terminal task, or a session's last request without its answer."
    ),
    "own-recovery": "restart the Half-Pi mind",
    "unknown-outcome-notes": (
        "Half-Pi: a non-terminal remote run (only the Hand knows what it did), or an "
        "unfinished request whose local tools were authorised or ran."
    ),
    "unsupported": "a Half-Pi store before its verifier exists",
}
