"""The Codex fixture builders: every scenario's files are strict JSONL in Codex's envelope, agree with the
manifest and with the hand-summed usage literals of scenarios.py, are deterministic, and are written only
below the given root. The checks read the files with their own small parser (never the builder's code)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.codex.build.corpus import build_corpus
from sessaudit.formats.codex.build.parts import Usage
from sessaudit.formats.codex.build.rollout import RolloutBuilder, Stopped
from sessaudit.formats.codex.build.scenarios import SCENARIOS, build_all, build_one

FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
NAME = re.compile(r"^rollout-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d)-([0-9a-f-]{36})\.jsonl$")
KINDS = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}

# Hand sums of the Usage(...) literals in scenarios.py: input, cached, output, reasoning, total, responses.
TOTALS: dict[str, tuple[int, int, int, int, int, int]] = {
    "clean": (54_102, 49_280, 1_235, 640, 55_337, 5),
    "doubled-token-counts": (28_233, 23_424, 860, 448, 29_093, 4),
    "first-info-null": (28_150, 17_792, 890, 576, 29_040, 3),
    "fork-with-history": (81_491, 70_144, 1_737, 928, 83_228, 6),
    "compaction": (106_248, 78_464, 4_189, 1_728, 110_437, 6),
    "killed-during-exec": (7_902, 0, 254, 192, 8_156, 1),
    "killed-during-read": (16_865, 13_184, 236, 96, 17_101, 2),
    "torn-tail": (9_340, 6_912, 488, 320, 9_828, 1),
    "apply-patch-unanswered": (15_122, 11_520, 1_004, 576, 16_126, 2),
    "mcp-call": (21_830, 12_416, 511, 320, 22_341, 2),
    "model-request-open": (10_742, 4_992, 284, 128, 11_026, 2),
    "sub-agent": (75_231, 64_640, 1_309, 672, 76_540, 5),
    "archived": (9_734, 4_608, 822, 512, 10_556, 2),
    "multi-day-local-time": (49_704, 36_288, 981, 448, 50_685, 4),
    "local-shell": (8_114, 3_840, 226, 64, 8_340, 2),
}
# Per file of the two-file scenarios: (parent, child).
FILE_TOTALS = {
    "fork-with-history": ((53_853, 43_392, 1_130, 576, 54_983, 4), (27_638, 26_752, 607, 352, 28_245, 2)),
    "sub-agent": ((44_500, 35_328, 766, 352, 45_266, 3), (30_731, 29_312, 543, 320, 31_274, 2)),
}
TORN_UNLOGGED = (9_911, 9_216, 102, 0, 10_013, 1)
# scenario -> the open calls: (name, kind, world_changing, copied)
OPEN = {
    "killed-during-exec": [("exec_command", "function", True, False)],
    "killed-during-read": [("read_file", "function", False, False)],
    "apply-patch-unanswered": [("apply_patch", "custom", True, False)],
    "mcp-call": [("mcp__linear__create_issue", "function", True, False)],
    "sub-agent": [("spawn_agent", "function", True, True)],  # the child's copy of the call in flight
}


def as_tuple(totals: dict[str, int]) -> tuple[int, ...]:
    return (*(totals[name] for name in FIELDS), totals["responses"])


def named(path: str) -> re.Match[str]:
    match = NAME.match(path.split("/")[-1])
    assert match is not None, path
    return match


def no_constants(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def read(root: Path, path: str) -> tuple[list[bytes], list[dict[str, Any]], bytes]:
    """(raw complete lines, their objects, the torn tail): strict UTF-8 JSON, one object per LF line."""
    data = (root / path).read_bytes()
    *complete, tail = data.split(b"\n")
    records = []
    for number, raw in enumerate(complete, 1):
        assert raw and not raw.endswith(b"\r"), f"{path}:{number}: blank or CR"
        record = json.loads(raw.decode("utf-8", errors="strict"), parse_constant=no_constants)
        assert isinstance(record, dict), f"{path}:{number}: not an object"
        records.append(record)
    return complete, records, tail


def counts(records: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [
        (number, record["payload"])
        for number, record in enumerate(records, 1)
        if record["type"] == "event_msg" and record["payload"]["type"] == "token_count"
    ]


def copied_end(records: list[dict[str, Any]]) -> int:
    """The last line of the copied burst: from a second session_meta on, the lines stamped within one
    second of the file's first line (0 when the file copies nothing)."""
    metas = [n for n, record in enumerate(records, 1) if record["type"] == "session_meta"]
    if len(metas) < 2:
        return 0
    first = moment(records[0]["timestamp"])
    end = metas[1]
    while end < len(records) and moment(records[end]["timestamp"]) - first < timedelta(seconds=1):
        end += 1
    return end


def ledger(records: list[dict[str, Any]]) -> tuple[int, ...]:
    """An exact ledger of one file: positive deltas of total_token_usage, copies only set the baseline."""
    end = copied_end(records)
    previous = dict.fromkeys(FIELDS, 0)
    summed = dict.fromkeys(FIELDS, 0)
    responses = 0
    for number, payload in counts(records):
        info = payload["info"]
        if info is None:
            continue
        total = info["total_token_usage"]
        if number > end and total != previous:
            responses += 1
            for name in FIELDS:
                summed[name] += total[name] - previous[name]
        previous = total
    return (*(summed[name] for name in FIELDS), responses)


def moment(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("codex")
    returned = build_all(root)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == returned and manifest["format"] == "codex"
    return root, manifest["scenarios"]


def test_the_root_holds_the_two_session_folders_and_the_manifest(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    assert sorted(path.name for path in root.iterdir()) == ["archived_sessions", "manifest.json", "sessions"]
    listed = {item["path"] for entry in scenarios.values() for item in entry["files"]}
    on_disk = {path.relative_to(root).as_posix() for path in root.rglob("*.jsonl")}
    assert on_disk == listed
    assert set(scenarios) == set(SCENARIOS) == set(TOTALS)
    for path in listed:
        parts = path.split("/")
        assert NAME.match(parts[-1]), path
        if parts[0] == "archived_sessions":
            assert len(parts) == 2
        else:
            assert parts[0] == "sessions" and len(parts) == 5 and parts[1:4] == parts[-1][8:18].split("-")


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_every_line_is_the_compact_envelope_and_only_torn_tail_has_a_tail(
    built: tuple[Path, dict[str, Any]], name: str
) -> None:
    root, scenarios = built
    entry = scenarios[name]
    for item in entry["files"]:
        raw, records, tail = read(root, item["path"])
        for line, record in zip(raw, records, strict=True):
            assert list(record) == ["timestamp", "type", "payload"]
            assert TIME.match(record["timestamp"]) and record["type"] in KINDS
            assert isinstance(record["payload"], dict)
            assert line == json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        assert records[0]["type"] == "session_meta"
        assert records[0]["payload"]["id"] == item["session_id"] == named(item["path"])[2]
        if name == "torn-tail":
            assert tail and not tail.endswith(b"\n")
            assert tail.startswith(b'{"timestamp":"') and b'"type":"token_count"' in tail
            with pytest.raises(ValueError):
                json.loads(tail)
            assert entry["torn_tail"] == [
                {"file": item["path"], "line": len(records) + 1, "kept_bytes": len(tail)}
            ]
            assert item["lines"] == len(records) + 1
        else:
            assert tail == b"" and item["lines"] == len(records)
            assert entry["torn_tail"] == []


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_the_manifest_totals_are_the_hand_sums_and_a_ledger_of_the_files_finds_them(
    built: tuple[Path, dict[str, Any]], name: str
) -> None:
    root, scenarios = built
    entry = scenarios[name]
    assert as_tuple(entry["totals"]) == TOTALS[name]
    found = [ledger(read(root, item["path"])[1]) for item in entry["files"]]
    assert tuple(map(sum, zip(*found, strict=True))) == TOTALS[name]
    if name in FILE_TOTALS:
        assert tuple(found) == FILE_TOTALS[name]
        assert tuple(as_tuple(item["totals"]) for item in entry["files"]) == FILE_TOTALS[name]
    unlogged = TORN_UNLOGGED if name == "torn-tail" else (0, 0, 0, 0, 0, 0)
    assert as_tuple(entry["unlogged"]) == unlogged


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_cumulative_totals_never_decrease_and_add_up_the_last_usage(
    built: tuple[Path, dict[str, Any]], name: str
) -> None:
    root, scenarios = built
    for item in scenarios[name]["files"]:
        records = read(root, item["path"])[1]
        end = copied_end(records)
        previous = dict.fromkeys(FIELDS, 0)
        for number, payload in counts(records):
            info = payload["info"]
            if info is None:
                assert previous == dict.fromkeys(FIELDS, 0), f"{item['path']}:{number}: null info after usage"
                continue
            total, last = info["total_token_usage"], info["last_token_usage"]
            assert all(total[field] >= previous[field] for field in FIELDS)
            for usage in (total, last):
                assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
                assert usage["cached_input_tokens"] <= usage["input_tokens"]
                assert usage["reasoning_output_tokens"] <= usage["output_tokens"]
            if total != previous and number > end:
                assert all(total[field] == previous[field] + last[field] for field in FIELDS)
            previous = total


def test_doubled_token_counts_come_in_identical_pairs(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    entry = scenarios["doubled-token-counts"]
    (item,) = entry["files"]
    assert item["cli_version"] == "0.46.0"
    raw, records, _ = read(root, item["path"])
    found = counts(records)
    assert len(found) == 8
    for (first, payload), (second, again) in zip(found[::2], found[1::2], strict=True):
        assert second == first + 1 and payload == again
        assert raw[first - 1].split(b',"type"', 1)[1] == raw[second - 1].split(b',"type"', 1)[1]
    assert [r["token_count_lines"] for r in entry["responses"]] == [[n, n + 1] for n, _ in found[::2]]
    assert all(r["doubled"] for r in entry["responses"])
    naive = sum(payload["info"]["last_token_usage"]["total_tokens"] for _, payload in found)
    assert naive == 2 * 29_093
    # that era wrote no task_started / task_complete
    kinds = {r["payload"]["type"] for r in records if r["type"] == "event_msg"}
    assert not kinds & {"task_started", "task_complete"}


def test_first_info_null_then_rate_limit_counts_repeat_the_info(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    entry = scenarios["first-info-null"]
    records = read(root, entry["files"][0]["path"])[1]
    found = counts(records)
    assert found[0][1]["info"] is None
    assert [item["info_null"] for item in entry["repeated_token_counts"]] == [True, False]
    second = entry["repeated_token_counts"][1]["line"]
    before = [payload for number, payload in found if number < second and payload["info"] is not None][-1]
    assert dict(found)[second]["info"] == before["info"]
    assert len(found) == 5  # three responses and two repeats


@pytest.mark.parametrize("name", ["fork-with-history", "sub-agent"])
def test_a_child_copies_the_parent_lines_right_after_its_session_meta(
    built: tuple[Path, dict[str, Any]], name: str
) -> None:
    root, scenarios = built
    entry = scenarios[name]
    parent, child = entry["files"]
    parent_records = read(root, parent["path"])[1]
    child_records = read(root, child["path"])[1]
    meta = child_records[0]["payload"]
    if name == "fork-with-history":
        assert meta["forked_from_id"] == parent["session_id"] and child["kind"] == "fork"
        assert "forked_from_id" not in parent_records[0]["payload"]
    else:
        assert meta["source"] == {
            "subagent": {"thread_spawn": {"parent_thread_id": parent["session_id"], "depth": 1}}
        }
        assert "forked_from_id" not in meta and child["kind"] == "subagent"
    assert (
        child_records[1]["type"] == "session_meta"
        and child_records[1]["payload"]["id"] == parent["session_id"]
    )
    end = copied_end(child_records)
    assert child["copied_lines"] == [2, end]
    copies = child_records[1:end]
    assert [r["payload"] for r in copies] == [r["payload"] for r in parent_records[: len(copies)]]
    assert [r["type"] for r in copies] == [r["type"] for r in parent_records[: len(copies)]]
    # re-stamped: within the second of the child's creation, later than the originals
    start = moment(child_records[0]["timestamp"])
    for copy, original in zip(copies, parent_records, strict=False):
        assert timedelta(0) <= moment(copy["timestamp"]) - start < timedelta(seconds=1)
        assert moment(copy["timestamp"]) > moment(original["timestamp"])
    own_first = child_records[end]
    assert own_first["payload"]["type"] == "task_started"
    assert all(not r["copied"] or r["copy_of"]["file"] == parent["path"] for r in entry["responses"])
    copied = [r for r in entry["responses"] if r["copied"]]
    assert [r["usage"] for r in copied] == [
        entry["responses"][r["copy_of"]["index"]]["usage"] for r in copied
    ]


def test_the_fork_is_cut_before_the_parents_second_prompt(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    _, child = scenarios["fork-with-history"]["files"]
    child_records = read(root, child["path"])[1]
    prompts = [
        r["payload"]["message"]
        for r in child_records
        if r["type"] == "event_msg" and r["payload"]["type"] == "user_message"
    ]
    assert prompts == [
        "Why does `cargo test` fail on CI but not locally?",
        "Instead, make the test independent of the local timezone.",
    ]


def test_file_names_carry_local_time_and_lines_utc(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    (item,) = scenarios["multi-day-local-time"]["files"]
    assert item["path"].startswith("sessions/2026/02/12/rollout-2026-02-12T08-48-05-")
    assert item["utc_offset"] == "+09:00"
    records = read(root, item["path"])[1]
    assert records[0]["payload"]["timestamp"] == "2026-02-11T23:48:05.120Z"
    assert records[0]["timestamp"].startswith("2026-02-11T23:48:05.")
    assert records[-1]["timestamp"].startswith("2026-02-12T00:")  # the second turn crosses UTC midnight
    for entry in scenarios.values():
        for file in entry["files"]:
            stamp = named(file["path"])[1]
            started = moment(read(root, file["path"])[1][0]["payload"]["timestamp"])
            hours = 9 if file["path"] == item["path"] else 0
            local = (started + timedelta(hours=hours)).strftime("%Y-%m-%dT%H-%M-%S")
            assert stamp == local, file["path"]


def test_the_archived_session_is_flat(built: tuple[Path, dict[str, Any]]) -> None:
    _, scenarios = built
    (item,) = scenarios["archived"]["files"]
    assert item["path"].startswith("archived_sessions/rollout-") and item["archived"] is True


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_calls_and_outputs_pair_as_the_manifest_says(built: tuple[Path, dict[str, Any]], name: str) -> None:
    root, scenarios = built
    entry = scenarios[name]
    for item in entry["files"]:
        records = read(root, item["path"])[1]
        calls: dict[str, tuple[int, str]] = {}
        outputs: dict[str, int] = {}
        for number, record in enumerate(records, 1):
            payload = record["payload"]
            if record["type"] != "response_item":
                continue
            if payload["type"] in ("function_call", "custom_tool_call", "local_shell_call"):
                calls[payload["call_id"]] = (number, payload.get("name", "local_shell"))
                if payload["type"] == "function_call":
                    json.loads(payload["arguments"])
            elif payload["type"] in ("function_call_output", "custom_tool_call_output"):
                assert payload["call_id"] in calls and isinstance(payload["output"], str)
                outputs[payload["call_id"]] = number
        listed = {c["call_id"]: c for c in entry["calls"] if c["file"] == item["path"]}
        assert set(listed) == set(calls)
        for call_id, (number, tool) in calls.items():
            call = listed[call_id]
            assert (call["line"], call["name"]) == (number, tool)
            assert call["answered"] == (call_id in outputs)
            assert call["output_line"] == outputs.get(call_id)
    opened = [
        (c["name"], c["kind"], c["world_changing"], c["copied"]) for c in entry["calls"] if not c["answered"]
    ]
    assert opened == OPEN.get(name, [])
    assert len(entry["open_calls"]) == len(opened)


def test_turns_say_whether_they_completed(built: tuple[Path, dict[str, Any]]) -> None:
    _, scenarios = built

    def shape(name: str) -> list[tuple[bool, bool]]:
        return [(t["complete"], t["copied"]) for t in scenarios[name]["turns"]]

    assert shape("clean") == [(True, False), (True, False)]
    assert shape("model-request-open") == [(True, False), (False, False)]
    assert shape("killed-during-exec") == [(False, False)]
    assert shape("fork-with-history") == [(True, False), (True, False), (True, True), (True, False)]
    assert shape("doubled-token-counts") == [(False, False), (False, False)]  # no task_complete in 0.46
    last = scenarios["model-request-open"]["turns"][-1]
    assert last["last_line"] == scenarios["model-request-open"]["files"][0]["lines"]


def test_compaction_keeps_the_totals_growing(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    entry = scenarios["compaction"]
    (item,) = entry["files"]
    records = read(root, item["path"])[1]
    (compacted,) = entry["compacted"]
    line = records[compacted["line"] - 1]
    assert line["type"] == "compacted" and line["payload"]["message"].startswith("The user asked to port")
    assert records[compacted["line"]]["payload"] == {"type": "context_compacted"}
    after = [p for n, p in counts(records) if n > compacted["line"]]
    assert after[0]["info"]["last_token_usage"]["cached_input_tokens"] == 0
    assert after[-1]["info"]["total_token_usage"]["total_tokens"] == 110_437


def test_the_build_is_deterministic(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    build_all(first)
    build_all(second)
    files = sorted(path.relative_to(first) for path in first.rglob("*") if path.is_file())
    assert files == sorted(path.relative_to(second) for path in second.rglob("*") if path.is_file())
    for path in files:
        assert (first / path).read_bytes() == (second / path).read_bytes(), path
    other = build_one(tmp_path / "c", "clean", seed=7)
    assert (
        other["files"][0]["session_id"]
        != json.loads((first / "manifest.json").read_text())["scenarios"]["clean"]["files"][0]["session_id"]
    )


def test_a_killed_builder_writes_nothing_more_and_refuses_a_bad_tear(tmp_path: Path) -> None:
    b = RolloutBuilder(tmp_path, "/home/dev/x", seed=3)
    b.user("hello")
    with pytest.raises(ValueError):
        b.torn(b.last_line_size())
    b.kill()
    with pytest.raises(Stopped):
        b.assistant("too late")
    with pytest.raises(ValueError):
        Usage(10, 11)
    assert not any(tmp_path.iterdir())  # nothing before finish()
    b.finish()
    with pytest.raises(Stopped):
        b.finish()


def test_the_corpus_reaches_its_size_and_its_totals_are_what_a_ledger_finds(tmp_path: Path) -> None:
    manifest = build_corpus(tmp_path, 400_000, seed=5)["corpus"]
    files = sorted(tmp_path.rglob("*.jsonl"))
    assert manifest["files"] == len(files) and manifest["bytes"] == sum(p.stat().st_size for p in files)
    assert manifest["bytes"] >= 400_000
    found = [ledger(read(tmp_path, path.relative_to(tmp_path).as_posix())[1]) for path in files]
    assert tuple(map(sum, zip(*found, strict=True))) == as_tuple(manifest["totals"])
    assert json.loads((tmp_path / "manifest.json").read_text())["corpus"] == manifest
