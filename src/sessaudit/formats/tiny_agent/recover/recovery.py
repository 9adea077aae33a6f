"""Open v2 runs completed with their native plan (planner) and seed (context, fork point, next facts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, BinaryIO

from sessaudit.formats.tiny_agent.check.state import Operation
from sessaudit.formats.tiny_agent.recover.planner import CONFIGURATION_UNCHANGED, PlanResult, plan_recovery
from sessaudit.formats.tiny_agent.recover.seeding import continuation, fork_state
from sessaudit.model import SEED_KIND, Finding, ForkPoint, Recovery, Run, Seed, SeedContext, SeedSource
from sessaudit.plugin import VerifyOptions
from sessaudit.rules import finding
from sessaudit.withheld import first_corrupting, withheld_reason

if TYPE_CHECKING:
    from sessaudit.formats.tiny_agent.check.reducer import Reducer
    from sessaudit.formats.tiny_agent.recover.current import CurrentConfiguration

CURRENT_GIVEN = "configuration as given by --current"


def complete_runs(
    runs: list[Run],
    reducer: Reducer,
    *,
    stream: BinaryIO,
    committed: int,
    source: SeedSource,
    session_id: str | None,
    options: VerifyOptions,
    withheld: str | None,
) -> tuple[list[Run], list[Finding]]:
    """Each run with a recovery gets `native_plan`, the planner's assumptions and warnings, and a seed.

    A corrupt session (`withheld`: why) gets neither plan nor seed: tiny-agent refuses a history its reducer
    rejects, and continuing from a history that fails verification is not safe."""
    configured = options.extra("current")
    current = configured.for_session(session_id) if configured is not None else None
    completed: list[Run] = []
    findings: list[Finding] = []
    for run in runs:
        recovery = run.recovery
        operation = reducer.operations.get(run.run_id)
        if recovery is None or operation is None:
            completed.append(run)
            continue
        if withheld is not None:
            completed.append(run.model_copy(update={"recovery": recovery.withheld(withheld)}))
            continue
        planned = plan_recovery(reducer, operation, current)
        recovery = _with_plan(recovery, planned, current)
        for warning in recovery.warnings:
            findings.append(
                finding(
                    "SA304",
                    f"run {run.run_id}: {warning}",
                    path=source.path,
                    session_id=session_id,
                    evidence={"run_id": run.run_id},
                )
            )
        seed = _seed(
            run, recovery, operation, reducer, stream, committed, source, session_id, options, current
        )
        recovery = recovery.model_copy(update={"seed": seed})
        completed.append(run.model_copy(update={"recovery": recovery}))
    return completed, findings


def corrupt_reason(findings: list[Finding], native: dict[str, Any], reducer: Reducer) -> str:
    """Why a corrupt session's runs get no plan and no seed, and how far their open state is known."""
    refused = native.get("ok") is False
    if refused:
        seq = f", seq {native['seq']}" if native.get("seq") is not None else ""
        refusal = f"tiny-agent refuses the file ({native.get('code')} at line {native.get('line')}{seq})"
    else:
        refusal = "tiny-agent's reducer accepts the file, but its history fails verification"
    through = f"line {reducer.verified_line}" + (
        f" (seq {reducer.verified_seq})" if reducer.verified_seq else ""
    )
    known = f"the open state shown is known only through {through}" + (
        "; later lines were not reduced" if refused else ""
    )
    return withheld_reason(first_corrupting(findings), native=refusal, known=known, in_file=False)


def _with_plan(
    recovery: Recovery, planned: PlanResult | None, current: CurrentConfiguration | None
) -> Recovery:
    assumes = [item for item in recovery.assumes if current is None or item != CONFIGURATION_UNCHANGED]
    if current is not None:
        assumes.insert(0, CURRENT_GIVEN)
    if planned is None:
        return recovery.model_copy(update={"assumes": assumes})
    assumes.extend(item for item in planned.assumes if item not in assumes)
    # a plan the planner must block cannot continue in place (CONTRACT §4): the seed is a fork
    seed_kind = "fork" if planned.blocked else SEED_KIND[recovery.condition]
    return recovery.model_copy(
        update={
            "native_plan": planned.plan,
            "assumes": assumes,
            "warnings": list(planned.warnings),
            "seed_kind": seed_kind,
        }
    )


def _seed(
    run: Run,
    recovery: Recovery,
    operation: Operation,
    reducer: Reducer,
    stream: BinaryIO,
    committed: int,
    source: SeedSource,
    session_id: str | None,
    options: VerifyOptions,
    current: CurrentConfiguration | None,
) -> Seed:
    through = reducer.verified_seq or 0
    moved = options.fork_sequence is not None and options.fork_run in (None, run.run_id)
    if moved:
        through = min(int(options.fork_sequence or 0), through)
    state = fork_state(
        stream,
        committed,
        through_seq=through,
        finished_run=run.run_id if operation.finished and not moved else None,
    )
    plan = recovery.native_plan
    tool_replay: tuple[str | None, str | None] = (None, None)
    if plan is not None and plan.get("type") == "startTool" and current is not None:
        declared = current.tool(str(plan.get("toolName")))
        if declared is not None:
            tool_replay = (declared.replay, declared.replay_key)
    step = operation.step
    follow = continuation(
        plan,
        operation,
        next_seq=(reducer.verified_seq or 0) + 1,
        environment=current.environment_identity if current is not None else reducer.environment,
        current_digest=current.configuration_digest
        if current is not None
        else (step.digest if step else None),
        current_snapshot=current.configuration_snapshot if current is not None else None,
        current_replay=tool_replay,
    )
    seed_kind = recovery.offered_seed_kind()
    return Seed(
        seed_kind=seed_kind,
        source=source,
        session_id=session_id,
        run_id=run.run_id,
        condition=recovery.condition,
        fork_point=ForkPoint(
            seq=state.seq, line=state.line, byte_offset=state.byte_offset, fact_id=state.fact_id
        ),
        pending_effects=recovery.pending_effects,
        replay=follow.replay if seed_kind == "replay" else None,
        context=SeedContext(messages=state.messages),
        next_facts=follow.next_facts,
        assumes=recovery.assumes,
        warnings=recovery.warnings,
    )
