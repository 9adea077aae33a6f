"""The Rivumi rules in the catalogue: SA5xx, marked as Rivumi's, and each one emitted by the Rivumi code."""

from __future__ import annotations

import re
from pathlib import Path

from sessaudit.formats.rivumi.rules import RIVUMI_RULES
from sessaudit.rules import RULES

RIVUMI_SOURCE = Path(__file__).resolve().parents[3] / "src" / "sessaudit" / "formats" / "rivumi"


def test_rivumi_rules_are_sa5xx_and_in_the_catalogue() -> None:
    assert all(re.fullmatch(r"SA5\d\d", entry.code) for entry in RIVUMI_RULES)
    assert all(entry.formats == ("rivumi",) for entry in RIVUMI_RULES)
    assert set(RIVUMI_RULES) <= set(RULES)
    codes = [entry.code for entry in RIVUMI_RULES]
    assert codes == sorted(codes)


def test_every_rivumi_rule_is_emitted_somewhere() -> None:
    emitting = sorted(path for path in RIVUMI_SOURCE.rglob("*.py") if path.name != "rules.py")
    text = "".join(path.read_text(encoding="utf-8") for path in emitting)
    unused = [entry.code for entry in RIVUMI_RULES if f'"{entry.code}"' not in text]
    assert unused == []
