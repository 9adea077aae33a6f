"""A corpus of all three formats whose every content field carries a given text (tests only).

`--redact` tests put a unique canary there and check no output shows it; output-safety tests put control
characters, ANSI/OSC sequences and bidi overrides there and check no output carries them raw."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from sessaudit.formats.half_pi.build.parts import ToolCall as HalfPiToolCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.rivumi.build.parts import Crash, Killed
from sessaudit.formats.rivumi.build.parts import ToolCall as RivumiToolCall
from sessaudit.formats.rivumi.build.run_builder import RunBuilder
from sessaudit.formats.tiny_agent.build.legacy_v1 import LegacySessionBuilder
from sessaudit.formats.tiny_agent.build.session import Call, Configuration, SessionBuilder

SESSIONS = Path("tiny-agent/.tiny-agent/sessions")


def _tiny_agent(root: Path, text: str) -> list[Path]:
    configuration = Configuration(tools=("read", "edit", "bash"), system_prompt=f"system {text}")
    written = []
    # a finished run with tool results, then a compaction whose summary is content too
    done = SessionBuilder(
        seed=11, created_at=1796029923412, cwd="/home/dev/shop", configuration=configuration
    )
    run = done.start_run(f"user asks {text}")
    look = done.assistant(done.step(run), f"assistant says {text}", calls=[Call("read", {"path": text})])
    done.tool_result(done.start_tool(look, 0), f"tool output {text}", duration_ms=4)
    done.assistant(done.step(run), f"final answer {text}")
    done.finish(run)
    done.compact(f"summary {text}")
    # killed while a never-replay tool ran: arguments in pending effects, context in the seed
    killed = SessionBuilder(
        seed=12, created_at=1796047551930, cwd="/home/dev/shop", configuration=configuration
    )
    run = killed.start_run(f"deploy {text}")
    answer = killed.assistant(
        killed.step(run), f"deploying {text}", calls=[Call("bash", {"command": f"./deploy.sh {text}"})]
    )
    killed.start_tool(answer, 0, replay="never")
    # an open model request after an exchange
    waiting = SessionBuilder(
        seed=13, created_at=1796052129517, cwd="/home/dev/shop", configuration=configuration
    )
    waiting.exchange(f"question {text}", f"reply {text}")
    waiting.step(waiting.start_run(f"next question {text}"))
    # a legacy v1 session with an unanswered call
    legacy = LegacySessionBuilder(seed=14, created_at=1795983907234, cwd="/home/dev/shop")
    legacy.user(f"legacy user {text}")
    legacy.assistant(None, calls=[Call("bash", {"command": f"echo {text}"})])
    for builder in (done, killed, waiting, legacy):
        path = root / SESSIONS / builder.file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(builder.data())
        written.append(path)
    # a corrupt copy: a committed line with an invalid stop reason, which the finding quotes
    corrupt = root / SESSIONS / done.file_name.replace("_", "_0", 1)
    lines = done.data().splitlines(keepends=True)
    for index, line in enumerate(lines):
        batch = json.loads(line)
        for record in batch if isinstance(batch, list) else [batch]:
            entry = record.get("entry")
            message = entry.get("message") if isinstance(entry, dict) else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                entry["stopReason"] = f"stop {text}"
                lines[index] = (json.dumps(batch, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
                break
        else:
            continue
        break
    corrupt.write_bytes(b"".join(lines))
    written.append(corrupt)
    return written


def _rivumi(root: Path, text: str) -> list[Path]:
    runs = []
    for seed, crash in ((21, Crash(event_type="tool.started", occurrence=2)), (22, None)):
        builder = RunBuilder(root / "rivumi", seed=seed, crash=crash, instruction=f"instruction {text}")
        with contextlib.suppress(Killed):
            builder.start()
            (read,) = builder.model_turn(
                content=f"model {text}",
                tool_calls=[RivumiToolCall("read_file", {"path": f"{text}.py"}, "read")],
            )
            builder.tool_call(read, output=f"file body {text}")
            edit = RivumiToolCall(
                "replace_text", {"new": f"new {text}", "old": f"old {text}", "path": "c.py"}, "modify"
            )
            (edit,) = builder.model_turn(content=f"editing {text}", tool_calls=[edit])
            builder.tool_call(edit, decision="allow_session", output=f"replaced {text}")
            builder.model_turn(content=f"done {text}")
            builder.verify()
            builder.finish()
        runs.append(builder.run_dir)
    return runs


def half_pi_store(root: Path, text: str, extra: Callable[[StoreBuilder], None] | None = None) -> list[Path]:
    """A store with finished and open work; `extra` may add rows before it is written."""
    builder = StoreBuilder(root / "half-pi/home/db/half-pi.db", seed=31)
    chat = builder.session("/home/dev/shop").user(f"question {text}")
    builder.admitted(chat, f"question {text}")
    call = HalfPiToolCall("call_1", "read_file", json.dumps({"path": text}))
    chat.assistant("", calls=[call], results=[f"result {text}"])
    builder.local_tool(chat, "read_file", {"path": text}, outcome="succeeded")
    chat.assistant(f"answer {text}")
    chat.user(f"deploy {text}")
    builder.admitted(chat, f"deploy {text}")
    deploy = builder.approval(chat, "exec_command", remote=True, args={"command": f"./deploy.sh {text}"})
    deploy.resolve("allow_once", actor_id="1", actor_label="phone", source="face")
    deploy.tool_decision()
    deploy.remote_run().through("approved", "sent", "accepted", "running").progress(f"progress {text}\n")
    builder.approval(chat, "bash", args={"command": f"git push {text}"})
    if extra is not None:
        extra(builder)
    built = builder.finish(keep_wal=True)
    return [Path(name) for name in built.files]


def build_corpus(root: Path, text: str) -> Path:
    """Every format under `root`, `text` in each content field; returns `root`."""
    _tiny_agent(root, text)
    _rivumi(root, text)
    half_pi_store(root, text)
    return root
