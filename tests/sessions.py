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


# what a hostile log may hold, in every string a report shows: markup, an attribute break-out, a script URL,
# a bidi override and an ANSI escape
HOSTILE = (
    "<script>window.__pwned=1;alert(1)</script>",
    '"><img src=x onerror="window.__pwned=2;alert(2)">',
    "javascript:window.__pwned=3",
    "\u202eevil\u202c",
    "\x1b[31mred\x1b[0m",
)


def hostile_session() -> bytes:
    """A session killed during a tool call whose arguments, messages and result carry HOSTILE strings."""
    builder = SessionBuilder(seed=3, created_at=1787410800000, cwd="/home/dev/" + HOSTILE[1])
    run = builder.start_run("please " + HOSTILE[0])
    arguments = {
        "command": HOSTILE[0],
        "path": HOSTILE[1],
        "url": HOSTILE[2],
        "name": HOSTILE[3],
        "tty": HOSTILE[4],
    }
    answer = builder.assistant(builder.step(run), HOSTILE[1], calls=[Call("bash", arguments)])
    builder.start_tool(answer, 0)
    return builder.data()
