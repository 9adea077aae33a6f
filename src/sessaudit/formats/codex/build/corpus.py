"""A benchmark corpus: many seeded sessions (long ones, doubled counts, forks, sub-agents, kills, torn tails,
compactions) written below one root until it holds `target_bytes`, with a manifest of its totals."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Final

from sessaudit.formats.codex.build.ids import DEFAULT_START
from sessaudit.formats.codex.build.manifest import MANIFEST_NAME
from sessaudit.formats.codex.build.parts import USAGE_FIELDS, Built, JsonObject, Usage
from sessaudit.formats.codex.build.rollout import RolloutBuilder

KINDS: Final = ("long", "long", "long", "long", "doubled", "fork", "subagent", "killed", "torn", "compaction")
OFFSETS: Final = (0, 0, 1, 9, -5, 5.5)
MODULES: Final = ("api", "billing", "ingest", "auth", "reports", "search", "cache", "cli", "storage", "jobs")
WORDS: Final = (
    "request", "payload", "retry", "budget", "token", "session", "cursor", "batch", "window", "schema",
    "record", "offset", "handler", "config", "client", "result", "buffer", "stream", "index", "quota",
)  # fmt: skip
PROMPTS: Final = (
    "Add pagination to the {m} listing endpoint.",
    "Why does the {m} test suite flake on CI?",
    "Refactor {m}/core.py so the {w} handling lives in one place.",
    "Write unit tests for the {w} parser in {m}.",
    "The {m} worker leaks memory under load — find out why.",
    "Rename `{w}_id` to `{w}_key` across the {m} package.",
)


@dataclass(slots=True)
class Tally:
    """What has been written so far."""

    files: int = 0
    bytes: int = 0
    sessions: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_FIELDS, 0) | {"responses": 0})
    unlogged: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(USAGE_FIELDS, 0) | {"responses": 0}
    )

    def add(self, kind: str, built: Built) -> None:
        self.files += len(built.files)
        self.bytes += sum(path.stat().st_size for path in built.files)
        self.sessions += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        for target, source in (
            (self.totals, built.truth["totals"]),
            (self.unlogged, built.truth["unlogged"]),
        ):
            for name, value in source.items():
                target[name] += value


class Session:
    """Drives one builder through seeded turns with realistic tools, outputs and growing context."""

    def __init__(self, b: RolloutBuilder, rng: random.Random) -> None:
        self.b, self.rng = b, rng
        self.context = rng.randint(6_000, 14_000)

    def usage(self, added: int) -> Usage:
        cached = min(self.context, self.context // 256 * 256) if self.rng.random() < 0.9 else 0
        self.context += added + self.rng.randint(80, 400)
        output = self.rng.randint(40, 1_600)
        reasoning = self.rng.randint(0, output * 7 // 10) // 64 * 64
        return Usage(self.context, min(cached, self.context), output, reasoning)

    def code(self, lines: int) -> str:
        rng = self.rng
        rows = []
        for number in range(1, lines + 1):
            a, b = rng.choice(WORDS), rng.choice(WORDS)
            row = rng.choice(
                (
                    f"def {a}_{b}(self, {b}: int) -> None:",
                    f"    {a} = self.{b}.get({number})",
                    f"    if {a} is None:\n        raise ValueError('missing {b}')",
                    f"    return {a}_{b}({a}, limit={number * 8})",
                    f"# {a} {b}: keep in step with the {rng.choice(MODULES)} module",
                )
            )
            rows.append(f"{number:6d}\t{row}")
        return "\n".join(rows) + "\n"

    def patch(self, module: str) -> str:
        a, b = self.rng.choice(WORDS), self.rng.choice(WORDS)
        return (
            f"*** Begin Patch\n*** Update File: {module}/core.py\n@@ def {a}_{b}(self, {b}: int) -> None:\n"
            f"-    {a} = self.{b}.get({b})\n+    {a} = self.{b}.get({b}, default=None)\n"
            f"+    if {a} is None:\n+        return\n*** End Patch\n"
        )

    def round_trip(self, module: str, *, answer: bool = True) -> str:
        """One model response with a tool call (shell read, shell run, or apply_patch), then its output."""
        b, rng = self.b, self.rng
        if rng.random() < 0.6:
            b.reasoning(f"**Checking {module}**", encrypted=rng.randint(200, 900))
        choice = rng.random()
        if choice < 0.45:
            script = f"sed -n '1,{rng.randint(80, 400)}p' {module}/core.py"
            call = b.call("shell", {"command": ["bash", "-lc", script], "workdir": b.cwd}, world=False)
            text = self.code(rng.randint(40, 160))
        elif choice < 0.75:
            script = rng.choice(("pytest -q", "cargo test", "npm test -- --silent", "go test ./..."))
            call = b.call(
                "shell", {"command": ["bash", "-lc", f"{script} {module}"], "workdir": b.cwd}, world=True
            )
            text = "".join(f"{module}/test_{w}.py::test_{w} PASSED\n" for w in rng.sample(WORDS, 12))
        else:
            call = b.custom_call("apply_patch", self.patch(module))
            text = f"Success. Updated the following files:\nM {module}/core.py\n"
        b.response(self.usage(len(text) // 4))
        if answer:
            b.output(call, text, seconds=round(rng.uniform(0.05, 9.0), 2))
        return call

    def turn(self, *, complete: bool = True) -> None:
        b, rng = self.b, self.rng
        module = rng.choice(MODULES)
        b.user(rng.choice(PROMPTS).format(m=module, w=rng.choice(WORDS)))
        for _ in range(rng.randint(1, 6)):
            self.round_trip(module)
        if complete:
            b.assistant(
                f"Done in {module}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 60))) + "."
            )
            b.response(self.usage(60))
            b.task_complete()


def one(root: Path, kind: str, seed: int, number: int, start_offset: timedelta) -> Built:
    rng = random.Random(seed)
    offset = timedelta(hours=rng.choice(OFFSETS))
    options: JsonObject = {"offset": offset, "rate_limit_counts": rng.random() < 0.3}
    if kind == "doubled":
        options.update(cli_version="0.46.0", doubled_token_counts=True)
    b = RolloutBuilder(
        root, f"/home/dev/src/project-{number % 37}", seed=seed, start=DEFAULT_START + start_offset, **options
    )
    session = Session(b, rng)
    for _ in range(rng.randint(3, 10)):
        session.turn()
    if kind in ("fork", "subagent"):
        if kind == "fork":
            child = b.fork(b.lines)
        else:
            source = {"subagent": {"thread_spawn": {"parent_thread_id": b.session_id, "depth": 1}}}
            child = b.fork(b.lines, source=source, forked_from=False)
        fork = Session(child, rng)
        fork.context = session.context
        for _ in range(rng.randint(1, 4)):
            fork.turn()
        return child.finish()
    if kind == "compaction":
        b.compact(
            "Summary of the work so far: " + " ".join(rng.choice(WORDS) for _ in range(80)),
            usage=session.usage(0),
        )
        session.context = rng.randint(3_000, 6_000)
        for _ in range(rng.randint(1, 4)):
            session.turn()
    elif kind == "killed":
        session.turn(complete=False)
        module = rng.choice(MODULES)
        session.round_trip(module, answer=False)
        b.kill()
    elif kind == "torn":
        session.turn(complete=False)
        b.torn(max(1, b.last_line_size() // 2))
    return b.finish()


def build_corpus(root: Path, target_bytes: int, seed: int = 0) -> JsonObject:
    """Write sessions below `root` until they hold at least `target_bytes`; the manifest (also written to
    `<root>/manifest.json`): file, byte and session counts, the mixture, and the usage totals an exact
    ledger must find (own responses whose token_count reached the disk whole) and the unlogged ones."""
    rng = random.Random(seed)
    tally = Tally()
    elapsed = timedelta(0)
    while tally.bytes < target_bytes:
        kind = rng.choice(KINDS)
        elapsed += timedelta(minutes=rng.randint(20, 240))
        tally.add(kind, one(root, kind, rng.getrandbits(48), tally.sessions, elapsed))
    manifest: JsonObject = {
        "format": "codex",
        "corpus": {
            "seed": seed,
            "target_bytes": target_bytes,
            "files": tally.files,
            "bytes": tally.bytes,
            "families": tally.sessions,
            "kinds": dict(sorted(tally.kinds.items())),
            "totals": tally.totals,
            "unlogged": tally.unlogged,
        },
    }
    with (root / MANIFEST_NAME).open("x", encoding="utf-8") as stream:
        stream.write(json.dumps(manifest, indent=2) + "\n")
    return manifest
