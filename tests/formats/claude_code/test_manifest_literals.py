"""The manifests' truth against figures worked out by hand from scenarios.py (never by the builder):
per-response usage as (input, output, cache 5m, cache 1h, cache read), the totals, who made each response,
and every tool call's outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.claude_code.build.scenarios import DANGLING, build_one

Row = tuple[int, int, int, int, int]


def rows(entry: dict[str, Any]) -> list[Row]:
    out: list[Row] = []
    for response in entry["responses"]:
        usage = response["usage"]
        split = usage["cache_creation"]
        assert usage["cache_creation_input_tokens"] == (
            split["ephemeral_5m_input_tokens"] + split["ephemeral_1h_input_tokens"]
        )
        out.append(
            (
                usage["input_tokens"],
                usage["output_tokens"],
                split["ephemeral_5m_input_tokens"],
                split["ephemeral_1h_input_tokens"],
                usage["cache_read_input_tokens"],
            )
        )
    return out


def totals(
    input_tokens: int, output: int, creation: int, five: int, hour: int, read: int, responses: int
) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output,
        "cache_creation_input_tokens": creation,
        "cache_read_input_tokens": read,
        "ephemeral_5m_input_tokens": five,
        "ephemeral_1h_input_tokens": hour,
        "responses": responses,
    }


def outcomes(entry: dict[str, Any]) -> list[tuple[str, str]]:
    return [(call["name"], call["outcome"]) for call in entry["tool_calls"]]


def test_clean(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "clean")
    assert rows(entry) == [
        (3, 212, 4817, 0, 11930),
        (1, 386, 0, 1204, 16747),
        (1, 97, 602, 0, 17951),
        (1, 58, 389, 0, 18553),
    ]
    assert entry["totals"] == totals(6, 753, 7012, 5808, 1204, 65181, 4)
    assert [r["streaming"] for r in entry["responses"]] == ["growing", "growing", "identical", "growing"]
    assert [len(r["lines"]) for r in entry["responses"]] == [3, 2, 1, 1]
    assert [r["placeholder"] for r in entry["responses"]] == [False] * 4
    assert all(r["request_id"].startswith("req_") for r in entry["responses"])
    assert outcomes(entry) == [("Read", "ok"), ("Edit", "ok"), ("Bash", "ok")]
    assert entry["open_calls"] == [] and entry["torn_tail"] == [] and entry["resume_copies"] == []


def test_bedrock(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "bedrock")
    assert rows(entry) == [(4, 143, 6311, 0, 0), (1, 95, 702, 0, 6311), (1, 311, 1488, 0, 7013)]
    assert entry["totals"] == totals(6, 549, 8501, 8501, 0, 13324, 3)
    assert [r["request_id"] for r in entry["responses"]] == [None, None, None]
    assert all(r["message_id"].startswith("msg_bdrk_") for r in entry["responses"])
    assert all(call["id"].startswith("toolu_bdrk_") for call in entry["tool_calls"])
    assert {r["model"] for r in entry["responses"]} == {"us.anthropic.claude-sonnet-4-20250514-v1:0"}
    # 2 + 2 + 1 streamed lines: a ledger keyed per line would count 5 responses
    assert [len(r["lines"]) for r in entry["responses"]] == [2, 2, 1]


def test_subagent_folder(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "subagent_folder")
    assert rows(entry) == [
        (3, 164, 5120, 0, 12004),
        (10, 71, 3410, 0, 0),
        (1, 66, 911, 0, 3410),
        (1, 402, 1530, 0, 4321),
        (1, 233, 2207, 0, 17124),
    ]
    assert entry["totals"] == totals(16, 936, 13178, 13178, 0, 36859, 5)
    (session,) = {r["session_id"] for r in entry["responses"]}
    agent = entry["files"][1]["agent_id"]
    assert len(agent) == 17
    assert [r["agent_id"] for r in entry["responses"]] == [None, agent, agent, agent, None]
    assert [r["model"] for r in entry["responses"]] == [
        "claude-opus-4-6",
        "claude-haiku-4-5-20251001",
        "claude-haiku-4-5-20251001",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-6",
    ]
    assert entry["files"][1]["path"].endswith(f"/{session}/subagents/agent-{agent}.jsonl")
    assert outcomes(entry) == [("Task", "ok"), ("Grep", "ok"), ("Read", "ok")]


def test_subagent_beside(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "subagent_beside")
    agent = entry["files"][1]["agent_id"]
    assert len(agent) == 8 and entry["files"][1]["sidecar"] is None
    assert entry["files"][1]["path"] == f"projects/-home-dev-subagent-beside/agent-{agent}.jsonl"
    assert entry["totals"] == totals(16, 936, 13178, 13178, 0, 36859, 5)


def test_resumed_copies_count_once(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "resumed")
    assert rows(entry) == [(3, 48, 2000, 0, 10000), (1, 90, 300, 0, 12000), (1, 30, 120, 0, 12300)]
    assert entry["totals"] == totals(5, 168, 2420, 2420, 0, 34300, 3)
    first, second = (item["session_id"] for item in entry["files"])
    assert [r["session_id"] for r in entry["responses"]] == [first, second, second]
    assert [(c["line"], c["original_line"]) for c in entry["resume_copies"]] == [(1, 2), (2, 3)]
    assert outcomes(entry) == [("Bash", "error")]


def test_placeholder_stop_null(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "placeholder_stop_null")
    assert rows(entry) == [(2, 540, 3000, 0, 9000), (1, 120, 560, 0, 12000)]
    assert entry["totals"] == totals(3, 660, 3560, 3560, 0, 21000, 2)
    first, second = entry["responses"]
    assert first["placeholder"] is True and first["final_stop_reason"] is None
    assert 1 <= first["logged_output_tokens"] <= 9
    assert second["placeholder"] is False and second["logged_output_tokens"] == 120


def test_killed_during_bash(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "killed_during_bash")
    assert rows(entry) == [(3, 157, 2461, 0, 14210)]
    assert outcomes(entry) == [("Bash", "unknown")]
    (call,) = entry["tool_calls"]
    assert entry["open_calls"] == [call["id"]] and call["changes_world"] is True
    assert call["line"] == 5  # snapshot, prompt, thinking, text, tool_use


@pytest.mark.parametrize(
    ("kind", "changes_world"),
    [
        ("bash", True),
        ("write", True),
        ("edit", True),
        ("multiedit", True),
        ("notebookedit", True),
        ("mcp", True),
        ("read", False),
        ("glob", False),
        ("grep", False),
        ("ls", False),
        ("webfetch", False),
    ],
)
def test_dangling_calls(tmp_path: Path, kind: str, changes_world: bool) -> None:
    entry = build_one(tmp_path, f"dangling_{kind}")
    name = DANGLING[kind][0]
    assert outcomes(entry) == [("Read", "ok"), (name, "unknown")]
    assert [call["changes_world"] for call in entry["tool_calls"]] == [False, changes_world]
    assert entry["open_calls"] == [entry["tool_calls"][1]["id"]]
    assert entry["totals"] == totals(5, 194, 3540, 3540, 0, 22872, 2)


def test_torn_tail(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "torn_tail")
    assert outcomes(entry) == [("Bash", "ok"), ("Bash", "unknown")]
    (torn,) = entry["torn_tail"]
    assert torn["line"] == 7  # snapshot, prompt, text, tool_use, result, tool_use, torn result
    assert entry["open_calls"] == [entry["tool_calls"][1]["id"]]


def test_user_interrupt(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "user_interrupt")
    assert outcomes(entry) == [("Bash", "interrupted"), ("Bash", "ok")]
    assert len(entry["synthetic"]) == 1 and entry["totals"]["responses"] == 3
    assert entry["totals"] == totals(5, 90, 2600, 2600, 0, 31110, 3)


def test_summary_elsewhere(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "summary_elsewhere")
    (summary,) = entry["summaries"]
    first, second = (item["path"] for item in entry["files"])
    assert (summary["file"], summary["line"], summary["resolves_in"]) == (second, 1, [first])


def test_continued_without_copy(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "continued_without_copy")
    first, second = (item["path"] for item in entry["files"])
    (link,) = entry["parents_elsewhere"]
    assert (link["file"], link["line"], link["resolves_in"]) == (second, 2, [first])
    assert entry["resume_copies"] == []


def test_compacted(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "compacted")
    # roots: the first prompt (after its snapshot) and the boundary (snapshot, prompt, answer, twice)
    assert [root["line"] for root in entry["roots"]] == [2, 7]
    assert entry["totals"] == totals(8, 168, 7030, 7030, 0, 6900, 4)
