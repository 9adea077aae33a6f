"""The Claude Code fixture builders: every scenario's files are strict JSONL, consistent with its manifest
(uuids, parents, tool pairing, streamed usage), deterministic, and written only below the given root."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_all, build_one
from sessaudit.formats.claude_code.build.transcript import Crashed, TranscriptBuilder
from tests.formats.claude_code.written import Written, scenario_files

NAMES = sorted(SCENARIOS)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("claude")
    build_all(root)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    return root, manifest["scenarios"]


def entry_of(
    built: tuple[Path, dict[str, Any]], name: str
) -> tuple[Path, dict[str, Any], dict[str, Written]]:
    root, scenarios = built
    entry = scenarios[name]
    return root, entry, scenario_files(root, entry)


def test_the_root_holds_the_projects_tree_and_the_manifest_only(built: tuple[Path, dict[str, Any]]) -> None:
    root, scenarios = built
    assert sorted(path.name for path in root.iterdir()) == ["manifest.json", "projects"]
    listed = {item["path"] for entry in scenarios.values() for item in entry["files"]}
    listed |= {item["sidecar"] for entry in scenarios.values() for item in entry["files"] if item["sidecar"]}
    on_disk = {path.relative_to(root).as_posix() for path in (root / "projects").rglob("*") if path.is_file()}
    assert on_disk == listed
    assert set(scenarios) == set(SCENARIOS)


@pytest.mark.parametrize("name", NAMES)
def test_strict_jsonl_and_only_the_torn_scenario_has_a_tail(
    built: tuple[Path, dict[str, Any]], name: str
) -> None:
    _, entry, files = entry_of(built, name)
    torn = {item["file"]: item for item in entry["torn_tail"]}
    assert bool(torn) == (name == "torn_tail")
    for path, written in files.items():
        declared = next(item["lines"] for item in entry["files"] if item["path"] == path)
        if path in torn:
            assert written.tail, f"{path}: the torn line is missing"
            assert len(written.tail) == torn[path]["kept_bytes"]
            assert torn[path]["line"] == len(written.records) + 1 == declared
            with pytest.raises(ValueError):
                json.loads(written.tail.decode("utf-8"))
        else:
            assert written.tail == b"", f"{path}: no final newline"
            assert len(written.records) == declared


@pytest.mark.parametrize("name", NAMES)
def test_uuids_are_unique_within_each_file(built: tuple[Path, dict[str, Any]], name: str) -> None:
    _, _, files = entry_of(built, name)
    for path, written in files.items():
        uuids = [record["uuid"] for record in written.records if "uuid" in record]
        assert len(uuids) == len(set(uuids)), path


def where(files: dict[str, Written]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path, written in files.items():
        for record in written.records:
            if "uuid" in record:
                found[record["uuid"]].append(path)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_every_parent_resolves_where_the_manifest_says(built: tuple[Path, dict[str, Any]], name: str) -> None:
    _, entry, files = entry_of(built, name)
    found = where(files)
    elsewhere = {(item["file"], item["line"]): item for item in entry["parents_elsewhere"]}
    roots = {(item["file"], item["line"]) for item in entry["roots"]}
    seen_elsewhere, seen_roots = set(), set()
    for path, written in files.items():
        for number, record in enumerate(written.records, 1):
            if "uuid" not in record:
                continue
            parent = record["parentUuid"]
            if parent is None:
                seen_roots.add((path, number))
                if record.get("subtype") == "compact_boundary":
                    assert path in found[record["logicalParentUuid"]]
            elif path not in found[parent]:
                item = elsewhere[(path, number)]
                assert item["parent_uuid"] == parent
                assert item["resolves_in"] == found[parent]
                seen_elsewhere.add((path, number))
    assert seen_elsewhere == set(elsewhere)
    assert seen_roots == roots
    for item in entry["summaries"]:
        assert item["resolves_in"] == found[item["leaf_uuid"]] != []
        assert item["file"] not in item["resolves_in"]


def blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    content = record.get("message", {}).get("content")
    return content if isinstance(content, list) else []


@pytest.mark.parametrize("name", NAMES)
def test_tool_pairing_matches_the_manifest(built: tuple[Path, dict[str, Any]], name: str) -> None:
    _, entry, files = entry_of(built, name)
    calls = {call["id"]: call for call in entry["tool_calls"]}
    copied = {(item["file"], item["line"]) for item in entry["resume_copies"]}
    for path, written in files.items():
        uses: dict[str, int] = {}
        results: dict[str, tuple[int, dict[str, Any]]] = {}
        for number, record in enumerate(written.records, 1):
            for block in blocks(record):
                if block["type"] == "tool_use":
                    uses[block["id"]] = number
                    if (path, number) not in copied:
                        call = calls[block["id"]]
                        assert (call["file"], call["line"], call["name"]) == (path, number, block["name"])
                        assert call["assistant_uuid"] == record["uuid"]
                elif block["type"] == "tool_result":
                    assert block["tool_use_id"] in uses, f"{path}:{number}: result before its call"
                    assert block["tool_use_id"] not in results, f"{path}:{number}: answered twice"
                    results[block["tool_use_id"]] = (number, block)
        for call_id, (number, block) in results.items():
            if (path, number) in copied:
                continue
            call = calls[call_id]
            assert call["has_result"] and call["result_line"] == number and call["file"] == path
            expected = {"ok": False, "error": True, "interrupted": True}[call["outcome"]]
            assert block.get("is_error", False) is expected
        open_here = {
            call_id for call_id, call in calls.items() if call["file"] == path and not call["has_result"]
        }
        assert set(uses) - set(results) == open_here
    assert entry["open_calls"] == [call["id"] for call in entry["tool_calls"] if not call["has_result"]]
    assert all(call["outcome"] == "unknown" for call in calls.values() if not call["has_result"])


@pytest.mark.parametrize("name", NAMES)
def test_streamed_lines_share_the_message_id_and_usage_grows_as_configured(
    built: tuple[Path, dict[str, Any]], name: str
) -> None:
    _, entry, files = entry_of(built, name)
    copied = {(item["file"], item["line"]) for item in entry["resume_copies"]}
    synthetic = {(item["file"], item["line"]) for item in entry["synthetic"]}
    lines: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for path, written in files.items():
        for number, record in enumerate(written.records, 1):
            if record.get("type") == "assistant" and (path, number) not in copied | synthetic:
                lines[record["message"]["id"]].append((number, record))
    assert sorted(lines) == sorted(response["message_id"] for response in entry["responses"])
    for response in entry["responses"]:
        group = lines[response["message_id"]]
        assert [number for number, _ in group] == response["lines"]
        usages = [record["message"]["usage"] for _, record in group]
        for _, record in group:
            assert record.get("requestId") == response["request_id"]
            assert record["message"]["model"] == response["model"]
            assert record["sessionId"] == response["session_id"]
            assert record.get("agentId") == response["agent_id"]
        true = response["usage"]
        for usage in usages:
            for field in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                assert usage[field] == true[field]
            if "cache_creation" in usage:
                assert usage["cache_creation"] == true["cache_creation"]
        outputs = [usage["output_tokens"] for usage in usages]
        stops = [record["message"]["stop_reason"] for _, record in group]
        assert response["logged_output_tokens"] == max(outputs)
        if response["streaming"] == "identical":
            assert all(usage == usages[0] for usage in usages) and None not in stops
            assert outputs[-1] == true["output_tokens"]
        else:
            assert outputs == sorted(outputs) and stops[:-1] == [None] * (len(stops) - 1)
            assert all(output <= 9 for output in outputs[:-1])
        if response["placeholder"]:
            assert stops[-1] is None and outputs[-1] < true["output_tokens"]
        else:
            assert stops[-1] is not None and outputs[-1] == true["output_tokens"]


@pytest.mark.parametrize("name", NAMES)
def test_lines_carry_their_file_identity(built: tuple[Path, dict[str, Any]], name: str) -> None:
    root, entry, files = entry_of(built, name)
    for item in entry["files"]:
        written = files[item["path"]]
        assert Path(item["path"]).stem == (
            item["session_id"] if item["kind"] == "session" else f"agent-{item['agent_id']}"
        )
        conversation = [record for record in written.records if "uuid" in record]
        assert all(record["sessionId"] == item["session_id"] for record in conversation)
        assert all(record["isSidechain"] is (item["kind"] == "subagent") for record in conversation)
        assert all(record["cwd"] == entry["cwd"] for record in conversation)
        if item["kind"] == "subagent":
            assert conversation[0]["parentUuid"] is None
            assert all(record["agentId"] == item["agent_id"] for record in conversation)
        if item["sidecar"]:
            meta = json.loads((root / item["sidecar"]).read_text(encoding="utf-8"))
            task = next(call for call in entry["tool_calls"] if call["id"] == meta["toolUseId"])
            assert task["name"] == "Task"


def test_resume_copies_keep_uuids_and_change_only_the_session(built: tuple[Path, dict[str, Any]]) -> None:
    _, entry, files = entry_of(built, "resumed")
    assert len(entry["resume_copies"]) == 2
    for item in entry["resume_copies"]:
        copy = files[item["file"]].records[item["line"] - 1]
        original = files[item["original_file"]].records[item["original_line"] - 1]
        assert copy["uuid"] == original["uuid"] == item["uuid"]
        assert copy["sessionId"] != original["sessionId"]
        assert {**copy, "sessionId": original["sessionId"]} == original


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    for run in ("a", "b"):
        build_all(tmp_path / run, names=["clean", "subagent_folder", "torn_tail"])
    first = sorted((tmp_path / "a").rglob("*"))
    assert [p.relative_to(tmp_path / "a") for p in first] == [
        p.relative_to(tmp_path / "b") for p in sorted((tmp_path / "b").rglob("*"))
    ]
    for path in first:
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()
    other = build_one(tmp_path / "c", "clean", seed=1)["files"][0]["path"]
    clean = next(p for p in first if "-clean/" in p.as_posix())
    assert (tmp_path / "c" / other).read_bytes() != clean.read_bytes()


def test_it_never_overwrites_and_never_writes_after_a_crash(tmp_path: Path) -> None:
    build_one(tmp_path, "clean")
    with pytest.raises(FileExistsError):
        build_one(tmp_path, "clean")
    builder = TranscriptBuilder(tmp_path / "other", "/home/dev/x", seed=3)
    builder.user("hi")
    builder.crash()
    with pytest.raises(Crashed):
        builder.user("again")
