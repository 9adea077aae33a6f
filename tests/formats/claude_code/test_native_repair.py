"""`seed --native --output FILE` for Claude Code, called as the function native_repair (the CLI route waits
for the core to let two plugins share `--native`): the repaired copy verifies clean, keeps the original's
lines byte for byte, has each property spec §8 asks for, is reproducible, and the original is never
touched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sessaudit.engine import audit
from sessaudit.formats.claude_code.build.parts import Text, ToolUse, Usage
from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_one
from sessaudit.formats.claude_code.build.transcript import TranscriptBuilder
from sessaudit.formats.claude_code.native import native_repair
from sessaudit.formats.claude_code.plugin import OUTPUT_OPTION, PLUGIN, native_repair_takeover
from sessaudit.plugin import OptionError
from sessaudit.registry import registered

OPEN = [name for name in SCENARIOS if name.startswith("dangling_")] + ["killed_during_bash", "torn_tail"]
MARKER = "[Request interrupted by user for tool use]"
ENVELOPE = ("sessionId", "cwd", "version", "gitBranch", "isSidechain", "userType")


def session_file(root: Path, name: str) -> Path:
    (path,) = (root / "projects" / f"-home-dev-{name.replace('_', '-')}").glob("*.jsonl")
    return path


def target(out: Path, source: Path) -> Path:
    """Where the copy goes: the same project folder name and file name, below another root."""
    path = out / "projects" / source.parent.name / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def repair(source: Path, output: Path, *, run: str | None = None, sequence: int | None = None) -> int:
    with registered(PLUGIN):
        return native_repair(str(source), run, sequence, str(output))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_bytes().split(b"\n") if raw]


def whole_lines(data: bytes) -> bytes:
    """The bytes through the last LF (a torn last line left out)."""
    return data[: data.rfind(b"\n") + 1]


@pytest.fixture(scope="module")
def repaired(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, bytes, int]]:
    """scenario -> (original, repaired copy, the original's bytes and mtime before the repair)."""
    root = tmp_path_factory.mktemp("claude-code-native")
    out = tmp_path_factory.mktemp("claude-code-repaired")
    made: dict[str, tuple[Path, Path, bytes, int]] = {}
    for name in OPEN:
        build_one(root, name)
        source = session_file(root, name)
        before = (source.read_bytes(), source.stat().st_mtime_ns)
        output = target(out, source)
        assert repair(source, output) == 0
        made[name] = (source, output, *before)
    return made


@pytest.mark.parametrize("name", OPEN)
def test_the_repaired_copy_verifies_clean(
    repaired: dict[str, tuple[Path, Path, bytes, int]], name: str
) -> None:
    _, output, _, _ = repaired[name]
    with registered(PLUGIN):
        report = audit([str(output.parent)]).report
    (source,) = report.sources
    assert source.verdict.value == "clean"
    assert [item.rule for item in report.findings] == []
    assert all(run.state != "open" for session in source.sessions for run in session.runs)


@pytest.mark.parametrize("name", OPEN)
def test_the_first_lines_are_the_originals_bytes(
    repaired: dict[str, tuple[Path, Path, bytes, int]], name: str
) -> None:
    _, output, original, _ = repaired[name]
    kept = whole_lines(original)  # torn_tail: its torn last line is dropped
    copy = output.read_bytes()
    assert copy.startswith(kept)
    # then exactly two lines: the result line and the marker
    assert copy[len(kept) :].count(b"\n") == 2 and copy.endswith(b"\n")
    assert len(kept.split(b"\n")) - 1 == (5 if name == "killed_during_bash" else 6)


@pytest.mark.parametrize("name", OPEN)
def test_the_original_is_untouched(repaired: dict[str, tuple[Path, Path, bytes, int]], name: str) -> None:
    source, _, original, mtime = repaired[name]
    assert source.read_bytes() == original and source.stat().st_mtime_ns == mtime


def test_the_answer_line_literal(repaired: dict[str, tuple[Path, Path, bytes, int]]) -> None:
    _, output, _, _ = repaired["dangling_bash"]
    *_, answer, marker = records(output)
    assert answer == {
        "parentUuid": "ecc8e51e-1d99-4c06-adc7-19eead047d7f",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/dangling_bash",
        "sessionId": "c5d5aafc-7f61-4fdd-ba94-49452d85f57e",
        "version": "2.1.79",
        "gitBranch": "main",
        "slug": "lively-sketching-comet",
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "tool_use_id": "toolu_01w8AMWB0RyPwtTgQkRYJQB1",
                    "type": "tool_result",
                    "content": "[sessaudit] The outcome of this Bash call is unknown: the session ended "
                    "before its result was recorded. It was not run again.",
                    "is_error": True,
                }
            ],
        },
        "uuid": answer["uuid"],
        "timestamp": "2026-03-14T09:28:01.794Z",  # the call's line is 09:28:01.793Z
        "sourceToolAssistantUUID": "ecc8e51e-1d99-4c06-adc7-19eead047d7f",
    }
    assert marker["parentUuid"] == answer["uuid"] and marker["timestamp"] == "2026-03-14T09:28:01.795Z"
    assert marker["message"] == {"role": "user", "content": [{"type": "text", "text": MARKER}]}


# --- spec §8, one property per test, on parallel calls in two responses -----------------------------------
def two_responses(root: Path, *, version: str = "2.1.79") -> Path:
    """A response whose Read is answered and whose Grep is not, then a response with two calls (Write,
    Bash) the crash leaves unanswered: three dangling calls in two responses of one turn."""
    b = TranscriptBuilder(root, "/home/dev/two", seed=11, version=version)
    b.user("Look first.")
    first = b.assistant(
        [ToolUse("Read", {"file_path": "/home/dev/two/a.py"}), ToolUse("Grep", {"pattern": "x"})],
        usage=Usage(3, 40, cache_5m=900),
    )
    b.tool_result(first.calls[0], "print('a')\n")
    b.assistant(
        [Text("Writing and building."), ToolUse("Write", {"file_path": "/home/dev/two/b.py", "content": "b"}),
         ToolUse("Bash", {"command": "make"})],
        usage=Usage(1, 70, cache_5m=120, cache_read=900),
    )  # fmt: skip
    b.crash()
    (path,) = (file for file in b.finish().files if file.suffix == ".jsonl")
    return path


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(original records, appended records) of the two-response repair."""
    root = tmp_path_factory.mktemp("two")
    source = two_responses(root)
    output = target(tmp_path_factory.mktemp("two-out"), source)
    assert repair(source, output) == 0
    original = records(source)
    return original, records(output)[len(original) :]


def calls_of(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        block["id"]: line
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block["type"] == "tool_use"
    }


def results_of(lines: list[dict[str, Any]]) -> list[str]:
    return [
        block["tool_use_id"]
        for line in lines
        if line.get("type") == "user" and isinstance(line["message"]["content"], list)
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    ]


def test_every_call_is_answered_exactly_once(pair: Any) -> None:
    original, added = pair
    answered = results_of(original + added)
    assert sorted(answered) == sorted(calls_of(original)) and len(answered) == len(set(answered)) == 4


def test_one_line_per_response(pair: Any) -> None:
    original, added = pair
    *answers, marker = added
    calls = calls_of(original)
    responses = [{calls[call]["message"]["id"] for call in results_of([line])} for line in answers]
    assert len(answers) == 2 and all(len(ids) == 1 for ids in responses)
    assert responses[0] != responses[1]
    assert [len(results_of([line])) for line in answers] == [1, 2]  # Grep; then Write and Bash
    assert results_of([marker]) == []


def test_parent_is_the_assistant_line_holding_the_call(pair: Any) -> None:
    original, added = pair
    calls = calls_of(original)
    for line in added[:-1]:
        holders = [calls[call]["uuid"] for call in results_of([line])]
        assert line["parentUuid"] == holders[-1]  # the response's last line holding one of its calls


def test_source_tool_assistant_uuid_on_2x(pair: Any) -> None:
    _, added = pair
    assert [line["sourceToolAssistantUUID"] == line["parentUuid"] for line in added[:-1]] == [True, True]
    assert "sourceToolAssistantUUID" not in added[-1]


def test_no_source_tool_assistant_uuid_on_1x(tmp_path: Path) -> None:
    source = two_responses(tmp_path / "in", version="1.0.85")
    output = target(tmp_path / "out", source)
    assert repair(source, output) == 0
    added = records(output)[len(records(source)) :]
    assert len(added) == 3 and all("sourceToolAssistantUUID" not in line for line in added)
    assert {line["version"] for line in added} == {"1.0.85"}


def test_same_envelope_as_the_assistant_line(pair: Any) -> None:
    original, added = pair
    by_uuid = {line.get("uuid"): line for line in original}
    for line in added[:-1]:
        holder = by_uuid[line["parentUuid"]]
        assert {key: line[key] for key in ENVELOPE} == {key: holder[key] for key in ENVELOPE}
    assert {key: added[-1][key] for key in ENVELOPE} == {key: added[-2][key] for key in ENVELOPE}


def test_timestamps_follow_and_never_run_backwards(pair: Any) -> None:
    original, added = pair
    stamps = [line["timestamp"] for line in original + added if "timestamp" in line]
    assert stamps == sorted(stamps)
    latest = max(line["timestamp"] for line in original if "timestamp" in line)
    assert all(line["timestamp"] > latest for line in added)
    assert len({line["timestamp"] for line in added}) == 3


def test_results_are_errors(pair: Any) -> None:
    _, added = pair
    blocks = [block for line in added[:-1] for block in line["message"]["content"]]
    assert [block["is_error"] for block in blocks] == [True, True, True]
    assert [block["content"].split(" call ")[0] for block in blocks] == [
        "[sessaudit] The outcome of this Grep",
        "[sessaudit] The outcome of this Write",
        "[sessaudit] The outcome of this Bash",
    ]


def test_uuids_are_unique_and_v4(pair: Any) -> None:
    original, added = pair
    uuids = [line["uuid"] for line in original + added if "uuid" in line]
    assert len(uuids) == len(set(uuids))
    assert all(line["uuid"][14] == "4" and line["uuid"][19] in "89ab" for line in added)


def test_the_marker_is_the_new_leaf(pair: Any) -> None:
    _, added = pair
    assert added[-1]["parentUuid"] == added[-2]["uuid"]
    assert added[-1]["message"]["content"] == [{"type": "text", "text": MARKER}]


# --- refusals, reproducibility, the takeover -------------------------------------------------------------
def test_reproducible(tmp_path: Path) -> None:
    source = two_responses(tmp_path / "in")
    first, second = target(tmp_path / "a", source), target(tmp_path / "b", source)
    assert repair(source, first) == 0 and repair(source, second) == 0
    assert first.read_bytes() == second.read_bytes()


def test_an_existing_output_is_refused_and_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = two_responses(tmp_path / "in")
    output = target(tmp_path / "out", source)
    output.write_bytes(b"mine\n")
    os.utime(output, ns=(1_000_000_000, 1_000_000_000))
    assert repair(source, output) == 2
    assert output.read_bytes() == b"mine\n" and output.stat().st_mtime_ns == 1_000_000_000
    assert "exists" in capsys.readouterr().err


def test_a_corrupt_history_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = two_responses(tmp_path / "in")
    with source.open("ab") as stream:
        stream.write(b"{not json}\n" + source.read_bytes().split(b"\n")[1] + b"\n")  # SA701, not last
    output = target(tmp_path / "out", source)
    assert repair(source, output) == 1
    assert not output.exists()
    err = capsys.readouterr().err
    assert "the history is corrupt; first corrupting finding: SA701" in err


def test_nothing_open_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_one(tmp_path / "in", "clean")
    source = session_file(tmp_path / "in", "clean")
    output = target(tmp_path / "out", source)
    assert repair(source, output) == 1 and not output.exists()
    assert "nothing to repair" in capsys.readouterr().err


def test_an_unknown_run_is_a_usage_error(tmp_path: Path) -> None:
    source = two_responses(tmp_path / "in")
    output = target(tmp_path / "out", source)
    assert repair(source, output, run="no-such-turn") == 2 and not output.exists()


def test_sequence_forks_at_a_line(tmp_path: Path) -> None:
    source = two_responses(tmp_path / "in")
    output = target(tmp_path / "out", source)
    lines = records(source)
    # lines: 1 snapshot, 2 prompt, 3 Read, 4 Grep, 5 Read's result, 6 text, 7 Write, 8 Bash
    assert [line.get("type") for line in lines] == ["file-history-snapshot", "user"] + ["assistant"] * 2 + [
        "user"
    ] + ["assistant"] * 3
    assert repair(source, output, run=lines[1]["uuid"], sequence=6) == 0
    original = source.read_bytes()
    assert output.read_bytes().startswith(b"".join(part + b"\n" for part in original.split(b"\n")[:6]))
    added = records(output)[6:]
    grep = lines[3]["message"]["content"][0]["id"]
    assert len(added) == 2 and results_of(added) == [grep]  # Write and Bash come after line 6: left out
    assert added[0]["parentUuid"] == lines[3]["uuid"]


def test_the_takeover_needs_output(tmp_path: Path) -> None:
    source = two_responses(tmp_path / "in")
    with pytest.raises(OptionError, match="needs --output FILE"):
        native_repair_takeover(str(source), None, None, {})
    output = target(tmp_path / "out", source)
    assert OUTPUT_OPTION.parse is not None
    extras = dict(OUTPUT_OPTION.parse(output))
    with registered(PLUGIN):
        assert native_repair_takeover(str(source), None, None, extras) == 0
    assert output.exists()
