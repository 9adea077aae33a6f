"""`--claims` against one store: each claim whose approval the store holds gets SA693 (match) or SA694
(mismatch) at its `approval_audits` row; claimed raw values found in the audit tables are SA696.

A claim no store answers is reported by the engine, which sees every source (SA695).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Final

from sessaudit.formats.half_pi.claims import Claim, match_claim
from sessaudit.formats.half_pi.rows import StoreRows, table_rows
from sessaudit.model import Finding
from sessaudit.rules import finding

# tables that hold digests instead of raw parameters (spec §10 invariant 21), and their free-text columns
AUDIT_TABLES: Final = (
    "approval_audits",
    "remote_runs",
    "remote_tasks",
    "security_decisions",
    "lifecycle_outbox",
    "management_audits",
)
# shorter claimed values (`1`, `ls`, `true`) occur in audit text by chance; they prove nothing
MIN_LEAK_LENGTH: Final = 8


def check_claims(
    connection: sqlite3.Connection, rows: StoreRows, claims: Sequence[Claim], path: str
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
    findings += _leaks(connection, claims, path)
    return findings, answered


def _leaks(connection: sqlite3.Connection, claims: Sequence[Claim], path: str) -> list[Finding]:
    values = sorted(
        {value for claim in claims for value in _strings(claim.args) if len(value) >= MIN_LEAK_LENGTH}
    )
    if not values:
        return []
    found: list[Finding] = []
    for table in AUDIT_TABLES:
        for row in table_rows(connection, table):
            for column, cell in row.items():
                if not isinstance(cell, str) or column.endswith("digest"):
                    continue
                for value in values:
                    if value in cell:
                        found.append(
                            finding(
                                "SA696",
                                f"{table}.{column} holds a claimed argument value ({len(value)} characters), "
                                "where only digests belong",
                                path=path,
                                table=table,
                                rowid=row.get("_rowid"),
                                evidence={"column": column},
                            )
                        )
                        break
    return found


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
