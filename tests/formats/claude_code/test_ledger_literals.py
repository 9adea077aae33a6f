"""Ledger totals against literal constants worked out by hand from scenarios.py (the same figures as
test_manifest_literals.py), never computed by the code under test."""

from __future__ import annotations

from pathlib import Path

from sessaudit.formats.claude_code.build.scenarios import build_one
from sessaudit.formats.claude_code.usage.ledger import build_ledger
from sessaudit.formats.claude_code.usage.tokens import Tokens
from tests.formats.claude_code.test_ledger_scenarios import session_ledgers, transcript

# (input, output, cache write, of it 5-minute, of it 1-hour, cache read, responses)
Totals = tuple[int, int, int, int, int, int, int]


def figures(tokens: Tokens, responses: int) -> Totals:
    return (
        tokens.input_tokens,
        tokens.output_tokens,
        tokens.cache_creation_input_tokens,
        tokens.write_5m,
        tokens.write_1h,
        tokens.cache_read_input_tokens,
        responses,
    )


def whole(tmp_path: Path, name: str) -> Totals:
    """The scenario's files as one session set (sub-agent files with their session)."""
    entry = build_one(tmp_path, name)
    ledger = build_ledger([transcript(tmp_path, item) for item in entry["files"]])
    return figures(ledger.totals(), len(ledger.responses))


def test_clean_streamed_growing_usage(tmp_path: Path) -> None:
    # 3 + 2 + 1 + 1 lines; growing output on three responses, identical copies on the Bash one
    assert whole(tmp_path, "clean") == (6, 753, 7012, 5808, 1204, 65181, 4)


def test_bedrock(tmp_path: Path) -> None:
    assert whole(tmp_path, "bedrock") == (6, 549, 8501, 8501, 0, 13324, 3)


def test_subagent_folder(tmp_path: Path) -> None:
    assert whole(tmp_path, "subagent_folder") == (16, 936, 13178, 13178, 0, 36859, 5)


def test_subagent_beside(tmp_path: Path) -> None:
    assert whole(tmp_path, "subagent_beside") == (16, 936, 13178, 13178, 0, 36859, 5)


def test_resumed_project_wide_and_per_session(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "resumed")
    ledger = build_ledger([transcript(tmp_path, item) for item in entry["files"]])
    assert figures(ledger.totals(), len(ledger.responses)) == (5, 168, 2420, 2420, 0, 34300, 3)
    first, second = (item["session_id"] for item in entry["files"])
    ledgers = session_ledgers(tmp_path, entry)
    assert figures(ledgers[first].totals(), len(ledgers[first].responses)) == (3, 48, 2000, 2000, 0, 10000, 1)
    assert figures(ledgers[second].totals(), len(ledgers[second].responses)) == (
        2,
        120,
        420,
        420,
        0,
        24300,
        2,
    )
    (copied,) = ledgers[second].elsewhere
    assert copied.session_id == first and copied.tokens.output_tokens == 48


def test_placeholder(tmp_path: Path) -> None:
    # true output 540 + 120 = 660 (the manifest); the log's final line of the first response holds the
    # placeholder 3 (stop_reason null), so the ledger can only say 3 + 120 and flag it
    entry = build_one(tmp_path, "placeholder_stop_null")
    ledger = build_ledger([transcript(tmp_path, item) for item in entry["files"]])
    assert figures(ledger.totals(), len(ledger.responses)) == (3, 123, 3560, 3560, 0, 21000, 2)
    assert [(r.placeholder, r.stop_reason, r.tokens.output_tokens) for r in ledger.responses] == [
        (True, None, 3),
        (False, "end_turn", 120),
    ]


def test_user_interrupt_bills_no_synthetic_line(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "user_interrupt")
    ledger = build_ledger([transcript(tmp_path, item) for item in entry["files"]])
    assert figures(ledger.totals(), len(ledger.responses)) == (5, 90, 2600, 2600, 0, 31110, 3)
    assert [line for _, line in ledger.synthetic] == [9]


def test_killed_during_bash(tmp_path: Path) -> None:
    # one response (3 lines: thinking, text, the dangling tool_use), its usage from the final line
    assert whole(tmp_path, "killed_during_bash") == (3, 157, 2461, 2461, 0, 14210, 1)


DANGLING_KINDS = ("bash", "write", "edit", "multiedit", "notebookedit", "mcp", "read", "glob", "grep", "ls")


def test_dangling_calls_of_every_kind(tmp_path: Path) -> None:
    # the answered Read (4, 61, 5m 3120, read 9876) + the response holding the dangling call
    # (1, 133, 5m 420, read 12996): 5, 194, 3540, 22872 in two responses, whatever the tool
    for kind in (*DANGLING_KINDS, "webfetch"):
        assert whole(tmp_path / kind, f"dangling_{kind}") == (5, 194, 3540, 3540, 0, 22872, 2), kind


def test_continued_without_copy(tmp_path: Path) -> None:
    # (3, 12, 1800, 9000) in the first session + (1, 15, 64, 10800) in the one continuing it
    assert whole(tmp_path, "continued_without_copy") == (4, 27, 1864, 1864, 0, 19800, 2)


def test_torn_tail(tmp_path: Path) -> None:
    # the torn line is the second Bash call's result: both responses are whole
    assert whole(tmp_path, "torn_tail") == (4, 142, 2740, 2740, 0, 20800, 2)


def test_summary_elsewhere(tmp_path: Path) -> None:
    # A: (4, 70, 3300, 0) + (1, 25, 150, 3300); B after its summary line: (3, 40, 2900, 0)
    assert whole(tmp_path, "summary_elsewhere") == (8, 135, 6350, 6350, 0, 3300, 3)


def test_compacted(tmp_path: Path) -> None:
    # (3, 77, 5000, 0) + (1, 20, 90, 5000), the boundary and its summary (no response), then
    # (3, 66, 1900, 0) + (1, 5, 40, 1900)
    assert whole(tmp_path, "compacted") == (8, 168, 7030, 7030, 0, 6900, 4)
