"""The Codex warehouse extractor on the builder's scenarios, each verified by the real verifier first (its
sources and findings are what `sessaudit load` hands the extractor): the ledger rows are the session's own
responses, literal here, and agree with the report's usage; tool calls with their statuses; the cut at a
corrupting line; a parent that changed since it was verified."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sessaudit.engine import audit
from sessaudit.formats.codex.build.scenarios import SCENARIOS, build_all
from sessaudit.formats.codex.warehouse.source import extract_source
from sessaudit.model import Finding, Location, Source
from sessaudit.verdicts import Severity
from sessaudit.warehouse.drafts import ANSWERED, FAILED, SUCCEEDED, UNKNOWN, Extraction
from sessaudit.warehouse.extract import EvidenceChanged
from tests.warehouse.conftest import inside

Manifest = dict[str, Any]
GPT5 = "gpt-5-codex"

# (line of the token_count, input not cached, cache_read, output, reasoning): the scenario's Usage(input,
# cached, output, reasoning) figures with the cached part taken out of the input, by hand
LEDGERS: dict[str, list[list[tuple[int, int, int, int, int]]]] = {
    "clean": [
        [
            (10, 9_812 - 7_040, 7_040, 298, 192),
            (15, 10_655 - 9_728, 9_728, 611, 384),
            (19, 10_901 - 10_496, 10_496, 143, 64),
            (26, 11_204 - 10_880, 10_880, 87, 0),
            (30, 11_530 - 11_136, 11_136, 96, 0),
        ]
    ],
    # every token_count written twice: the first of each pair counts, the repeat nothing
    "doubled-token-counts": [
        [
            (7, 3_348, 3_072, 180, 128),
            (12, 641, 6_272, 201, 64),
            (18, 604, 6_784, 402, 256),
            (23, 216, 7_296, 77, 0),
        ]
    ],
    # the parent's four responses; the fork only its own two (its copies of the parent's first two, lines
    # 11 and 15, are the parent's)
    "fork-with-history": [
        [
            (10, 8_384, 4_096, 366, 256),
            (14, 1_013, 12_288, 420, 192),
            (21, 766, 13_184, 280, 128),
            (25, 298, 13_824, 64, 0),
        ],
        [(22, 436, 13_184, 512, 320), (26, 450, 13_568, 95, 32)],
    ],
    # the compaction's own model call (line 22) is a response like the others; totals go on across it
    "compaction": [
        [
            (8, 17_960, 3_584, 690, 512),
            (15, 2_622, 21_248, 1_204, 768),
            (20, 1_294, 23_808, 210, 64),
            (22, 302, 25_088, 1_312, 0),
            (30, 4_812, 0, 655, 384),
            (35, 794, 4_736, 118, 0),
        ]
    ],
    # the parent's three; the sub-agent's own two (its copy of the parent's first, line 11, is not)
    "sub-agent": [
        [(10, 8_064, 6_144, 402, 256), (13, 554, 14_336, 88, 32), (17, 554, 14_848, 276, 64)],
        [(17, 940, 14_080, 233, 128), (21, 479, 15_232, 310, 192)],
    ],
    # the second response's token_count is the torn tail: never a line, never usage
    "torn-tail": [[(8, 2_428, 6_912, 488, 320)]],
    "first-info-null": [[(11, 8_034, 0, 512, 384), (15, 1_940, 7_936, 233, 128), (24, 384, 9_856, 145, 64)]],
    "local-shell": [[(8, 3_904, 0, 130, 64), (12, 370, 3_840, 96, 0)]],
}

# (tool, status, result_type) of each file's own calls, in call order; open calls last (drafts)
CALLS: dict[str, list[list[tuple[str, str, str | None]]]] = {
    "clean": [[("shell", SUCCEEDED, "ok"), ("apply_patch", SUCCEEDED, "ok"), ("shell", SUCCEEDED, "ok")]],
    "doubled-token-counts": [[("shell", SUCCEEDED, "ok"), ("apply_patch", SUCCEEDED, "ok")]],
    # cargo test exited 101; the fork's copy of that call is the parent's
    "fork-with-history": [
        [("shell", FAILED, "error"), ("apply_patch", SUCCEEDED, "ok")],
        [("apply_patch", SUCCEEDED, "ok")],
    ],
    "compaction": [
        [("shell", SUCCEEDED, "ok"), ("apply_patch", SUCCEEDED, "ok"), ("apply_patch", SUCCEEDED, "ok")]
    ],
    # spawn_agent's and wait's outputs say nothing of success; cargo audit exited 1; the sub-agent's copy of
    # the parent's spawn_agent (still in flight there) is not its call
    "sub-agent": [
        [("spawn_agent", ANSWERED, "output"), ("wait", ANSWERED, "output")],
        [("shell", FAILED, "error")],
    ],
    "mcp-call": [[("mcp__github__get_issue", SUCCEEDED, "ok"), ("mcp__linear__create_issue", UNKNOWN, None)]],
    "killed-during-exec": [[("exec_command", UNKNOWN, None)]],
    "killed-during-read": [[("shell", SUCCEEDED, "ok"), ("read_file", UNKNOWN, None)]],
    "apply-patch-unanswered": [[("shell", SUCCEEDED, "ok"), ("apply_patch", UNKNOWN, None)]],
    "local-shell": [[("local_shell", SUCCEEDED, "ok")]],
}


@dataclass(frozen=True)
class Verified:
    root: Path
    manifest: Manifest
    sources: dict[str, Source]  # by the manifest's file path
    findings: dict[str, list[Finding]]


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> Verified:
    root = tmp_path_factory.mktemp("codex-home")
    manifest = build_all(root)["scenarios"]
    with inside(root):
        report = audit(["."]).report
    sources = {os.path.normpath(source.path): source for source in report.sources}
    findings: dict[str, list[Finding]] = {}
    for item in report.findings:
        findings.setdefault(os.path.normpath(item.location.path or ""), []).append(item)
    return Verified(root, manifest, sources, findings)


def extract(verified: Verified, path: str, findings: list[Finding] | None = None) -> Extraction:
    source = verified.sources[path]
    into = Extraction()
    found = verified.findings.get(path, []) if findings is None else findings
    extract_source(source, str(verified.root / path), found, "src", into, 1 << 20)
    return into


def files_of(verified: Verified, name: str) -> list[str]:
    return [item["path"] for item in verified.manifest[name]["files"]]


@pytest.mark.parametrize("name", sorted(LEDGERS))
def test_ledger_rows_are_the_own_responses(verified: Verified, name: str) -> None:
    paths = files_of(verified, name)
    assert len(paths) == len(LEDGERS[name])
    for path, expected in zip(paths, LEDGERS[name], strict=True):
        into = extract(verified, path)
        got = [(u.line, u.input, u.cache_read, u.output, u.reasoning) for u in into.usage]
        assert got == expected
        source = verified.sources[path]
        (session,) = source.sessions
        assert {u.session_id for u in into.usage} == {session.session_id}
        assert all(u.cache_write == 0 and u.input_total == u.input + u.cache_read for u in into.usage)
        assert all(
            (u.cache_write_5m, u.cache_write_1h, u.placeholder) == (None, None, None) for u in into.usage
        )
        assert {(u.provider, u.scope) for u in into.usage} == {("openai", "model")}
        # the report's usage is the same ledger
        assert session.usage.input == sum(row[1] for row in expected)
        assert session.usage.cache_read == sum(row[2] for row in expected)
        assert session.usage.output == sum(row[3] for row in expected)


def test_models_come_from_turn_context(verified: Verified) -> None:
    (clean,) = files_of(verified, "clean")
    (shell,) = files_of(verified, "local-shell")
    assert {u.model for u in extract(verified, clean).usage} == {GPT5}
    assert {u.model for u in extract(verified, shell).usage} == {"codex-mini-latest"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_matches_its_manifest(verified: Verified, name: str) -> None:
    """Each file: a fact per whole line (seq = line), its own logged responses and calls."""
    entry = verified.manifest[name]
    for item in entry["files"]:
        path = item["path"]
        into = extract(verified, path)
        assert into.complete
        whole = item["lines"] - (1 if item["torn_tail_bytes"] else 0)  # a torn tail is no line
        assert [f.line for f in into.facts] == list(range(1, whole + 1))
        assert all(f.seq == f.line and isinstance(f.payload, bytes) for f in into.facts)
        assert {f.session_id for f in into.facts} == {item["session_id"]}
        own = [
            (r["token_count_lines"][0], r["usage"]["input_tokens"] - r["usage"]["cached_input_tokens"])
            for r in entry["responses"]
            if r["file"] == path and r["logged"] and not r["copied"]
        ]
        assert sorted((u.line, u.input) for u in into.usage) == sorted(own)
        calls = {
            (c["call_id"], c["answered"]) for c in entry["calls"] if c["file"] == path and not c["copied"]
        }
        rows = {(row.tool_call_id, True) for row in into.tool_calls}
        drafts = {(draft.tool_call_id, False) for draft in into.calls}
        assert rows | drafts == calls


@pytest.mark.parametrize("name", sorted(CALLS))
def test_tool_call_statuses(verified: Verified, name: str) -> None:
    for path, expected in zip(files_of(verified, name), CALLS[name], strict=True):
        into = extract(verified, path)
        rows = [(row.tool_name, row.status, row.result_type) for row in into.tool_calls]
        rows += [(draft.tool_name, draft.status, draft.result_type) for draft in into.calls]
        assert rows == expected


def test_call_rows_carry_their_turn_policy_and_arguments(verified: Verified) -> None:
    (path,) = files_of(verified, "killed-during-exec")
    into = extract(verified, path)
    (draft,) = into.calls
    assert (draft.replay_policy, draft.result_seq, draft.call_seq) == ("never", None, 9)
    assert (
        draft.arguments
        == '{"cmd":"npm run dev","workdir":"/home/dev/work/killed-during-exec","yield_time_ms":10000}'
    )
    (run,) = verified.sources[path].sessions[0].runs
    assert draft.run_id == run.run_id
    (path,) = files_of(verified, "killed-during-read")
    into = extract(verified, path)
    (row,) = into.tool_calls
    search = verified.manifest["killed-during-read"]["calls"][0]
    assert (row.tool_name, row.replay_policy) == ("shell", "never")
    assert (row.tool_call_id, row.call_seq, row.result_seq) == (
        search["call_id"],
        search["line"],
        search["output_line"],
    )
    assert [draft.replay_policy for draft in into.calls] == ["safe"]


def test_copied_lines_are_facts_of_no_run(verified: Verified) -> None:
    _, fork = files_of(verified, "fork-with-history")
    into = extract(verified, fork)
    runs = {f.line: f.run_id for f in into.facts}
    assert all(runs[line] is None for line in range(1, 17))  # the own session_meta and the copy (2–16)
    assert all(runs[line] is not None for line in range(17, 28))
    (run,) = verified.sources[fork].sessions[0].runs
    span = into.spans[(verified.sources[fork].sessions[0].session_id, run.run_id)]
    assert (span.first_seq, span.last_seq) == (17, 27)


def test_session_details(verified: Verified) -> None:
    (path,) = files_of(verified, "clean")
    into = extract(verified, path)
    ((session_id, details),) = into.sessions.items()
    assert session_id == verified.manifest["clean"]["files"][0]["session_id"]
    assert (details.provider, details.model, details.cwd) == ("openai", GPT5, "/home/dev/work/clean")
    assert details.header is not None and details.header.startswith('{"timestamp":')
    assert '"type":"session_meta"' in details.header


def test_the_cut_leaves_the_corrupt_line_and_after_out(verified: Verified) -> None:
    (path,) = files_of(verified, "clean")
    corrupt = Finding(
        rule="SA801",
        name="rollout-line-invalid",
        severity=Severity.ERROR,
        message="test",
        location=Location(path=verified.sources[path].path, line=16),
    )
    into = extract(verified, path, [corrupt])
    assert not into.complete
    assert [f.line for f in into.facts] == list(range(1, 16))
    assert [(u.line, u.input) for u in into.usage] == [(10, 2_772), (15, 927)]
    assert [(row.tool_name, row.status) for row in into.tool_calls] == [("shell", SUCCEEDED)]
    assert [(draft.tool_name, draft.status) for draft in into.calls] == [("apply_patch", UNKNOWN)]


def test_a_parent_changed_since_it_was_verified_is_refused(verified: Verified, tmp_path: Path) -> None:
    parent, fork = files_of(verified, "fork-with-history")
    target = verified.root / parent
    original = target.read_bytes()
    try:
        target.write_bytes(original.replace(b"cargo test", b"cargo tests", 1))
        with pytest.raises(EvidenceChanged):
            extract(verified, fork)
    finally:
        target.write_bytes(original)
    assert len(extract(verified, fork).usage) == 2
