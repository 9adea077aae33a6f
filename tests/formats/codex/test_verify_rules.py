"""One hand-written damaged rollout per Codex rule (SA801–SA817, tests/formats/codex/cases.py) through the
installed plugin: that rule alone, at the line, byte offset and pointer written here by hand, with its
severity, the source's verdict and the exit code of `sessaudit verify` (README "Exit codes": 1 for a
finding at or above `--fail-on`, default error; 0 for warnings and notes). Evidence is never written.

The byte offsets follow from the compact JSON lines of hand_lines.py (their lengths, LF included: 290, 250,
143, 165, 133, 215, 422, 149, 182, 422, 163 bytes, so line N starts at the sum of those before it: 0, 290,
540, 683, 848, 981, 1196, 1618, 1767, 1949, 2371); a line that is not strict JSON is placed at its
offending byte (SA801: the CR, 848 + 132). Each test also checks its offset against the file itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.formats.codex.plugin import PLUGIN
from sessaudit.formats.codex.rules import CODEX_RULES
from sessaudit.model import Report
from tests.formats.codex.cases import CASES
from tests.formats.codex.hand_lines import (
    FORK,
    FORK_STAMP,
    SID,
    at,
    fork_lines,
    rollout,
    session_meta,
    write,
)

runner = CliRunner()
LINE_BYTES = (290, 250, 143, 165, 133, 215, 422, 149, 182, 422, 163)  # rollout()'s lines, LF included


class Expected(NamedTuple):
    line: int
    offset: int
    pointer: str | None
    severity: str
    verdict: str
    exit_code: int


EXPECTED: dict[str, Expected] = {
    "SA801": Expected(5, 980, None, "error", "corrupt", 1),
    "SA802": Expected(12, 2534, None, "warning", "repairable", 0),
    "SA803": Expected(11, 2371, None, "warning", "clean", 0),
    "SA804": Expected(10, 1949, None, "error", "corrupt", 1),
    "SA805": Expected(8, 1618, "/payload/output", "error", "corrupt", 1),
    "SA806": Expected(1, 0, "/type", "error", "corrupt", 1),
    "SA807": Expected(12, 2534, "/payload/id", "error", "corrupt", 1),
    "SA808": Expected(9, 1767, "/payload/call_id", "error", "corrupt", 1),
    "SA809": Expected(9, 1767, "/payload/call_id", "warning", "clean", 0),
    "SA810": Expected(10, 1949, "/payload/info/total_token_usage", "error", "corrupt", 1),
    "SA811": Expected(10, 1949, "/payload/info/last_token_usage", "warning", "clean", 0),
    "SA812": Expected(7, 1196, "/payload/info/last_token_usage", "warning", "clean", 0),
    "SA813": Expected(9, 1767, "/timestamp", "warning", "clean", 0),
    "SA814": Expected(1, 0, "/payload/id", "warning", "clean", 0),
    "SA815": Expected(10, 1949, "/payload/type", "note", "clean", 0),
    "SA816": Expected(2, 346, "/payload/id", "note", "clean", 0),
    "SA817": Expected(9, 1964, "/payload", "warning", "clean", 0),
}


def case_of(code: str) -> str:
    (name,) = [name for name in CASES if name.startswith(f"damaged-{code}-")]
    return name


def run(path: Path) -> Report:
    return audit([str(path)]).report


def codes(report: Report) -> list[tuple[str, int | None]]:
    return [(item.rule, item.location.line) for item in report.findings]


def test_the_line_lengths_are_those_of_the_hand_lines(tmp_path: Path) -> None:
    data = write(tmp_path, *rollout()).read_bytes()
    assert tuple(len(line) + 1 for line in data.split(b"\n")[:-1]) == LINE_BYTES
    assert sum(LINE_BYTES) == len(data) == 2534


def test_the_undamaged_rollout_has_no_finding(tmp_path: Path) -> None:
    report = run(write(tmp_path, *rollout()))
    assert codes(report) == []
    (source,) = report.sources
    assert (source.verdict.value, source.format, source.format_version) == ("clean", "codex", "0.98.0")
    (session,) = source.sessions
    assert session.session_id == SID and [r.state for r in session.runs] == ["completed"]
    assert runner.invoke(app, ["verify", str(source.path)]).exit_code == 0


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_each_rule_alone_at_its_place(tmp_path: Path, code: str) -> None:
    expected = EXPECTED[code]
    path = CASES[case_of(code)](tmp_path / "home")
    report = run(path)
    assert codes(report) == [(code, expected.line)]
    (item,) = report.findings
    place = item.location
    assert (place.byte_offset, place.pointer, item.severity.value) == (
        expected.offset,
        expected.pointer,
        expected.severity,
    )
    # the offset is where the named line begins in the file (counted here, not by the verifier)
    data = path.read_bytes()
    assert data[: expected.offset].count(b"\n") == expected.line - 1
    if code == "SA801":
        assert data[expected.offset : expected.offset + 2] == b"\r\n"
    else:
        assert expected.offset == 0 or data[expected.offset - 1 : expected.offset] == b"\n"
    assert place.path == str(path) and place.session_id == (FORK if code in ("SA816", "SA817") else SID)
    assert [source.verdict.value for source in report.sources] == [expected.verdict]
    assert report.sources[0].evidence_unchanged
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == expected.exit_code, result.output


def test_cr_lf_is_named_in_the_message(tmp_path: Path) -> None:
    (item,) = run(CASES[case_of("SA801")](tmp_path)).findings
    assert "CR LF" in item.message


def test_the_torn_tail_keeps_the_whole_lines(tmp_path: Path) -> None:
    report = run(CASES[case_of("SA802")](tmp_path))
    (session,) = report.sources[0].sessions
    assert session.torn_tail_bytes == 35 and session.facts == 11
    assert [r.state for r in session.runs] == ["completed"]


def test_an_object_output_answers_no_call_codex_can_read(tmp_path: Path) -> None:
    (item,) = run(CASES[case_of("SA805")](tmp_path)).findings
    assert "is not valid under any of the given schemas" in item.message


def test_totals_that_fall_become_the_baseline(tmp_path: Path) -> None:
    report = run(CASES[case_of("SA810")](tmp_path))
    (item,) = report.findings
    assert item.evidence == {
        "line": 7,
        "fell": {
            "input_tokens": [1000, 900],
            "cached_input_tokens": [200, 100],
            "output_tokens": [50, 40],
            "total_tokens": [1050, 940],
        },
    }
    (session,) = report.sources[0].sessions
    # only the first response counts: input 1000 of it cached 200, output 50
    assert (session.usage.input, session.usage.cache_read, session.usage.output) == (800, 200, 50)
    assert session.native["ledger"]["rebased_totals"] == 1


def test_last_usage_disagreeing_counts_the_growth(tmp_path: Path) -> None:
    report = run(CASES[case_of("SA811")](tmp_path))
    (item,) = report.findings
    assert item.evidence is not None and item.evidence["grew"]["input_tokens"] == 1200
    assert item.evidence["last"]["input_tokens"] == 1000
    (session,) = report.sources[0].sessions
    # the growth: 1000 + 1200 input (200 + 900 cached), 50 + 30 output
    assert (session.usage.input, session.usage.cache_read, session.usage.output) == (1100, 1100, 80)


def test_a_file_named_after_another_session(tmp_path: Path) -> None:
    (item,) = run(CASES[case_of("SA814")](tmp_path)).findings
    assert item.evidence == {
        "named_id": "0195a0b1-9999-7aaa-8bbb-cccccccccccc",
        "named_local_time": "2026-03-14T09:00:00",
    }


def test_a_file_named_far_from_its_start_time(tmp_path: Path) -> None:
    path = write(tmp_path, *rollout(), stamp="2026-03-15T09-00-01")
    (item,) = run(path).findings
    assert item.rule == "SA814" and "1 day, 0:00:01 from its UTC start" in item.message


def test_unknown_event_names_the_cli_version(tmp_path: Path) -> None:
    (item,) = run(CASES[case_of("SA815")](tmp_path)).findings
    assert "'brand_new_event'" in item.message and "0.98.0" in item.message


def test_a_fork_with_its_parent_beside_it_is_matched_exactly(tmp_path: Path) -> None:
    write(tmp_path, *rollout())
    fork = write(tmp_path, *fork_lines(rollout()), sid=FORK, stamp=FORK_STAMP)
    report = run(fork)
    assert codes(report) == []
    copied = report.sources[0].native["copied_from"]
    assert (copied["lines"], copied["matched"], copied["parent_id"]) == ([2, 12], "parent", SID)
    (session,) = report.sources[0].sessions
    # only its own response: input 2500 of it cached 2048, output 40 (reasoning 8)
    assert (session.usage.input, session.usage.cache_read, session.usage.output) == (452, 2048, 40)
    assert session.native["ledger"]["copied_token_counts"] == 2


def test_a_fork_without_its_parent_infers_the_copy_from_its_stamps(tmp_path: Path) -> None:
    report = run(CASES[case_of("SA816")](tmp_path))
    (item,) = report.findings
    assert item.evidence == {"parent_id": SID, "copied_lines": [2, 12]}
    assert report.sources[0].native["copied_from"]["matched"] == "burst"
    (session,) = report.sources[0].sessions
    assert (session.usage.input, session.usage.cache_read, session.usage.output) == (452, 2048, 40)


def test_an_edited_copied_line_neither_ends_the_copy_nor_counts_twice(tmp_path: Path) -> None:
    report = run(CASES[case_of("SA817")](tmp_path))
    (item,) = report.findings
    assert item.evidence is not None
    assert (item.evidence["parent_line"], item.evidence["differing_lines"]) == (8, [9])
    assert report.sources[0].native["copied_from"]["lines"] == [2, 12]
    (session,) = report.sources[0].sessions
    assert (session.usage.input, session.usage.cache_read, session.usage.output) == (452, 2048, 40)


def test_a_copy_whose_first_line_differs(tmp_path: Path) -> None:
    write(tmp_path, *rollout())
    lines = fork_lines(rollout())
    lines[1] = session_meta(at(600.001), cwd="/home/dev/elsewhere")
    report = run(write(tmp_path, *lines, sid=FORK, stamp=FORK_STAMP))
    assert codes(report) == [("SA817", 2)]
    assert report.sources[0].native["copied_from"]["lines"] == [2, 12]  # the burst of copy-time stamps


def test_every_rule_has_a_test_here() -> None:
    assert sorted(rule.code for rule in CODEX_RULES) == sorted(EXPECTED)
    source = Path(__file__).read_text()
    assert [rule.code for rule in CODEX_RULES if f'"{rule.code}"' not in source] == []


def test_sniff_and_takes_walked(tmp_path: Path) -> None:
    head = json.dumps(session_meta(), separators=(",", ":")).encode() + b"\n"
    assert PLUGIN.sniff(head, "/x/a.jsonl")
    assert not PLUGIN.sniff(b'{"type":"session_meta"}\n', "/x/a.jsonl")
    name = f"rollout-2026-03-14T09-00-00-{SID}.jsonl"
    assert PLUGIN.takes_walked(f"/h/sessions/2026/03/14/{name}")
    assert PLUGIN.takes_walked(f"/h/archived_sessions/{name}")
    assert not PLUGIN.takes_walked(f"/h/elsewhere/{name}")
    assert not PLUGIN.takes_walked("/h/sessions/2026/03/14/notes.jsonl")
