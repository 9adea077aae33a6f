"""Direct checks of the spec's per-file invariants on built sessions, independent of sessaudit's verifier."""

from __future__ import annotations

from typing import Any

from sessaudit.formats.tiny_agent.build.session import SYNTHETIC_TEXTS
from sessaudit.formats.tiny_agent.read.digests import is_uuid7, sha256_digest, uuid7_millis
from sessaudit.strictjson import decode_line

REFERENCE_KEYS = frozenset(
    {
        "operationId",
        "stepId",
        "attemptId",
        "inputEntryId",
        "inputThroughEntryId",
        "resultEntryId",
        "assistantEntryId",
        "toolStartedId",
        "finalEntryId",
        "contextThroughEntryId",
        "compactedThroughEntryId",
        "sourceEntryId",
    }
)


def committed_lines(data: bytes) -> list[bytes]:
    """The lines up to the last LF (a torn tail is not committed), without their LF."""
    end = data.rfind(b"\n")
    return data[:end].split(b"\n") if end >= 0 else []


def local_ids(value: Any) -> list[str]:
    """Every local id a fact names (spec §6): reference fields and the compaction partitions."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in REFERENCE_KEYS and isinstance(item, str):
                found.append(item)
            elif key in ("compactedEntryIds", "retainedEntryIds"):
                found.extend(item)
            else:
                found.extend(local_ids(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(local_ids(item))
    return found


def check_session(data: bytes, *, through_line: int | None = None) -> int:
    """Assert the invariants a real tiny-agent writer keeps; return the number of facts checked.

    Checked: strict JSON lines; header id time = createdAt; seq continuity; fresh, lowercase UUIDv7
    fact ids; ids never later than their fact's timestamp; one timestamp per transaction; model usage
    committed with its entry; configuration and source digests recomputed; the partition of every
    compaction; the fixed synthetic texts. `through_line` stops before a deliberately damaged line."""
    lines = committed_lines(data)[: through_line - 1 if through_line else None]
    header = decode_line(lines[0], strip_bom=True)
    assert is_uuid7(header["id"]) and uuid7_millis(header["id"]) == header["createdAt"]
    seq, fact_ids = 0, set()
    messages: list[tuple[str, Any]] = []
    for raw in lines[1:]:
        value = decode_line(raw)
        facts = value if isinstance(value, list) else [value]
        assert len({fact["timestamp"] for fact in facts}) == 1, "one timestamp per transaction"
        kinds = [fact["kind"] for fact in facts]
        assert "usage" not in kinds or "entry" in kinds, "usage is committed with its entry"
        for fact in facts:
            seq += 1
            assert fact["seq"] == seq
            assert is_uuid7(fact["id"]) and fact["id"] not in fact_ids
            fact_ids.add(fact["id"])
            for named in [fact["id"], *local_ids(fact)]:
                assert is_uuid7(named), named
                assert uuid7_millis(named) <= fact["timestamp"], f"id {named} is later than its fact"
            _check_payload(fact, messages)
    return seq


def _check_payload(fact: dict[str, Any], messages: list[tuple[str, Any]]) -> None:
    record = fact.get("record", {})
    entry = fact.get("entry", {})
    if record.get("type") == "stepAttempt":
        assert record["configurationDigest"] == sha256_digest(record["configurationSnapshot"])
    if record.get("type") == "compactionStarted":
        through = [entry_id for entry_id, _ in messages].index(record["inputThroughEntryId"]) + 1
        covered = messages[:through]
        assert record["compactedEntryIds"] + record["retainedEntryIds"] == [
            entry_id for entry_id, _ in covered
        ]
        pairs = [{"sourceEntryId": entry_id, "message": message} for entry_id, message in covered]
        assert record["sourceDigest"] == sha256_digest(pairs)
    if entry.get("type") == "message":
        messages.append((fact["id"], entry["message"]))
        result = entry.get("result", {})
        if result.get("type") == "synthetic":
            assert entry["message"]["content"] == SYNTHETIC_TEXTS[result["reason"]]
    if entry.get("type") == "compaction":
        by_id = dict(messages)
        for retained in entry["retainedTail"]:
            assert retained["message"] == by_id[retained["sourceEntryId"]]
