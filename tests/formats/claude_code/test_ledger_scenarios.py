"""The exact ledger against every builder scenario's manifest: one row per true API response, its usage
from the line with the greatest totals, made by the session/agent the manifest names, at the line the
manifest names last; placeholders flagged with the output the log holds; nothing from `<synthetic>`
lines; resume copies recognised in the session they were copied into and never counted there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.claude_code.build.scenarios import SCENARIOS, build_one
from sessaudit.formats.claude_code.usage.ledger import Ledger, Response, TranscriptFile, build_ledger
from sessaudit.formats.claude_code.warehouse.lines import split_lines

Entry = dict[str, Any]


def transcript(root: Path, item: Entry) -> TranscriptFile:
    lines = split_lines((root / item["path"]).read_bytes())
    records = [(line.number, line.record) for line in lines if line.record is not None]
    return TranscriptFile(item["path"], records, item["agent_id"])


def session_ledgers(root: Path, entry: Entry) -> dict[str, Ledger]:
    """One ledger per session of the scenario: its own files, the scenario's other files as `others`."""
    files = {item["path"]: transcript(root, item) for item in entry["files"]}
    sessions = dict.fromkeys(item["session_id"] for item in entry["files"])
    out: dict[str, Ledger] = {}
    for session in sessions:
        own = [files[item["path"]] for item in entry["files"] if item["session_id"] == session]
        others = [files[item["path"]] for item in entry["files"] if item["session_id"] != session]
        out[session] = build_ledger(own, others)
    return out


def row(response: Response) -> tuple[Any, ...]:
    tokens = response.tokens
    return (
        response.message_id,
        response.request_id,
        response.session_id,
        response.agent_id,
        response.model,
        response.file,
        response.line,
        tokens.input_tokens,
        tokens.output_tokens,
        tokens.cache_creation_input_tokens,
        tokens.write_5m,
        tokens.write_1h,
        tokens.cache_read_input_tokens,
        response.placeholder,
    )


def truth(response: Entry) -> tuple[Any, ...]:
    """The manifest's response as the ledger must give it: the true usage, except that a placeholder's
    output is what its final line logged (the log never holds the true count)."""
    usage = response["usage"]
    output = response["logged_output_tokens"] if response["placeholder"] else usage["output_tokens"]
    return (
        response["message_id"],
        response["request_id"],
        response["session_id"],
        response["agent_id"],
        response["model"],
        response["file"],
        response["lines"][-1],
        usage["input_tokens"],
        output,
        usage["cache_creation_input_tokens"],
        usage["cache_creation"]["ephemeral_5m_input_tokens"],
        usage["cache_creation"]["ephemeral_1h_input_tokens"],
        usage["cache_read_input_tokens"],
        response["placeholder"],
    )


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_ledger_is_the_manifest(tmp_path: Path, name: str) -> None:
    entry = build_one(tmp_path, name)
    ledgers = session_ledgers(tmp_path, entry)
    made = [response for ledger in ledgers.values() for response in ledger.responses]
    assert sorted(map(row, made)) == sorted(truth(item) for item in entry["responses"])
    # every response of a session is in that session's ledger, and nowhere else counted
    for session, ledger in ledgers.items():
        assert {r.message_id for r in ledger.responses} == {
            item["message_id"] for item in entry["responses"] if item["session_id"] == session
        }
        assert ledger.skipped == ()
    assert sorted(loc for ledger in ledgers.values() for loc in ledger.synthetic) == sorted(
        (item["file"], item["line"]) for item in entry["synthetic"]
    )
    # the lines of each response where it was made are the manifest's (those that reached the disk)
    lines = {r.message_id: [line for _, line in r.lines] for r in made}
    for item in entry["responses"]:
        assert lines[item["message_id"]] == item["lines"][: len(lines[item["message_id"]])]
    assert not any(r.shared_id for r in made)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_resume_copies_are_recognised_not_counted(tmp_path: Path, name: str) -> None:
    entry = build_one(tmp_path, name)
    ledgers = session_ledgers(tmp_path, entry)
    copied = {(copy["file"], copy["line"]) for copy in entry["resume_copies"]}
    seen = {loc for ledger in ledgers.values() for r in ledger.elsewhere for loc in r.copies}
    paths = {item["path"]: item for item in entry["files"]}
    # every copied assistant line is named as a copy of a response made elsewhere
    for path, line in copied:
        record = next(rec for number, rec in transcript(tmp_path, paths[path]).records if number == line)
        if record.get("type") == "assistant":
            assert (path, line) in seen
