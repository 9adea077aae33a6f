"""Seeds (CONTRACT §5): documents, next facts tiny-agent accepts, the file writer, `sessaudit seed`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.formats.tiny_agent.build.legacy_v1 import LegacySessionBuilder
from sessaudit.formats.tiny_agent.build.parts import Configuration
from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder
from sessaudit.formats.tiny_agent.read.digests import sha256_digest
from sessaudit.formats.tiny_agent.recover.current import CurrentSource, parse_current
from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent
from sessaudit.model import Seed
from sessaudit.plugin import VerifyOptions
from sessaudit.resources import load_schema
from sessaudit.seedfiles import SeedClash, seed_file_name, write_seed
from sessaudit.seeds import report_seeds, seed_document
from tests.sessions import killed_during_deploy

SEED_SCHEMA = Draft202012Validator(load_schema("seed.v1.schema.json"))
runner = CliRunner()


def open_model_request() -> bytes:
    builder = SessionBuilder(seed=3, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("why is checkout slow?")
    builder.step(run)
    return builder.data()


def seeds_of(data: bytes, tmp_path: Path, name: str = "session.jsonl") -> list[Seed]:
    path = tmp_path / name
    path.write_bytes(data)
    return [seed for _, _, seed in report_seeds(audit([str(path)]).report)]


def materialise(facts: list[dict[str, Any]], timestamp: int) -> bytes:
    """The next facts with the only unknowable value (the timestamp) filled in, as one transaction line."""
    concrete = [{**fact, "timestamp": timestamp} for fact in facts]
    for fact in concrete:
        assert "$assign" not in json.dumps(fact), fact
    value: Any = concrete if len(concrete) > 1 else concrete[0]
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def test_seed_of_a_run_killed_during_a_never_replay_tool(tmp_path: Path) -> None:
    (seed,) = seeds_of(killed_during_deploy(), tmp_path)
    SEED_SCHEMA.validate(seed_document(seed))
    assert (seed.seed_kind, seed.condition, seed.replay) == ("fork", "effect-unknown", None)
    (effect,) = seed.pending_effects
    assert (effect.tool_name, effect.arguments, effect.replay_policy) == (
        "bash",
        {"command": "./deploy.sh"},
        "never",
    )
    assert seed.fork_point.fact_id == effect.intent_id  # the open intent is the last committed fact
    assert [message["role"] for message in seed.context.messages] == ["user", "assistant"]
    (interrupted,) = seed.next_facts
    assert interrupted["id"] == effect.result_slot  # tiny-agent's own recovery writes at the provisioned slot
    assert interrupted["entry"]["result"] == {"type": "synthetic", "reason": "interrupted"}


def current_with_snapshot() -> CurrentSource:
    snapshot = Configuration().snapshot()
    return parse_current(
        {
            "configurationDigest": sha256_digest(snapshot),
            "environmentIdentity": "/home/dev/shop",
            "tools": [
                {**tool, "replay": "never", "replayKey": f"builtin:{tool['name']}:v1"}
                for tool in snapshot["tools"]
            ],
            "configurationSnapshot": snapshot,
        }
    )


@pytest.mark.parametrize("build", [killed_during_deploy, open_model_request])
def test_next_facts_with_their_values_filled_in_are_accepted_by_the_verifier(build: Any) -> None:
    data = build()
    options = VerifyOptions(current=current_with_snapshot())
    outcome = verify_tiny_agent("x.jsonl", "x.jsonl", io.BytesIO(data), len(data), options)
    seed = outcome.sessions[0].runs[0].recovery.seed  # type: ignore[union-attr]
    assert seed is not None
    text = json.dumps(seed.next_facts)
    for number in range(text.count('{"$assign": "uuid7"}')):  # a fresh id for every placeholder
        text = text.replace('{"$assign": "uuid7"}', f'"01a029fc-9999-7999-8999-{number:012d}"', 1)
    facts = json.loads(text)
    extended = data + materialise(facts, 1787410900000)
    after = verify_tiny_agent("x.jsonl", "x.jsonl", io.BytesIO(extended), len(extended))
    assert after.sessions[0].verdict != "corrupt", [item.message for item in after.findings]
    assert after.sessions[0].last_seq == (outcome.sessions[0].last_seq or 0) + len(facts)


def test_model_request_open_seed_replays_the_step_as_attempt_two(tmp_path: Path) -> None:
    (seed,) = seeds_of(open_model_request(), tmp_path)
    assert seed.seed_kind == "replay" and seed.replay is not None
    assert seed.replay["kind"] == "model_request" and seed.replay["attempt"] == 2
    (attempt,) = seed.next_facts
    assert attempt["record"]["type"] == "stepAttempt" and attempt["record"]["attempt"] == 2
    assert attempt["record"]["configurationSnapshot"] == {"$assign": "configurationSnapshot"}
    assert attempt["id"] == {"$assign": "uuid7"}


def test_torn_tail_with_an_open_run_seeds_from_the_committed_prefix(tmp_path: Path) -> None:
    data = killed_during_deploy() + b'{"kind":"entry","seq":99'
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data)
    source = audit([str(path)]).report.sources[0]
    assert source.verdict == "needs-recovery"
    assert source.sessions[0].torn_tail_bytes == len(b'{"kind":"entry","seq":99')
    seed = source.sessions[0].runs[0].recovery.seed  # type: ignore[union-attr]
    assert seed is not None and seed.fork_point.byte_offset is not None
    assert seed.fork_point.byte_offset < len(killed_during_deploy())


def test_a_corrupt_session_gets_no_seed(tmp_path: Path) -> None:
    data = killed_during_deploy() + b"not json\n"
    assert seeds_of(data, tmp_path) == []


def test_seed_file_names_are_sanitised_and_stay_inside_the_directory() -> None:
    name = seed_file_name("../../etc/passwd", "run/1\x00x", "abcdef0123456789")
    assert name == ".._.._etc_passwd--run_1_x--abcdef01.seed.json".replace("..", "__", 1) or "/" not in name
    assert "/" not in name and "\x00" not in name
    long = seed_file_name("s" * 500, "r" * 500, None)
    assert len(long) < 255 and long.endswith("--nohash.seed.json")
    assert seed_file_name("a" * 500, "r", None) != seed_file_name("a" * 499 + "b", "r", None)


def test_write_seed_never_overwrites_a_different_file(tmp_path: Path) -> None:
    document = {"schema": "sessaudit/seed/v1", "value": 1}
    path, written = write_seed(tmp_path, "a.seed.json", document)
    assert written and json.loads(path.read_text()) == document
    assert write_seed(tmp_path, "a.seed.json", document) == (path, False)
    with pytest.raises(SeedClash):
        write_seed(tmp_path, "a.seed.json", {"other": True})
    assert json.loads(path.read_text()) == document
    with pytest.raises(ValueError):
        write_seed(tmp_path, "../escape.seed.json", document)
    assert sorted(item.name for item in tmp_path.iterdir()) == ["a.seed.json"]


def test_verify_writes_seeds_and_the_console_says_where(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())
    seeds = tmp_path / "seeds"
    result = runner.invoke(app, ["verify", str(path), "--seeds-dir", str(seeds)])
    assert result.exit_code == 0, result.output
    (written,) = list(seeds.iterdir())
    assert f"seed: {written}" in result.output
    SEED_SCHEMA.validate(json.loads(written.read_text()))
    written.write_text("{}\n")
    clash = runner.invoke(app, ["verify", str(path), "--seeds-dir", str(seeds)])
    assert clash.exit_code == 2 and "never overwritten" in clash.stderr


def test_seed_command_prints_all_one_or_a_moved_fork_point(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())
    every = runner.invoke(app, ["seed", str(path)])
    assert every.exit_code == 0
    (document,) = json.loads(every.stdout)
    run_id = document["run_id"]
    one = runner.invoke(app, ["seed", str(path), "--run", run_id])
    assert json.loads(one.stdout) == document
    moved = json.loads(runner.invoke(app, ["seed", str(path), "--run", run_id, "--sequence", "1"]).stdout)
    assert moved["fork_point"]["seq"] == 1 and moved["fork_point"]["line"] == 2
    assert [message["role"] for message in moved["context"]["messages"]] == ["user"]
    assert runner.invoke(app, ["seed", str(path), "--run", "nope"]).exit_code == 2
    assert runner.invoke(app, ["seed", str(path), "--run", run_id, "--sequence", "99"]).exit_code == 2


def test_current_file_changes_the_plan_and_bad_files_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())
    current = tmp_path / "current.json"
    current.write_text(
        json.dumps(
            {
                "configurationDigest": "sha256:" + "0" * 64,
                "environmentIdentity": "/somewhere/else",
                "tools": [],
            }
        )
    )
    result = runner.invoke(app, ["verify", str(path), "--current", str(current), "--format", "json"])
    recovery = json.loads(result.stdout)["sources"][0]["sessions"][0]["runs"][0]["recovery"]
    assert recovery["native_plan"] == {"type": "blocked", "reason": "environment_changed"}
    assert recovery["seed_kind"] == "fork"
    assert "configuration unchanged" not in recovery["assumes"]
    current.write_text("{not json")
    assert runner.invoke(app, ["verify", str(path), "--current", str(current)]).exit_code == 2


def test_legacy_v1_open_call_seed(tmp_path: Path) -> None:
    builder = LegacySessionBuilder(seed=5)
    builder.user("list the files, then deploy")
    read, _deploy = builder.assistant(
        None, calls=[Call("read", {"path": "."}), Call("bash", {"command": "./deploy.sh"})]
    )
    builder.tool_result(read, "src tests")
    (seed,) = seeds_of(builder.data(), tmp_path)
    SEED_SCHEMA.validate(seed_document(seed))
    assert (seed.source.format_version, seed.condition, seed.seed_kind) == ("1", "effect-unknown", "fork")
    assert [effect.tool_name for effect in seed.pending_effects] == ["bash"]
    assert seed.fork_point.line == 4 and seed.next_facts == []
    assert [message["role"] for message in seed.context.messages] == ["user", "assistant", "tool"]
