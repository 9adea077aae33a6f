"""The seeds of open Claude Code turns (CONTRACT §5) through the registered plugin: condition, kind, fork
point and pending effects for a dangling call at each kind of tool, the context chain and next_facts as
literals, byte stability, `--sequence`, parallel calls, compaction, and no seed from a corrupt history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from sessaudit.engine import audit
from sessaudit.formats.claude_code.build.parts import Text, ToolUse, Usage
from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_one
from sessaudit.formats.claude_code.build.transcript import TranscriptBuilder
from sessaudit.formats.claude_code.plugin import PLUGIN
from sessaudit.model import Report, Run, Seed
from sessaudit.plugin import VerifyOptions
from sessaudit.registry import registered
from sessaudit.resources import load_schema
from sessaudit.seeds import seed_document

SEED_SCHEMA = Draft202012Validator(load_schema("seed.v1.schema.json"))
OPEN = [name for name in SCENARIOS if name.startswith("dangling_")] + ["killed_during_bash", "torn_tail"]
# scenario -> (condition, seed kind, tool, fork line, fork byte offset, fork fact id = the call's line uuid)
EXPECTED: dict[str, tuple[str, str, str, int, int, str]] = {
    "dangling_bash": ("effect-unknown", "fork", "Bash", 6, 3206, "ecc8e51e-1d99-4c06-adc7-19eead047d7f"),
    "dangling_write": ("effect-unknown", "fork", "Write", 6, 3207, "d5c68a6a-fd41-41a6-8f6b-31e107c25d29"),
    "dangling_edit": ("effect-unknown", "fork", "Edit", 6, 3202, "acade0f8-934a-45f6-8d2c-0b35dafaa3fe"),
    "dangling_multiedit": (
        "effect-unknown", "fork", "MultiEdit", 6, 2883, "e2fb5615-4cde-4a77-9c61-505e83bff8a4"
    ),
    "dangling_notebookedit": (
        "effect-unknown", "fork", "NotebookEdit", 6, 3250, "1de7f9f3-bf99-4ef3-808d-dd24eaa8735f"
    ),
    "dangling_mcp": (
        "effect-unknown", "fork", "mcp__github__create_issue", 6, 3201, "872e36da-5064-4346-b406-3e30d5837118"
    ),
    "dangling_read": ("effect-replayable", "replay", "Read", 6, 3202, "3a7cea83-2723-4032-9623-20c9b9ba8f06"),
    "dangling_glob": ("effect-replayable", "replay", "Glob", 6, 3202, "155c93a0-4b45-492f-a7db-62027cc1a2c6"),
    "dangling_grep": ("effect-replayable", "replay", "Grep", 6, 3206, "1186d2a4-e680-48f0-a37d-c49c09eac62b"),
    "dangling_ls": ("effect-replayable", "replay", "LS", 6, 2848, "d1caf76d-a688-4078-b74e-c7cea432796d"),
    "dangling_webfetch": (
        "effect-replayable", "replay", "WebFetch", 6, 3230, "83225dd6-c6dd-4d98-a6c7-5e30a074f476"
    ),
    "killed_during_bash": ("effect-unknown", "fork", "Bash", 5, 2721, "ac869168-0cbc-4c6f-8cdd-e9f79c3bd671"),
    "torn_tail": ("effect-unknown", "fork", "Bash", 6, 3256, "21a44733-c445-41f3-90a2-4127b7a5c53f"),
}  # fmt: skip
ANSWER = (
    "[sessaudit] The outcome of this Bash call is unknown: the session ended before its result was recorded. "
    "It was not run again."
)


def session_file(root: Path, name: str) -> Path:
    (path,) = (root / "projects" / f"-home-dev-{name.replace('_', '-')}").glob("*.jsonl")
    return path


def open_runs(report: Report) -> list[Run]:
    return [
        run
        for source in report.sources
        for session in source.sessions
        for run in session.runs
        if run.recovery is not None
    ]


def seed_of(report: Report) -> Seed:
    (run,) = open_runs(report)
    assert run.recovery is not None and run.recovery.seed is not None
    return run.recovery.seed


def audited(path: Path, options: VerifyOptions | None = None) -> Report:
    with registered(PLUGIN):
        return audit([str(path)], options=options or VerifyOptions()).report


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("claude-code-seeds")
    return root, {name: build_one(root, name) for name in OPEN}


@pytest.mark.parametrize("name", OPEN)
def test_the_seed_of_a_dangling_call(built: tuple[Path, dict[str, Any]], name: str) -> None:
    root, manifest = built
    condition, kind, tool, line, offset, fact_id = EXPECTED[name]
    path = session_file(root, name)
    seed = seed_of(audited(path.parent))
    assert (seed.condition, seed.seed_kind, seed.run_id != "", seed.session_id) == (
        condition,
        kind,
        True,
        path.stem,
    )
    assert (seed.fork_point.seq, seed.fork_point.line, seed.fork_point.byte_offset) == (None, line, offset)
    assert seed.fork_point.fact_id == fact_id
    # the offset is where that line starts in the bytes, and the fact is the open call's line (manifest)
    data = path.read_bytes()
    assert offset == len(b"".join(part + b"\n" for part in data.split(b"\n")[: line - 1]))
    (call,) = [item for item in manifest[name]["tool_calls"] if not item["has_result"]]
    assert call["assistant_uuid"] == fact_id
    (effect,) = seed.pending_effects
    assert (effect.tool_name, effect.tool_call_id, effect.intent_id) == (tool, call["id"], fact_id)
    assert effect.replay_policy == ("never" if kind == "fork" else "safe")
    assert seed.source.format == "claude-code"
    assert seed.source.format_version == ("2.0.55" if tool in ("MultiEdit", "LS") else "2.1.79")
    SEED_SCHEMA.validate(seed_document(seed))
    # next_facts: one result line answering the call, then the interruption marker
    assert [fact["type"] for fact in seed.next_facts] == ["user", "user"]
    (block,) = seed.next_facts[0]["message"]["content"]
    assert (block["tool_use_id"], block["is_error"]) == (call["id"], True)
    assert block["content"] == ANSWER.replace("Bash", tool)
    if kind == "fork":
        assert seed.replay is None
    else:
        assert seed.replay == {
            "kind": "tool",
            "tool_name": tool,
            "arguments": call_arguments(root, path, line),
            "intent_id": fact_id,
            "result_slot": call["id"],
            "replay_key": None,
        }


def call_arguments(root: Path, path: Path, line: int) -> Any:
    record = json.loads(path.read_bytes().split(b"\n")[line - 1])
    return record["message"]["content"][0]["input"]


def test_the_seed_source_hash_is_the_engines(built: tuple[Path, dict[str, Any]]) -> None:
    root, _ = built
    report = audited(session_file(root, "dangling_bash").parent)
    (source,) = report.sources
    assert seed_of(report).source.sha256 == source.sha256 is not None


def test_context_chain_and_next_facts_literal(built: tuple[Path, dict[str, Any]]) -> None:
    root, _ = built
    seed = seed_of(audited(session_file(root, "dangling_bash").parent))
    messages = seed.context.messages
    assert [(m["uuid"], m["type"], m["role"]) for m in messages] == [
        ("29f00a96-57a9-43cb-b11b-91aa096f71f0", "user", "user"),
        ("eef12e7f-d211-4b61-85a3-1d8461ca0db2", "assistant", "assistant"),
        ("b10888b9-be28-40d4-a4c0-43ca04cdde7a", "user", "user"),
        ("8a1390b1-8ef9-426c-a9e5-d092ed9464c4", "assistant", "assistant"),
        ("ecc8e51e-1d99-4c06-adc7-19eead047d7f", "assistant", "assistant"),
    ]
    assert messages[0]["content"] == "Tidy up calc.py and the notes."
    assert messages[3]["content"] == [{"type": "text", "text": "Next step."}]
    envelope = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/dangling_bash",
        "sessionId": "c5d5aafc-7f61-4fdd-ba94-49452d85f57e",
        "version": "2.1.79",
        "gitBranch": "main",
        "slug": "lively-sketching-comet",
    }
    assert seed.next_facts == [
        {
            "parentUuid": "ecc8e51e-1d99-4c06-adc7-19eead047d7f",
            **envelope,
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": "toolu_01w8AMWB0RyPwtTgQkRYJQB1",
                        "type": "tool_result",
                        "content": ANSWER,
                        "is_error": True,
                    }
                ],
            },
            "uuid": {"$assign": "uuid"},
            "timestamp": {"$assign": "timestamp"},
            "sourceToolAssistantUUID": "ecc8e51e-1d99-4c06-adc7-19eead047d7f",
        },
        {
            "parentUuid": {"$assign": "uuid", "same_as": "next_facts[0].uuid"},
            **envelope,
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
            },
            "uuid": {"$assign": "uuid"},
            "timestamp": {"$assign": "timestamp"},
        },
    ]
    assert seed.warnings == [
        "Bash (toolu_01w8AMWB0RyPwtTgQkRYJQB1) may or may not have run: check its effect by hand; "
        "next_facts answer it as an error without running it again"
    ]


def test_seeds_are_byte_stable(built: tuple[Path, dict[str, Any]]) -> None:
    root, _ = built
    folder = session_file(root, "dangling_read").parent
    first = json.dumps(seed_document(seed_of(audited(folder))), sort_keys=True)
    second = json.dumps(seed_document(seed_of(audited(folder))), sort_keys=True)
    assert first == second


def test_sequence_moves_the_fork_point_to_a_line(built: tuple[Path, dict[str, Any]]) -> None:
    root, _ = built
    folder = session_file(root, "dangling_bash").parent
    seed = seed_of(audited(folder, VerifyOptions(fork_sequence=3)))
    assert (seed.fork_point.line, seed.fork_point.fact_id) == (3, "eef12e7f-d211-4b61-85a3-1d8461ca0db2")
    assert [m["uuid"] for m in seed.context.messages] == [
        "29f00a96-57a9-43cb-b11b-91aa096f71f0",
        "eef12e7f-d211-4b61-85a3-1d8461ca0db2",
    ]
    # at line 3 the Read has no result yet (its result is line 4): next_facts answer it
    assert seed.next_facts[0]["message"]["content"][0]["tool_use_id"] == "toolu_01ql2nW5O3h9C7eIR6N4xVz3"
    assert seed.condition == "effect-unknown"  # the run's condition, whatever the fork point


def test_a_sequence_naming_no_record_of_the_turn_gives_no_seed(built: tuple[Path, dict[str, Any]]) -> None:
    root, _ = built
    folder = session_file(root, "dangling_bash").parent
    (run,) = open_runs(audited(folder, VerifyOptions(fork_sequence=1)))  # line 1: a snapshot, no uuid
    assert run.recovery is not None and run.recovery.seed is None and run.recovery.seed_kind == "fork"
    assert run.recovery.warnings[-1].endswith("line 1 holds no record with a uuid")


def parallel(root: Path, *, version: str = "2.1.79") -> Path:
    b = TranscriptBuilder(root, "/home/dev/parallel", seed=7, version=version)
    b.user("Check the notes and rebuild.")
    b.assistant(
        [Text("Both at once."), ToolUse("Read", {"file_path": "/home/dev/parallel/notes.md"}),
         ToolUse("Bash", {"command": "make"})],
        usage=Usage(3, 90, cache_5m=1000),
    )  # fmt: skip
    b.crash()
    (path,) = (file for file in b.finish().files if file.suffix == ".jsonl")
    return path


def test_parallel_calls_are_answered_in_one_line(tmp_path: Path) -> None:
    path = parallel(tmp_path)
    seed = seed_of(audited(path.parent))
    assert seed.condition == "effect-unknown" and len(seed.pending_effects) == 2
    lines = [json.loads(raw) for raw in path.read_bytes().splitlines()]
    read_line, bash_line = lines[-2], lines[-1]
    first, marker = seed.next_facts
    assert first["parentUuid"] == bash_line["uuid"] == first["sourceToolAssistantUUID"]
    assert [block["tool_use_id"] for block in first["message"]["content"]] == [
        read_line["message"]["content"][0]["id"],
        bash_line["message"]["content"][0]["id"],
    ]
    assert marker["message"]["content"][0]["text"] == "[Request interrupted by user for tool use]"


def test_a_prompt_without_answer_replays_the_model_request(tmp_path: Path) -> None:
    b = TranscriptBuilder(tmp_path, "/home/dev/asked", seed=3)
    prompt = b.user("Why is the sky blue?")
    b.crash()
    (path,) = (file for file in b.finish().files if file.suffix == ".jsonl")
    seed = seed_of(audited(path.parent))
    assert (seed.condition, seed.seed_kind, seed.next_facts) == ("model-request-open", "replay", [])
    assert seed.replay == {
        "kind": "model_request",
        "step_id": None,
        "attempt": None,
        "context_boundary": prompt,
    }
    assert [m["uuid"] for m in seed.context.messages] == [prompt]


def test_the_context_starts_after_the_last_compact_boundary(tmp_path: Path) -> None:
    b = TranscriptBuilder(tmp_path, "/home/dev/compacted", seed=5)
    b.user("Plan it.")
    b.assistant([Text("A plan.")], usage=Usage(3, 10, cache_5m=100))
    boundary = b.compact("A plan was made.")
    summary = b.leaf
    prompt = b.user("Do it.")
    call = b.assistant([ToolUse("Bash", {"command": "make"})], usage=Usage(1, 5, cache_5m=10))
    b.crash()
    (path,) = (file for file in b.finish().files if file.suffix == ".jsonl")
    seed = seed_of(audited(path.parent))
    assert [m["uuid"] for m in seed.context.messages] == [summary, prompt, call.uuids[0]]
    boundary_line = next(
        number
        for number, raw in enumerate(path.read_bytes().splitlines(), 1)
        if json.loads(raw).get("uuid") == boundary
    )
    assert f"compact_boundary on line {boundary_line}" in seed.warnings[-1]


def test_a_corrupt_history_gets_no_seed(tmp_path: Path) -> None:
    path = parallel(tmp_path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    stray = json.loads(lines[1])  # the prompt line, made into a result for a call nobody made
    stray.update(uuid="aaaaaaaa-bbbb-4ccc-8ddd-000000000009", parentUuid=stray["uuid"])
    stray["message"] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nobody"}]}
    lines.insert(2, json.dumps(stray).encode())
    path.write_bytes(b"\n".join(lines))
    report = audited(path.parent)
    (source,) = report.sources
    assert source.verdict.value == "corrupt"
    (run,) = open_runs(report)
    assert run.recovery is not None
    assert (run.recovery.seed, run.recovery.seed_kind, run.recovery.condition) == (
        None,
        None,
        "effect-unknown",
    )
    assert run.recovery.warnings[0].startswith(
        "no recovery plan and no seed: the history is corrupt (first: SA711"
    )
    sa301 = next(item for item in report.findings if item.rule == "SA301")
    assert sa301.message.endswith("no seed (the history is corrupt)")
