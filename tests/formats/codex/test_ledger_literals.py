"""Every builder scenario's session usage in the JSON report (`sessions[].usage` and the ledger's
`native.ledger`) against literal constants summed by hand from the `Usage(input, cached, output,
reasoning)` literals of build/scenarios.py, never computed by the code under test.

Codex counts cached input inside input, so the report's `input` is input − cached and `input_total` the
whole input; `cache_write` is always 0 (Codex records none). The doubled scenario writes every token_count
twice and must not count twice; a fork's and a sub-agent's copy of the parent's history is counted once,
in the parent; a torn last token_count is not counted (the file lost it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from sessaudit.engine import audit
from sessaudit.formats.codex.build.scenarios import SCENARIOS, build_one
from sessaudit.reporters.json import render_json


class Counted(NamedTuple):
    """One session's figures: input not cached, input in all, cache read, output, of it reasoning, calls."""

    input: int
    input_total: int
    cache_read: int
    output: int
    reasoning: int
    calls: int


# scenario -> per rollout file, in the order of the manifest's files (the parent first)
EXPECTED: dict[str, list[Counted]] = {
    # 9812 + 10655 + 10901 + 11204 + 11530 = 54102 input, cached 7040 + 9728 + 10496 + 10880 + 11136 = 49280;
    # output 298 + 611 + 143 + 87 + 96 = 1235, reasoning 192 + 384 + 64 = 640
    "clean": [Counted(4_822, 54_102, 49_280, 1_235, 640, 5)],
    # 6420 + 6913 + 7388 + 7512 = 28233, cached 3072 + 6272 + 6784 + 7296 = 23424; output 180 + 201 + 402 + 77
    # = 860, reasoning 128 + 64 + 256 = 448; each response once although each token_count is written twice
    "doubled-token-counts": [Counted(4_809, 28_233, 23_424, 860, 448, 4)],
    # 8034 + 9876 + 10240 = 28150, cached 7936 + 9856 = 17792; output 512 + 233 + 145 = 890, reasoning 576
    "first-info-null": [Counted(10_358, 28_150, 17_792, 890, 576, 3)],
    # parent: 12480 + 13301 + 13950 + 14122 = 53853, cached 4096 + 12288 + 13184 + 13824 = 43392, output 366 +
    # 420 + 280 + 64 = 1130, reasoning 256 + 192 + 128 = 576; the fork only its own two responses: 13620 +
    # 14018 = 27638, cached 13184 + 13568 = 26752, output 512 + 95 = 607, reasoning 320 + 32 = 352
    "fork-with-history": [
        Counted(10_461, 53_853, 43_392, 1_130, 576, 4),
        Counted(886, 27_638, 26_752, 607, 352, 2),
    ],
    # 21544 + 23870 + 25102 + 25390 (the compaction's own call) + 4812 + 5530 = 106248, cached 3584 + 21248 +
    # 23808 + 25088 + 0 + 4736 = 78464; output 690 + 1204 + 210 + 1312 + 655 + 118 = 4189, reasoning 512 + 768
    # + 64 + 384 = 1728
    "compaction": [Counted(27_784, 106_248, 78_464, 4_189, 1_728, 6)],
    "killed-during-exec": [Counted(7_902, 7_902, 0, 254, 192, 1)],
    # 8210 + 8655 = 16865, cached 5120 + 8064 = 13184, output 140 + 96, reasoning 64 + 32
    "killed-during-read": [Counted(3_681, 16_865, 13_184, 236, 96, 2)],
    # the first response only: the second's token_count is the torn line
    "torn-tail": [Counted(2_428, 9_340, 6_912, 488, 320, 1)],
    # 7120 + 8002 = 15122, cached 4608 + 6912 = 11520, output 160 + 844, reasoning 64 + 512
    "apply-patch-unanswered": [Counted(3_602, 15_122, 11_520, 1_004, 576, 2)],
    # 10450 + 11380 = 21830, cached 2048 + 10368 = 12416, output 210 + 301, reasoning 128 + 192
    "mcp-call": [Counted(9_414, 21_830, 12_416, 511, 320, 2)],
    # 5012 + 5730 = 10742, cached 4992, output 96 + 188, reasoning 64 + 64
    "model-request-open": [Counted(5_750, 10_742, 4_992, 284, 128, 2)],
    # parent: 14208 + 14890 + 15402 = 44500, cached 6144 + 14336 + 14848 = 35328, output 402 + 88 + 276 = 766,
    # reasoning 256 + 32 + 64 = 352; the agent its own two: 15020 + 15711 = 30731, cached 14080 + 15232 =
    # 29312, output 233 + 310 = 543, reasoning 128 + 192 = 320
    "sub-agent": [
        Counted(9_172, 44_500, 35_328, 766, 352, 3),
        Counted(1_419, 30_731, 29_312, 543, 320, 2),
    ],
    # 4630 + 5104 = 9734, cached 4608, output 120 + 702, reasoning 64 + 448
    "archived": [Counted(5_126, 9_734, 4_608, 822, 512, 2)],
    # 11006 + 12420 + 12901 + 13377 = 49704, cached 10944 + 12416 + 12928 = 36288, output 377 + 298 + 140
    # + 166 = 981, reasoning 256 + 128 + 64 = 448
    "multi-day-local-time": [Counted(13_416, 49_704, 36_288, 981, 448, 4)],
    # 3904 + 4210 = 8114, cached 3840, output 130 + 96, reasoning 64
    "local-shell": [Counted(4_274, 8_114, 3_840, 226, 64, 2)],
}
# token_counts the ledger skipped as repeats of the total before them, and as copies from a parent
REPEATED = {"doubled-token-counts": [4], "first-info-null": [1]}
COPIED = {"fork-with-history": [0, 2], "sub-agent": [0, 1]}


def reported(root: Path, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The scenario's manifest entry, and the JSON report's session of each of its files (in order)."""
    entry = build_one(root, name)
    here = os.getcwd()
    os.chdir(root)
    try:
        document = json.loads(render_json(audit(["."]).report))
    finally:
        os.chdir(here)
    by_path = {os.path.normpath(source["path"]): source for source in document["sources"]}
    sessions = []
    for item in entry["files"]:
        (session,) = by_path[os.path.normpath(item["path"])]["sessions"]
        sessions.append(session)
    return entry, sessions


def counted(session: dict[str, Any]) -> Counted:
    usage, ledger = session["usage"], session["native"]["ledger"]
    assert usage["cache_write"] == 0
    return Counted(
        usage["input"],
        usage["input_total"],
        usage["cache_read"],
        usage["output"],
        ledger["reasoning_output_tokens"],
        ledger["calls"],
    )


def test_every_scenario_has_its_literals() -> None:
    assert sorted(EXPECTED) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_session_usage_is_the_hand_sum(tmp_path: Path, name: str) -> None:
    _, sessions = reported(tmp_path, name)
    assert [counted(session) for session in sessions] == EXPECTED[name]
    ledgers = [session["native"]["ledger"] for session in sessions]
    assert [ledger["repeated_token_counts"] for ledger in ledgers] == REPEATED.get(name, [0] * len(sessions))
    assert [ledger["copied_token_counts"] for ledger in ledgers] == COPIED.get(name, [0] * len(sessions))
    assert all(ledger["rebased_totals"] == 0 for ledger in ledgers)


def _last_usages(path: Path) -> list[dict[str, int]]:
    """Every token_count's last_token_usage in the file, read here with json (not the verifier)."""
    found = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        payload = line.get("payload", {})
        if line.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            found.append(payload["info"]["last_token_usage"])
    return found


def _naive(paths: list[Path]) -> tuple[int, int, int, int, int]:
    usages = [usage for path in paths for usage in _last_usages(path)]
    fields = (
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "reasoning_output_tokens",
        "total_tokens",
    )
    return tuple(sum(usage[field] for usage in usages) for field in fields)  # type: ignore[return-value]


def test_the_doubled_token_counts_are_counted_once(tmp_path: Path) -> None:
    entry, (session,) = reported(tmp_path, "doubled-token-counts")
    # summing every last_token_usage counts each response twice: 2 × 28233 input, 2 × 23424 cached,
    # 2 × 860 output, 2 × 448 reasoning, 2 × (28233 + 860) total; the ledger has each once
    (item,) = entry["files"]
    assert _naive([tmp_path / item["path"]]) == (56_466, 46_848, 1_720, 896, 58_186)
    assert counted(session) == Counted(4_809, 28_233, 23_424, 860, 448, 4)
    assert session["usage"]["input_total"] < 56_466 and session["usage"]["output"] < 1_720


def test_the_fork_counts_the_parent_once(tmp_path: Path) -> None:
    entry, (parent, fork) = reported(tmp_path, "fork-with-history")
    # the parent's whole usage, and the fork's own responses only: 53853 + 27638 = 81491 input,
    # 1130 + 607 = 1737 output over 4 + 2 calls
    assert parent["usage"]["input_total"] + fork["usage"]["input_total"] == 81_491
    assert parent["usage"]["output"] + fork["usage"]["output"] == 1_737
    assert parent["native"]["ledger"]["calls"] + fork["native"]["ledger"]["calls"] == 6
    # the fork's copy holds the parent's first turn (responses 12480 and 13301 input, 366 and 420 output):
    # summing every file's last_token_usage counts those twice
    paths = [tmp_path / item["path"] for item in entry["files"]]
    assert _naive(paths)[0] == 81_491 + 12_480 + 13_301 == 107_272
    assert _naive(paths)[2] == 1_737 + 366 + 420 == 2_523


def test_the_sub_agent_counts_the_parent_once(tmp_path: Path) -> None:
    _, (parent, agent) = reported(tmp_path, "sub-agent")
    # 44500 + 30731 = 75231 input, 766 + 543 = 1309 output, 3 + 2 calls
    assert parent["usage"]["input_total"] + agent["usage"]["input_total"] == 75_231
    assert parent["usage"]["output"] + agent["usage"]["output"] == 1_309
    assert parent["native"]["ledger"]["calls"] + agent["native"]["ledger"]["calls"] == 5
