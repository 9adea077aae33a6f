"""Ready-made Claude Code transcripts for tests, examples and benchmarks, each with its manifest entry.

Every scenario writes one project directory (its own cwd, `/home/dev/<name>`) below the root it is given.
Usage figures are literal here so that tests can state their sums by hand. `build_all` writes every
scenario and `<root>/manifest.json`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sessaudit.formats.claude_code.build.manifest import write_manifest
from sessaudit.formats.claude_code.build.parts import JsonObject, Text, Thinking, ToolUse, Usage
from sessaudit.formats.claude_code.build.transcript import (
    DEFAULT_MODEL,
    DEFAULT_VERSION,
    Built,
    TranscriptBuilder,
)

SONNET_45: Final = "claude-sonnet-4-5-20250929"
SONNET_4: Final = "claude-sonnet-4-20250514"
HAIKU_45: Final = "claude-haiku-4-5-20251001"
BEDROCK_SONNET_4: Final = "us.anthropic.claude-sonnet-4-20250514-v1:0"
CALC: Final = "def add(a, b):\n    return a - b\n"


def cwd_of(name: str) -> str:
    return f"/home/dev/{name}"


def start(
    root: Path,
    name: str,
    seed: int,
    *,
    version: str = DEFAULT_VERSION,
    model: str = DEFAULT_MODEL,
    bedrock: bool = False,
) -> TranscriptBuilder:
    """A fresh session builder for scenario `name` (its seed mixes `seed` with the name)."""
    mixed = zlib.crc32(name.encode()) ^ seed
    return TranscriptBuilder(root, cwd_of(name), seed=mixed, version=version, model=model, bedrock=bedrock)


def clean(root: Path, seed: int) -> Built:
    """Read, edit, test, answer: streamed multi-block responses, every call answered."""
    b = start(root, "clean", seed)
    b.user("add() in calc.py returns the wrong sign — fix it, then run the tests ✅")
    read = b.assistant(
        [
            Thinking("The user says add() is wrong. Read calc.py first."),
            Text("I'll look at calc.py."),
            ToolUse("Read", {"file_path": f"{b.cwd}/calc.py"}),
        ],
        usage=Usage(3, 212, cache_5m=4817, cache_read=11930),
    ).call
    b.tool_result(read, "     1→def add(a, b):\n     2→    return a - b\n")
    edit = b.assistant(
        [
            Text("`add` subtracts; it should add."),
            ToolUse("Edit", {"file_path": f"{b.cwd}/calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ],
        usage=Usage(1, 386, cache_1h=1204, cache_read=16747),
    ).call
    b.tool_result(edit, f"The file {b.cwd}/calc.py has been updated.")
    test = b.assistant(
        [ToolUse("Bash", {"command": "python -m pytest -q", "description": "Run the tests"})],
        usage=Usage(1, 97, cache_5m=602, cache_read=17951),
        streaming="identical",
    ).call
    b.tool_result(test, "3 passed in 0.04s")
    b.assistant(
        [Text("Fixed: add() now returns a + b, and the 3 tests pass.")],
        usage=Usage(1, 58, cache_5m=389, cache_read=18553),
    )
    return b.finish()


def killed_during_bash(root: Path, seed: int) -> Built:
    """The issue's example: the process dies while the Bash call runs; its tool_use has no result."""
    b = start(root, "killed_during_bash", seed)
    b.user("The build is red — run the test suite and fix what fails.")
    b.assistant(
        [
            Thinking("Run the suite to see the failures."),
            Text("Running the test suite."),
            ToolUse("Bash", {"command": "npm test", "description": "Run the test suite"}),
        ],
        usage=Usage(3, 157, cache_5m=2461, cache_read=14210),
    )
    b.crash()
    return b.finish()


# Spec §10: one dangling call per kind of tool; MultiEdit and LS are 2.0.x tools.
DANGLING: Final[dict[str, tuple[str, JsonObject]]] = {
    "bash": ("Bash", {"command": "rm -rf build && make", "description": "Clean rebuild"}),
    "write": ("Write", {"file_path": "notes/plan.md", "content": "# Plan\n\n1. fix add()\n"}),
    "edit": ("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
    "multiedit": (
        "MultiEdit",
        {
            "file_path": "calc.py",
            "edits": [
                {"old_string": "a - b", "new_string": "a + b"},
                {"old_string": "def add", "new_string": "def add_numbers"},
            ],
        },
    ),
    "notebookedit": (
        "NotebookEdit",
        {
            "notebook_path": "analysis.ipynb",
            "cell_id": "cell-3",
            "new_source": "df.describe()",
            "edit_mode": "replace",
        },
    ),
    "mcp": (
        "mcp__github__create_issue",
        {"owner": "dev", "repo": "calc", "title": "add() subtracts", "body": "Found while testing."},
    ),
    "read": ("Read", {"file_path": "README.md"}),
    "glob": ("Glob", {"pattern": "**/*.py"}),
    "grep": ("Grep", {"pattern": "def add", "output_mode": "content"}),
    "ls": ("LS", {"path": "."}),
    "webfetch": (
        "WebFetch",
        {"url": "https://docs.python.org/3/library/operator.html", "prompt": "What does operator.add do?"},
    ),
}


def dangling(kind: str) -> Callable[[Path, int], Built]:
    """A scenario killed while the `kind` call of DANGLING runs (after one answered Read)."""

    def build(root: Path, seed: int) -> Built:
        name, arguments = DANGLING[kind]
        old = name in ("MultiEdit", "LS")
        version, model = ("2.0.55", SONNET_45) if old else (DEFAULT_VERSION, DEFAULT_MODEL)
        b = start(root, f"dangling_{kind}", seed, version=version, model=model)
        absolute = {
            key: f"{b.cwd}/{value}" if key in ("file_path", "notebook_path") else value
            for key, value in arguments.items()
        }
        if name == "LS":
            absolute["path"] = b.cwd
        b.user("Tidy up calc.py and the notes.")
        first = b.assistant(
            [ToolUse("Read", {"file_path": f"{b.cwd}/calc.py"})],
            usage=Usage(4, 61, cache_5m=3120, cache_read=9876),
        ).call
        b.tool_result(first, CALC)
        b.assistant(
            [Text("Next step."), ToolUse(name, absolute)], usage=Usage(1, 133, cache_5m=420, cache_read=12996)
        )
        b.crash()
        return b.finish()

    build.__doc__ = f"Killed during a {DANGLING[kind][0]} call: one dangling tool_use."
    return build


def subagent(layout: str) -> Callable[[Path, int], Built]:
    """A Task call whose agent reads two files; `folder` (2.1.79, nested + meta) or `beside` (2.0.55)."""

    def build(root: Path, seed: int) -> Built:
        folder = layout == "folder"
        version, model = (DEFAULT_VERSION, DEFAULT_MODEL) if folder else ("2.0.55", SONNET_45)
        b = start(root, f"subagent_{layout}", seed, version=version, model=model)
        b.user("Find every caller of add() and tell me which ones rely on the bug.")
        prompt = "List the callers of add() in this repository and what each expects."
        task = b.assistant(
            [
                Text("I'll ask an agent to survey the callers."),
                ToolUse(
                    "Task",
                    {
                        "description": "Survey add() callers",
                        "prompt": prompt,
                        "subagent_type": "general-purpose",
                    },
                ),
            ],
            usage=Usage(3, 164, cache_5m=5120, cache_read=12004),
        ).call
        agent = b.subagent(task, layout="folder" if folder else "beside", model=HAIKU_45)
        agent.user(prompt)
        grep = agent.assistant(
            [ToolUse("Grep", {"pattern": r"add\(", "output_mode": "files_with_matches"})],
            usage=Usage(10, 71, cache_5m=3410),
        ).call
        agent.tool_result(grep, "Found 2 files\nbilling.py\nreport.py")
        read = agent.assistant(
            [ToolUse("Read", {"file_path": f"{b.cwd}/billing.py"})],
            usage=Usage(1, 66, cache_5m=911, cache_read=3410),
        ).call
        agent.tool_result(read, "     1→from calc import add\n     2→total = add(price, -discount)\n")
        answer = "billing.py calls add(price, -discount) and expects a sum; report.py only formats."
        agent.assistant([Text(answer)], usage=Usage(1, 402, cache_5m=1530, cache_read=4321))
        b.agent_result(task, agent, answer)
        b.assistant(
            [Text("Only billing.py relies on add(); it expects a real sum, so the fix is safe.")],
            usage=Usage(1, 233, cache_5m=2207, cache_read=17124),
        )
        return b.finish()

    build.__doc__ = f"A sub-agent in the {layout} layout."
    return build


def resumed(root: Path, seed: int) -> Built:
    """Session A, then `--resume` into B, which replays A's lines (same uuids, B's sessionId)."""
    a = start(root, "resumed", seed)
    a.user("What does calc.py do?")
    a.assistant(
        [Text("It defines add(), which currently subtracts.")],
        usage=Usage(3, 48, cache_5m=2000, cache_read=10000),
    )
    b = a.resume()
    b.user("Run the tests then.")
    test = b.assistant(
        [Text("Running them."), ToolUse("Bash", {"command": "pytest -q"})],
        usage=Usage(1, 90, cache_5m=300, cache_read=12000),
    ).call
    b.tool_result(test, "1 failed, 2 passed", is_error=True)
    b.assistant([Text("One test fails: test_add.")], usage=Usage(1, 30, cache_5m=120, cache_read=12300))
    return b.finish()


def continued_without_copy(root: Path, seed: int) -> Built:
    """A resumed session whose first line points into the earlier file instead of copying it."""
    a = start(root, "continued_without_copy", seed)
    a.user("Summarise calc.py.")
    a.assistant([Text("One function, add().")], usage=Usage(3, 12, cache_5m=1800, cache_read=9000))
    b = a.resume(copy=False)
    b.user("And its tests?")
    b.assistant([Text("tests/test_calc.py has three.")], usage=Usage(1, 15, cache_5m=64, cache_read=10800))
    return b.finish()


def torn_tail(root: Path, seed: int) -> Built:
    """Killed while writing the second Bash call's result: the last line is cut part-way."""
    b = start(root, "torn_tail", seed)
    b.user("Build the wheel and run the smoke test.")
    build = b.assistant(
        [Text("Building."), ToolUse("Bash", {"command": "python -m build"})],
        usage=Usage(3, 88, cache_5m=2600, cache_read=9100),
    ).call
    b.tool_result(build, "Successfully built calc-1.0-py3-none-any.whl")
    smoke = b.assistant(
        [ToolUse("Bash", {"command": "python -m calc.smoke", "description": "Smoke test"})],
        usage=Usage(1, 54, cache_5m=140, cache_read=11700),
    ).call
    b.tool_result(smoke, "smoke ok — 12 checks, 0 failures")
    b.crash(torn=True)
    return b.finish()


def summary_elsewhere(root: Path, seed: int) -> Built:
    """1.0.85: session A, then session B whose first line summarises A (`leafUuid` in A's file)."""
    a = start(root, "summary_elsewhere", seed, version="1.0.85", model=SONNET_4)
    a.user("Why does add() subtract?")
    read = a.assistant(
        [Text("Let me read it."), ToolUse("Read", {"file_path": f"{a.cwd}/calc.py"})],
        usage=Usage(4, 70, cache_5m=3300, cache_read=0),
    ).call
    a.tool_result(read, CALC)
    a.assistant([Text("A typo: `-` where `+` was meant.")], usage=Usage(1, 25, cache_5m=150, cache_read=3300))
    assert a.leaf is not None
    b = a.new_session()
    b.summary(a.leaf, "Typo in add(): subtraction instead of addition")
    b.user("Add a test for negative numbers.")
    b.assistant([Text("Here is one: assert add(-1, -2) == -3.")], usage=Usage(3, 40, cache_5m=2900))
    return b.finish()


def bedrock(root: Path, seed: int) -> Built:
    """1.0.65 through Bedrock: `msg_bdrk_`/`toolu_bdrk_` ids, no `requestId`, one line per block."""
    b = start(root, "bedrock", seed, version="1.0.65", model=BEDROCK_SONNET_4, bedrock=True)
    b.user("Where is add() defined?")
    grep = b.assistant(
        [Text("Searching."), ToolUse("Grep", {"pattern": "def add"})], usage=Usage(4, 143, cache_5m=6311)
    ).call
    b.tool_result(grep, "calc.py")
    read = b.assistant(
        [Text("Reading it."), ToolUse("Read", {"file_path": f"{b.cwd}/calc.py"})],
        usage=Usage(1, 95, cache_5m=702, cache_read=6311),
    ).call
    b.tool_result(read, CALC)
    b.assistant(
        [Text("In calc.py, line 1; it returns a - b.")], usage=Usage(1, 311, cache_5m=1488, cache_read=7013)
    )
    return b.finish()


def user_interrupt(root: Path, seed: int) -> Built:
    """Esc during a Bash call (error result + marker line), an API error line, then a retry."""
    b = start(root, "user_interrupt", seed)
    b.user("Start the dev server.")
    server = b.assistant(
        [Text("Starting it."), ToolUse("Bash", {"command": "npm run dev"})],
        usage=Usage(3, 41, cache_5m=2200, cache_read=8800),
    ).call
    b.interrupt(server)
    b.user("Never mind — just run the unit tests.")
    b.synthetic('API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}', error="server_error")
    b.user("Try again.")
    test = b.assistant(
        [ToolUse("Bash", {"command": "npm run test:unit"})],
        usage=Usage(1, 38, cache_5m=310, cache_read=11000),
    ).call
    b.tool_result(test, "Tests: 14 passed")
    b.assistant([Text("All 14 unit tests pass.")], usage=Usage(1, 11, cache_5m=90, cache_read=11310))
    return b.finish()


def placeholder_stop_null(root: Path, seed: int) -> Built:
    """A response whose last line keeps `stop_reason: null` and a placeholder output count."""
    b = start(root, "placeholder_stop_null", seed)
    b.user("Explain the difference between a - b and a + b for negative b.")
    b.assistant(
        [Thinking("Walk through the sign rules."), Text("With b < 0, a - b grows and a + b shrinks.")],
        usage=Usage(2, 540, cache_5m=3000, cache_read=9000),
        placeholder=True,
    )
    b.user("Thanks — and for b = 0?")
    b.assistant([Text("Then both are a.")], usage=Usage(1, 120, cache_5m=560, cache_read=12000))
    return b.finish()


def compacted(root: Path, seed: int) -> Built:
    """`/compact` mid-session: a boundary root with `logicalParentUuid`, its summary line, more turns."""
    b = start(root, "compacted", seed)
    b.user("Refactor calc.py into a package.")
    b.assistant([Text("Plan: calc/__init__.py re-exports add().")], usage=Usage(3, 77, cache_5m=5000))
    b.user("Go ahead.")
    b.assistant(
        [Text("Done in my head; say the word to write it.")], usage=Usage(1, 20, cache_5m=90, cache_read=5000)
    )
    b.compact("The user asked to turn calc.py into a package; a plan was agreed.", pre_tokens=5211)
    b.user("Write it.")
    write = b.assistant(
        [
            ToolUse(
                "Write", {"file_path": f"{b.cwd}/calc/__init__.py", "content": "from calc.core import add\n"}
            )
        ],
        usage=Usage(3, 66, cache_5m=1900),
    ).call
    b.tool_result(write, f"File created successfully at: {b.cwd}/calc/__init__.py")
    b.assistant([Text("Written.")], usage=Usage(1, 5, cache_5m=40, cache_read=1900))
    return b.finish()


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    build: Callable[[Path, int], Built]

    @property
    def description(self) -> str:
        return (self.build.__doc__ or "").strip().splitlines()[0]


SCENARIOS: Final[dict[str, Scenario]] = {
    scenario.name: scenario
    for scenario in [
        Scenario("clean", clean),
        Scenario("killed_during_bash", killed_during_bash),
        *(Scenario(f"dangling_{kind}", dangling(kind)) for kind in DANGLING),
        Scenario("subagent_folder", subagent("folder")),
        Scenario("subagent_beside", subagent("beside")),
        Scenario("resumed", resumed),
        Scenario("continued_without_copy", continued_without_copy),
        Scenario("torn_tail", torn_tail),
        Scenario("summary_elsewhere", summary_elsewhere),
        Scenario("bedrock", bedrock),
        Scenario("user_interrupt", user_interrupt),
        Scenario("placeholder_stop_null", placeholder_stop_null),
        Scenario("compacted", compacted),
    ]
}


def build_one(root: Path, name: str, *, seed: int = 0) -> JsonObject:
    """Write scenario `name` below `root`; its manifest entry (with name, description and cwd)."""
    scenario = SCENARIOS[name]
    built = scenario.build(root, seed)
    return {"name": name, "description": scenario.description, "cwd": cwd_of(name), **built.truth}


def build_all(root: Path, *, seed: int = 0, names: list[str] | None = None) -> JsonObject:
    """Write the scenarios (all, or `names`) below `root` and `<root>/manifest.json`; the manifest."""
    entries = {name: build_one(root, name, seed=seed) for name in (names or list(SCENARIOS))}
    write_manifest(root, entries)
    return entries
