"""`sessaudit seed PATH --native --output FILE` for Codex rollouts, through the command line: the repaired
copy verifies clean, keeps the original's bytes up to the fork point, answers each open call once with an
output of its kind (a string, never an object), closes the turn with turn_aborted, keeps the session_meta
first, stamps its lines after every earlier time and the same way every run, re-runs nothing, never touches
the original, and refuses what it must (spec docs/formats/codex.md §7, §7.1). The seed's next_facts are
the same lines."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner, Result

from sessaudit.cli import app
from sessaudit.formats.codex.build.parts import Usage
from sessaudit.formats.codex.build.rollout import RolloutBuilder
from sessaudit.formats.codex.build.scenarios import build_one
from sessaudit.resources import load_schema

runner = CliRunner()
SEED_SCHEMA = Draft202012Validator(load_schema("seed.v1.schema.json"))
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
CALL_KINDS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUT_KINDS = {"function_call_output", "custom_tool_call_output"}
ANSWER = (
    "[sessaudit] The outcome of this {} call is unknown: the session ended before its output was recorded. "
    "It was not run again; check its effect before running it again."
)

# scenario -> (its file below the root, lines kept, the open turn, [(output kind, call_id, tool)],
# the two added timestamps: 1 ms and 2 ms after the latest kept line's time)
SCENARIO_CASES: dict[str, tuple[str, int, str, list[tuple[str, str, str]], tuple[str, str]]] = {
    "killed-during-exec": (
        "sessions/2026/02/11/rollout-2026-02-11T16-18-02-019c4d7e-d073-73b9-aab5-749840d2b5eb.jsonl",
        10,
        "019c4d7f-3d5e-7dc1-952d-c779b0d022e1",
        [("function_call_output", "call_m3eQ6I1TDsavQHxK2RyGPV9k", "exec_command")],
        ("2026-02-11T16:18:38.661Z", "2026-02-11T16:18:38.662Z"),  # line 10 is 16:18:38.660Z
    ),
    "killed-during-read": (
        "sessions/2026/02/11/rollout-2026-02-11T23-21-32-019c4f02-8a43-74fa-9272-104cf3722470.jsonl",
        11,
        "019c4f02-e05b-7f87-b14e-ce679f9ee360",
        [("function_call_output", "call_mPd4utm1lQHKxYI0WXIsuCxQ", "read_file")],
        ("2026-02-11T23:22:02.487Z", "2026-02-11T23:22:02.488Z"),  # line 11 is 23:22:02.486Z
    ),
    "apply-patch-unanswered": (
        "sessions/2026/02/11/rollout-2026-02-11T16-49-27-019c4d9b-93bb-7a7d-b6a4-ac4c9bfc4dac.jsonl",
        13,
        "019c4d9c-8144-7def-999e-9a01b5bbe5ff",
        [("custom_tool_call_output", "call_DNNMgvQfdoK9GONObQcANONb", "apply_patch")],
        ("2026-02-11T16:50:36.274Z", "2026-02-11T16:50:36.275Z"),  # line 13 is 16:50:36.273Z
    ),
    "mcp-call": (
        "sessions/2026/02/11/rollout-2026-02-11T15-14-46-019c4d44-e453-777d-aace-d22c3411ca2d.jsonl",
        12,
        "019c4d45-c897-7e9b-b04a-3fc481516b72",
        [("function_call_output", "call_wphIqETlmAjy1ClOq2maCzm0", "mcp__linear__create_issue")],
        ("2026-02-11T15:15:58.380Z", "2026-02-11T15:15:58.381Z"),  # line 12 is 15:15:58.379Z
    ),
}
BUILT_CASES = ["parallel", "torn", "no-final-lf"]
CASES = [*SCENARIO_CASES, *BUILT_CASES]


# --- helpers -------------------------------------------------------------------------------------------
def native(source: Path, output: Path, *extra: str) -> Result:
    return runner.invoke(app, ["seed", str(source), "--native", "--output", str(output), *extra])


def verified(path: Path) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["verify", str(path), "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


def lines_of(path: Path) -> list[dict[str, Any]]:
    """The lines of `path`: a whole last line without LF kept, a torn one left out."""
    *whole, last = path.read_bytes().split(b"\n")
    try:
        tail = [json.loads(last)] if last else []
    except ValueError:
        tail = []
    return [json.loads(raw) for raw in whole] + tail


def whole_lines(data: bytes) -> bytes:
    """The bytes through the last LF (a torn last line left out)."""
    return data[: data.rfind(b"\n") + 1]


def target(out: Path, home: Path, source: Path) -> Path:
    """Where the copy goes: the original's own name and date folders, below another Codex home."""
    path = out / source.relative_to(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def the_rollout(built: tuple[Path, ...]) -> Path:
    (path,) = built
    return path


def parallel(home: Path) -> tuple[Path, list[str]]:
    """One response with four calls: a shell read answered, then exec_command (function), apply_patch
    (custom) and a local_shell_call left open by a kill. The open calls' ids, in the order made."""
    b = RolloutBuilder(home, "/home/dev/work/parallel", seed=31)
    b.user("Rebuild, patch the version and clear the build folder.")
    read = b.call("shell", {"command": ["bash", "-lc", "cat VERSION"], "workdir": b.cwd}, world=False)
    made = [
        b.call("exec_command", {"cmd": "make all", "workdir": b.cwd}, world=True),
        b.custom_call(
            "apply_patch", "*** Begin Patch\n*** Update File: VERSION\n-1.0\n+1.1\n*** End Patch\n"
        ),
        b.local_shell(["bash", "-lc", "rm -rf build"], world=True),
    ]
    b.response(Usage(6_100, 2_048, 320, 128))
    b.output(read, "1.0\n")
    b.kill()
    return the_rollout(b.finish().files), made


def torn(home: Path) -> Path:
    """exec_command left open, and the response's token_count torn part-way (no LF)."""
    b = RolloutBuilder(home, "/home/dev/work/torn-open", seed=32)
    b.user("Run the migrations.")
    b.call("exec_command", {"cmd": "./manage.py migrate", "workdir": b.cwd}, world=True)
    b.response(Usage(5_400, 0, 140, 64))
    b.torn(b.last_line_size() // 2)
    return the_rollout(b.finish().files)


def no_final_lf(home: Path) -> Path:
    """killed-during-exec whose whole last line lost its LF (SA803)."""
    build_one(home, "killed-during-exec")
    path = home / SCENARIO_CASES["killed-during-exec"][0]
    path.write_bytes(path.read_bytes().removesuffix(b"\n"))
    return path


Case = tuple[Path, Path, bytes, int]  # original, copy, the original's bytes and mtime before the repair


@pytest.fixture(scope="module")
def repaired(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    made: dict[str, Case] = {}
    for name in CASES:
        home = tmp_path_factory.mktemp(f"codex-{name}")
        if name in SCENARIO_CASES:
            build_one(home, name)
            source = home / SCENARIO_CASES[name][0]
        elif name == "parallel":
            source, _ = parallel(home)
        elif name == "torn":
            source = torn(home)
        else:
            source = no_final_lf(home)
        before = (source.read_bytes(), source.stat().st_mtime_ns)
        output = target(tmp_path_factory.mktemp(f"codex-{name}-repaired"), home, source)
        result = native(source, output)
        assert result.exit_code == 0, result.stderr
        made[name] = (source, output, *before)
    return made


def added(case: Case) -> list[dict[str, Any]]:
    _, output, original, _ = case
    copy = output.read_bytes()
    kept = original + b"\n" if copy.startswith(original + b"\n") else whole_lines(original)  # SA803 / torn
    return [json.loads(raw) for raw in copy[len(kept) :].split(b"\n") if raw]


# --- the copy resumes cleanly ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_the_copy_verifies_clean(repaired: dict[str, Case], name: str) -> None:
    source, output, _, _ = repaired[name]
    before, _ = verified(source)
    code, report = verified(output)
    assert code == 0 and before == 0
    assert [item["rule"] for item in report["findings"]] == []  # no SA301/SA302/SA303, nothing else
    (found,) = report["sources"]
    assert found["verdict"] == "clean"
    assert [run["state"] for session in found["sessions"] for run in session["runs"]] == ["aborted"]


# --- bytes ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SCENARIO_CASES))
def test_every_original_line_is_kept_byte_for_byte(repaired: dict[str, Case], name: str) -> None:
    _, output, original, _ = repaired[name]
    copy = output.read_bytes()
    assert copy.startswith(original) and original.endswith(b"\n")
    assert original.count(b"\n") == SCENARIO_CASES[name][1]
    assert copy[len(original) :].count(b"\n") == 2 and copy.endswith(b"\n")  # an output, the turn_aborted


def test_a_torn_last_line_is_dropped(repaired: dict[str, Case]) -> None:
    _, output, original, _ = repaired["torn"]
    assert not original.endswith(b"\n")
    kept = whole_lines(original)
    torn_part = original[len(kept) :]
    assert torn_part.startswith(b'{"timestamp":') and b"token_count" in torn_part
    copy = output.read_bytes()
    assert copy.startswith(kept) and torn_part not in copy
    assert kept.count(b"\n") == 7  # session_meta, context, environment, task_started, prompt ×2, the call
    assert [line["payload"]["type"] for line in added(repaired["torn"])] == [
        "function_call_output",
        "turn_aborted",
    ]


def test_a_whole_last_line_without_lf_gets_one(repaired: dict[str, Case]) -> None:
    _, output, original, _ = repaired["no-final-lf"]
    assert not original.endswith(b"\n") and original.count(b"\n") == 9
    copy = output.read_bytes()
    assert copy.startswith(original + b"\n")
    assert copy[len(original) + 1 :].count(b"\n") == 2


# --- the answers -----------------------------------------------------------------------------------------
def test_the_added_lines_literal(repaired: dict[str, Case]) -> None:
    _, output, _, _ = repaired["killed-during-exec"]
    tail = output.read_bytes().split(b"\n")[-3:]
    assert tail == [
        b'{"timestamp":"2026-02-11T16:18:38.661Z","type":"response_item","payload":'
        b'{"type":"function_call_output","call_id":"call_m3eQ6I1TDsavQHxK2RyGPV9k","output":'
        b'"[sessaudit] The outcome of this exec_command call is unknown: the session ended before its output '
        b'was recorded. It was not run again; check its effect before running it again."}}',
        b'{"timestamp":"2026-02-11T16:18:38.662Z","type":"event_msg","payload":{"type":"turn_aborted",'
        b'"reason":"interrupted"}}',
        b"",
    ]


@pytest.mark.parametrize("name", list(SCENARIO_CASES))
def test_each_open_call_gets_one_output_of_its_kind(repaired: dict[str, Case], name: str) -> None:
    _, _, _, calls, stamps = SCENARIO_CASES[name]
    *outputs, closing = added(repaired[name])
    assert [(line["payload"]["type"], line["payload"]["call_id"]) for line in outputs] == [
        (kind, call_id) for kind, call_id, _ in calls
    ]
    assert [line["payload"]["output"] for line in outputs] == [ANSWER.format(tool) for _, _, tool in calls]
    assert [line["timestamp"] for line in [*outputs, closing]] == list(stamps)


def test_parallel_calls_are_answered_in_the_order_made(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    source, made = parallel(home)
    output = target(out, home, source)
    assert native(source, output).exit_code == 0
    lines = lines_of(output)
    outputs = [line["payload"] for line in lines if line["payload"].get("type") in OUTPUT_KINDS]
    answered = [item["call_id"] for item in outputs]
    assert len(answered) == len(set(answered)) == 4  # the read's own output and one per open call
    *new, closing = lines[len(lines_of(source)) :]
    assert [(line["type"], line["payload"]["type"], line["payload"]["call_id"]) for line in new] == [
        ("response_item", "function_call_output", made[0]),  # exec_command: a function call
        ("response_item", "custom_tool_call_output", made[1]),  # apply_patch: a custom call
        ("response_item", "function_call_output", made[2]),  # local_shell_call: answered as a function
    ]
    assert [line["payload"]["output"].split(" call ")[0] for line in new] == [
        "[sessaudit] The outcome of this exec_command",
        "[sessaudit] The outcome of this apply_patch",
        "[sessaudit] The outcome of this local_shell",
    ]
    calls = [line["payload"] for line in lines]
    position = {
        item.get("call_id"): index for index, item in enumerate(calls) if item.get("type") in CALL_KINDS
    }
    start = len(lines) - 4
    assert all(start + index > position[call_id] for index, call_id in enumerate(made))  # after the calls
    assert closing["payload"] == {"type": "turn_aborted", "reason": "interrupted"}


@pytest.mark.parametrize("name", CASES)
def test_outputs_are_strings_never_objects(repaired: dict[str, Case], name: str) -> None:
    outputs = [line["payload"] for line in added(repaired[name]) if line["type"] == "response_item"]
    assert outputs and all(type(item["output"]) is str for item in outputs)
    assert all(set(item) == {"type", "call_id", "output"} for item in outputs)


@pytest.mark.parametrize("name", CASES)
def test_the_turn_is_closed_by_turn_aborted(repaired: dict[str, Case], name: str) -> None:
    last = added(repaired[name])[-1]
    assert list(last) == ["timestamp", "type", "payload"]
    assert (last["type"], last["payload"]) == ("event_msg", {"type": "turn_aborted", "reason": "interrupted"})


@pytest.mark.parametrize("name", CASES)
def test_nothing_is_run_again(repaired: dict[str, Case], name: str) -> None:
    source, output, _, _ = repaired[name]

    def calls(path: Path) -> list[str]:
        return [
            line["payload"]["call_id"] for line in lines_of(path) if line["payload"].get("type") in CALL_KINDS
        ]

    assert calls(output) == calls(source)
    new = added(repaired[name])
    assert {line["payload"]["type"] for line in new} <= OUTPUT_KINDS | {"turn_aborted"}
    assert len([line for line in new if line["type"] == "event_msg"]) == 1  # no exec/patch/mcp end events


# --- session_meta and time -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SCENARIO_CASES))
def test_the_session_meta_is_unchanged_and_first(repaired: dict[str, Case], name: str) -> None:
    _, output, original, _ = repaired[name]
    first = output.read_bytes().split(b"\n")[0]
    assert first == original.split(b"\n")[0]
    lines = lines_of(output)
    assert [index for index, line in enumerate(lines) if line["type"] == "session_meta"] == [0]
    thread = SCENARIO_CASES[name][0].removesuffix(".jsonl")[-36:]
    assert lines[0]["payload"]["id"] == thread and output.name == Path(SCENARIO_CASES[name][0]).name


@pytest.mark.parametrize("name", CASES)
def test_added_times_are_utc_ms_and_after_every_earlier_time(repaired: dict[str, Case], name: str) -> None:
    original = repaired[name][2]
    new = [line["timestamp"] for line in added(repaired[name])]
    kept = [json.loads(raw)["timestamp"] for raw in whole_lines(original).split(b"\n") if raw]
    assert all(TIME.match(stamp) for stamp in new)
    assert new[0] > max(kept) and new == sorted(set(new))  # strictly after, strictly increasing


def test_two_runs_write_the_same_bytes(repaired: dict[str, Case], tmp_path: Path) -> None:
    for name in ("parallel", "torn", "mcp-call"):
        source, first, _, _ = repaired[name]
        again = tmp_path / name / first.name
        again.parent.mkdir()
        assert native(source, again).exit_code == 0
        assert again.read_bytes() == first.read_bytes()


# --- the original ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_the_original_is_untouched(repaired: dict[str, Case], name: str) -> None:
    source, _, original, mtime = repaired[name]
    assert source.read_bytes() == original and source.stat().st_mtime_ns == mtime
    assert [path.name for path in source.parent.iterdir()] == [source.name]  # nothing written beside it


# --- fork and copies ---------------------------------------------------------------------------------------
def test_sequence_forks_at_a_line_of_the_open_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_one(home, "killed-during-read")
    source = home / SCENARIO_CASES["killed-during-read"][0]
    output = target(tmp_path / "out", home, source)
    # line 7 is the rg search (answered on line 9); the read_file call on line 10 comes after the fork
    result = native(source, output, "--sequence", "7")
    assert result.exit_code == 0, result.stderr
    assert "the lines after 7 left out" in result.stderr
    original = source.read_bytes()
    copy = output.read_bytes()
    first_seven = b"".join(raw + b"\n" for raw in original.split(b"\n")[:7])
    assert copy.startswith(first_seven)
    new = [json.loads(raw) for raw in copy[len(first_seven) :].split(b"\n") if raw]
    assert [(line["timestamp"], line["payload"]["type"], line["payload"].get("call_id")) for line in new] == [
        ("2026-02-11T23:21:58.786Z", "function_call_output", "call_DkxmESJQ98rodwjAdHqyvYMj"),
        ("2026-02-11T23:21:58.787Z", "turn_aborted", None),
    ]  # line 7 is 23:21:58.785Z
    assert new[0]["payload"]["output"] == ANSWER.format("shell")
    code, report = verified(output)
    assert code == 0 and report["findings"] == []


def test_a_sequence_in_no_open_turn_is_a_usage_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_one(home, "killed-during-read")
    source = home / SCENARIO_CASES["killed-during-read"][0]
    output = target(tmp_path / "out", home, source)
    result = native(source, output, "--sequence", "2")  # the turn_context, before the turn starts
    assert result.exit_code == 2 and not output.exists()
    assert "line 2 is in no open turn" in result.stderr
    turn = SCENARIO_CASES["killed-during-read"][2]
    result = native(source, output, "--run", turn, "--sequence", "3")
    assert result.exit_code == 2 and not output.exists()
    assert result.stderr.endswith(f"turn {turn} has no line 3\n")


def test_a_sub_agent_copy_resumes_in_its_home(tmp_path: Path) -> None:
    """A sub-agent killed in its own turn: the copy, put in the original's place, answers its own call and
    the spawn_agent call it copied from its parent while that was in flight (both open in the history Codex
    rebuilds from this file), and verifies clean beside the parent."""
    home = tmp_path / "home"
    b = RolloutBuilder(home, "/home/dev/work/agent", seed=33)
    b.user("Audit the dependencies with a sub-agent.")
    spawn = b.call("spawn_agent", {"message": "Run cargo audit."}, world=True)
    b.response(Usage(9_000, 2_048, 200, 64))
    source_field = {"subagent": {"thread_spawn": {"parent_thread_id": b.session_id, "depth": 1}}}
    agent = b.fork(b.lines, source=source_field, forked_from=False)
    agent.user("Run cargo audit.")
    own = agent.call("exec_command", {"cmd": "cargo audit", "workdir": agent.cwd}, world=True)
    agent.response(Usage(9_400, 8_960, 90, 32))
    agent.kill()
    b.output(spawn, '{"agent_id":"x"}')
    b.assistant("Done.")
    b.response(Usage(9_800, 9_344, 40, 0))
    b.task_complete()
    files = agent.finish().files
    (child,) = [path for path in files if agent.session_id in path.name]
    copy = tmp_path / "copy.jsonl"
    assert native(child, copy).exit_code == 0
    new = lines_of(copy)[len(lines_of(child)) :]
    assert [line["payload"].get("call_id") for line in new] == [spawn, own, None]
    evidence = tmp_path / "evidence" / child.name
    evidence.parent.mkdir()
    shutil.move(child, evidence)  # keep the original as evidence, the copy goes under its name
    shutil.copyfile(copy, child)
    code, report = verified(child)
    assert code == 0 and report["findings"] == []
    assert report["sources"][0]["verdict"] == "clean"


# --- refusals ----------------------------------------------------------------------------------------------
@pytest.fixture
def exec_home(tmp_path: Path) -> tuple[Path, Path]:
    """(the killed-during-exec rollout, a Codex home for the copy)."""
    home = tmp_path / "home"
    build_one(home, "killed-during-exec")
    return home / SCENARIO_CASES["killed-during-exec"][0], tmp_path / "out"


def test_an_existing_output_is_refused_and_untouched(exec_home: tuple[Path, Path]) -> None:
    source, out = exec_home
    output = out / source.name
    out.mkdir()
    output.write_bytes(b"mine\n")
    os.utime(output, ns=(1_000_000_000, 1_000_000_000))
    result = native(source, output)
    assert result.exit_code == 2
    assert output.read_bytes() == b"mine\n" and output.stat().st_mtime_ns == 1_000_000_000
    assert "exists; the repaired copy is only ever written to a new file" in result.stderr


def test_a_symlink_output_is_refused(exec_home: tuple[Path, Path]) -> None:
    source, out = exec_home
    out.mkdir()
    dangling, aimed = out / "dangling.jsonl", out / "aimed.jsonl"
    dangling.symlink_to(out / "nowhere.jsonl")
    victim = out / "victim.jsonl"
    victim.write_bytes(b"keep\n")
    aimed.symlink_to(victim)
    assert native(source, dangling).exit_code == 2 and not (out / "nowhere.jsonl").exists()
    assert native(source, aimed).exit_code == 2 and victim.read_bytes() == b"keep\n"
    assert dangling.is_symlink() and aimed.is_symlink()


def test_a_corrupt_history_is_refused(exec_home: tuple[Path, Path]) -> None:
    source, out = exec_home
    lines = source.read_bytes().split(b"\n")
    source.write_bytes(b"\n".join([*lines[:5], b"{not json}", *lines[5:]]))  # line 6 of 11: bad JSON
    output = out / source.name
    result = native(source, output)
    assert result.exit_code == 1 and not output.exists() and not out.exists()
    assert "the history is corrupt; first corrupting finding: SA801" in result.stderr


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("model-request-open", "no call up to line 17 lacks its output"),  # open, but no call open
        ("clean", "has no open turn"),
    ],
)
def test_nothing_open_is_refused(tmp_path: Path, name: str, said: str) -> None:
    build_one(tmp_path / "home", name)
    (source,) = (tmp_path / "home" / "sessions").rglob("*.jsonl")
    output = tmp_path / "out.jsonl"
    result = native(source, output)
    assert result.exit_code == 1 and not output.exists()
    assert "nothing to repair" in result.stderr and said in result.stderr


def test_a_run_naming_no_open_turn_is_a_usage_error(tmp_path: Path) -> None:
    build_one(tmp_path / "home", "clean")
    (source,) = (tmp_path / "home" / "sessions").rglob("*.jsonl")
    output = tmp_path / "out.jsonl"
    for run in ("no-such-turn", "019c4eaf-b2cd-753c-bc05-90a42cecfba8"):  # the second: clean's first turn
        result = native(source, output, "--run", run)
        assert result.exit_code == 2 and not output.exists()
        assert f"no open turn '{run}'" in result.stderr


def test_a_folder_is_a_usage_error(exec_home: tuple[Path, Path]) -> None:
    source, out = exec_home
    output = out / "copy.jsonl"
    result = native(source.parent, output)
    assert result.exit_code == 2 and not output.exists()
    assert "is a folder: name the rollout" in result.stderr


def test_output_needs_native_and_native_needs_output(exec_home: tuple[Path, Path]) -> None:
    source, out = exec_home
    output = out / "copy.jsonl"
    result = runner.invoke(app, ["seed", str(source), "--output", str(output)])
    assert result.exit_code == 2 and not output.exists()
    assert "--output is used only with --native" in result.stderr
    result = runner.invoke(app, ["seed", str(source), "--native"])
    assert result.exit_code == 2
    assert "needs --output FILE" in result.stderr


# --- the seed says the same -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SCENARIO_CASES))
def test_the_seed_validates_and_its_next_facts_are_the_repair(repaired: dict[str, Case], name: str) -> None:
    source, _, _, _ = repaired[name]
    _, kept, turn, calls, _ = SCENARIO_CASES[name]
    result = runner.invoke(app, ["seed", str(source), "--run", turn])
    assert result.exit_code == 0, result.stderr
    seed = json.loads(result.stdout)
    SEED_SCHEMA.validate(seed)
    assert (seed["run_id"], seed["fork_point"]["line"], seed["native"]) == (turn, kept, None)
    assert seed["source"]["format"] == "codex"
    facts = seed["next_facts"]
    assert [fact.pop("timestamp") for fact in facts] == [{"$assign": "timestamp"}] * (len(calls) + 1)
    new = added(repaired[name])
    for line in new:
        del line["timestamp"]
    assert facts == new


def test_the_seed_of_parallel_calls_answers_all_of_them(repaired: dict[str, Case]) -> None:
    source, _, _, _ = repaired["parallel"]
    result = runner.invoke(app, ["seed", str(source)])
    assert result.exit_code == 0, result.stderr
    (seed,) = json.loads(result.stdout)
    SEED_SCHEMA.validate(seed)
    facts = [{key: value for key, value in fact.items() if key != "timestamp"} for fact in seed["next_facts"]]
    new = [
        {key: value for key, value in line.items() if key != "timestamp"}
        for line in added(repaired["parallel"])
    ]
    assert facts == new and len(facts) == 4


def test_turns_completed_after_a_resume_are_kept(tmp_path: Path) -> None:
    """A crash left `make deploy` open; the session was resumed into the same file and a later turn
    completed. The repair keeps every line (nothing after the old open turn is lost), answers the old call
    at the end (Codex pairs outputs by call_id) and adds no turn_aborted (the last turn is closed)."""
    home = tmp_path / "home"
    b = RolloutBuilder(home, "/home/dev/work/resumed", seed=47, task_events=True)
    b.user("Deploy it.")
    deploy = b.call("exec_command", {"cmd": "make deploy", "workdir": b.cwd}, world=True)
    b.response(Usage(5_000, 1_024, 120, 64))
    b.resume(timedelta(minutes=20))
    b.user("What is in CHANGES.md?")
    b.assistant("Version 1.1: the cart fix.")
    b.response(Usage(5_600, 5_120, 40, 0))
    b.task_complete()
    source = the_rollout(b.finish().files)
    original = source.read_bytes()
    code, report = verified(source)
    assert [run["state"] for run in report["sources"][0]["sessions"][0]["runs"]] == ["open", "completed"]
    out = tmp_path / "answered.jsonl"
    result = native(source, out)
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert data.startswith(original)
    added_lines = [json.loads(raw) for raw in data[len(original) :].split(b"\n") if raw]
    assert [(line["payload"]["type"], line["payload"].get("call_id")) for line in added_lines] == [
        ("function_call_output", deploy)
    ]
    code, report = verified(out)
    assert code == 0
    assert [run["state"] for run in report["sources"][0]["sessions"][0]["runs"]] == ["aborted", "completed"]
    assert not report["findings"]
