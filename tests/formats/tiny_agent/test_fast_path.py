"""The fast path of the v2 pass (issue 21, src/sessaudit/formats/tiny_agent/v2/fast.py): it answers for
the sessions it proves accepted, with the exact pass's outcome; it doubts everything else; in production
(no SESSAUDIT_CHECK_FAST_PATH) a doubt hands the file, and a load's tap, to the exact pass.

The suite's conftest compares the two paths on every verification; these tests pin what that cannot: that
the fast path does answer (a fast path that doubts everything would pass the comparison), and the
production route with a tap."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import pytest

from sessaudit.formats.tiny_agent.v2 import fast, fastfacts
from sessaudit.formats.tiny_agent.v2.verification import _Verification
from sessaudit.framing import Line
from sessaudit.model import Finding
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome
from tests.formats.tiny_agent.scenarios import LEGAL
from tests.test_golden_reports import CASES
from tests.warehouse.test_single_pass import _damage, both_ways, passes

VALID_ID = "01a029fc-5d82-7836-b4ef-d96dd697c894"
OTHER_ID = "01a029fc-5d82-72c0-a430-c31176157a8b"


def exact(data: bytes, tap: Any = None) -> SourceOutcome:
    return _Verification("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, tap).run()


def proven(data: bytes) -> SourceOutcome | None:
    return fast.prove_accepted("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_every_legal_session_is_proven_accepted_with_the_exact_outcome(name: str) -> None:
    data, _ = LEGAL[name]()
    answer = proven(data)
    assert answer is not None, f"the fast path doubted the legal session {name}"
    assert answer == exact(data)


def test_the_fast_path_uses_its_own_handlers_for_the_common_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a session of tool runs only the rare facts (none here) go to the exact handler."""
    data, _ = LEGAL["tools-completed"]()
    handed: list[str] = []
    original = fastfacts._exact

    def recorded(r: Any, fact: Any, place: Any) -> None:
        handed.append(str(fact.get("kind")))
        original(r, fact, place)

    monkeypatch.setattr(fastfacts, "_exact", recorded)
    assert proven(data) is not None
    assert handed == []


class Recording:
    """A tap that keeps what it was shown: (line number, value, session id, findings so far)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, Any, str | None, list[Finding]]] = []

    def __call__(self, line: Line, value: Any, session_id: str | None, findings: list[Finding]) -> None:
        self.seen.append((line.number, value, session_id, list(findings)))


def production(data: bytes, tap: Recording) -> SourceOutcome:
    return fast.verify_fast_first("s.jsonl", "s.jsonl", io.BytesIO(data), len(data), DEFAULT_OPTIONS, tap)


def _late_damage(data: bytes) -> bytes:
    """The last line's seq one too high: the fast path doubts only at the end."""
    lines = data.split(b"\n")[:-1]
    last = lines[-1]
    head, _, rest = last.partition(b'"seq":')
    digits = rest[: len(rest) - len(rest.lstrip(b"0123456789"))]
    lines[-1] = head + b'"seq":' + str(int(digits) + 1).encode() + rest[len(digits) :]
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("damaged", [False, True], ids=["accepted", "doubted-at-the-last-line"])
def test_a_tap_sees_each_line_once_and_as_the_exact_pass_shows_it(
    damaged: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(fast.CHECK_VARIABLE)
    data, _ = LEGAL["tools-completed"]()
    if damaged:
        data = _late_damage(data)
    reference, shown = Recording(), Recording()
    outcome = exact(data, reference)
    assert production(data, shown) == outcome
    assert [item[:3] for item in shown.seen] == [item[:3] for item in reference.seen]
    numbers = [item[0] for item in shown.seen]
    assert numbers == list(range(1, data.count(b"\n") + 1))
    # the exact pass found the damage: its findings reach the tap with the last line
    assert [finding.rule for finding in shown.seen[-1][3]] == (["SA205"] if damaged else [])


def test_an_id_checked_late_in_its_batch_still_makes_a_doubt() -> None:
    """New ids are checked for their UUIDv7 shape in batches; an upper-case one fails its batch at the end."""
    data, _ = LEGAL["tools-completed"]()
    lines = data.split(b"\n")
    second = lines[1]
    start = second.index(b'"id":"') + 6
    lines[1] = second[:start] + second[start : start + 36].upper() + second[start + 36 :]
    damaged = b"\n".join(lines)
    assert proven(damaged) is None
    assert {finding.rule for finding in exact(damaged).findings} == {"SA214", "SA215"}


def test_fresh_ids_are_checked_as_a_batch() -> None:
    assert fastfacts.check_fresh_ids([]) is True
    assert fastfacts.check_fresh_ids([VALID_ID, OTHER_ID]) is True
    assert fastfacts.check_fresh_ids([VALID_ID.upper()]) is False
    assert fastfacts.check_fresh_ids([VALID_ID, "01a029fc-5d82-4836-b4ef-d96dd697c894"]) is False  # v4
    # one string holding two valid ids and a line feed cannot pass for two ids
    assert fastfacts.check_fresh_ids([VALID_ID + "\n" + OTHER_ID]) is False
    assert fastfacts.check_fresh_ids([VALID_ID + "\n" + OTHER_ID, VALID_ID]) is False
    batch = [VALID_ID]
    fastfacts.check_fresh_ids(batch)
    assert batch == []


def test_in_production_a_load_is_the_two_pass_load_on_built_and_damaged_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The single pass's tap, fed by the fast path and resumed by the exact pass after a doubt, gives the
    warehouse of the two-pass load, row for row."""
    monkeypatch.delenv(fast.CHECK_VARIABLE)
    seen = passes(monkeypatch)
    for name in sorted(CASES):
        both_ways(tmp_path, name, CASES[name]())
    rng = random.Random(21)
    built = [data for data in (LEGAL[name]()[0] for name in sorted(LEGAL)) if data.count(b"\n") > 3]
    for index in range(30):
        both_ways(tmp_path, f"damaged-{index}", _damage(rng.choice(built), rng))
    both_ways(tmp_path, "late", _late_damage(LEGAL["tools-completed"]()[0]))
    assert len(seen["one"]) >= 40, seen["two"]


@pytest.mark.parametrize("damaged", [False, True], ids=["accepted", "doubted-at-the-last-line"])
def test_progress_counts_each_byte_once(damaged: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a doubt the exact pass reads the file again; the progress display counts each byte once."""
    from sessaudit import progress

    monkeypatch.delenv(fast.CHECK_VARIABLE)
    data, _ = LEGAL["tools-completed"]()
    if damaged:
        data = _late_damage(data)
    seen: list[int] = []
    previous = progress.set_sink(seen.append)
    try:
        production(data, Recording())
    finally:
        progress.set_sink(previous)
    assert sum(seen) == len(data)


class _RewrittenOnSeek(io.BytesIO):
    """Evidence rewritten in place between two reads: after the first seek back to 0, other bytes."""

    def __init__(self, first: bytes, second: bytes) -> None:
        super().__init__(first)
        self.second = second

    def seek(self, offset: int, whence: int = 0) -> int:
        if offset == 0 and whence == 0 and self.tell() > 0 and self.second:
            position = super().seek(0)
            self.write(self.second)
            self.second = b""
            return super().seek(position)
        return super().seek(offset, whence)


def test_evidence_rewritten_between_the_fast_read_and_the_exact_read_is_sa004(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(fast.CHECK_VARIABLE)
    data = _late_damage(LEGAL["tools-completed"]()[0])
    rewritten = data.replace(b'"timestamp":', b'"timestamp" :', 1)[: len(data) - 1] + b"\n"
    assert len(rewritten) == len(data) and rewritten != data
    stream = _RewrittenOnSeek(data, rewritten)
    outcome = fast.verify_fast_first("s.jsonl", "s.jsonl", stream, len(data), DEFAULT_OPTIONS, None)
    changed = [item for item in outcome.findings if item.rule == "SA004"]
    assert len(changed) == 1
    assert changed[0].message.startswith(f"s.jsonl: its first {len(data)} bytes were rewritten between")
