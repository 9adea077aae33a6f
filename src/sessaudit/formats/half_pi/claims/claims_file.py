"""`--claims FILE`: tool arguments claimed for Half-Pi approvals, checked against the stored digests.

A claim without a run_id (or with an empty one) is a local approval (§6.2 digest, `sha256:` + hex); one
with a run_id is a remote approval through use_hand (§6.3, bare hex, with the background fields when
the claim has `background`). The claimed args are digested as Half-Pi's agent digests a model's call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from sessaudit.formats.half_pi.spec.approval_digests import local_approval_digest, remote_approval_digest
from sessaudit.formats.half_pi.spec.gojson import GoJSONError
from sessaudit.resources import schema_validator
from sessaudit.userfiles import UserFileError, describe_schema_error, read_json_file, schema_problems

SCHEMA_FILE: Final = "claims.v1.schema.json"
_LONGEST_REASON: Final = 300

ClaimKind = Literal["local", "remote"]


class ClaimsFileError(UserFileError):
    """A `--claims` file that cannot be read or is not a valid claims document."""


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim: the approval and the call it is said to have approved; `pointer` is `/claims/<i>`."""

    approval_id: str
    tool: str
    args: Mapping[str, Any]
    run_id: str = ""
    hand_id: str = ""
    max_runtime_ms: int | None = None
    pointer: str = ""

    @property
    def kind(self) -> ClaimKind:
        """`remote` when the claim names a run (a use_hand approval), else `local`."""
        return "remote" if self.run_id else "local"


@dataclass(frozen=True, slots=True)
class ClaimAnswer:
    """A claim judged against the digest stored for its approval: both digests, and whether they agree."""

    claim: Claim
    matches: bool
    claimed_digest: str
    stored_digest: str


def load_claims(path: Path) -> list[Claim]:
    """Read, parse (strict JSON) and validate a `--claims` file; raise ClaimsFileError."""
    return parse_claims(read_json_file(path, ClaimsFileError), source=str(path))


def parse_claims(document: Any, *, source: str = "<claims>") -> list[Claim]:
    """Validate an already parsed claims document; raise ClaimsFileError with every problem at once.

    Unknown keys are refused, never ignored: a misspelt `run_id` or `hand_id` would otherwise turn a
    remote claim into a local one (or drop its background), and the claim check would answer about a
    claim nobody made."""
    errors = list(schema_validator(SCHEMA_FILE).iter_errors(document))
    problems = schema_problems(errors, _describe)
    invalid = {
        error.absolute_path[1]
        for error in errors
        if len(error.absolute_path) >= 2 and error.absolute_path[0] == "claims"
    }
    items = document.get("claims") if isinstance(document, dict) else None
    claims: list[Claim] = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        if index in invalid:
            continue
        background = item.get("background")
        claim = Claim(
            approval_id=item["approval_id"],
            tool=item["tool"],
            args=item["args"],
            run_id=item.get("run_id", ""),
            hand_id=item.get("hand_id", ""),
            # The schema accepts 60000.0 as an integer; use_hand reads the same int64.
            max_runtime_ms=None if background is None else int(background["max_runtime_ms"]),
            pointer=f"/claims/{index}",
        )
        try:
            claim_digest(claim)
        except GoJSONError as error:
            problems.append(
                (
                    f"{claim.pointer}/args{error.pointer}",
                    f"Half-Pi could not have approved these args: {error.message}",
                )
            )
            continue
        claims.append(claim)
    if problems:
        raise ClaimsFileError.of(source, problems)
    return claims


def claim_digest(claim: Claim) -> str:
    """The digest the claim's approval would carry if the claim were true (§6.2 local, §6.3 remote)."""
    if claim.kind == "local":
        return local_approval_digest(claim.tool, claim.args)
    return remote_approval_digest(claim.run_id, claim.hand_id, claim.tool, claim.args, claim.max_runtime_ms)


def match_claim(claim: Claim, stored_digest: str) -> ClaimAnswer:
    """Judge a claim against `approval_audits.args_digest` (a local claim never matches a remote digest)."""
    claimed = claim_digest(claim)
    return ClaimAnswer(
        claim=claim, matches=claimed == stored_digest, claimed_digest=claimed, stored_digest=stored_digest
    )


def _describe(error: ValidationError) -> str:
    """jsonschema's message, plainer where the schema's wording would puzzle, without long echoes."""
    if error.validator == "required" and "dependentSchemas" in error.relative_schema_path:
        owner = next(part for part in ("hand_id", "background") if part in error.relative_schema_path)
        return f"{owner} belongs to a remote claim, which needs a non-empty run_id"
    if error.validator == "required" and "then" in error.relative_schema_path:
        return "a remote claim (non-empty run_id) needs the hand_id of the Hand that ran it"
    if error.validator == "minLength" and "dependentSchemas" in error.relative_schema_path:
        return "hand_id and background belong to a remote claim, which needs a non-empty run_id"
    if error.validator in ("enum", "pattern"):  # claims' own wording: jsonschema's message, shortened
        reason: str = error.message
        return reason if len(reason) <= _LONGEST_REASON else reason[: _LONGEST_REASON - 1] + "…"
    return describe_schema_error(error)
