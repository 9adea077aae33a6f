"""verify_half_pi end to end: runs and conditions, native startup_recovery against the builder's own restart
recovery, seeds, claims, secrets never shown, and nothing beside the store touched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.formats.half_pi.build.parts import ToolCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.read.snapshot import SnapshotOptions
from sessaudit.formats.half_pi.verifier import verify_half_pi
from sessaudit.plugin import VerifyOptions
from sessaudit.reporters.json import render_json
from tests.formats.half_pi.test_builder import crash_scenario
from tests.golden import tree_state

runner = CliRunner()
NOW = 1_785_500_000_000


def built(tmp_path: Path, *, recovered: bool = False, seed: int = 7) -> tuple[Path, tuple[Any, ...]]:
    """The crash scenario as a WAL image (or after a restart's recovery): (db path, recovery changes)."""
    builder = StoreBuilder(tmp_path / "home" / "db" / "half-pi.db", seed=seed)
    crash_scenario(builder)
    changes = builder.recover(NOW) if recovered else ()
    return Path(builder.finish(keep_wal=True).path), changes


def report(path: Path, **options: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        render_json(audit([str(path)], options=VerifyOptions(**options)).report)
    )
    return document


def runs_of(document: dict[str, Any]) -> dict[str, tuple[str, str, str | None]]:
    return {
        run["run_id"]: (run["kind"], run["state"], run["recovery"]["condition"] if run["recovery"] else None)
        for source in document["sources"]
        for session in source["sessions"]
        for run in session["runs"]
    }


def test_a_crash_image_needs_recovery_with_every_open_run(tmp_path: Path) -> None:
    path, _ = built(tmp_path)
    before = tree_state(tmp_path)
    document = report(path)
    assert tree_state(tmp_path) == before, "verifying changed or created a file beside the store"
    source = document["sources"][0]
    assert (source["format"], source["format_version"], source["verdict"]) == (
        "half-pi",
        "2026-07-30",
        "needs-recovery",
    )
    assert [Path(item["path"]).name for item in source["files"]] == [
        "half-pi.db",
        "half-pi.db-wal",
        "half-pi.db-shm",
    ]
    conditions = sorted(value for value in runs_of(document).values() if value[1] == "open")
    assert conditions == [
        ("approval", "open", "approval-pending"),
        ("remote-run", "open", "remote-run-in-flight"),
        ("remote-run", "open", "remote-run-in-flight"),
        ("request", "open", "model-request-open"),
        ("task", "open", "task-stale"),
    ]
    closed = sorted(value for value in runs_of(document).values() if value[1] != "open")
    assert ("approval", "completed", None) in closed and ("request", "completed", None) in closed
    seeds = [
        run["recovery"]["seed"]
        for session in source["sessions"]
        for run in session["runs"]
        if run["recovery"] is not None
    ]
    assert len(seeds) == 5 and all(seed is not None for seed in seeds)
    request_seed = next(seed for seed in seeds if seed["condition"] == "model-request-open")
    assert [message["role"] for message in request_seed["context"]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert request_seed["replay"]["kind"] == "model_request" and request_seed["next_facts"] == []


def test_native_startup_recovery_predicts_the_builders_restart(tmp_path: Path) -> None:
    before_path, _ = built(tmp_path / "before")
    _, changes = built(tmp_path / "after", recovered=True)
    native = report(before_path)["sources"][0]["native"]["startup_recovery"]
    updates = [entry for entry in native if entry["rowid"] is not None]
    expected = [
        {
            "table": change.table,
            "rowid": change.rowid,
            "id": change.id,
            "set": {k: list(v) for k, v in change.set.items()},
        }
        for change in changes
    ]
    assert [_resolve(entry) for entry in updates] == expected
    inserts = [entry for entry in native if entry["rowid"] is None]
    assert [entry["table"] for entry in inserts] == ["remote_run_events"] * 2
    assert all(entry["set"]["type"] == [None, "startup_recovery"] for entry in inserts)


def _resolve(entry: dict[str, Any]) -> dict[str, Any]:
    """`$now` (and `max(0, $now - c)`) replaced by the builder's restart time."""

    def value(item: Any) -> Any:
        if item == "$now":
            return NOW
        if isinstance(item, str) and item.startswith("max(0, $now - "):
            return max(0, NOW - int(item.removeprefix("max(0, $now - ").rstrip(")")))
        return item

    return {**entry, "set": {key: [old, value(new)] for key, (old, new) in entry["set"].items()}}


def test_a_recovered_store_shows_what_restart_recovery_did(tmp_path: Path) -> None:
    path, _ = built(tmp_path, recovered=True)
    document = report(path)
    source = document["sources"][0]
    assert source["native"]["startup_recovery"] == []  # recovery is idempotent: nothing left to change
    states = runs_of(document)
    assert sorted(value for value in states.values() if value[0] == "remote-run") == [
        ("remote-run", "completed", None),
        ("remote-run", "lost", None),
        ("remote-run", "lost", None),
    ]
    assert ("task", "open", "task-stale") in states.values()  # only the Hand knows a task's state
    assert ("approval", "cancelled", None) in states.values()
    notes = [item for item in document["findings"] if item["rule"] == "SA690"]
    assert {item["location"]["table"] for item in notes} == {"remote_runs", "approval_audits"}


def test_an_unfinished_request_with_local_tools_run_is_effect_unknown(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=11)
    chat = builder.session().user("clean the build folder")
    builder.admitted(chat, "clean the build folder")
    builder.local_tool(chat, "bash", {"command": "rm -rf build"}, outcome="succeeded")
    path = Path(builder.finish().path)
    document = report(path)
    (run,) = [run for session in document["sources"][0]["sessions"] for run in session["runs"]]
    assert run["recovery"]["condition"] == "effect-unknown" and run["recovery"]["seed_kind"] == "fork"
    assert [effect["tool_name"] for effect in run["recovery"]["pending_effects"]] == ["bash"]


def test_earlier_unfinished_requests_are_notes_and_lost(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=12)
    chat = builder.session().user("first question, never answered")
    chat.user("second question")
    chat.assistant("the answer")
    document = report(Path(builder.finish().path))
    assert sorted(value[1] for value in runs_of(document).values()) == ["completed", "lost"]
    assert [item["rule"] for item in document["findings"]] == ["SA691"]
    assert document["sources"][0]["verdict"] == "clean"


def test_a_live_store_is_unreadable(tmp_path: Path) -> None:
    path, _ = built(tmp_path)

    def touch(attempt: int) -> None:
        with open(str(path) + "-wal", "ab") as stream:
            stream.write(b"\0" * 8)

    outcome = verify_half_pi(
        str(path), str(path), snapshot_options=SnapshotOptions(delay_seconds=0, after_copy=touch)
    )
    assert [item.rule for item in outcome.findings] == ["SA680"]
    assert "being written" in outcome.findings[0].message or "changed" in outcome.findings[0].message


def test_claims_match_mismatch_and_unknown(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=13)
    chat = builder.session().user("remove the build folder")
    approval = builder.approval(chat, "bash", args={"command": "rm -rf build && echo <done>"})
    approval.resolve("allow_once", actor_id="1", actor_label="phone", source="face")
    approval.tool_decision()
    chat.assistant("Removed the build folder.")
    path = Path(builder.finish().path)
    claims = tmp_path / "claims.json"
    approval_id = approval.id
    claims.write_text(
        json.dumps(
            {
                "claims": [
                    {
                        "approval_id": approval_id,
                        "tool": "bash",
                        "args": {"command": "rm -rf build && echo <done>"},
                    },
                    {"approval_id": approval_id, "tool": "bash", "args": {"command": "rm -rf /"}},
                    {"approval_id": "0123456789abcdef", "tool": "bash", "args": {}},
                ]
            }
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["verify", str(path), "--claims", str(claims), "--format", "json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    found = sorted(
        (item["rule"], item["location"]["table"] or item["location"]["pointer"])
        for item in document["findings"]
    )
    assert ("SA693", "approval_audits") in found and ("SA694", "approval_audits") in found
    assert ("SA695", "/claims/2") in found
    assert document["sources"][0]["verdict"] == "clean"  # claims never change a verdict
    bad = tmp_path / "bad.json"
    bad.write_text('{"claims": [{"tool": "bash"}]}', encoding="utf-8")
    refused = runner.invoke(app, ["verify", str(path), "--claims", str(bad)])
    assert refused.exit_code == 2 and "--claims" in refused.output


def test_no_secret_appears_in_any_output(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "home" / "db" / "half-pi.db", seed=14)
    crash_scenario(builder)
    hand = builder.hand_credential("hand-1")
    face = builder.face_token("phone")
    path = Path(builder.finish(keep_wal=True).path)
    secrets = [hand.token, hand.application_key, face.token, face.application_key]
    assert all(len(secret) == 32 for secret in secrets)
    seeds = tmp_path / "seeds"
    outputs = [
        runner.invoke(app, ["verify", str(path), "--format", "json", "--seeds-dir", str(seeds)]).output,
        runner.invoke(app, ["verify", str(path)]).output,
        runner.invoke(app, ["seed", str(path)]).output,
    ]
    outputs += [item.read_text(encoding="utf-8") for item in seeds.iterdir()]
    assert any("SA689" in output for output in outputs)
    for output in outputs:
        for secret in secrets:
            assert secret not in output


def test_each_generation_verifies(tmp_path: Path) -> None:
    from sessaudit.formats.half_pi.spec.schema_generations import GENERATIONS

    for generation in GENERATIONS:
        builder = StoreBuilder(tmp_path / generation.feature / "half-pi.db", seed=15, generation=generation)
        builder.session().user("hello").assistant("hi", calls=[], results=[])
        path = Path(builder.finish().path)
        source = report(path)["sources"][0]
        assert (source["format"], source["format_version"]) == ("half-pi", generation.date), generation
        assert source["sessions"][0]["facts"] == 2


def test_the_verifier_leaves_no_file_in_the_temp_root(tmp_path: Path) -> None:
    path, _ = built(tmp_path)
    private = tmp_path / "private"
    private.mkdir()
    verify_half_pi(str(path), str(path), snapshot_options=SnapshotOptions(temp_root=str(private)))
    assert os.listdir(private) == []


def test_tool_calls_in_messages_feed_pending_remote_arguments(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=16)
    chat = builder.session().user("list files remotely")
    call = ToolCall(
        "call_9", "use_hand", '{"hand_id":"hand-1","tool":"exec_command","args":{"command":"ls"}}'
    )
    chat.assistant("", calls=[call], results=["started"])
    run = builder.remote_run(chat, args={"command": "ls"})
    run.to("approved")
    document = report(Path(builder.finish().path))
    (remote,) = [
        run
        for session in document["sources"][0]["sessions"]
        for run in session["runs"]
        if run["kind"] == "remote-run"
    ]
    assert remote["recovery"]["pending_effects"][0]["arguments"] == {"command": "ls"}


@pytest.mark.parametrize("sequence", [1, 3])
def test_seed_forks_at_a_chosen_message(tmp_path: Path, sequence: int) -> None:
    path, _ = built(tmp_path)
    document = json.loads(
        runner.invoke(
            app, ["seed", str(path), "--run", _request_run(path), "--sequence", str(sequence)]
        ).output
    )
    assert document["fork_point"]["seq"] == sequence
    assert [message["seq"] for message in document["context"]["messages"]] == list(range(1, sequence + 1))


def _request_run(path: Path) -> str:
    return next(
        run_id
        for run_id, value in runs_of(report(path)).items()
        if value == ("request", "open", "model-request-open")
    )
