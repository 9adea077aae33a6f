"""The local Rivumi rule table: unique codes in SA501–SA599, kebab-case names, one-line summaries."""

from __future__ import annotations

import re

from sessaudit.formats.rivumi.catalogue import RULES
from sessaudit.rules import find_rule


def test_codes_names_and_summaries() -> None:
    codes = [entry.code for entry in RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert all(re.fullmatch(r"SA5\d\d", code) and code != "SA500" for code in codes)
    names = [entry.name for entry in RULES]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) for name in names)
    assert all(entry.summary.endswith(".") and "\n" not in entry.summary for entry in RULES)


def test_no_clash_with_the_project_catalogue() -> None:
    for entry in RULES:
        assert find_rule(entry.code) is None and find_rule(entry.name) is None
