"""session.json, request.json and .writer.lock checks (spec §3.2–§3.3, §4 step 3, §6) on built runs."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.rivumi.build.fork_run import build_fork_run
from sessaudit.formats.rivumi.build.parts import Crash, CrashMode
from sessaudit.formats.rivumi.build.scenarios import (
    KILLED_AFTER_TOOL_STARTED,
    MANIFEST_AHEAD_AT_TERMINAL,
    MANIFEST_AHEAD_OVER_TOOL_STARTED,
    NO_FINAL_NEWLINE,
    PENDING_APPROVAL,
    TORN_LAST_LINE,
    build_run,
)
from sessaudit.formats.rivumi.read.events import verify_events
from sessaudit.formats.rivumi.read.manifest import check_lock, check_manifest, check_request
from sessaudit.formats.rivumi.read.usage import cross_check_usage
from sessaudit.formats.rivumi.spec.encoding import dump_sorted

Document = dict[str, Any]


def check_all(run_dir: Path) -> list[tuple[str, str | None]]:
    manifest = check_manifest(
        "session.json", (run_dir / "session.json").read_bytes(), directory_name=run_dir.name
    )
    request = check_request("request.json", (run_dir / "request.json").read_bytes(), manifest.document)
    lock_path = run_dir / ".writer.lock"
    lock = check_lock(
        ".writer.lock", lock_path.read_bytes() if lock_path.exists() else None, manifest.document
    )
    return [(item.rule, item.location.pointer) for item in [*manifest.findings, *request.findings, *lock]]


@pytest.mark.parametrize(
    "crash",
    [
        None,
        KILLED_AFTER_TOOL_STARTED,
        MANIFEST_AHEAD_AT_TERMINAL,
        MANIFEST_AHEAD_OVER_TOOL_STARTED,
        TORN_LAST_LINE,
        NO_FINAL_NEWLINE,
        PENDING_APPROVAL,
    ],
)
def test_built_runs_have_valid_manifests(tmp_path: Path, crash: Crash | None) -> None:
    assert check_all(build_run(tmp_path, crash=crash).run_dir) == []


def test_fork_manifest_total_tokens_is_reported_with_its_writer(tmp_path: Path) -> None:
    fork = build_fork_run(build_run(tmp_path).run_dir, 4)
    manifest = check_manifest("session.json", (fork / "session.json").read_bytes(), directory_name=fork.name)
    (problem,) = manifest.findings
    assert problem.rule == "SA534" and problem.location.pointer == "/usage/total_tokens"
    assert "fork-from-event" in problem.message and problem.evidence == {"writer": "rivumi-fork"}
    assert check_all(fork) == [("SA534", "/usage/total_tokens")]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Document, Document, str]:
    run_dir = build_run(tmp_path_factory.mktemp("run"), crash=PENDING_APPROVAL).run_dir
    manifest = json.loads((run_dir / "session.json").read_bytes())
    request = json.loads((run_dir / "request.json").read_bytes())
    return manifest, request, run_dir.name


def _manifest_findings(manifest: Document, name: str) -> list[tuple[str, str | None]]:
    artifact = check_manifest("session.json", dump_sorted(manifest).encode("utf-8"), directory_name=name)
    return [(item.rule, item.location.pointer) for item in artifact.findings]


def _put(pointer: str, value: Any) -> Callable[[Document], None]:
    *parents, last = pointer.strip("/").split("/")

    def mutate(document: Document) -> None:
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return mutate


def _remove(key: str) -> Callable[[Document], None]:
    return lambda document: document.pop(key)


@pytest.mark.parametrize(
    ("mutation", "expected"),
    [
        (_put("/surprise", 1), [("SA532", "/surprise")]),
        (_put("/schema_version", 2), [("SA003", "/schema_version")]),
        (_put("/schema_version", 0), [("SA532", "/schema_version")]),
        (_put("/base_sha", "abc"), [("SA532", "/base_sha")]),
        (_put("/step", "3"), [("SA532", "/step")]),
        (
            _put("/run_id", "  "),
            [("SA532", "/run_id"), ("SA533", "/pending_action/run_id"), ("SA533", "/run_id")],
        ),
        (_put("/phase", "sleeping"), [("SA532", "/phase")]),
        (_put("/last_event_sequence", -2), [("SA532", "/last_event_sequence")]),
        (_put("/usage/total_tokens", 5), [("SA534", "/usage/total_tokens")]),
        (_put("/messages/2/content", 7), [("SA532", "/messages/2")]),
        (_put("/messages/3/ok", False), [("SA532", "/messages/3")]),
        (_put("/pending_action/tool_call", {"arguments": {}, "name": "x"}), [("SA532", "/pending_action")]),
        (_put("/terminal", True), [("SA533", "/terminal")]),
        (_put("/pending_action", None), [("SA533", "/pending_action")]),
        (_put("/pending_action/run_id", "other"), [("SA533", "/pending_action/run_id")]),
        (_remove("model_usage"), []),
        (_remove("prompt_version"), []),
        (_remove("task_id"), [("SA532", "")]),
    ],
)
def test_manifest_mutations(
    files: tuple[Document, Document, str], mutation: Callable[[Document], None], expected: list[Any]
) -> None:
    manifest = copy.deepcopy(files[0])
    mutation(manifest)
    assert _manifest_findings(manifest, files[2]) == expected


def test_missing_and_unparseable_manifests() -> None:
    assert [item.rule for item in check_manifest("s", None).findings] == ["SA530"]
    assert [item.rule for item in check_manifest("s", b"{").findings] == ["SA531"]
    assert [item.rule for item in check_manifest("s", b"[]").findings] == ["SA531"]
    assert [item.rule for item in check_manifest("s", b'{"a":1,"a":2}').findings] == ["SA531"]
    assert [item.rule for item in check_manifest("s", b"\xff").findings] == ["SA531"]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("task_id", "other", [("SA537", "/task_id")]),
        ("base_sha", None, [("SA537", "/base_sha")]),
        ("allowed_paths", ["../etc"], [("SA536", "/allowed_paths/0")]),
        ("verification", [], [("SA536", "/verification")]),
        ("surprise", 1, [("SA536", "/surprise")]),
    ],
)
def test_request_mutations(
    files: tuple[Document, Document, str], key: str, value: Any, expected: list[Any]
) -> None:
    manifest, request, _ = files
    changed = {**request, key: value}
    artifact = check_request("request.json", dump_sorted(changed).encode("utf-8"), manifest)
    assert [(item.rule, item.location.pointer) for item in artifact.findings] == expected


def test_request_base_sha_compares_ignoring_case(files: tuple[Document, Document, str]) -> None:
    manifest, request, _ = files
    changed = {**request, "base_sha": request["base_sha"].upper()}
    assert check_request("request.json", dump_sorted(changed).encode(), manifest).findings == []
    assert [item.rule for item in check_request("request.json", None, manifest).findings] == ["SA536"]


def test_lock_file(files: tuple[Document, Document, str]) -> None:
    manifest = files[0]
    token = manifest["active_writer_token"]
    assert check_lock("l", f"pid=1 token={token}\n".encode(), manifest) == []
    assert [item.rule for item in check_lock("l", f"pid=1 token={token}".encode(), manifest)] == ["SA538"]
    assert [item.rule for item in check_lock("l", b"pid=1 token=" + b"0" * 32 + b"\n", manifest)] == ["SA539"]
    assert [item.rule for item in check_lock("l", None, manifest)] == ["SA540"]
    assert check_lock("l", None, {**manifest, "active_writer_token": None}) == []


def _usage_findings(run_dir: Path, manifest: Document | None = None) -> list[str]:
    data = (run_dir / "events.jsonl").read_bytes()
    log = verify_events("events.jsonl", io.BytesIO(data), len(data))
    document = manifest if manifest is not None else json.loads((run_dir / "session.json").read_bytes())
    return [item.rule for item in cross_check_usage("session.json", document, log)]


def test_usage_cross_check(tmp_path: Path) -> None:
    run_dir = build_run(tmp_path / "a").run_dir
    assert _usage_findings(run_dir) == []
    manifest = json.loads((run_dir / "session.json").read_bytes())
    manifest["model_usage"][0]["usage"]["output_tokens"] += 1
    assert _usage_findings(run_dir, manifest) == ["SA541"]
    del manifest["model_usage"]
    assert _usage_findings(run_dir, manifest) == []  # a pre-adb873f manifest has nothing to compare
    # ahead by one over a lost model.completed: the snapshot counts it, the log does not; skipped
    ahead = build_run(
        tmp_path / "b", crash=Crash(event_type="model.completed", occurrence=2, mode=CrashMode.BEFORE_APPEND)
    )
    assert _usage_findings(ahead.run_dir) == []
