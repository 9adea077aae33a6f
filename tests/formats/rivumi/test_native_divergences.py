"""Regression tests for the places a differential test found our native answers parting from Rivumi's own.

One test per class (R1–R4 replay and fork, S1–S15 resume; S16, a symlinked run directory, is out of reach
of a read-only verifier). Expected values are Rivumi's answers as observed by running its code on the same
input, written here as literals; a crash is Rivumi's uncaught exception (a traceback, exit status 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.scenarios import (
    MANIFEST_AHEAD_OVER_TOOL_STARTED,
    PENDING_APPROVAL,
    build_run,
)
from sessaudit.formats.rivumi.native.replay import native_replay
from sessaudit.formats.rivumi.native.resume import ResumeAnswer, native_resume
from sessaudit.formats.rivumi.seed.forkseed import directory_fork_seed, native_fork_seed
from sessaudit.formats.rivumi.spec.encoding import dump_sorted
from tests.formats.rivumi.runs import edit_event, edit_lines, manifest_of, set_manifest

INVALID_EVENT = "events.jsonl contains an invalid event"
SCHEMA = "session.json does not match the supported schema"
CONTRACT = "request.json is not a valid task contract"
OK = ResumeAnswer(True, None, None)


def line(record: dict[str, Any]) -> bytes:
    return dump_sorted(record).encode("utf-8") + b"\n"


def event(sequence: int, event_type: str = "model.requested", **data: Any) -> dict[str, Any]:
    return {"data": data, "event_type": event_type, "run_id": "r1", "sequence": sequence}


LOG = line(event(0, "run.created", model="scripted")) + line(event(1, step=1))


def with_data(data: bytes, raw: bytes, *, index: int = 1) -> bytes:
    """`raw` (a `"key":value,` fragment) put first into the data object of line `index + 1`."""
    lines = data.splitlines(keepends=True)
    lines[index] = lines[index].replace(b'"data":{', b'"data":{' + raw, 1)
    return b"".join(lines)


# --- R1: a line that is not UTF-8 -----------------------------------------------------------------------
def test_r1_invalid_utf8_is_a_crash_not_invalid_json() -> None:
    data = with_data(LOG, b'"z":"\xff",')
    detail = "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 14: invalid start byte"
    answer = native_replay(data)
    assert (answer.ok, answer.message, answer.crash) == (
        False,
        f"Rivumi crashes: {detail}",
        "UnicodeDecodeError",
    )
    assert answer.as_native() == {
        "ok": False,
        "message": f"Rivumi crashes: {detail}",
        "state": None,
        "text": None,
        "crash": "UnicodeDecodeError",
    }
    seed = native_fork_seed(data, None, None, run_id="r1", sequence=0)
    assert (seed.ok, seed.exit_status, seed.crash, seed.stderr) == (
        False,
        1,
        "UnicodeDecodeError",
        detail + "\n",
    )
    # lines are read in order: an earlier line that is not JSON is answered first
    assert native_replay(b"{\n" + data).message == "event JSONL line 1 is not valid JSON"


# --- R2: an integer of more than 4,300 digits -----------------------------------------------------------
def test_r2_huge_integer_is_a_crash() -> None:
    answer = native_replay(with_data(LOG, b'"z":-' + b"7" * 4301 + b","))
    assert answer.message == (
        "Rivumi crashes: ValueError: Exceeds the limit (4300 digits) for integer string conversion: value "
        "has 4301 digits; use sys.set_int_max_str_digits() to increase the limit"
    )
    assert native_replay(with_data(LOG, b'"z":' + b"7" * 4300 + b",")).ok
    assert native_replay(with_data(LOG, b'"z":' + b"7" * 4301 + b".5,")).ok  # a float has no such limit
    assert native_replay(with_data(LOG, b'"z":x' + b"7" * 4301 + b",")).message == (
        "event JSONL line 2 is not valid JSON"  # the syntax error comes first
    )


# --- R3: nesting deep enough for Python's recursion limit -----------------------------------------------
def _nested(levels: int, opener: bytes = b"[", closer: bytes = b"]") -> bytes:
    return with_data(LOG, b'"z":' + opener * levels + closer * levels + b",")


def _from_a_deep_stack(levels: int, call: Callable[[], Any]) -> Any:
    return call() if levels == 0 else _from_a_deep_stack(levels - 1, call)


def test_r3_deep_nesting_is_a_crash_and_never_ours() -> None:
    # {"data":{"z":[…]}}: 978 arrays make a depth of 980, where Rivumi's CLI runs out of stack
    crash = "Rivumi crashes: RecursionError: maximum recursion depth exceeded while decoding a JSON array"
    assert native_replay(_nested(978)).message == crash + " from a unicode string"
    assert native_replay(_nested(5000)).crash == "RecursionError"
    objects = native_replay(with_data(LOG, b'"z":' + b'{"a":' * 978 + b"0" + b"}" * 978 + b","))
    assert objects.message == crash.replace("array", "object") + " from a unicode string"
    # one level less parses, even when sessaudit itself is called from deep down its own stack
    deep = _from_a_deep_stack(400, lambda: native_replay(_nested(977)))
    assert deep.ok and deep.state is not None and deep.state["event_count"] == 2
    assert native_replay(with_data(LOG, b'"z":]' + b"[" * 2000 + b",")).message == (
        "event JSONL line 2 is not valid JSON"
    )


# --- R4: a lone surrogate that reaches stdout -----------------------------------------------------------
def test_r4_unprintable_output_is_a_crash() -> None:
    data = with_data(LOG, b'"text":"\\ud800",')
    answer = native_replay(data)
    assert answer.message == (
        "Rivumi crashes: UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position 266: "
        "surrogates not allowed"
    )
    assert (answer.state, answer.text) == (None, None)
    # in a C.UTF-8 locale stdout escapes U+DC80–U+DCFF back to the raw byte; other surrogates still fail
    escaped = native_replay(with_data(LOG, b'"text":"\\udcff",'), stdout_errors="surrogateescape")
    assert escaped.ok and escaped.text is not None and "\udcff" in escaped.text
    assert escaped.text.encode("utf-8", "surrogateescape").count(b"\xff") == 1
    assert native_replay(data, stdout_errors="surrogateescape").crash == "UnicodeEncodeError"
    # the fork's prefix ends before the surrogate: Rivumi prints that seed
    assert native_fork_seed(data, None, None, run_id="r1", sequence=0).ok
    assert native_fork_seed(data, None, None, run_id="r1", sequence=1).crash == "UnicodeEncodeError"
    assert native_replay(with_data(LOG, b'"text":"\\ud83d\\ude00",')).ok  # a pair is a character


# --- the default fork point -----------------------------------------------------------------------------
def test_default_fork_point_is_the_last_sequence_and_a_broken_log_its_own_answer(tmp_path: Path) -> None:
    run = tmp_path / "r1"
    run.mkdir()
    events = run / "events.jsonl"

    def default() -> tuple[int, str, str | None]:
        seed = directory_fork_seed(str(run), events_path="runs/r1/events.jsonl", sequence=None)
        return seed.exit_status, seed.stderr, seed.value["fork_point_event_type"] if seed.value else None

    events.write_bytes(line(event(1, step=1)) + line(event(0, "run.created")))  # sorted by sequence
    assert default() == (0, "", "model.requested")
    # the replay cannot be printed, but the log reduces: the last sequence is still the fork point
    events.write_bytes(with_data(LOG, b'"text":"\\ud800",'))
    assert native_replay(events.read_bytes()).crash == "UnicodeEncodeError"
    assert default()[0] == 1
    events.write_bytes(LOG + line(event(1)))  # every fork point: the same refusal
    assert default() == (2, "error: duplicate event sequence: 1\n", None)
    events.write_bytes(with_data(LOG, b'"z":"\xff",'))
    assert default()[:2] == (
        1,
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 14: invalid start byte\n",
    )
    events.write_bytes(b"")
    assert default() == (2, "error: fork sequence 0 was not found\n", None)
    events.unlink()
    events.mkdir()
    assert default() == (
        2,
        "error: could not read event JSONL: [Errno 21] Is a directory: 'runs/r1/events.jsonl'\n",
        None,
    )


def test_seed_native_exits_1_with_one_line_when_rivumi_crashes(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "events.jsonl").write_bytes(with_data(LOG, b'"z":"\xff",'))
    result = subprocess.run(
        [sys.executable, "-m", "sessaudit", "seed", "r1", "--native", "--sequence", "0"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr == (
        b"sessaudit: --native: Rivumi crashes: UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in "
        b"position 14: invalid start byte (a traceback from Rivumi, exit 1)\n"
    )


# --- resume: a built run left waiting for an approval, then edited ----------------------------------------
@pytest.fixture
def pending(tmp_path: Path) -> Path:
    return build_run(tmp_path, crash=PENDING_APPROVAL).run_dir


def resume(run_dir: Path) -> ResumeAnswer:
    contents = {
        name: (run_dir / name).read_bytes() if (run_dir / name).is_file() else None
        for name in ("session.json", "request.json", "events.jsonl")
    }
    return native_resume(str(run_dir), contents, check_workspace=False)


def request_of(run_dir: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((run_dir / "request.json").read_bytes())
    return document


def set_request(run_dir: Path, *, drop: tuple[str, ...] = (), **fields: Any) -> None:
    document = {key: value for key, value in {**request_of(run_dir), **fields}.items() if key not in drop}
    (run_dir / "request.json").write_text(dump_sorted(document), encoding="utf-8")


def drop_manifest_key(run_dir: Path, key: str) -> None:
    document = manifest_of(run_dir)
    del document[key]
    (run_dir / "session.json").write_text(dump_sorted(document), encoding="utf-8")


def edit_manifest_bytes(run_dir: Path, old: bytes, new: bytes) -> None:
    path = run_dir / "session.json"
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


def test_s1_every_line_is_parsed_before_any_is_checked(pending: Path) -> None:
    edit_event(pending, 5, lambda record: {**record, "sequence": 40})  # a gap at line 6 …
    edit_lines(pending, lambda lines: [*lines[:-1], lines[-1][:-2] + b',"trace":"abc"}\n'])  # … an extra key
    assert resume(pending) == ResumeAnswer(False, INVALID_EVENT, None)


def test_s2_a_lone_surrogate_escape_makes_the_event_invalid(pending: Path) -> None:
    edit_lines(
        pending,
        lambda lines: [
            *lines[:3],
            lines[3].replace(b'"data":{', b'"data":{"z":"\\ud83d\\ude00",'),
            *lines[4:],
        ],
    )
    assert resume(pending) == OK
    edit_lines(
        pending,
        lambda lines: [*lines[:3], lines[3].replace(b'"data":{', b'"data":{"y":"\\ud800",'), *lines[4:]],
    )
    assert resume(pending) == ResumeAnswer(False, INVALID_EVENT, None)


@pytest.mark.parametrize(("arrays", "expected"), [(199, OK), (200, ResumeAnswer(False, INVALID_EVENT, None))])
def test_s3_pydantic_parses_events_at_most_so_deep(
    pending: Path, arrays: int, expected: ResumeAnswer
) -> None:
    nested = b'"data":{"z":' + b"[" * arrays + b"]" * arrays + b","
    edit_lines(pending, lambda lines: [*lines[:3], lines[3].replace(b'"data":{', nested, 1), *lines[4:]])
    assert resume(pending) == expected


@pytest.mark.parametrize(
    ("key", "value", "accepted"),
    [
        ("updated_at", 1764000000, True),
        ("updated_at", 1764000000.5, True),
        ("writer_claimed_at", 0, True),
        ("active_started_at", "2026-11-29", True),
        ("updated_at", "bogus", False),
        ("writer_heartbeat_at", "2026-11-29T20:28", True),
        ("updated_at", "20261129T202809Z", False),
    ],
)
def test_s4_manifest_times_are_pydantic_datetimes(
    pending: Path, key: str, value: Any, accepted: bool
) -> None:
    set_manifest(pending, **{key: value})
    assert resume(pending) == (OK if accepted else ResumeAnswer(False, SCHEMA, None))


def test_s5_nan_is_not_a_non_negative_wall_time(pending: Path) -> None:
    edit_manifest_bytes(pending, b'"active_wall_time_seconds":0.0', b'"active_wall_time_seconds":NaN')
    assert resume(pending) == ResumeAnswer(False, SCHEMA, None)
    edit_manifest_bytes(pending, b'"active_wall_time_seconds":NaN', b'"active_wall_time_seconds":Infinity')
    assert resume(pending) == OK


def test_s6_schema_version_defaults_to_1_and_true_is_1(pending: Path) -> None:
    drop_manifest_key(pending, "schema_version")
    assert resume(pending) == OK
    set_manifest(pending, schema_version=True)
    assert resume(pending) == OK
    set_manifest(pending, schema_version=2)
    assert resume(pending) == ResumeAnswer(False, SCHEMA, None)


def test_s7_prompt_version_is_not_stripped(pending: Path) -> None:
    set_manifest(pending, prompt_version=" ")
    assert resume(pending) == OK
    set_manifest(pending, prompt_version="")
    assert resume(pending) == ResumeAnswer(False, SCHEMA, None)


def test_s8_the_run_id_is_stripped_before_the_pending_action_is_compared(pending: Path) -> None:
    run_id = manifest_of(pending)["run_id"]
    set_manifest(pending, run_id=f" {run_id} ")
    assert resume(pending) == OK
    set_manifest(
        pending,
        run_id=run_id,
        pending_action={**manifest_of(pending)["pending_action"], "run_id": f" {run_id}"},
    )
    assert resume(pending) == ResumeAnswer(False, SCHEMA, None)


def test_s9_modify_execute_is_not_an_effect_of_adb873f(pending: Path) -> None:
    set_manifest(pending, granted_effects=["modify_execute"])
    assert resume(pending) == ResumeAnswer(False, SCHEMA, None)
    set_manifest(
        pending,
        granted_effects=[],
        pending_action={**manifest_of(pending)["pending_action"], "effect": "modify_execute"},
    )
    assert resume(pending) == ResumeAnswer(False, SCHEMA, None)


@pytest.mark.parametrize(
    ("paths", "accepted"),
    [
        ([" calc.py", "calc.py"], False),
        (["a\\b", "a/b"], False),
        (["a", "a/"], True),
        (["./a", "a"], True),
        (["a\\..\\b"], False),
        ([" "], False),
        ([" calc.py "], True),
    ],
)
def test_s10_allowed_paths_are_normalised_before_they_are_judged(
    pending: Path, paths: list[str], accepted: bool
) -> None:
    set_request(pending, allowed_paths=paths)
    assert resume(pending) == (OK if accepted else ResumeAnswer(False, CONTRACT, None))


def test_s11_s12_the_request_base_sha_is_stripped(pending: Path) -> None:
    sha = request_of(pending)["base_sha"]
    set_request(pending, base_sha=f"  {sha.upper()} ")
    assert resume(pending) == OK
    for blank in ("", " "):
        set_request(pending, base_sha=blank)
        assert resume(pending) == ResumeAnswer(False, CONTRACT, None)


def test_s13_a_request_without_task_id_gets_a_random_one(pending: Path) -> None:
    set_request(pending, drop=("task_id",))
    assert resume(pending) == ResumeAnswer(False, "request task_id does not match session", None)


def test_s14_an_empty_repository_is_a_path(pending: Path) -> None:
    set_request(pending, repository="")
    assert resume(pending) == OK
    set_request(pending, repository=5)
    assert resume(pending) == ResumeAnswer(False, CONTRACT, None)


def test_s15_where_rivumis_resume_crashes(pending: Path) -> None:
    limit = (
        "ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; "
        "use sys.set_int_max_str_digits() to increase the limit"
    )
    original = (pending / "session.json").read_bytes()
    edit_manifest_bytes(pending, b'"step":3', b'"step":' + b"9" * 4301)
    crashed = resume(pending)
    assert (crashed.ok, crashed.message, crashed.crash) == (False, f"Rivumi crashes: {limit}", "ValueError")
    assert crashed.as_native() == {
        "ok": False,
        "message": f"Rivumi crashes: {limit}",
        "repaired_to": None,
        "crash": "ValueError",
    }
    (pending / "session.json").write_bytes(original)
    edit_manifest_bytes(pending, b'"step":3', b'"step":3,"zz":' + b"[" * 988 + b"]" * 988)
    assert resume(pending).message == SCHEMA  # a depth of 989 still loads (and is an unknown key)
    edit_manifest_bytes(pending, b'"zz":[', b'"zz":[[')
    edit_manifest_bytes(pending, b"]]" * 494, b"]]" * 494 + b"]")
    assert resume(pending).message == (
        "Rivumi crashes: RecursionError: maximum recursion depth exceeded while decoding a JSON array from a "
        "unicode string"
    )
    (pending / "session.json").write_bytes(original)
    # the claim writes the manifest back: a lone surrogate cannot be encoded
    edit_manifest_bytes(pending, b'"final_summary":"', b'"final_summary":"\\ud800')
    assert resume(pending).message == (
        "Rivumi crashes: UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position "
        "1159: surrogates not allowed"
    )
    (pending / "session.json").write_bytes(original)
    lock = pending / ".writer.lock"
    lock.unlink()
    os.symlink("elsewhere", lock)
    assert resume(pending).message == (
        f"Rivumi crashes: OSError: [Errno 40] Too many levels of symbolic links: '{lock}'"
    )
    lock.unlink()
    lock.mkdir()
    assert resume(pending).crash == "IsADirectoryError"


def test_s15_the_repair_path_is_unchanged(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path, crash=MANIFEST_AHEAD_OVER_TOOL_STARTED).run_dir
    assert resume(run_dir) == ResumeAnswer(True, None, 14)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("session.json", "invalid JSON session artifact: session.json"),
        ("request.json", "invalid JSON session artifact: request.json"),
        ("events.jsonl", INVALID_EVENT),
    ],
)
def test_a_directory_in_place_of_a_file_is_unreadable_not_missing(
    pending: Path, name: str, message: str
) -> None:
    (pending / name).unlink()
    (pending / name).mkdir()
    assert resume(pending) == ResumeAnswer(False, message, None)
