"""The fast path's compact state (issue 21, src/sessaudit/formats/tiny_agent/v2/compact.py): past a number of
ids the namespace, the entry and message ids, finished runs, their attempts and intents are kept compactly,
and every handler reads them as it reads the exact state.

The suite's differential check already runs every tiny-agent verification through a compacting fast pass
(after every 4 new ids, into tables of 2 buckets); these tests pin the pieces one by one, and the cases
where the compacted state must be read back exactly: a usage fact for a run finished long before, a
compaction record naming every message before it, two ids with one fingerprint."""

from __future__ import annotations

import io
import json
import random
import sys
import uuid
from typing import Any

import pytest

from sessaudit.formats.tiny_agent.check.state import ASSISTANT, COMPACTION, USER
from sessaudit.formats.tiny_agent.v2 import compact, fast
from sessaudit.formats.tiny_agent.v2.compact import (
    ColdAttempt,
    ColdTable,
    CompactNamespace,
    Compactor,
    Doubt,
    FinishedRun,
    MessageIds,
    PackedIds,
)
from sessaudit.formats.tiny_agent.v2.verification import _Verification
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome
from tests.formats.tiny_agent.scenarios import LEGAL


def exact(data: bytes) -> SourceOutcome:
    return _Verification("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS).run()


def compacting(data: bytes, limit: int = 1, bits: int = 1, filter_bits: int = 6) -> tuple[Any, Compactor]:
    compactor = Compactor(limit=limit, bits=bits, filter_bits=filter_bits, projected=0)
    verification = fast._FastVerification(
        "s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, compactor=compactor
    )
    return fast._prove(verification), compactor


def uuid7_like(rng: random.Random) -> str:
    """A lowercase UUIDv7 (its time from a fixed range)."""
    value = (rng.getrandbits(48) << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62)
    return str(uuid.UUID(int=value | rng.getrandbits(62)))


@pytest.mark.parametrize("name", sorted(LEGAL))
@pytest.mark.parametrize("limit", [1, 7])
def test_every_legal_session_compacted_is_proven_with_the_exact_outcome(name: str, limit: int) -> None:
    data, _ = LEGAL[name]()
    answer, compactor = compacting(data, limit=limit)
    assert answer is not None, f"the compacting fast path doubted the legal session {name}"
    assert answer == exact(data)
    if limit == 1 and data.count(b"\n") > 1:
        assert compactor.compactions > 0


def _lines(data: bytes) -> list[Any]:
    return [json.loads(line) for line in data.decode().splitlines()]


def _facts(value: Any) -> list[dict[str, Any]]:
    return value if isinstance(value, list) else [value]


def _append_usage(data: bytes, reference: str) -> bytes:
    """The session with one more usage fact at its end, a copy of its first usage fact naming `reference`
    (attemptId or toolStartedId), with a fresh id, the next seq and the last timestamp."""
    lines = _lines(data)
    facts = [fact for line in lines[1:] for fact in _facts(line)]
    usage = next(fact for fact in facts if fact["kind"] == "usage" and reference in fact)
    last = facts[-1]
    copy = dict(usage, seq=last["seq"] + 1, timestamp=last["timestamp"], id=usage["id"][:24] + "0123456789ab")
    return data + json.dumps(copy, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize("reference", ["attemptId", "toolStartedId"])
def test_a_usage_fact_for_a_run_compacted_long_before_reads_it_back(reference: str) -> None:
    data, _ = LEGAL["tools-completed"]()
    later = _append_usage(data, reference)
    expected = exact(later)
    assert expected.sessions[0].verdict.value != "corrupt"
    answer, compactor = compacting(later)
    assert compactor.compactions > 1
    assert answer == expected
    rules = {item.rule for item in answer.findings}
    # a second usage fact for one attempt is SA418 (the compacted attempt kept its count)
    assert ("SA418" in rules) == (reference == "attemptId")


def test_a_usage_fact_naming_another_runs_attempt_is_rejected_from_the_compacted_state() -> None:
    """plain-exchange has two runs: a usage fact for the first run's attempt, named as the second run's."""
    data, _ = LEGAL["plain-exchange"]()
    facts = [fact for line in _lines(data)[1:] for fact in _facts(line)]
    runs = [
        fact["record"]["operationId"] for fact in facts if fact.get("record", {}).get("type") == "runStarted"
    ]
    usage = next(fact for fact in facts if fact["kind"] == "usage" and fact["operationId"] == runs[0])
    last = facts[-1]
    wrong = dict(
        usage,
        operationId=runs[1],
        seq=last["seq"] + 1,
        timestamp=last["timestamp"],
        id=usage["id"][:24] + "0123456789ab",
    )
    damaged = data + json.dumps(wrong, separators=(",", ":")).encode() + b"\n"
    assert {item.rule for item in exact(damaged).findings} & {"SA207", "SA208", "SA209"} or exact(
        damaged
    ).findings
    right = data + json.dumps(dict(wrong, operationId=runs[0]), separators=(",", ":")).encode() + b"\n"
    answer, compactor = compacting(right)
    assert compactor.compactions > 1 and answer == exact(right)
    answer, _ = compacting(damaged)
    assert answer is None


def test_compaction_records_naming_every_message_compare_with_the_packed_ids() -> None:
    for name in ("compaction-cycle", "compaction-settled"):
        data, _ = LEGAL[name]()
        answer, compactor = compacting(data)
        assert answer is not None and answer == exact(data)
        assert compactor.compactions > 0


# --- the pieces ------------------------------------------------------------------------------------
def test_a_cold_table_finds_what_it_holds_and_nothing_else() -> None:
    rng = random.Random(1)
    table = ColdTable(2, 8)  # four buckets, a 256-bit filter: most lookups search a bucket
    held = {rng.getrandbits(64) - (1 << 63): index for index in range(2000)}
    for fingerprint, value in held.items():
        table.add(fingerprint, value)
    assert len(table) == len(held)
    for fingerprint, value in held.items():
        assert table.get(fingerprint) == value
        assert fingerprint in table
    for _ in range(2000):
        other = rng.getrandbits(64) - (1 << 63)
        assert (other in table) == (other in held)
        assert table.get(other, "absent") == held.get(other, "absent")
    first = next(iter(held))
    with pytest.raises(Doubt):
        table.add(first, 0)
    table.put_many([(first, -4)])
    assert table.get(first) == -4
    assert len(table) == len(held)


def test_a_record_is_found_only_at_a_record_boundary() -> None:
    """A fingerprint whose bytes appear straddling two records is not there."""
    table = ColdTable(0, 3)
    table.add(0x0102030405060708, 0x1112131415161718)
    straddling = int.from_bytes(
        bytes([0x05, 0x06, 0x07, 0x08, 0x18, 0x17, 0x16, 0x15]), "little", signed=True
    )
    inside = int.from_bytes(bytes.fromhex("18171615141312110000000000000000")[:8], "little", signed=True)
    for fingerprint in (straddling, inside):
        table.bitmap[:] = b"\xff" * len(table.bitmap)  # the filter says "maybe": the bucket is searched
        assert fingerprint not in table
        assert table.get(fingerprint) is None


def test_the_compact_namespace_answers_as_a_dict() -> None:
    rng = random.Random(2)
    reference: dict[str, int] = {}
    namespace = CompactNamespace(ColdTable(1, 6))
    ids = [uuid7_like(rng) for _ in range(600)]
    for step in range(3000):
        key = rng.choice(ids)
        action = rng.random()
        if action < 0.4:
            value = rng.choice([-1, -2, -3, -4, rng.randrange(10_000)])
            reference[key] = value
            namespace[key] = value
        elif action < 0.45:
            namespace.flush(namespace.items())
        else:
            assert (key in namespace) == (key in reference), step
            assert namespace.get(key, -9) == reference.get(key, -9)
            if key in reference:
                assert namespace[key] == reference[key]
            else:
                with pytest.raises(KeyError):
                    namespace[key]


class _SameHash(str):
    """Two distinct ids with one fingerprint (as a SipHash collision would be)."""

    def __hash__(self) -> int:
        return 42


def test_two_ids_with_one_fingerprint_are_a_doubt() -> None:
    namespace = CompactNamespace(ColdTable(1, 6))
    namespace.update({_SameHash("a" * 36): 1, _SameHash("b" * 36): 2})
    with pytest.raises(Doubt):
        namespace.flush(namespace.items())


def test_packed_ids_read_back_as_the_text_they_were() -> None:
    rng = random.Random(3)
    ids = [uuid7_like(rng) for _ in range(50)]
    packed = PackedIds(ids[:30])
    for value in ids[30:]:
        packed.append(value)
    assert len(packed) == 50 and bool(packed) and not PackedIds([])
    assert list(packed) == ids
    assert [packed[index] for index in range(-50, 50)] == ids + ids
    assert packed[5:40] == ids[5:40] and ids[5:40] == packed[5:40]
    assert packed[:31] != ids[:30] and packed[:3] != [*ids[:2], ids[4]]
    with pytest.raises(IndexError):
        packed[50]
    with pytest.raises(IndexError):
        packed[-51]
    packed.pack()
    assert list(packed) == ids and packed.tail == []
    with pytest.raises(Doubt):
        PackedIds(["not-a-uuid"])


def test_message_ids_are_the_entries_but_compactions() -> None:
    rng = random.Random(4)
    entries = [uuid7_like(rng) for _ in range(12)]
    kinds = bytearray([USER, ASSISTANT, COMPACTION, USER, ASSISTANT, COMPACTION, COMPACTION, USER])
    messages_list = [entry for entry, kind in zip(entries, kinds, strict=False) if kind != COMPACTION]
    packed = PackedIds([])
    packed.tail = entries[:8]
    messages = MessageIds(list(messages_list), packed, kinds)
    packed.pack()
    assert list(messages) == messages_list
    assert messages[-1] == entries[7] and len(messages) == 5
    for index, entry in enumerate(entries[8:], 8):  # more entries and messages since the compaction
        packed.append(entry)
        kinds.append(USER if index != 10 else COMPACTION)
        if index != 10:
            messages.append(entry)
            messages_list.append(entry)
    assert list(messages) == messages_list and messages[:4] == messages_list[:4]
    messages.pack()
    packed.pack()
    assert list(messages) == messages_list
    wrong = PackedIds([])
    wrong.tail = list(entries[:2])
    with pytest.raises(Doubt):
        MessageIds([entries[1], entries[0]], wrong, bytearray([USER, ASSISTANT]))
    with pytest.raises(Doubt):
        MessageIds([entries[0]], wrong, bytearray([USER, ASSISTANT]))


def test_a_compacted_object_doubts_any_detail_it_no_longer_keeps() -> None:
    run = FinishedRun("op", "run", "completed")
    assert (run.finished, run.pending, run.intents, run.outcome) == (True, 0, (), "completed")
    with pytest.raises(Doubt):
        _ = run.answers
    with pytest.raises(AttributeError):
        _ = run.__wrapped__
    table = ColdTable(1, 6)
    table.add(7, (0 << 16) | 3)
    bucket, at = table.position(7)
    attempt = ColdAttempt("attempt", bucket, at, [run])
    assert (attempt.operation, attempt.usage_facts, attempt.failed, attempt.superseded) == (
        "op",
        3,
        False,
        False,
    )
    attempt.usage_facts += 1
    assert ColdAttempt("attempt", bucket, at, [run]).usage_facts == 4
    with pytest.raises(Doubt):
        _ = attempt.step


def test_compaction_needs_random_string_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    data, _ = LEGAL["tools-completed"]()
    stream = io.BytesIO(data)
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert compact.compaction_allowed() is bool(sys.flags.hash_randomization)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    assert compact.compaction_allowed() is False
    verification = fast._FastVerification("s.jsonl", "s.jsonl", stream, len(data), DEFAULT_OPTIONS)
    assert verification.compactor.limit == sys.maxsize
    monkeypatch.delenv("PYTHONHASHSEED")
    verification = fast._FastVerification("s.jsonl", "s.jsonl", stream, len(data), DEFAULT_OPTIONS)
    assert verification.compactor.limit == (
        compact.HOT_LIMIT if sys.flags.hash_randomization else sys.maxsize
    )


def test_a_compaction_keeps_the_namespace_hot_part_below_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    data, _ = LEGAL["compaction-cycle"]()
    compactor = Compactor(limit=5, bits=1, filter_bits=6, projected=0)
    verification = fast._FastVerification(
        "s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, compactor=compactor
    )
    seen: dict[str, Any] = {}
    release = compact.release

    def recorded(reducer: Any) -> None:
        seen["namespace"], seen["runs"] = reducer.namespace, list(reducer.runs)
        release(reducer)

    monkeypatch.setattr(compact, "release", recorded)
    assert fast._prove(verification) is not None
    assert isinstance(seen["namespace"], CompactNamespace)
    assert dict.__len__(seen["namespace"]) < 5 + 8  # at most one line's ids past the limit
    # the runs finished before the last compaction are compacted
    assert isinstance(seen["runs"][0], FinishedRun) and len(seen["runs"]) > 2
    # nothing was open at the end: the tables were released before the outcome was built
    assert verification.fast.namespace is compact.RELEASED


def test_a_session_left_open_keeps_its_tables_for_the_recovery() -> None:
    data, _ = LEGAL["pending-safe-tool"]()
    compactor = Compactor(limit=1, bits=1, filter_bits=6, projected=0)
    verification = fast._FastVerification(
        "s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, compactor=compactor
    )
    answer = fast._prove(verification)
    assert answer is not None and answer == exact(data)
    assert any(run.recovery is not None for run in answer.sessions[0].runs)
    assert isinstance(verification.fast.namespace, CompactNamespace)


def test_any_use_of_a_released_table_is_a_doubt() -> None:
    released: Any = compact.RELEASED
    for use in (
        lambda: "id" in released,
        lambda: released["id"],
        lambda: released.get("id"),
        lambda: len(released),
        lambda: bool(released),
        lambda: list(released),
        lambda: released.append("id"),
    ):
        with pytest.raises(Doubt):
            use()


def test_a_retired_attempt_keeps_its_flags_and_count() -> None:
    from sessaudit.formats.tiny_agent.check.state import Attempt
    from sessaudit.formats.tiny_agent.v2.compact import CompactAttempts

    runs: list[Any] = [FinishedRun("op-0", "run", "completed"), FinishedRun("op-1", "run", "failed")]
    attempts = CompactAttempts(ColdTable(1, 6), runs)
    for index, (superseded, failed, usage) in enumerate([(True, False, 0), (False, True, 2)]):
        attempt = Attempt(f"a{index}", f"op-{index}", "step", 1, "assistant", "ctx", "sha256:x", frozenset())
        attempt.superseded, attempt.failed, attempt.usage_facts = superseded, failed, usage
        attempts[attempt.attempt_id] = attempt
        attempts.retire(attempt.attempt_id, attempt, index)
    assert dict.__len__(attempts) == 0
    first, second = attempts.get("a0"), attempts.get("a1")
    assert (first.operation, first.superseded, first.failed, first.usage_facts) == ("op-0", True, False, 0)
    assert (second.operation, second.superseded) == ("op-1", False)
    assert (second.failed, second.usage_facts) == (True, 2)
    assert attempts.get("a2") is None and attempts.get("a2", "absent") == "absent"


def test_a_session_projected_small_is_not_compacted() -> None:
    """When the ids so far, scaled to the whole file, stay below `projected`, the limit moves on instead."""
    compactor = Compactor(limit=100, projected=1000)
    assert not compactor.due(100, read=500, size=1000)  # 200 projected
    assert compactor.limit == 200
    assert compactor.due(200, read=100, size=1000)  # 2,000 projected
    data, _ = LEGAL["compaction-cycle"]()
    ids = Compactor(limit=3, bits=1, filter_bits=6, projected=10**9)
    verification = fast._FastVerification(
        "s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, compactor=ids
    )
    assert fast._prove(verification) == exact(data)
    assert ids.compactions == 0 and ids.limit > 3
