"""The Claude Code warehouse extractor, called directly (no plugin yet): a builder scenario, a Source made
by hand from its files (real sha256 and sizes) and manifest, and the rows against the manifest."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_one
from sessaudit.formats.claude_code.warehouse.source import extract_source
from sessaudit.model import FileEvidence, Finding, Location, Session, Source
from sessaudit.verdicts import Severity, Verdict
from sessaudit.warehouse.drafts import FAILED, SUCCEEDED, UNKNOWN, Extraction
from sessaudit.warehouse.extract import EvidenceChanged
from sessaudit.warehouse.rows import micros_from_text
from tests.formats.claude_code.written import read_transcript

Entry = dict[str, Any]
STATUS = {"ok": SUCCEEDED, "error": FAILED, "interrupted": UNKNOWN, "unknown": UNKNOWN}


def evidence(root: Path, path: str) -> FileEvidence:
    data = (root / path).read_bytes()
    return FileEvidence(path=path, bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), unchanged=True)


def sources(root: Path, entry: Entry) -> list[Source]:
    """One source per session: its file, then its sub-agent files (and their sidecars)."""
    out: list[Source] = []
    for main in (item for item in entry["files"] if item["kind"] == "session"):
        paths = [main["path"]]
        for item in entry["files"]:
            if item["kind"] == "subagent" and item["session_id"] == main["session_id"]:
                paths.append(item["path"])
                if item["sidecar"] is not None:
                    paths.append(item["sidecar"])
        files = [evidence(root, path) for path in paths]
        session = Session(session_id=main["session_id"], verdict=Verdict.CLEAN, facts=0, last_seq=None)
        out.append(
            Source(
                path=main["path"],
                format="claude-code",
                format_version=None,
                files=files,
                sha256=files[0].sha256,
                evidence_unchanged=True,
                verdict=Verdict.CLEAN,
                sessions=[session],
            )
        )
    return out


def extract(root: Path, source: Source, findings: list[Finding] | None = None) -> Extraction:
    into = Extraction()
    extract_source(source, str(root / source.path), findings or [], "src", into, 1 << 20)
    return into


def resumed_from(root: Path, entry: Entry, source: Source) -> dict[str, Any]:
    """A source's `native` naming the scenario's other session files (what the verifier would add)."""
    earlier = [
        {"real_path": str(root / item["path"]), **evidence(root, item["path"]).model_dump()}
        for item in entry["files"]
        if item["kind"] == "session" and item["path"] != source.path
    ]
    return {"resumed_from": earlier}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_rows_are_the_manifest(tmp_path: Path, name: str) -> None:
    entry = build_one(tmp_path, name)
    usage: list[Any] = []
    calls: dict[str, tuple[str, str | None]] = {}
    for source in sources(tmp_path, entry):
        source = source.model_copy(update={"native": resumed_from(tmp_path, entry, source)})
        into = extract(tmp_path, source)
        assert into.complete
        # a fact per complete line of every transcript of the source, in order, seq unique
        expected = [
            (record.get("type"), record.get("uuid"), micros_from_text(record.get("timestamp")))
            for item in source.files
            if item.path.endswith(".jsonl")
            for record in read_transcript(tmp_path, item.path).records
        ]
        assert [(f.kind, f.id, f.timestamp) for f in into.facts] == expected
        assert [f.seq for f in into.facts] == list(range(1, len(expected) + 1))
        assert {f.session_id for f in into.facts} == {source.sessions[0].session_id}
        assert all(isinstance(f.payload, bytes) for f in into.facts)
        usage.extend(into.usage)
        for row in into.tool_calls:
            calls[row.tool_call_id or ""] = (row.status, row.result_type)
        for draft in into.calls:
            calls[draft.tool_call_id or ""] = (draft.status, draft.result_type)
    truth = sorted(
        (
            r["message_id"],
            r["session_id"],
            r["model"],
            r["lines"][-1],
            r["usage"]["input_tokens"],
            r["logged_output_tokens"] if r["placeholder"] else r["usage"]["output_tokens"],
            r["usage"]["cache_read_input_tokens"],
            r["usage"]["cache_creation_input_tokens"],
            "subagent" if r["agent_id"] else "model",
        )
        for r in entry["responses"]
    )
    got = sorted(
        (u.record_id, u.session_id, u.model, u.line, u.input, u.output, u.cache_read, u.cache_write, u.scope)
        for u in usage
    )
    assert got == truth
    assert all(u.input_total == u.input + u.cache_read + u.cache_write for u in usage)
    assert calls == {
        call["id"]: (STATUS[call["outcome"]], None if call["outcome"] == "unknown" else call["outcome"])
        for call in entry["tool_calls"]
    }


def test_open_calls_are_drafts_and_answered_ones_rows(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "dangling_bash")
    (source,) = sources(tmp_path, entry)
    into = extract(tmp_path, source)
    (draft,) = into.calls
    assert [draft.tool_call_id] == entry["open_calls"]
    assert (draft.tool_name, draft.status, draft.replay_policy, draft.result_seq) == (
        "Bash",
        UNKNOWN,
        "never",
        None,
    )
    assert draft.arguments == '{"command":"rm -rf build && make","description":"Clean rebuild"}'
    (row,) = into.tool_calls
    assert (row.tool_name, row.status, row.result_type, row.replay_policy) == (
        "Read",
        SUCCEEDED,
        "ok",
        "safe",
    )
    assert row.call_seq is not None and row.result_seq is not None and row.call_seq < row.result_seq


def test_bedrock_rows(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "bedrock")
    (source,) = sources(tmp_path, entry)
    into = extract(tmp_path, source)
    assert [(u.provider, u.input, u.output, u.cache_write, u.cache_read) for u in into.usage] == [
        ("bedrock", 4, 143, 6311, 0),
        ("bedrock", 1, 95, 702, 6311),
        ("bedrock", 1, 311, 1488, 7013),
    ]
    assert into.sessions[source.sessions[0].session_id].provider == "bedrock"


def test_resume_copies_are_facts_not_usage_of_the_resumed_session(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "resumed")
    first, second = sources(tmp_path, entry)
    second = second.model_copy(update={"native": resumed_from(tmp_path, entry, second)})
    into = extract(tmp_path, second)
    assert len(into.facts) == 8
    assert [(u.input, u.output, u.cache_write, u.cache_read) for u in into.usage] == [
        (1, 90, 300, 12000),
        (1, 30, 120, 12300),
    ]
    assert [(u.input, u.output) for u in extract(tmp_path, first).usage] == [(3, 48)]


def test_subagent_rows_have_their_own_seq_and_the_session(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "subagent_folder")
    (source,) = sources(tmp_path, entry)
    assert source.files[2].path.endswith(".meta.json")
    into = extract(tmp_path, source)
    lines = [(f.line, f.seq) for f in into.facts]
    assert len(set(lines)) == len(lines) and len({seq for _, seq in lines}) == len(lines)
    assert [u.scope for u in into.usage] == ["model", "subagent", "subagent", "subagent", "model"]
    assert {u.session_id for u in into.usage} == {source.sessions[0].session_id}
    assert sum(u.output for u in into.usage) == 936


def test_a_torn_tail_is_not_a_fact(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "torn_tail")
    (source,) = sources(tmp_path, entry)
    into = extract(tmp_path, source)
    (torn,) = entry["torn_tail"]
    assert len(into.facts) == torn["line"] - 1 and into.complete


def test_the_cut_leaves_the_corrupt_line_and_after_out(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "clean")
    (source,) = sources(tmp_path, entry)
    corrupt = Finding(
        rule="SA102",
        name="invalid-utf8",
        severity=Severity.ERROR,
        message="test",
        location=Location(path=source.path, line=6),
    )
    into = extract(tmp_path, source, [corrupt])
    assert [f.line for f in into.facts] == [1, 2, 3, 4, 5] and not into.complete
    # lines 3-5 are the first response's three lines (its final usage on line 5)
    assert [(u.line, u.output) for u in into.usage] == [(5, 212)]


def test_changed_evidence_is_refused(tmp_path: Path) -> None:
    entry = build_one(tmp_path, "clean")
    (source,) = sources(tmp_path, entry)
    with (tmp_path / source.path).open("ab") as stream:
        stream.write(b"{}\n")
    data = (tmp_path / source.path).read_bytes()
    with (tmp_path / source.path).open("wb") as stream:
        stream.write(data[:-3].replace(b"add()", b"sub()", 1))
    with pytest.raises(EvidenceChanged):
        extract(tmp_path, source)
