"""The rule catalogue: stable, unique, documented; derived files stay fresh."""

from __future__ import annotations

import re
from pathlib import Path

from sessaudit.rules import RULES, find_rule
from sessaudit.rules_doc import rules_markdown
from tests.golden import check_golden

REPO = Path(__file__).resolve().parent.parent


def test_codes_and_names_are_unique_and_well_formed() -> None:
    assert len({rule.code for rule in RULES}) == len(RULES)
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        assert re.fullmatch(r"SA\d{3}", rule.code), rule.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name
        assert rule.summary.endswith("."), rule.code
        assert len(rule.doc) > 40, rule.code


def test_rules_are_found_by_code_or_name() -> None:
    assert find_rule("sa205") is find_rule("seq-mismatch") is find_rule("SA205")
    assert find_rule("SA999") is None


def test_docs_rules_page_is_fresh(update_golden: bool) -> None:
    check_golden(REPO / "docs" / "rules.md", rules_markdown(), update_golden)
