"""Rebuild the example corpus from the project's session builder: `python examples/make_examples.py`."""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sessaudit.formats.claude_code.build.parts import Text, Thinking, ToolUse, Usage
from sessaudit.formats.claude_code.build.transcript import TranscriptBuilder
from sessaudit.formats.codex.build.parts import Usage as CodexUsage
from sessaudit.formats.codex.build.rollout import RolloutBuilder
from sessaudit.formats.half_pi.build.parts import ToolCall as HalfPiToolCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.rivumi.build.scenarios import (
    KILLED_AFTER_TOOL_STARTED,
    MANIFEST_AHEAD_AT_TERMINAL,
    build_run,
)
from sessaudit.formats.tiny_agent.build.legacy_v1 import LegacySessionBuilder
from sessaudit.formats.tiny_agent.build.session import Call, Configuration, SessionBuilder, TokenUsage

HERE = Path(__file__).resolve().parent
SESSIONS = Path("tiny-agent/.tiny-agent/sessions")
RUNS = Path("rivumi/runs")
STORE = Path("half-pi/home/db/half-pi.db")
CODEX = Path("codex")  # a copy of ~/.codex: sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl
CLAUDE = Path("claude-code")  # a copy of ~/.claude: projects/<the cwd, encoded>/<session uuid>.jsonl
CWD = "/home/dev/shop"
CONFIGURATION = Configuration(tools=("read", "edit", "bash"))

CART_SOURCE = """export function total(items) {
  return items.reduce((sum, item) => sum + item.price, 0);
}

export function applyDiscount(amount, percent) {
  return Math.round(amount * (100 - percent)) / 100;
}
"""
FAILING_TEST = """not ok 1 - total() multiplies price by quantity
  expected: 27, actual: 9 (test/cart.test.js:8)
# tests 3, pass 2, fail 1
"""
PASSING_TEST = "# tests 3, pass 3, fail 0\n"
NOTES = """Notes from the cart refactor (not a session log; sessaudit lists it under `skipped`).

- total() lost the quantity factor when items moved to {price, qty}.
- Staging deploys go through ./deploy.sh; it is not safe to run twice.
"""


def fix_the_cart_test(builder: SessionBuilder) -> None:
    """A complete run: read the code and see the test fail, edit and re-test, answer."""
    run = builder.start_run("The cart test fails since I changed items to {price, qty}. Can you fix it?")
    look = builder.assistant(
        builder.step(run),
        "Let me look at the cart code and run its test.",
        calls=[Call("read", {"path": "src/cart.js"}), Call("bash", {"command": "npm test"})],
    )
    builder.tool_result(builder.start_tool(look, 0), CART_SOURCE, duration_ms=4)
    builder.tool_result(builder.start_tool(look, 1), FAILING_TEST, outcome="error", duration_ms=1840)
    fix = builder.assistant(
        builder.step(run),
        "total() ignores the quantity; multiplying by item.qty fixes it.",
        calls=[
            Call("edit", {"path": "src/cart.js", "old": "item.price", "new": "item.price * item.qty"}),
            Call("bash", {"command": "npm test"}),
        ],
    )
    builder.tool_result(builder.start_tool(fix, 0), "Replaced 1 occurrence in src/cart.js.", duration_ms=3)
    builder.tool_result(builder.start_tool(fix, 1), PASSING_TEST, usage=TokenUsage(), duration_ms=1712)
    builder.assistant(builder.step(run), "Fixed: total() now multiplies price by qty. All cart tests pass.")
    builder.finish(run)


def clean_session() -> SessionBuilder:
    builder = SessionBuilder(seed=101, created_at=1796029923412, cwd=CWD, configuration=CONFIGURATION)
    fix_the_cart_test(builder)
    builder.wait(95_000)
    builder.compact("The cart test failed because total() ignored qty; fixed in src/cart.js, tests pass.")
    return builder


def torn_tail_session() -> SessionBuilder:
    builder = SessionBuilder(seed=102, created_at=1796038827088, cwd=CWD, configuration=CONFIGURATION)
    builder.exchange("Which test runner does this repo use?", "node:test, run through `npm test`.")
    builder.wait(30_000)
    # The process died while appending the next run: half a line, no LF.
    builder.tear_next(118)
    builder.start_run("Add a test for an empty cart.")
    return builder


def deploy_killed_session() -> SessionBuilder:
    builder = SessionBuilder(seed=103, created_at=1796047551930, cwd=CWD, configuration=CONFIGURATION)
    run = builder.start_run("Tests pass now. Deploy to staging, please.")
    deploy = builder.assistant(
        builder.step(run),
        "Deploying to staging with the project's script.",
        calls=[Call("bash", {"command": "./deploy.sh staging"})],
    )
    # The intent is durable; then the agent was killed while ./deploy.sh ran (replay: never).
    builder.start_tool(deploy, 0, replay="never")
    return builder


def open_model_request_session() -> SessionBuilder:
    builder = SessionBuilder(seed=104, created_at=1796052129517, cwd=CWD, configuration=CONFIGURATION)
    builder.exchange(
        "What does applyDiscount(1999, 15) return?", "16.99: 1999 × 0.85 = 1699.15, rounded to cents."
    )
    builder.wait(12_000)
    # The model request was sent; the agent stopped before the answer arrived.
    builder.step(builder.start_run("Why is the checkout page slow?"))
    return builder


def seq_gap_session() -> SessionBuilder:
    builder = SessionBuilder(seed=105, created_at=1796057316264, cwd=CWD, configuration=CONFIGURATION)
    run = builder.start_run("Show me the cart module.")
    look = builder.assistant(builder.step(run), None, calls=[Call("read", {"path": "src/cart.js"})])
    builder.skip_seq()  # one fact is missing from the middle of the log
    builder.tool_result(builder.start_tool(look, 0), CART_SOURCE, duration_ms=5)
    builder.assistant(builder.step(run), "src/cart.js exports total() and applyDiscount().")
    builder.finish(run)
    return builder


def legacy_session() -> LegacySessionBuilder:
    builder = LegacySessionBuilder(seed=106, created_at=1795983907234, cwd=CWD)
    builder.user("How many tests does the cart suite have?")
    calls = builder.assistant(None, calls=[Call("bash", {"command": "npm test"})])
    builder.tool_result(calls[0], PASSING_TEST, duration_ms=1690)
    builder.assistant("Three, and all of them pass.")
    return builder


def rivumi_runs() -> dict[Path, bytes]:
    """Two Rivumi runs of the standard task (read calc.py, fix add(), verify): one killed while its edit
    ran, one killed between saving session.json for run.completed and appending it. Their workspaces
    are left out, as in most copied evidence (and git cannot hold their `.git`)."""
    files: dict[Path, bytes] = {}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        build_run(root, seed=201, crash=KILLED_AFTER_TOOL_STARTED)
        build_run(root, seed=202, crash=MANIFEST_AHEAD_AT_TERMINAL)
        for path in sorted(root.rglob("*")):
            if path.is_file() and "workspace" not in path.relative_to(root).parts[1:2]:
                files[RUNS / path.relative_to(root)] = path.read_bytes()
    return files


def half_pi_store() -> dict[Path, bytes]:
    """A Half-Pi Mind store copied while the Mind ran (every row still in the -wal): a finished question,
    then a deploy on a remote Hand approved from a phone and still running, and a pending approval."""
    files: dict[Path, bytes] = {}
    with tempfile.TemporaryDirectory() as temporary:
        builder = StoreBuilder(Path(temporary) / STORE, seed=301)
        chat = builder.session("/home/dev/shop").user("Which test runner does this repo use?")
        builder.admitted(chat, "Which test runner does this repo use?")
        call = HalfPiToolCall("call_1", "read_file", '{"path":"package.json"}')
        chat.assistant("", calls=[call], results=['{"scripts": {"test": "node --test"}}'])
        builder.local_tool(chat, "read_file", {"path": "package.json"}, outcome="succeeded")
        chat.assistant("node:test, run through `npm test`.")
        chat.user("Deploy to staging on the build Hand.")
        builder.admitted(chat, "Deploy to staging on the build Hand.")
        deploy = builder.approval(chat, "exec_command", remote=True, args={"command": "./deploy.sh staging"})
        deploy.resolve("allow_once", actor_id="1", actor_label="phone", source="face")
        deploy.tool_decision()
        deploy.remote_run().through("approved", "sent", "accepted", "running").progress("uploading\n")
        builder.approval(chat, "bash", args={"command": "git push origin staging"})
        built = builder.finish(keep_wal=True)
        for name in built.files:
            files[STORE.parent / Path(name).name] = Path(name).read_bytes()
    return files


def claude_code_transcript() -> dict[Path, bytes]:
    """A Claude Code session in the shop: the cart fix (read, edit, test, answer, streamed responses with
    growing usage), then "deploy to staging": Claude Code was killed while `./deploy.sh staging` ran in
    its Bash tool, so the transcript ends on a tool_use with no tool_result."""
    files: dict[Path, bytes] = {}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        start = datetime(2026, 11, 30, 17, 3, 18, 245000, tzinfo=UTC)
        b = TranscriptBuilder(root, CWD, seed=401, version="2.1.79", model="claude-opus-4-6", start=start)
        b.user("The cart test fails since I changed items to {price, qty}. Can you fix it?")
        read = b.assistant(
            [
                Thinking("total() probably ignores qty. Read src/cart.js first."),
                Text("Let me look at the cart code."),
                ToolUse("Read", {"file_path": f"{CWD}/src/cart.js"}),
            ],
            usage=Usage(3, 188, cache_5m=5210, cache_read=12044),
        ).call
        b.tool_result(read, CART_SOURCE)
        edit = b.assistant(
            [
                Text("total() ignores the quantity; multiplying by item.qty fixes it."),
                ToolUse(
                    "Edit",
                    {
                        "file_path": f"{CWD}/src/cart.js",
                        "old_string": "sum + item.price",
                        "new_string": "sum + item.price * item.qty",
                    },
                ),
            ],
            usage=Usage(1, 142, cache_5m=690, cache_read=17254),
        ).call
        b.tool_result(edit, f"The file {CWD}/src/cart.js has been updated.")
        test = b.assistant(
            [ToolUse("Bash", {"command": "npm test", "description": "Run the cart tests"})],
            usage=Usage(1, 61, cache_5m=402, cache_read=17944),
        ).call
        b.tool_result(test, PASSING_TEST)
        b.assistant(
            [Text("Fixed: total() now multiplies price by qty. All cart tests pass.")],
            usage=Usage(1, 23, cache_5m=96, cache_read=18346),
        )
        b.user("Deploy to staging, please.")
        b.assistant(
            [
                Text("Deploying to staging with the project's script."),
                ToolUse("Bash", {"command": "./deploy.sh staging", "description": "Deploy to staging"}),
            ],
            usage=Usage(4, 97, cache_5m=140, cache_read=18442),
        )
        b.crash()  # killed while ./deploy.sh ran: nobody knows whether staging was deployed
        for path in b.finish().files:
            files[CLAUDE / path.relative_to(root)] = path.read_bytes()
    return files


def codex_rollout() -> dict[Path, bytes]:
    """A Codex CLI session in the shop (written at UTC+01:00): the cart fix (a shell read, apply_patch,
    `npm test`, answer), every token_count written twice as Codex does on a rate-limit update, then "deploy
    to staging": Codex was killed while its exec_command tool ran `./deploy.sh staging`, so the rollout
    ends on a function_call with no output and no task_complete."""
    files: dict[Path, bytes] = {}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        start = datetime(2026, 11, 30, 18, 41, 7, 512000, tzinfo=UTC)
        b = RolloutBuilder(
            root, CWD, seed=402, start=start, cli_version="0.98.0", model="gpt-5-codex",
            offset=timedelta(hours=1), doubled_token_counts=True,
        )  # fmt: skip
        b.user("The cart test fails since I changed items to {price, qty}. Can you fix it?")
        b.reasoning("**Reading the cart code**")
        read = b.call("shell", {"command": ["bash", "-lc", "cat src/cart.js"], "workdir": CWD}, world=False)
        b.response(CodexUsage(6_214, 0, 203, 128))
        b.output(read, CART_SOURCE)
        patch = b.custom_call(
            "apply_patch",
            "*** Begin Patch\n*** Update File: src/cart.js\n@@\n-  return items.reduce((sum, item) => sum + "
            "item.price, 0);\n+  return items.reduce((sum, item) => sum + item.price * item.qty, 0);\n"
            "*** End Patch\n",
        )
        b.response(CodexUsage(6_702, 6_144, 251, 192))
        b.output(patch, "Success. Updated the following files:\nM src/cart.js\n")
        test = b.call("shell", {"command": ["bash", "-lc", "npm test"], "workdir": CWD}, world=True)
        b.response(CodexUsage(7_010, 6_656, 58, 0))
        b.output(test, PASSING_TEST, seconds=1.4)
        b.assistant("Fixed: total() now multiplies price by qty. All cart tests pass.")
        b.response(CodexUsage(7_164, 6_912, 31, 0))
        b.task_complete()
        b.user("Deploy to staging, please.")
        b.call(
            "exec_command",
            {"cmd": "./deploy.sh staging", "workdir": CWD, "yield_time_ms": 10_000},
            world=True,
        )
        b.response(CodexUsage(7_301, 7_040, 77, 64))
        b.kill()  # killed while ./deploy.sh ran: nobody knows whether staging was deployed
        for path in b.finish().files:
            files[CODEX / path.relative_to(root)] = path.read_bytes()
    return files


def build_examples() -> dict[Path, bytes]:
    """Every example file, by path relative to `examples/`."""
    files: dict[Path, bytes] = {Path("notes.txt"): NOTES.encode("utf-8")}
    for builder in (
        clean_session(),
        torn_tail_session(),
        deploy_killed_session(),
        open_model_request_session(),
        seq_gap_session(),
        legacy_session(),
    ):
        files[SESSIONS / builder.file_name] = builder.data()
    files.update(rivumi_runs())
    files.update(half_pi_store())
    files.update(claude_code_transcript())
    files.update(codex_rollout())
    return files


def main() -> int:
    for relative, data in build_examples().items():
        target = HERE / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        print(f"{relative} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
