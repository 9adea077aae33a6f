"""The v2 reducer (spec §5, §10, §12.3), linear: transactions, the fact envelope, usage and the transcript.

tiny-agent's own reducer clones its state and re-walks the transcript for every line; this one applies a
transaction in place, keeps an undo journal for the state the report needs, and checks the transcript
incrementally, which gives the same first error in linear time. The state it applies them to, and the
helpers the fact handlers call on it, is `ReducerState` (reducer_state.py)."""

from __future__ import annotations

from typing import Any, Final

from sessaudit.formats.tiny_agent.check import entries, notes, records
from sessaudit.formats.tiny_agent.check.reducer_state import ReducerState
from sessaudit.formats.tiny_agent.check.state import (
    FACT,
    RESERVED_IDENTITY,
    Attempt,
    Place,
)
from sessaudit.formats.tiny_agent.read.digests import MAX_SAFE_INTEGER, UUID7_PATTERN
from sessaudit.formats.tiny_agent.read.shapes import (
    DUPLICATE_ID,
    INVALID_FACT,
    INVALID_REFERENCE,
    MISSING,
    SEQ_MISMATCH,
    Violation,
    found,
    invalid_id,
    is_safe_integer,
    require_exact,
    require_integer,
    require_object,
    short_id,
    show,
)

USAGE_FACT_KEYS: Final = frozenset(
    ("kind", "seq", "id", "timestamp", "operationId", "attemptId", "toolStartedId", "usage")
)
USAGE_KEYS: Final = frozenset(("input", "output", "cacheRead", "cacheWrite"))
USAGE_COUNTERS: Final = ("input", "output", "cacheRead", "cacheWrite")


class Failure:
    """The reducer's first error: the violation, the fact it is in, and tiny-agent's reported seq."""

    __slots__ = ("index", "seq", "violation")

    def __init__(self, violation: Violation, index: int, seq: int | None) -> None:
        self.violation = violation
        self.index = index
        self.seq = seq


class Reducer(ReducerState):
    """Applies committed transactions after a valid header; the first failure ends reduction."""

    # --- transactions ---------------------------------------------------------------------------
    def apply(self, facts: list[Any], line: int, offset: int, array: bool) -> Failure | None:
        """Apply one non-empty transaction; on failure the report state is as before it."""
        self.transcript_problem = None
        before = self.current
        place = Place(line, offset, -1, 0)
        for index, fact in enumerate(facts):
            place = Place(line, offset, index if array else -1, 0)
            try:
                self.apply_fact(fact, place)
            except Violation as violation:
                self.reject()
                return Failure(violation, index, place.seq if violation.with_seq else None)
        if self.transcript_problem is not None:
            violation, prefix = self.transcript_problem
            violation.pointer = prefix + violation.pointer
            self.reject()
            return Failure(violation, -1, place.seq)
        self.journal.commit()
        self.observations.commit()
        for operation in (before, self.current):  # the one it wrote to, finished or started
            if operation is not None:
                self.last_written[operation.operation_id] = self.fact_timestamp
        self.verified_line = line
        self.verified_seq = place.seq
        return None

    def reject(self) -> None:
        self.journal.rollback()
        self.observations.rollback()

    def apply_fact(self, fact: Any, place: Place) -> None:
        """The envelope in tiny-agent's order (§5), the kind-specific rules, the reserved-id check."""
        if type(fact) is not dict:
            raise Violation(
                INVALID_FACT,
                "",
                f"fact: expected an object, found {show(fact)}",
                evidence=found(fact),
                with_seq=False,
            )
        seq = fact.get("seq", MISSING)
        if type(seq) is not int or not 1 <= seq <= MAX_SAFE_INTEGER:
            if not is_safe_integer(seq, 1):
                raise Violation(
                    INVALID_FACT,
                    "/seq",
                    f"seq: expected a safe integer ≥ 1, found {show(seq)}",
                    evidence=found(seq),
                    with_seq=False,
                )
            seq = int(seq)
        place.seq = seq
        self.last_seen_seq = seq
        if seq != self.next_seq:
            raise Violation(
                SEQ_MISMATCH,
                "/seq",
                f"seq: expected {self.next_seq}, found {seq}",
                evidence={"expected": self.next_seq, "found": seq},
            )
        fact_id = fact.get("id", MISSING)
        namespace = self.namespace
        if type(fact_id) is not str or (fact_id not in namespace and UUID7_PATTERN.match(fact_id) is None):
            raise invalid_id(fact_id, "/id", "fact id")
        timestamp = fact.get("timestamp", MISSING)
        if type(timestamp) is not int or not 0 <= timestamp <= MAX_SAFE_INTEGER:
            timestamp = require_integer(timestamp, INVALID_FACT, "/timestamp", "timestamp")
        if namespace.get(fact_id, RESERVED_IDENTITY) >= FACT:
            raise Violation(
                DUPLICATE_ID,
                "/id",
                f"fact id {short_id(fact_id)} is already the id of an earlier fact",
                evidence={"id": fact_id},
            )
        kind = fact.get("kind", MISSING)
        if kind == "entry":
            ordinal = entries.apply_entry(self, fact, fact_id, place)
        elif kind == "record":
            records.apply_record(self, fact, fact_id, place)
            ordinal = FACT
        elif kind == "usage":
            self.apply_usage(fact, place)
            ordinal = FACT
        else:
            raise Violation(
                INVALID_FACT,
                "/kind",
                f"kind: expected entry, record or usage, found {show(kind)}",
                evidence=found(kind),
            )
        if namespace.get(fact_id, 0) <= RESERVED_IDENTITY:
            raise Violation(
                DUPLICATE_ID,
                "/id",
                f"fact id {short_id(fact_id)} collides with a reserved id (operation, step, attempt, result "
                "slot)",
                evidence={"id": fact_id},
            )
        namespace[fact_id] = ordinal
        self.next_seq = seq + 1
        self.fact_timestamp = timestamp
        notes.envelope(self, fact, fact_id, timestamp, place)

    # --- usage facts (§10) --------------------------------------------------------------------
    def apply_usage(self, fact: dict[str, Any], place: Place) -> None:
        if not USAGE_FACT_KEYS.issuperset(fact):
            require_exact(fact, USAGE_FACT_KEYS, INVALID_FACT, "", "usage fact")
        operation_id = self.ref(fact.get("operationId", MISSING), "/operationId", "operationId")
        if operation_id not in self.operations:
            raise Violation(
                INVALID_REFERENCE,
                "/operationId",
                f"operationId {short_id(operation_id)} names no operation",
                evidence={"operationId": operation_id},
            )
        has_attempt = "attemptId" in fact
        if has_attempt == ("toolStartedId" in fact):
            raise Violation(
                INVALID_FACT,
                "",
                "usage: expected exactly one of attemptId and toolStartedId, found "
                + ("both" if has_attempt else "neither"),
            )
        attempt: Attempt | None = None
        if has_attempt:
            attempt_id = self.ref(fact["attemptId"], "/attemptId", "attemptId")
            attempt = self.attempts.get(attempt_id)
            if attempt is None or attempt.operation != operation_id:
                raise Violation(
                    INVALID_REFERENCE,
                    "/attemptId",
                    f"attemptId {short_id(attempt_id)} is not an attempt of operation "
                    f"{short_id(operation_id)}",
                    evidence={"attemptId": attempt_id, "operationId": operation_id},
                )
        else:
            started_id = self.ref(fact["toolStartedId"], "/toolStartedId", "toolStartedId")
            if self.intent_operation.get(started_id) != operation_id:
                raise Violation(
                    INVALID_REFERENCE,
                    "/toolStartedId",
                    f"toolStartedId {short_id(started_id)} is not a tool intent of operation "
                    f"{short_id(operation_id)}",
                    evidence={"toolStartedId": started_id, "operationId": operation_id},
                )
        counters = require_object(fact.get("usage", MISSING), INVALID_FACT, "/usage", "usage")
        if not USAGE_KEYS.issuperset(counters):
            require_exact(counters, USAGE_KEYS, INVALID_FACT, "/usage", "usage")
        totals = self.usage
        updated = {}
        for name in USAGE_COUNTERS:
            value = counters.get(name, MISSING)
            amount = value if type(value) is int and 0 <= value <= MAX_SAFE_INTEGER else None
            if amount is None:
                amount = require_integer(value, INVALID_FACT, f"/usage/{name}", f"usage.{name}")
            if totals[name] > MAX_SAFE_INTEGER - amount:
                raise Violation(
                    INVALID_FACT,
                    f"/usage/{name}",
                    f"usage.{name}: the session total {totals[name]} + {amount} exceeds 2^53−1",
                    rule="SA213",
                    evidence={"counter": name, "total": totals[name], "amount": amount},
                )
            updated[name] = totals[name] + amount
        self.journal.set(self, "usage", updated)
        notes.usage(self, counters, attempt, place)

    # --- envelope-only checks once reduction has stopped (CONTRACT §4) ----------------------
    def track(self, fact: Any, place: Place) -> list[Violation]:
        """Seq continuity, fact-id shape and duplicates for a fact that is no longer reduced."""
        problems: list[Violation] = []
        if type(fact) is not dict:
            problems.append(
                Violation(
                    INVALID_FACT, "", f"fact: expected an object, found {show(fact)}", evidence=found(fact)
                )
            )
            if self.next_seq is not None:
                self.next_seq += 1
            return problems
        seq = fact.get("seq", MISSING)
        if not is_safe_integer(seq, 1):
            problems.append(
                Violation(
                    INVALID_FACT,
                    "/seq",
                    f"seq: expected a safe integer ≥ 1, found {show(seq)}",
                    evidence=found(seq),
                )
            )
            if self.next_seq is not None:
                self.next_seq += 1
        else:
            place.seq = int(seq)
            self.last_seen_seq = place.seq
            expected = self.next_seq
            if expected is not None and place.seq != expected:
                problems.append(
                    Violation(
                        SEQ_MISMATCH,
                        "/seq",
                        f"seq: expected {expected}, found {place.seq}",
                        evidence={"expected": expected, "found": place.seq},
                    )
                )
            self.next_seq = place.seq + 1
        fact_id = fact.get("id", MISSING)
        if type(fact_id) is not str or UUID7_PATTERN.match(fact_id) is None:
            problems.append(invalid_id(fact_id, "/id", "fact id"))
        elif self.namespace.get(fact_id, RESERVED_IDENTITY) >= FACT:
            problems.append(
                Violation(
                    DUPLICATE_ID,
                    "/id",
                    f"fact id {short_id(fact_id)} is already the id of an earlier fact",
                    evidence={"id": fact_id},
                )
            )
        else:
            self.namespace[fact_id] = FACT
        if not is_safe_integer(fact.get("timestamp", MISSING), 0):
            problems.append(
                Violation(
                    INVALID_FACT,
                    "/timestamp",
                    f"timestamp: expected a safe integer ≥ 0, found {show(fact.get('timestamp', MISSING))}",
                )
            )
        return problems
