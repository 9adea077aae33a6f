"""Operation records (spec §9.1, §9.2, §9.6, §9.7): runs, compactions, aborts and terminals."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Final

from sessaudit.formats.tiny_agent.check import notes, steps
from sessaudit.formats.tiny_agent.check.state import (
    COMPACTION,
    RESERVED_COMPACTION_RESULT,
    RESERVED_IDENTITY,
    USER,
    Operation,
    Place,
)
from sessaudit.formats.tiny_agent.check.steps import lookup_operation, reserve
from sessaudit.formats.tiny_agent.read.digests import DIGEST_PATTERN
from sessaudit.formats.tiny_agent.read.shapes import (
    INVALID_FACT,
    INVALID_REFERENCE,
    INVALID_TRANSCRIPT,
    INVALID_TRANSITION,
    MISSING,
    Violation,
    js_string,
    require_exact,
    require_object,
    require_string,
    short_id,
    show,
)

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer_state import ReducerState

RECORD_FACT_KEYS: Final = frozenset(("kind", "seq", "id", "timestamp", "record"))
RUN_STARTED_KEYS: Final = frozenset(("type", "operationId", "operationKind", "inputEntryId"))
COMPACTION_STARTED_KEYS: Final = frozenset(
    (
        "type",
        "operationId",
        "operationKind",
        "inputThroughEntryId",
        "resultEntryId",
        "compactedEntryIds",
        "retainedEntryIds",
        "sourceDigest",
    )
)
ABORT_KEYS: Final = frozenset(("type", "operationId", "operationKind", "phase", "toolCallId", "reason"))
FINISHED_KEYS: Final = frozenset(
    ("type", "operationId", "operationKind", "outcome", "completion", "finalEntryId", "error")
)
ERROR_KEYS: Final = frozenset(("code", "message"))


def apply_record(r: ReducerState, fact: dict[str, Any], fact_id: str, place: Place) -> None:
    if not RECORD_FACT_KEYS.issuperset(fact):
        require_exact(fact, RECORD_FACT_KEYS, INVALID_FACT, "", "record fact")
    record = require_object(fact.get("record", MISSING), INVALID_FACT, "/record", "record")
    kind = record.get("type", MISSING)
    if kind == "runStarted":
        _run_started(r, record, place)
    elif kind == "compactionStarted":
        _compaction_started(r, record, place)
    elif kind == "stepAttempt":
        steps.step_attempt(r, record, place)
    elif kind == "stepFailed":
        steps.step_failed(r, record, place)
    elif kind == "toolStarted":
        steps.tool_started(r, record, fact_id, place)
    elif kind == "abortRequested":
        _abort_requested(r, record, place)
    elif kind == "operationFinished":
        _operation_finished(r, record, place)
    else:
        raise Violation(INVALID_FACT, "/record/type", f"record type: unknown {show(kind)}")


def _open_operation(r: ReducerState, operation: Operation) -> None:
    journal = r.journal
    journal.put(r.operations, operation.operation_id, operation)
    journal.append(r.runs, operation)
    journal.set(r, "current", operation)


def _not_idle(r: ReducerState, record: dict[str, Any], kind: str) -> Violation:
    if record.get("operationKind", MISSING) != kind:
        found = show(record.get("operationKind", MISSING))
        return Violation(
            INVALID_TRANSITION, "/record/operationKind", f"operationKind: expected {kind}, found {found}"
        )
    assert r.current is not None
    return Violation(
        INVALID_TRANSITION,
        "/record/type",
        f"a {kind} cannot start while {r.current.kind} {short_id(r.current.operation_id)} is open",
        evidence={"open_operation": r.current.operation_id},
    )


def _run_started(r: ReducerState, record: dict[str, Any], place: Place) -> None:
    """§9.1: the session must be idle; the input is an existing user entry."""
    if not RUN_STARTED_KEYS.issuperset(record):
        require_exact(record, RUN_STARTED_KEYS, INVALID_FACT, "/record", "runStarted")
    if record.get("operationKind", MISSING) != "run" or r.current is not None:
        raise _not_idle(r, record, "run")
    operation_id = reserve(
        r, record.get("operationId", MISSING), "/record/operationId", "operationId", RESERVED_IDENTITY
    )
    input_id = r.ref(record.get("inputEntryId", MISSING), "/record/inputEntryId", "inputEntryId")
    ordinal = r.namespace.get(input_id, -1)
    if ordinal < 0 or r.entry_kinds[ordinal] != USER:
        raise Violation(
            INVALID_REFERENCE,
            "/record/inputEntryId",
            f"inputEntryId {short_id(record['inputEntryId'])}: expected an existing user message entry, "
            "found " + ("no entry" if ordinal < 0 else "another kind of entry"),
            evidence={"inputEntryId": record["inputEntryId"]},
        )
    input_id = r.entry_ids[ordinal]  # the state's own copy of the id (equal), kept by what follows
    notes.input_entry(r, input_id, place)
    _open_operation(r, Operation(operation_id, "run", input_id, None, place))


def _compaction_started(r: ReducerState, record: dict[str, Any], place: Place) -> None:
    """§9.2: idle; the partition lists every message entry through inputThroughEntryId; sourceDigest."""
    if not COMPACTION_STARTED_KEYS.issuperset(record):
        require_exact(record, COMPACTION_STARTED_KEYS, INVALID_FACT, "/record", "compactionStarted")
    if record.get("operationKind", MISSING) != "compaction" or r.current is not None:
        raise _not_idle(r, record, "compaction")
    operation_id = reserve(
        r, record.get("operationId", MISSING), "/record/operationId", "operationId", RESERVED_IDENTITY
    )
    through = r.ref(
        record.get("inputThroughEntryId", MISSING), "/record/inputThroughEntryId", "inputThroughEntryId"
    )
    result_id = reserve(
        r,
        record.get("resultEntryId", MISSING),
        "/record/resultEntryId",
        "resultEntryId",
        RESERVED_COMPACTION_RESULT,
    )
    through_ordinal = r.namespace.get(through, -1)
    if through_ordinal < 0:
        raise Violation(
            INVALID_REFERENCE,
            "/record/inputThroughEntryId",
            f"inputThroughEntryId {short_id(record['inputThroughEntryId'])} names no entry",
        )
    compacted = record.get("compactedEntryIds", MISSING)
    retained = record.get("retainedEntryIds", MISSING)
    if type(compacted) is not list or not compacted or type(retained) is not list:
        bad = "compactedEntryIds" if type(compacted) is not list or not compacted else "retainedEntryIds"
        raise Violation(
            INVALID_FACT,
            f"/record/{bad}",
            f"{bad}: expected a{' non-empty' if bad == 'compactedEntryIds' else 'n'} array, "
            f"found {show(record.get(bad, MISSING))}",
        )
    partition: list[str] = compacted + retained
    messages = r.message_ids
    if not (partition == messages[: len(partition)] and messages[len(partition) - 1] == through):
        # Not the exact prefix: find tiny-agent's first error, ids first, then the partition.
        partition = [
            r.ref(value, f"/record/{name}/{index}", name)
            for name, values in (("compactedEntryIds", compacted), ("retainedEntryIds", retained))
            for index, value in enumerate(values)
        ]
        _check_partition(r, partition, through_ordinal, len(compacted))
    declared = js_string(record.get("sourceDigest", MISSING))
    if DIGEST_PATTERN.match(declared) is None:
        raise Violation(
            INVALID_FACT,
            "/record/sourceDigest",
            'sourceDigest: expected "sha256:" and 64 lowercase hex digits, found '
            f"{show(record.get('sourceDigest', MISSING))}",
        )
    actual = r.source_digest(through)
    if actual != declared:
        raise Violation(
            INVALID_REFERENCE,
            "/record/sourceDigest",
            f"sourceDigest: the messages through {short_id(record['inputThroughEntryId'])} digest to "
            f"{actual[:15]}…, the record says {declared[:15]}…",
            rule="SA211",
            evidence={"expected": actual, "found": declared},
        )
    notes.coerced(r, place, "/record/sourceDigest", record["sourceDigest"])
    operation = Operation(operation_id, "compaction", through, result_id, place)
    operation.partition = (partition[len(compacted) - 1], tuple(partition[len(compacted) :]))
    _open_operation(r, operation)


def _check_partition(r: ReducerState, partition: list[str], through_ordinal: int, compacted: int) -> None:
    kinds = r.entry_kinds
    if kinds[through_ordinal] == COMPACTION:
        raise Violation(
            INVALID_REFERENCE, "/record/inputThroughEntryId", "inputThroughEntryId must be a message entry"
        )
    position = 0
    for ordinal in range(through_ordinal + 1):
        if kinds[ordinal] == COMPACTION:
            continue
        expected = r.entry_ids[ordinal]
        if position >= len(partition) or partition[position] != expected:
            name, index = (
                ("compactedEntryIds", position)
                if position < compacted
                else ("retainedEntryIds", position - compacted)
            )
            raise Violation(
                INVALID_REFERENCE,
                f"/record/{name}/{index}" if position < len(partition) else f"/record/{name}",
                "compactedEntryIds + retainedEntryIds must list every message entry since the start of the "
                f"session through inputThroughEntryId; expected {short_id(expected)} at position "
                f"{position}",
                evidence={"expected": expected, "position": position},
            )
        position += 1
    if position != len(partition):
        raise Violation(
            INVALID_REFERENCE,
            "/record/retainedEntryIds",
            f"the partition lists {len(partition)} ids, but only {position} message entries lead up to "
            "inputThroughEntryId",
        )


def _abort_requested(r: ReducerState, record: dict[str, Any], place: Place) -> None:
    """§9.6: at most one per operation, on the current operation."""
    if not ABORT_KEYS.issuperset(record):
        require_exact(record, ABORT_KEYS, INVALID_FACT, "/record", "abortRequested")
    operation = lookup_operation(r, record.get("operationId", MISSING), "/record/operationId")
    if record.get("operationKind", MISSING) != operation.kind or record.get("reason", MISSING) != "escape":
        name = "operationKind" if record.get("operationKind", MISSING) != operation.kind else "reason"
        wanted = operation.kind if name == "operationKind" else "escape"
        raise Violation(
            INVALID_TRANSITION,
            f"/record/{name}",
            f"{name}: expected {wanted}, found {show(record.get(name, MISSING))}",
        )
    phase = record.get("phase", MISSING)
    if type(phase) is not str or phase not in ("model", "tool", "compact"):
        raise Violation(
            INVALID_FACT, "/record/phase", f"phase: expected model, tool or compact, found {show(phase)}"
        )
    if (phase == "tool") != (type(record.get("toolCallId", MISSING)) is str):
        raise Violation(
            INVALID_FACT,
            "/record/toolCallId",
            "toolCallId: expected a string exactly when phase is tool, found "
            + show(record.get("toolCallId", MISSING)),
        )
    if r.current is not operation or operation.abort_requested:
        raise Violation(
            INVALID_TRANSITION,
            "/record/operationId",
            "an abort was already requested for this operation"
            if operation.abort_requested
            else "the operation is not the current one",
        )
    r.journal.set(operation, "abort_requested", True)
    notes.abort_record(r, operation, record, place)


def _operation_finished(r: ReducerState, record: dict[str, Any], place: Place) -> None:
    """§9.7: the terminal record and its preconditions per outcome."""
    if not FINISHED_KEYS.issuperset(record):
        require_exact(record, FINISHED_KEYS, INVALID_FACT, "/record", "operationFinished")
    operation = lookup_operation(r, record.get("operationId", MISSING), "/record/operationId")
    outcome = record.get("outcome", MISSING)
    if (
        record.get("operationKind", MISSING) != operation.kind
        or type(outcome) is not str
        or outcome
        not in (
            "completed",
            "aborted",
            "failed",
        )
    ):
        name = "operationKind" if record.get("operationKind", MISSING) != operation.kind else "outcome"
        raise Violation(
            INVALID_TRANSITION,
            f"/record/{name}",
            f"{name}: expected "
            + (operation.kind if name == "operationKind" else "completed, aborted or failed")
            + f", found {show(record.get(name, MISSING))}",
        )
    if r.current is not operation:
        raise Violation(INVALID_TRANSITION, "/record/operationId", "the operation is not the current one")
    outcome = sys.intern(outcome)  # one string, not one per operation kept
    if outcome == "completed":
        _completed(r, operation, record)
    elif outcome == "aborted":
        if (
            "finalEntryId" in record
            or not operation.abort_requested
            or operation.pending
            or operation.status == "attempting"
        ):
            if "finalEntryId" in record:
                why = "an aborted operation has no finalEntryId"
            elif not operation.abort_requested:
                why = "no abortRequested precedes it"
            elif operation.pending:
                why = f"{operation.pending} tool intent(s) are still pending"
            else:
                why = "a model attempt is still open"
            raise Violation(INVALID_TRANSITION, "/record/outcome", f"outcome aborted: {why}")
    elif "finalEntryId" in record:
        raise Violation(INVALID_FACT, "/record/finalEntryId", "a failed operation has no finalEntryId")
    if outcome != "completed" and "completion" in record:
        raise Violation(
            INVALID_FACT, "/record/completion", f"completion appears only on completed runs, not {outcome}"
        )
    if outcome == "failed":
        error = require_object(record.get("error", MISSING), INVALID_FACT, "/record/error", "error")
        if not ERROR_KEYS.issuperset(error):
            require_exact(error, ERROR_KEYS, INVALID_FACT, "/record/error", "error")
        require_string(error.get("code", MISSING), INVALID_FACT, "/record/error/code", "error.code")
        require_string(error.get("message", MISSING), INVALID_FACT, "/record/error/message", "error.message")
    elif "error" in record:
        raise Violation(
            INVALID_FACT, "/record/error", f"error appears only on failed operations, not {outcome}"
        )
    notes.operation_finished(r, operation, record, place)
    journal = r.journal
    journal.set(operation, "finished", True)
    journal.set(operation, "outcome", outcome)
    journal.set(r, "current", None)
    # A finished operation keeps only what the report needs: its intents still pending (late results).
    journal.set(operation, "answers", {})
    journal.set(operation, "last_answer", None)
    journal.set(operation, "intents", [intent for intent in operation.intents if intent.pending])
    journal.set(operation, "partition", None)
    r.steps.clear()


def _completed(r: ReducerState, operation: Operation, record: dict[str, Any]) -> None:
    completion = record.get("completion", MISSING)
    if operation.kind == "run" and completion not in ("normal", "truncated"):
        raise Violation(
            INVALID_FACT,
            "/record/completion",
            f"completion: expected normal or truncated, found {show(completion)}",
        )
    if operation.kind == "compaction" and completion is not MISSING:
        raise Violation(INVALID_FACT, "/record/completion", "a completed compaction has no completion")
    final = r.ref(record.get("finalEntryId", MISSING), "/record/finalEntryId", "finalEntryId")
    pointer = "/record/finalEntryId"
    if operation.kind == "compaction":
        attempt = operation.compaction_attempt
        if operation.compaction_entry != final or attempt is None or attempt.step != operation.latest_step:
            raise Violation(
                INVALID_REFERENCE,
                pointer,
                "finalEntryId: expected the compaction entry settled by the latest step",
            )
        return
    answer = operation.answers.get(final)
    if answer is None:
        raise Violation(
            INVALID_REFERENCE,
            pointer,
            f"finalEntryId {short_id(record['finalEntryId'])}: expected an assistant entry of this run",
        )
    wanted = "stop" if completion == "normal" else "length"
    if answer.stop_reason != wanted:
        raise Violation(
            INVALID_REFERENCE,
            pointer,
            f"completion {completion} needs a final answer with stopReason {wanted}, found "
            f"{answer.stop_reason}",
        )
    settled = answer.attempt
    if settled.failed or settled.step != operation.latest_step or settled.settled_entry != final:
        raise Violation(
            INVALID_REFERENCE, pointer, "finalEntryId: expected the answer that settled the run's latest step"
        )
    if completion == "normal" and not answer.has_text:
        raise Violation(
            INVALID_TRANSCRIPT, pointer, "completion normal needs a final answer with non-blank content"
        )
    if completion == "truncated" and not answer.calls:
        raise Violation(
            INVALID_TRANSCRIPT, pointer, "completion truncated needs a final answer with tool_calls"
        )
    if operation.pending:
        raise Violation(
            INVALID_TRANSCRIPT,
            "/record/outcome",
            f"a run cannot complete while {operation.pending} tool intent(s) are pending",
        )
