"""`--claims` against one store: each claim whose approval the store holds gets SA693 (match) or SA694
(mismatch) at its `approval_audits` row; claimed raw values found in the audit tables are SA696.

A claim no store answers is reported by the engine, which sees every source (SA695). A matched remote
claim also gives its open remote run's pending effect the claimed arguments (`claimed_arguments`): the
store keeps only their digest; an unmatched claim is never shown as anyone's arguments.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from sessaudit.formats.half_pi.check.runs_args import RawValue, find_raw_values
from sessaudit.formats.half_pi.claims.claims_file import Claim, claim_digest, match_claim
from sessaudit.formats.half_pi.read.rows import StoreRows
from sessaudit.formats.half_pi.runs.recovery import Recovered
from sessaudit.formats.half_pi.spec.schema_generations import SchemaGeneration
from sessaudit.model import Finding
from sessaudit.rules import finding


def check_claims(
    connection: sqlite3.Connection,
    generation: SchemaGeneration,
    rows: StoreRows,
    claims: Sequence[Claim],
    path: str,
) -> tuple[list[Finding], list[int]]:
    """(findings, indices of the claims this store answered)."""
    approvals = {str(row.get("approval_id")): row for row in rows.approvals}
    findings: list[Finding] = []
    answered: list[int] = []
    for index, claim in enumerate(claims):
        row = approvals.get(claim.approval_id)
        if row is None:
            continue
        answered.append(index)
        answer = match_claim(claim, str(row.get("args_digest") or ""))
        evidence = {
            "claim": claim.pointer,
            "approval_id": claim.approval_id,
            "claimed_digest": answer.claimed_digest,
            "stored_digest": answer.stored_digest,
        }
        if answer.matches:
            message = (
                f"claim {claim.pointer}: {claim.tool} with the claimed arguments is what approval "
                f"{claim.approval_id} approved (digest {answer.stored_digest})"
            )
        else:
            message = (
                f"claim {claim.pointer}: approval {claim.approval_id} approved digest "
                f"{answer.stored_digest}, but {claim.tool} with the claimed arguments gives "
                f"{answer.claimed_digest}: not what was approved"
            )
        findings.append(
            finding(
                "SA693" if answer.matches else "SA694",
                message,
                path=path,
                table="approval_audits",
                rowid=row.get("_rowid"),
                session_id=str(row.get("conversation_id") or "") or None,
                evidence=evidence,
            )
        )
    findings += _leaks(connection, generation, claims, path)
    return findings, answered


def claimed_arguments(recovered: Recovered, rows: StoreRows, claims: Sequence[Claim]) -> None:
    """Fill in the arguments of open remote runs' pending effects the store did not record, from remote
    claims that matched: the claim's digest equals both its approval's and the run's `args_digest`."""
    approvals = {str(row.get("approval_id")): row for row in rows.approvals}
    digests = {str(row.get("id")): str(row.get("args_digest") or "") for row in rows.runs}
    matched: dict[str, tuple[Claim, str]] = {}
    for claim in claims:
        approval = approvals.get(claim.approval_id)
        if claim.kind != "remote" or approval is None or str(approval.get("run_id") or "") != claim.run_id:
            continue
        stored = str(approval.get("args_digest") or "")
        if match_claim(claim, stored).matches and digests.get(claim.run_id) == stored == claim_digest(claim):
            matched.setdefault(claim.run_id, (claim, stored))
    for items in recovered.runs.values():
        for item in items:
            recovery = item.run.recovery
            if item.run.kind != "remote-run" or recovery is None or item.run.run_id not in matched:
                continue
            claim, digest = matched[item.run.run_id]
            effects = [
                effect.model_copy(update={"arguments": dict(claim.args)})
                if effect.intent_id == item.run.run_id and effect.arguments is None
                else effect
                for effect in recovery.pending_effects
            ]
            if effects == recovery.pending_effects:
                continue
            said = (
                f"arguments from --claims (claim {claim.pointer}, approval {claim.approval_id}), matched the "
                f"recorded digest {digest}"
            )
            recovery = recovery.model_copy(
                update={"pending_effects": effects, "assumes": [*recovery.assumes, said]}
            )
            item.run = item.run.model_copy(update={"recovery": recovery})


def _leaks(
    connection: sqlite3.Connection, generation: SchemaGeneration, claims: Sequence[Claim], path: str
) -> list[Finding]:
    """SA696 where a claimed argument value sits in an audit table (the raw-value search of invariant 21)."""
    values = [
        RawValue(text, f"claim {claim.pointer}", {"claim": claim.pointer})
        for claim in claims
        for text in _strings(claim.args)
    ]
    return [
        finding(
            "SA696",
            f"{item.message} (a value of a claimed call)",
            path=path,
            table=item.table,
            rowid=item.rowid,
            session_id=item.session_id,
            evidence=item.evidence,
        )
        for item in find_raw_values(connection, generation, values)
    ]


def _strings(value: Any) -> Iterator[str]:
    """Every string in a claimed argument value, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
