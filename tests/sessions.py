"""Small project-built sessions shared by the CLI, seed and report tests."""

from __future__ import annotations

from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder


def clean_session() -> bytes:
    builder = SessionBuilder(seed=1, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("hello")
    builder.assistant(builder.step(run), "hi there")
    builder.finish(run)
    return builder.data()


def killed_during_deploy() -> bytes:
    builder = SessionBuilder(seed=2, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("deploy it")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    builder.start_tool(answer, 0)
    return builder.data()
