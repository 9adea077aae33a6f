"""Ready-made Codex rollouts for tests, examples and benchmarks, each with its manifest entry.

Every scenario works in its own cwd (`/home/dev/work/<name>`) and writes its files below the root it is
given (a `CODEX_HOME`). Usage figures are literal here so that tests can state their sums by hand.
`build_all` writes every scenario and `<root>/manifest.json`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from sessaudit.formats.codex.build import texts
from sessaudit.formats.codex.build.ids import DEFAULT_START
from sessaudit.formats.codex.build.manifest import write_manifest
from sessaudit.formats.codex.build.parts import Built, Git, JsonObject, Usage
from sessaudit.formats.codex.build.rollout import RolloutBuilder

OLD_VERSION: Final = "0.46.0"
OLD_START: Final = datetime(2025, 10, 29, 0, 59, 38, 317000, tzinfo=UTC)
PATCHED: Final = "Success. Updated the following files:\nM {}\n"


def cwd_of(name: str) -> str:
    return f"/home/dev/work/{name}"


def start(root: Path, name: str, seed: int, **options: Any) -> RolloutBuilder:
    """A fresh session builder for scenario `name` (its seed and, unless given, its start time come from
    the name, so scenarios do not share an instant)."""
    mixed = zlib.crc32(name.encode()) ^ seed
    options.setdefault("start", DEFAULT_START + timedelta(seconds=zlib.crc32(name.encode()) % 36_000))
    return RolloutBuilder(root, cwd_of(name), seed=mixed, **options)


def shell(b: RolloutBuilder, script: str, *, world: bool) -> str:
    return b.call("shell", {"command": ["bash", "-lc", script], "workdir": b.cwd}, world=world)


def clean(root: Path, seed: int) -> Built:
    """Two turns: a shell read and an apply_patch, then the tests; every call answered, task_complete."""
    git = Git("9c41d0e7b2a85f3361c0de4a7f2b9e8d15a6c3f0", "main", "git@github.com:dev/textkit.git")
    b = start(root, "clean", seed, git=git)
    b.user("slugify() in textkit/slug.py leaves a trailing dash for titles ending in punctuation — fix it.")
    b.reasoning("**Inspecting the slug helper**")
    read = shell(b, "sed -n '1,60p' textkit/slug.py", world=False)
    b.response(Usage(9_812, 7_040, 298, 192))
    b.output(read, texts.SLUG_PY)
    b.reasoning("**Stripping dashes at both ends**")
    patch = b.custom_call("apply_patch", texts.SLUG_PATCH)
    b.response(Usage(10_655, 9_728, 611, 384))
    b.output(patch, PATCHED.format("textkit/slug.py"))
    b.assistant(
        "slugify() now strips dashes at both ends (`strip`, not `lstrip`): “Hello, world!” → `hello-world`."
    )
    b.response(Usage(10_901, 10_496, 143, 64))
    b.task_complete()
    b.user("Run the tests too.")
    test = shell(b, "python -m pytest -q tests/test_slug.py", world=True)
    b.response(Usage(11_204, 10_880, 87, 0))
    b.output(test, texts.SLUG_TESTS, seconds=0.6)
    b.assistant("All 4 slug tests pass.")
    b.response(Usage(11_530, 11_136, 96, 0))
    b.task_complete()
    return b.finish()


def doubled_token_counts(root: Path, seed: int) -> Built:
    """0.46.0: every token_count written twice, identical; no task_started/task_complete in that era."""
    b = start(
        root,
        "doubled-token-counts",
        seed,
        cli_version=OLD_VERSION,
        start=OLD_START,
        doubled_token_counts=True,
    )
    b.user("What does `make lint` run here?")
    read = shell(b, "cat Makefile", world=False)
    b.response(Usage(6_420, 3_072, 180, 128))
    b.output(read, texts.MAKEFILE)
    b.assistant("`make lint` runs `ruff check` and `ruff format --check` over src and tests.")
    b.response(Usage(6_913, 6_272, 201, 64))
    b.task_complete()
    b.user("Add a `typecheck` target that runs mypy.")
    patch = b.custom_call("apply_patch", texts.MAKEFILE_PATCH)
    b.response(Usage(7_388, 6_784, 402, 256))
    b.output(patch, PATCHED.format("Makefile"))
    b.assistant("Added `make typecheck` (mypy --strict src) and listed it in .PHONY.")
    b.response(Usage(7_512, 7_296, 77, 0))
    b.task_complete()
    return b.finish()


def first_info_null(root: Path, seed: int) -> Built:
    """A rate-limit-only token_count after each prompt: `info: null` in the first, then the unchanged info."""
    b = start(root, "first-info-null", seed, rate_limit_counts=True)
    b.user("Summarise what src/ingest/worker.py does.")
    b.reasoning("**Reading the worker loop**")
    read = shell(b, "nl -ba src/ingest/worker.py | sed -n '1,120p'", world=False)
    b.response(Usage(8_034, 0, 512, 384))
    b.output(read, texts.WORKER_PY)
    b.assistant("It pops jobs from the queue and writes each to the store, retrying timeouts with backoff.")
    b.response(Usage(9_876, 7_936, 233, 128))
    b.task_complete()
    b.user("Is the retry loop bounded?")
    b.assistant(
        "Yes: MAX_ATTEMPTS = 5, sleeping 2, 4, 8, 16, 32 s; then the job goes to the dead-letter queue."
    )
    b.response(Usage(10_240, 9_856, 145, 64))
    b.task_complete()
    return b.finish()


def fork_with_history(root: Path, seed: int) -> Built:
    """A parent of two turns and a fork cut before its second prompt: copies of turn 1, then one own turn."""
    b = start(root, "fork-with-history", seed, git=Git("4be07a91c3d2", "fix/ci-dates"))
    b.user("Why does `cargo test` fail on CI but not locally?")
    b.reasoning("**Running the tests**")
    run = shell(b, "cargo test 2>&1 | tail -n 30", world=True)
    b.response(Usage(12_480, 4_096, 366, 256))
    b.output(run, texts.CARGO_FAIL, exit_code=101, seconds=14.2)
    b.assistant("formats_local_midnight builds its instant in the local zone; CI runs in UTC, an hour off.")
    b.response(Usage(13_301, 12_288, 420, 192))
    b.task_complete()
    cut = b.lines
    b.user("Pin TZ=UTC in the CI workflow.")
    patch = b.custom_call("apply_patch", texts.CI_PATCH)
    b.response(Usage(13_950, 13_184, 280, 128))
    b.output(patch, PATCHED.format(".github/workflows/ci.yml"))
    b.assistant("CI now runs the tests with TZ=UTC.")
    b.response(Usage(14_122, 13_824, 64, 0))
    b.task_complete()
    child = b.fork(cut)
    child.user("Instead, make the test independent of the local timezone.")
    fix = child.custom_call("apply_patch", texts.DATES_PATCH)
    child.response(Usage(13_620, 13_184, 512, 320))
    child.output(fix, PATCHED.format("tests/dates.rs"))
    child.assistant("The test now uses a fixed +01:00 offset, so it passes in any local zone.")
    child.response(Usage(14_018, 13_568, 95, 32))
    child.task_complete()
    return child.finish()


def compaction(root: Path, seed: int) -> Built:
    """A `compacted` line (with replacement_history) after the first turn; totals continue across it."""
    b = start(root, "compaction", seed, end_events=True)
    prompt = "Port the CSV exporter in reports/export.py to the csv module."
    b.user(prompt)
    read = shell(b, "sed -n '1,200p' reports/export.py", world=False)
    b.response(Usage(21_544, 3_584, 690, 512))
    b.output(read, texts.EXPORT_PY)
    b.reasoning("**Switching to csv.DictWriter**", "**Keeping the header order**")
    patch = b.custom_call("apply_patch", texts.EXPORT_PATCH)
    b.response(Usage(23_870, 21_248, 1_204, 768))
    b.output(patch, PATCHED.format("reports/export.py"))
    b.assistant("export_rows() now writes through csv.DictWriter (quoting, newline='' and UTF-8 handled).")
    b.response(Usage(25_102, 23_808, 210, 64))
    b.task_complete()
    b.compact(texts.COMPACT_SUMMARY, usage=Usage(25_390, 25_088, 1_312, 0), replacement=[prompt])
    b.user("Now add a --delimiter option.")
    option = b.custom_call("apply_patch", texts.DELIMITER_PATCH)
    b.response(Usage(4_812, 0, 655, 384))
    b.output(option, "Success. Updated the following files:\nM reports/export.py\nM reports/cli.py\n")
    b.assistant("`--delimiter` is passed through to export_rows(); the default stays a comma.")
    b.response(Usage(5_530, 4_736, 118, 0))
    b.task_complete()
    return b.finish()


def killed_during_exec(root: Path, seed: int) -> Built:
    """kill -9 while `exec_command` runs: the call has no output, the turn no task_complete."""
    b = start(root, "killed-during-exec", seed)
    b.user("Start the dev server and check that /health responds.")
    b.reasoning("**Starting the server**")
    b.call("exec_command", {"cmd": "npm run dev", "workdir": b.cwd, "yield_time_ms": 10_000}, world=True)
    b.response(Usage(7_902, 0, 254, 192))
    b.kill()
    return b.finish()


def killed_during_read(root: Path, seed: int) -> Built:
    """kill -9 during a read-only `read_file` call, after an answered search."""
    b = start(root, "killed-during-read", seed)
    b.user("Where is the retry budget configured?")
    search = shell(b, "rg -n 'retry_budget' --glob '!target'", world=False)
    b.response(Usage(8_210, 5_120, 140, 64))
    b.output(
        search,
        "config/retry.toml:3:retry_budget = 0.2\nsrc/client.rs:88:    let budget = cfg.retry_budget;\n",
    )
    b.call("read_file", {"file_path": f"{b.cwd}/config/retry.toml", "offset": 1, "limit": 200}, world=False)
    b.response(Usage(8_655, 8_064, 96, 32))
    b.kill()
    return b.finish()


def torn_tail(root: Path, seed: int) -> Built:
    """Killed while writing the last response's token_count: that line is cut part-way, no LF."""
    b = start(root, "torn-tail", seed)
    b.user("Bump the version to 2.4.0 and update the changelog.")
    patch = b.custom_call("apply_patch", texts.VERSION_PATCH)
    b.response(Usage(9_340, 6_912, 488, 320))
    b.output(patch, "Success. Updated the following files:\nM pyproject.toml\nM CHANGELOG.md\n")
    b.assistant("Version 2.4.0, with a changelog entry for the delimiter option and the slug fix.")
    b.response(Usage(9_911, 9_216, 102, 0))
    b.torn(b.last_line_size() * 3 // 5)
    return b.finish()


def apply_patch_unanswered(root: Path, seed: int) -> Built:
    """kill -9 while a three-file apply_patch is applied: the custom_tool_call has no output."""
    b = start(root, "apply-patch-unanswered", seed)
    b.user("Rename parse_opts to parse_options everywhere.")
    search = shell(b, "rg -n 'parse_opts'", world=False)
    b.response(Usage(7_120, 4_608, 160, 64))
    b.output(search, texts.RENAME_HITS)
    b.reasoning("**Renaming in one patch**")
    b.custom_call("apply_patch", texts.RENAME_PATCH)
    b.response(Usage(8_002, 6_912, 844, 512))
    b.kill()
    return b.finish()


def mcp_call(root: Path, seed: int) -> Built:
    """An MCP read answered (with its mcp_tool_call_end), then an MCP write left open by a kill."""
    b = start(root, "mcp-call", seed, end_events=True)
    b.user("Look at GitHub issue #212 and file a follow-up in Linear.")
    issue = b.call(
        "mcp__github__get_issue", {"owner": "dev", "repo": "textkit", "issue_number": 212}, world=True
    )
    b.response(Usage(10_450, 2_048, 210, 128))
    b.output(issue, texts.ISSUE_212, seconds=0.8)
    follow_up = {
        "team": "DATA",
        "title": "Quote embedded newlines in CSV export",
        "description": "Follow-up to textkit#212: rows with newlines in `note` split in Excel.",
    }
    b.call("mcp__linear__create_issue", follow_up, world=True)
    b.response(Usage(11_380, 10_368, 301, 192))
    b.kill()
    return b.finish()


def model_request_open(root: Path, seed: int) -> Built:
    """Killed while waiting for the model: the second prompt is written, no response, no task_complete."""
    b = start(root, "model-request-open", seed)
    b.user("hi — what's in this repo?")
    listing = shell(b, "ls -la", world=False)
    b.response(Usage(5_012, 0, 96, 64))
    b.output(listing, texts.REPO_LISTING)
    b.assistant("A Rust workspace: Cargo.toml at the top, crates under crates/, helper scripts in scripts/.")
    b.response(Usage(5_730, 4_992, 188, 64))
    b.task_complete()
    b.user("Explain the build system in detail.")
    b.kill()
    return b.finish()


def sub_agent(root: Path, seed: int) -> Built:
    """spawn_agent: a thread_spawn sub-agent file copying the parent's history, then its own turn."""
    b = start(root, "sub-agent", seed)
    b.user("Review the auth module, and in parallel have an agent audit our dependencies.")
    b.reasoning("**Delegating the dependency audit**")
    task = "Run cargo audit and report crates with advisories, with the fixed versions."
    spawn = b.call("spawn_agent", {"message": task}, world=True)
    b.response(Usage(14_208, 6_144, 402, 256))
    source: JsonObject = {"subagent": {"thread_spawn": {"parent_thread_id": b.session_id, "depth": 1}}}
    agent = b.fork(b.lines, source=source, forked_from=False)
    agent.user(task)
    audit = shell(agent, "cargo audit", world=True)
    agent.response(Usage(15_020, 14_080, 233, 128))
    agent.output(audit, texts.CARGO_AUDIT, exit_code=1, seconds=3.4)
    agent.assistant("One advisory: idna 0.5.0 (RUSTSEC-2024-0421); upgrade to idna >= 1.0.0 via url 2.5.4.")
    agent.response(Usage(15_711, 15_232, 310, 192))
    agent.task_complete()
    b.output(spawn, f'{{"agent_id":"{agent.session_id}"}}')
    wait = b.call("wait", {"ids": [agent.session_id], "timeout_ms": 300_000}, world=False)
    b.response(Usage(14_890, 14_336, 88, 32))
    b.output(wait, "idna 0.5.0 has RUSTSEC-2024-0421; upgrade to >= 1.0.0.")
    b.assistant(
        "Auth looks sound; the audit found one advisory (idna 0.5.0) — bump url to 2.5.4 to pull idna 1.x."
    )
    b.response(Usage(15_402, 14_848, 276, 64))
    b.task_complete()
    return b.finish()


def archived(root: Path, seed: int) -> Built:
    """A finished session moved to archived_sessions/ (flat, no date folders)."""
    b = start(root, "archived", seed, archived=True)
    b.user("Draft a README section on configuration.")
    listing = shell(b, "ls docs", world=False)
    b.response(Usage(4_630, 0, 120, 64))
    b.output(listing, "configuration.md\ninstall.md\n")
    b.assistant("## Configuration\n\nSettings live in `textkit.toml`; `TEXTKIT_<KEY>` overrides any key.")
    b.response(Usage(5_104, 4_608, 702, 448))
    b.task_complete()
    return b.finish()


def multi_day_local_time(root: Path, seed: int) -> Built:
    """Written at UTC+09:00: folder and name say 2026-02-12 08:48 local while the lines say 2026-02-11
    23:48Z, and the second turn crosses UTC midnight."""
    b = start(
        root,
        "multi-day-local-time",
        seed,
        offset=timedelta(hours=9),
        start=datetime(2026, 2, 11, 23, 48, 5, 120000, tzinfo=UTC),
    )
    b.user("The nightly job failed — look at logs/nightly-2026-02-11.log.")
    tail = shell(b, "tail -n 80 logs/nightly-2026-02-11.log", world=False)
    b.response(Usage(11_006, 0, 377, 256))
    b.output(tail, texts.NIGHTLY_LOG)
    b.assistant("The inventory upstream answered 503 three times, so 13 of 14 reports were exported.")
    b.response(Usage(12_420, 10_944, 298, 128))
    b.task_complete()
    b.resume(timedelta(minutes=25))
    b.user("Re-run it with --dry-run.")
    rerun = shell(b, "./scripts/nightly.sh --dry-run", world=True)
    b.response(Usage(12_901, 12_416, 140, 64))
    b.output(rerun, "dry run: 14 reports would be exported\n", seconds=2.3)
    b.assistant("The dry run plans all 14 reports; the inventory upstream is back.")
    b.response(Usage(13_377, 12_928, 166, 0))
    b.task_complete()
    return b.finish()


def local_shell(root: Path, seed: int) -> Built:
    """codex-mini's built-in `local_shell_call`, answered by a function_call_output."""
    b = start(root, "local-shell", seed, model="codex-mini-latest")
    b.user("List the database migrations.")
    listing = b.local_shell(["bash", "-lc", "ls migrations"], world=False)
    b.response(Usage(3_904, 0, 130, 64))
    b.output(listing, "0001_init.sql\n0002_users.sql\n0003_add_email_index.sql\n")
    b.assistant("Three migrations: init, users, and the email index.")
    b.response(Usage(4_210, 3_840, 96, 0))
    b.task_complete()
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
        Scenario("doubled-token-counts", doubled_token_counts),
        Scenario("first-info-null", first_info_null),
        Scenario("fork-with-history", fork_with_history),
        Scenario("compaction", compaction),
        Scenario("killed-during-exec", killed_during_exec),
        Scenario("killed-during-read", killed_during_read),
        Scenario("torn-tail", torn_tail),
        Scenario("apply-patch-unanswered", apply_patch_unanswered),
        Scenario("mcp-call", mcp_call),
        Scenario("model-request-open", model_request_open),
        Scenario("sub-agent", sub_agent),
        Scenario("archived", archived),
        Scenario("multi-day-local-time", multi_day_local_time),
        Scenario("local-shell", local_shell),
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
    return {"format": "codex", "scenarios": entries}
