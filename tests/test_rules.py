"""The rule catalogue: stable, unique, documented; derived files stay fresh."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.model import Location
from sessaudit.reporters.console import _location
from sessaudit.rules import RULES, find_rule, finding
from sessaudit.rules_doc import console_place, load_examples, rules_markdown
from tests.golden import check_golden
from tests.rule_examples import EXAMPLES_FILE, collect_examples, examples_json

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


def test_every_rule_says_how_to_fix_it() -> None:
    missing = [rule.code for rule in RULES if len(rule.fix) < 20 or not rule.fix.endswith((".", ")"))]
    assert not missing, f"rules without a fix text: {missing}"


def test_rule_examples_agree_with_the_golden_corpora(update_golden: bool) -> None:
    """docs/rule-examples.json is what the golden reports show today (one real finding per rule)."""
    check_golden(EXAMPLES_FILE, examples_json(), update_golden)


def _report(*findings: tuple[str, str]) -> str:
    items = [
        {
            "rule": rule,
            "name": "n",
            "severity": "error",
            "message": message,
            "location": {"path": "p", "line": None},
        }
        for rule, message in findings
    ]
    return json.dumps({"findings": items})


def test_examples_follow_the_corpus_and_prefer_the_plainest_case(tmp_path: Path) -> None:
    reports = tmp_path / "tests" / "golden" / "reports"
    reports.mkdir(parents=True)
    (reports / "a-busy.json").write_text(_report(("SA205", "busy"), ("SA215", "stopped")), encoding="utf-8")
    (reports / "b-plain.json").write_text(_report(("SA205", "plain one"), ("SA205", "plain two")))
    (reports / "c-plain.json").write_text(_report(("SA205", "later")), encoding="utf-8")
    examples: dict[str, Any] = collect_examples(tmp_path)["examples"]
    # fewest distinct rules, then fewest findings: c-plain (one finding) wins over b-plain (two)
    assert (examples["SA205"]["case"], examples["SA205"]["message"]) == ("c-plain", "later")
    assert examples["SA205"]["golden"] == "tests/golden/reports/c-plain.json"
    assert examples["SA215"]["case"] == "a-busy" and examples["SA205"]["location"] == {"path": "p"}
    (reports / "c-plain.json").write_text(_report(("SA205", "reworded")), encoding="utf-8")
    assert collect_examples(tmp_path)["examples"]["SA205"]["message"] == "reworded"  # the file goes stale


def test_every_rule_has_a_corpus_or_hand_written_example() -> None:
    examples = load_examples(EXAMPLES_FILE)
    assert set(examples) <= {rule.code for rule in RULES}, "an example names a rule the catalogue lacks"
    missing = [rule.code for rule in RULES if rule.code not in examples and not rule.example]
    assert not missing, f"rules with neither a golden-corpus example nor a hand-written one: {missing}"


def test_hand_written_examples_show_their_rule() -> None:
    for rule in RULES:
        if rule.example:
            assert rule.code in rule.example, f"{rule.code}: its example does not show the finding"


def test_docs_rules_page_is_fresh(update_golden: bool) -> None:
    """Runs after the examples test, so one `--update-golden` run refreshes both files."""
    check_golden(REPO / "docs" / "rules.md", rules_markdown(load_examples(EXAMPLES_FILE)), update_golden)


def test_docs_rules_page_anchors_are_the_lowercase_codes() -> None:
    page = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"\n## {rule.code}\n" in page and f"](#{rule.code.lower()})" in page, rule.code


def test_the_rules_command_prints_how_to_fix_and_where_the_example_is() -> None:
    entry = find_rule("SA504")
    assert entry is not None
    result = CliRunner().invoke(app, ["rules", "event-final-newline-missing"])
    assert result.exit_code == 0, result.output
    assert f"How to fix: {entry.fix}" in result.output
    assert "docs/rules.md#sa504" in result.output


def test_examples_show_the_place_as_the_console_report_does() -> None:
    places = [
        Location(path="s.jsonl", line=3, byte_offset=671, seq=3, pointer="/record/attempt"),
        Location(path="h.db", table="messages", rowid=5, session_id="s"),
        Location(path="claims.json", pointer="/claims/2"),
        Location(path="notes.txt"),
    ]
    for place in places:
        item = finding("SA204", "m", **place.model_dump(exclude={"path"}), path=place.path)
        printed = _location(item)
        assert console_place(place.model_dump()) == (f" [{printed}]" if printed else "")
