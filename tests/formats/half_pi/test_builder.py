"""The Half-Pi store builder writes rows as the spec describes (§4, §5, §7, §8) and reproducibly."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.half_pi.build.parts import (
    BackgroundStart,
    SourceMessage,
    ToolCall,
    go_json,
)
from sessaudit.formats.half_pi.build.schema_sql import schema_sql
from sessaudit.formats.half_pi.build.sessions import ToolResult
from sessaudit.formats.half_pi.build.spec_digests import SpecDigests
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.build.wal_salts import index_header_valid
from sessaudit.formats.half_pi.read.snapshot import Snapshot, SnapshotOptions, open_snapshot
from sessaudit.formats.half_pi.read.store_files import wal_info
from sessaudit.formats.half_pi.spec.schema_generations import BY_FEATURE, Feature
from sessaudit.formats.half_pi.spec.state_machines import RUN_TERMINAL

UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
HEX16 = re.compile(r"[0-9a-f]{16}")
HEX32 = re.compile(r"[0-9a-f]{32}")
HEX64 = re.compile(r"[0-9a-f]{64}")
TEXT_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def opened(path: str, tmp_path: Path) -> AbstractContextManager[Snapshot]:
    """A snapshot whose private copy lives under the test's tmp_path."""
    root = tmp_path / "private"
    root.mkdir(exist_ok=True)
    return open_snapshot(path, SnapshotOptions(temp_root=str(root)))


def crash_scenario(builder: StoreBuilder) -> None:
    """A session killed mid-flight: a running remote run, a pending approval, a running background task."""
    chat = builder.session("/home/dev/calc").user("fix add() in calc.py")
    builder.admitted(chat, "fix add() in calc.py")
    chat.assistant("", calls=[ToolCall("call_1", "bash", '{"command":"pytest -q"}')], results=["1 failed"])
    chat.assistant("Fixed: add() returned a - b.")
    builder.local_tool(chat, "bash", {"command": "pytest -q"}, outcome="succeeded")
    chat.user("deploy it")
    approval = builder.approval(chat, "exec_command", remote=True, args={"command": "./deploy.sh"})
    approval.resolve("allow_once", actor_id="1", actor_label="phone", source="face")
    approval.tool_decision()
    approval.remote_run().through("approved", "sent", "accepted", "running").progress("deploying\n")
    builder.background_run(chat, args={"command": "make long"}).through(
        "approved", "sent", "accepted", "succeeded"
    )
    builder.remote_run(chat, args={"command": "ls"}).to("approved")
    builder.approval(chat, "bash", args={"command": "rm -rf build"})


def rows(snap: Snapshot, sql: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
    return [dict(row) for row in snap.connection.execute(sql, parameters)]


@pytest.fixture
def crashed(tmp_path: Path) -> Iterator[Snapshot]:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=7)
    crash_scenario(builder)
    built = builder.finish(keep_wal=True)
    with opened(built.path, tmp_path) as snap:
        yield snap


def test_same_seed_same_bytes_including_the_wal(tmp_path: Path) -> None:
    digests = []
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        builder = StoreBuilder(tmp_path / name / "half-pi.db", seed=seed)
        crash_scenario(builder)
        built = builder.finish(keep_wal=True)
        assert [Path(path).name for path in built.files] == ["half-pi.db", "half-pi.db-wal", "half-pi.db-shm"]
        digests.append([hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in built.files])
        assert sorted(item.name for item in (tmp_path / name).iterdir()) == sorted(
            Path(p).name for p in built.files
        )
    assert digests[0] == digests[1]
    assert digests[0][1] != digests[2][1]  # the rows (all in the -wal) differ; the schema-only db does not


def test_the_wal_fixture_keeps_rows_only_in_the_wal(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=3)
    chat = builder.session().user("checkpointed")
    builder.checkpoint()
    chat.assistant("only in the WAL")
    built = builder.finish(keep_wal=True)
    database = Path(built.path).read_bytes()
    assert database[18:20] == b"\x02\x02"  # WAL mode, as Half-Pi leaves every store
    wal = Path(built.path + "-wal").read_bytes()
    info = wal_info(wal)
    assert info.header_valid and info.committed_frames == info.frames > 0 and info.ignored_bytes == 0
    assert index_header_valid(Path(built.path + "-shm").read_bytes())
    assert b"only in the WAL" in wal and b"only in the WAL" not in database
    alone = tmp_path / "alone.db"
    shutil.copyfile(built.path, alone)
    with sqlite3.connect(alone) as connection:
        assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
    with opened(built.path, tmp_path) as snap:
        assert [row["content"] for row in rows(snap, "SELECT content FROM messages ORDER BY seq")] == [
            "checkpointed",
            "only in the WAL",
        ]


def test_a_checkpointed_store_has_no_companions(tmp_path: Path) -> None:
    with StoreBuilder(tmp_path / "db" / "half-pi.db") as builder:
        builder.session().user("hello")
    assert sorted(item.name for item in (tmp_path / "db").iterdir()) == ["half-pi.db"]
    assert oct((tmp_path / "db" / "half-pi.db").stat().st_mode & 0o777) == oct(0o600)


def test_ids_have_their_production_shapes(crashed: Snapshot) -> None:
    session = rows(crashed, "SELECT * FROM sessions")[0]
    assert UUID7.fullmatch(session["id"])
    group = rows(crashed, "SELECT * FROM session_groups")[0]
    assert group["id"] == hashlib.sha256(b"/home/dev/calc").hexdigest()[:16] == session["group_id"]
    assert TEXT_TIME.fullmatch(session["created_at"]) and TEXT_TIME.fullmatch(group["updated_at"])
    for run in rows(crashed, "SELECT * FROM remote_runs"):
        assert HEX16.fullmatch(run["id"]) and HEX64.fullmatch(run["args_digest"])
        assert all(HEX32.fullmatch(run[name]) for name in ("trace_id", "span_id", "parent_span_id"))
        assert UUID7.fullmatch(run["request_id"]) and run["lifecycle_source"] == run["node_id"] == "mind"
    for approval in rows(crashed, "SELECT * FROM approval_audits"):
        assert HEX16.fullmatch(approval["approval_id"])
        digest = approval["args_digest"]
        assert HEX64.fullmatch(digest) if approval["run_id"] else re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    for decision in rows(crashed, "SELECT * FROM security_decisions"):
        assert HEX32.fullmatch(decision["id"]) and HEX32.fullmatch(decision["trace_id"])


def test_messages_and_runtime(crashed: Snapshot) -> None:
    messages = rows(crashed, "SELECT * FROM messages ORDER BY seq")
    assert [row["seq"] for row in messages] == [1, 2, 3, 4, 5]
    assert [row["role"] for row in messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert [row["id"] for row in messages] == sorted(row["id"] for row in messages)
    assert messages[0]["tool_calls"] == "null" and messages[3]["tool_calls"] == "null"
    assert (
        messages[1]["tool_calls"]
        == '[{"ID":"call_1","Name":"bash","Args":"{\\"command\\":\\"pytest -q\\"}"}]'
    )
    tool = messages[2]
    assert tool["tool_id"] == "call_1" and tool["request_id"] == messages[0]["request_id"]
    projection = json.loads(tool["compact_projection"])
    assert projection == {
        "facts": {},
        "output_bytes": 8,
        "output_digest": "sha256:" + hashlib.sha256(b"1 failed").hexdigest(),
        "reason_category": "",
        "success": True,
        "tool": "bash",
        "version": "compact-tool-v1",
    }
    assert tool["compact_projection"] == go_json(projection)
    assert messages[4]["request_id"] != messages[0]["request_id"]
    runtime = rows(crashed, "SELECT * FROM session_runtime")[0]
    assert (
        runtime["history_generation"]
        == 5
        == runtime["history_view_generation"]
        == runtime["snapshot_version"]
    )
    assert rows(crashed, "SELECT name FROM sessions")[0]["name"] == "fix add() in calc.py"


def test_a_long_first_message_names_the_session(tmp_path: Path) -> None:
    with StoreBuilder(tmp_path / "half-pi.db") as builder:
        builder.session().user("  please\n\tfix   " + "x" * 60)
        builder.session(name="chosen").user("ignored for the name")
    with opened(str(tmp_path / "half-pi.db"), tmp_path) as snap:
        names = [row["name"] for row in rows(snap, "SELECT name FROM sessions ORDER BY rowid")]
    assert names == ["please fix " + "x" * 37 + "...", "chosen"]


def walk_events(snap: Snapshot, run_id: str) -> list[dict[str, Any]]:
    return rows(snap, "SELECT * FROM remote_run_events WHERE run_id = ? ORDER BY seq", (run_id,))


def test_run_events_follow_the_state_machine(crashed: Snapshot) -> None:
    runs = rows(crashed, "SELECT * FROM remote_runs ORDER BY rowid")
    assert [run["status"] for run in runs] == ["running", "succeeded", "approved"]
    for run in runs:
        events = walk_events(crashed, run["id"])
        assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
        first = events[0]
        assert (first["from_status"], first["to_status"], first["type"]) == ("", "created", "created")
        assert first["created_at"] == run["created_at"]
        transitions = [event for event in events if event["type"] != "progress"]
        assert transitions[-1]["to_status"] == run["status"]
        terminal = run["status"] in RUN_TERMINAL
        assert (run["finished_at"] > 0) == terminal
        if terminal:
            assert run["duration_ms"] == run["finished_at"] - run["created_at"]
    progress = [event for event in walk_events(crashed, runs[0]["id"]) if event["type"] == "progress"]
    assert [(event["progress_seq"], event["kind"], event["gap"], event["message"]) for event in progress] == [
        (1, "stdout", 0, "deploying\n")
    ]
    sent = next(event for event in walk_events(crashed, runs[0]["id"]) if event["to_status"] == "sent")
    assert runs[0]["sent_at"] == sent["created_at"]


def test_illegal_transitions_are_refused_unless_forced(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db")
    run = builder.remote_run(builder.session())
    with pytest.raises(ValueError, match="created -> running"):
        run.to("running")
    with pytest.raises(ValueError, match="after acceptance"):
        run.progress("early")
    run.to("running", force=True)  # a tampered history, for the verifier's tests
    assert run.status == "running"
    builder.discard()


def test_approvals_runs_tasks_and_decisions_are_linked(crashed: Snapshot) -> None:
    remote, local = rows(crashed, "SELECT * FROM approval_audits ORDER BY rowid")
    assert (remote["status"], remote["decision"], remote["source"]) == ("resolved", "allow_once", "face")
    assert (
        remote["created_at"] <= remote["resolved_at"] < remote["expires_at"] == remote["created_at"] + 120_000
    )
    run = rows(crashed, "SELECT * FROM remote_runs WHERE id = ?", (remote["run_id"],))[0]
    assert run["args_digest"] == remote["args_digest"] and run["created_at"] >= remote["resolved_at"]
    assert run["trace_id"] == remote["trace_id"] and run["span_id"] == remote["parent_span_id"]
    assert run["approval_source"] == "face"
    linked = rows(crashed, "SELECT * FROM security_decisions WHERE approval_id = ?", (remote["approval_id"],))
    assert [(row["decision"], row["reason_code"], row["input_digest"]) for row in linked] == [
        ("require_approval", "user_allow_once", remote["args_digest"])
    ]
    assert (local["status"], local["run_id"], local["resolved_at"]) == ("pending", "", 0)
    task = rows(crashed, "SELECT * FROM remote_tasks")[0]
    background = rows(crashed, "SELECT * FROM remote_runs WHERE id = ?", (task["task_id"],))[0]
    assert (task["status"], task["stale"], task["detail_mode"]) == ("pending", 1, "summary")
    assert task["created_at"] == task["updated_at"] == background["created_at"]
    assert task["args_digest"] == background["args_digest"]


def test_every_security_decision_has_its_outbox_row(crashed: Snapshot) -> None:
    decisions = rows(crashed, "SELECT * FROM security_decisions ORDER BY rowid")
    assert [row["action_kind"] for row in decisions] == ["message", "tool", "tool", "tool"]
    for decision in decisions:
        outbox = rows(crashed, "SELECT * FROM lifecycle_outbox WHERE id = ?", (decision["id"],))[0]
        assert outbox["event_type"] == "security.decision" and outbox["schema_version"] == 1
        assert outbox["created_at"] == outbox["available_at"] == decision["created_at"]
        assert outbox["subject_id"] == decision["conversation_id"]
        assert (outbox["attempts"], outbox["delivered_at"], outbox["dead_letter_at"]) == (0, 0, 0)
        payload = {
            name: decision[name] for name in decision if name not in ("id", "created_at", "details_redacted")
        }
        payload.update(event_id=decision["id"], details=json.loads(decision["details_redacted"]))
        payload["risk_labels"] = json.loads(decision["risk_labels"])
        assert outbox["payload_redacted"] == go_json(payload)
    assert decisions[0]["input_digest"] == "sha256:" + hashlib.sha256(b"fix add() in calc.py").hexdigest()


def test_startup_recovery_turns_the_crash_image_into_the_recovered_state(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "db" / "half-pi.db", seed=7)
    crash_scenario(builder)
    pre = builder.save(tmp_path / "pre" / "half-pi.db", keep_wal=True)
    changes = builder.recover(now_ms=1_785_500_000_000)
    built = builder.finish()
    with opened(pre.path, tmp_path) as snap:
        assert {row["status"] for row in rows(snap, "SELECT status FROM remote_runs")} == {
            "running",
            "succeeded",
            "approved",
        }
        assert [row["status"] for row in rows(snap, "SELECT status FROM approval_audits ORDER BY rowid")] == [
            "resolved",
            "pending",
        ]
    with opened(built.path, tmp_path) as snap:
        runs = rows(snap, "SELECT * FROM remote_runs ORDER BY rowid")
        assert [(run["status"], run["error"]) for run in runs] == [
            ("lost", "startup_recovery"),
            ("succeeded", ""),
            ("lost", "startup_recovery"),
        ]
        for run in (runs[0], runs[2]):
            last = walk_events(snap, run["id"])[-1]
            assert (last["to_status"], last["type"]) == ("lost", "startup_recovery")
            assert last["message"] == "Mind restarted before terminal state"
            assert run["finished_at"] == 1_785_500_000_000 == last["created_at"]
        assert runs[0]["sent_at"] > 0 and runs[0]["accepted_at"] > 0  # kept
        approvals = rows(snap, "SELECT status, decision, resolved_at FROM approval_audits ORDER BY rowid")
        assert approvals[1] == {"status": "cancelled", "decision": "", "resolved_at": 1_785_500_000_000}
        task = rows(snap, "SELECT status, stale FROM remote_tasks")[0]
        assert task == {"status": "pending", "stale": 1}  # it was already stale: untouched
    assert [(change.table, change.set.get("status", (None, None))[1]) for change in changes] == [
        ("remote_runs", "lost"),
        ("remote_runs", "lost"),
        ("approval_audits", "cancelled"),
    ]


def test_recovery_marks_confirmed_tasks_stale(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=4)
    run = builder.background_run(builder.session().user("build"), args={"command": "make"})
    run.through("approved", "sent", "accepted", "succeeded").task.update("running", started_at=run.created_at)
    changes = builder.recover(now_ms=1_785_500_000_000)
    assert [(change.table, dict(change.set)) for change in changes] == [
        (
            "remote_tasks",
            {"stale": (0, 1), "updated_at": (changes[0].set["updated_at"][0], 1_785_500_000_000)},
        )
    ]
    assert builder.recover() == ()  # idempotent
    builder.discard()


def test_graceful_shutdown_leaves_created_runs_for_the_next_start(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=5)
    chat = builder.session().user("go")
    sent = builder.remote_run(chat).through("approved", "sent")
    created = builder.remote_run(chat)
    builder.approval(chat, "bash", args={})
    builder.shutdown()
    status = dict(builder.connection.execute("SELECT id, status FROM remote_runs").fetchall())
    assert status == {sent.id: "lost", created.id: "created"}
    assert builder.row("remote_runs", {"id": sent.id})["error"] == "service_shutdown"
    assert builder.row("approval_audits", {"status": "cancelled"})["decision"] == ""
    builder.discard()


def test_compaction_switches_the_active_summary(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=6)
    chat = builder.session().user("one").assistant("two")
    chat.request_compaction()
    pending = builder.row("session_runtime", {"session_id": chat.id})
    assert pending["pending_compact"] == 1 and UUID7.fullmatch(pending["pending_compact_id"])
    summary_id = chat.compact(trigger="automatic")
    runtime = builder.row("session_runtime", {"session_id": chat.id})
    assert runtime["active_summary_id"] == summary_id and runtime["compact_generation"] == 1
    assert (runtime["pending_compact"], runtime["pending_compact_id"]) == (0, "")
    assert (
        runtime["history_generation"],
        runtime["history_view_generation"],
        runtime["snapshot_version"],
    ) == (2, 3, 4)
    node = builder.row("context_summaries", {"id": summary_id})
    digests = SpecDigests()
    source = digests.source(
        chat.id,
        2,
        [
            SourceMessage(1, "user", "one", chat.request_id, "", "null", ""),
            SourceMessage(2, "assistant", "two", chat.request_id, "", "null", ""),
        ],
    )
    assert node["source_digest"] == source and node["summary_digest"] == digests.summary(node["summary"])
    events = builder.connection.execute(
        "SELECT event_type, trace_id FROM lifecycle_outbox ORDER BY rowid"
    ).fetchall()
    assert [event for event, _ in events] == ["compact.requested", "compact.started", "compact.completed"]
    assert {trace for _, trace in events} == {pending["pending_compact_id"]}
    builder.discard()


def test_credentials_hold_fake_secrets(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db", seed=8)
    hand = builder.hand_credential("hand-1")
    face = builder.face_token("phone", ["face:chat", "face:approve", "face:chat"])
    legacy = builder.hand_token("old", hand_id="hand-1")
    builder.management_audit("hand.add", target_label="hand-1", target_id=str(hand.id))
    for secret in (hand.token, hand.application_key, face.token, face.application_key, legacy.token):
        assert HEX32.fullmatch(secret)
    assert hand.token != hand.application_key
    assert builder.row("face_tokens", {"label": "phone"})["scopes"] == '["face:approve","face:chat"]'
    audit = builder.row("management_audits", {"operation": "hand.add"})
    assert (audit["target_type"], audit["source"], audit["status"]) == ("hand", "offline_cli", "succeeded")
    builder.discard()


class RecordingDigests(SpecDigests):
    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def local_args(self, tool: str, args: Mapping[str, Any]) -> str:
        self.calls.append(("local", tool))
        return "sha256:" + "1" * 64

    def remote_args(
        self,
        run_id: str,
        hand_id: str,
        tool: str,
        args: Mapping[str, Any],
        background: BackgroundStart | None,
    ) -> str:
        self.calls.append(("remote", run_id, hand_id, tool, str(background)))
        return "2" * 64


def test_digests_are_injectable_or_given(tmp_path: Path) -> None:
    digests = RecordingDigests()
    builder = StoreBuilder(tmp_path / "half-pi.db", digests=digests)
    chat = builder.session().user("x")
    assert builder.approval(chat, "bash", args={"command": "ls"}).args_digest == "sha256:" + "1" * 64
    run = builder.background_run(chat, hand_id="hand-2", max_runtime_ms=5000)
    assert digests.calls[-1] == (
        "remote",
        run.id,
        "hand-2",
        "exec_command",
        "BackgroundStart(max_runtime_ms=5000)",
    )
    given = builder.approval(chat, "bash", args_digest="sha256:redacted")
    assert given.args_digest == "sha256:redacted" and len(digests.calls) == 2
    builder.discard()


def test_each_generation_takes_only_its_columns(tmp_path: Path) -> None:
    generation = BY_FEATURE[Feature.REMOTE_RUNS]
    builder = StoreBuilder(tmp_path / "half-pi.db", generation=generation)
    chat = builder.session(mode="yolo", active_hand="hand-1").user("hi")
    builder.remote_run(chat).through("approved", "sent", "accepted")
    session = builder.row("sessions", {"id": chat.id})
    assert set(session) == {"id", "group_id", "name", "description", "soul_path", "created_at", "active_hand"}
    with pytest.raises(LookupError, match="approval_audits does not exist"):
        builder.approval(chat, "bash", args={})
    with pytest.raises(KeyError, match="never had"):
        builder.insert("sessions", {"colour": "red"})
    builder.discard()


def test_a_store_from_hand_written_sql(tmp_path: Path) -> None:
    sql = schema_sql(BY_FEATURE[Feature.CORE]) + "CREATE TABLE notes (body TEXT);\n"
    with StoreBuilder(tmp_path / "half-pi.db", sql=sql, generation=BY_FEATURE[Feature.CORE]) as builder:
        builder.session().user("hello")
        builder.execute("INSERT INTO notes VALUES (?)", ("kept",))
    with opened(str(tmp_path / "half-pi.db"), tmp_path) as snap:
        assert rows(snap, "SELECT body FROM notes") == [{"body": "kept"}]


def test_a_tool_failure_and_a_missing_result(tmp_path: Path) -> None:
    builder = StoreBuilder(tmp_path / "half-pi.db")
    calls = [ToolCall("call_1", "bash", "{}"), ToolCall("call_2", "read", "{}")]
    chat = builder.session().user("x").assistant("", calls=calls, results=[ToolResult("boom", "failed")])
    tool = builder.row("messages", {"session_id": chat.id, "role": "tool"})
    assert json.loads(tool["compact_projection"])["success"] is False
    assert chat.seq == 3  # the second call has no result row
    builder.tool_display(chat, 1, "use_hand", args_digest="sha256:" + "0" * 64, output=None)
    card = builder.row("tool_display_projections", {"conversation_id": chat.id})
    assert (card["complete"], card["scan_warnings"]) == (0, "null")
    builder.discard()


def test_the_builder_writes_the_specs_digests_by_default() -> None:
    digests = SpecDigests()
    expected = hashlib.sha256(b'{"command":"a \\u0026\\u0026 b","n":1,"timeout":1.5}').hexdigest()
    assert digests.local_args("bash", {"n": 1, "command": "a && b", "confirm": True, "timeout": 1.50}) == (
        "sha256:" + expected
    )
    remote = b'{"run_id":"r","hand_id":"h","tool":"t","args":{},"background":true,"task_id":"r",'
    remote += b'"max_runtime_ms":9}'
    assert digests.remote_args("r", "h", "t", {}, BackgroundStart(9)) == hashlib.sha256(remote).hexdigest()
