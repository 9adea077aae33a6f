"""The Half-Pi format plugin (entry point `half-pi`): a SQLite store with its -wal and -shm, copied before
SQLite opens it. Its verifier, claims checks and warehouse extraction are imported inside the hooks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from sessaudit.formats.half_pi.recognise import is_store, owned_by_store, store_of_companion
from sessaudit.model import Finding
from sessaudit.plugin import FormatPlugin, OptionError, PluginOption, SourceOutcome, VerifyOptions
from sessaudit.rulebase import Rule

NAME: Final = "half-pi"


def _claims(value: Any) -> Mapping[str, Any]:
    from sessaudit.formats.half_pi.claims.claims_file import ClaimsFileError, load_claims

    try:
        return {"claims": tuple(load_claims(Path(value))), "claims_path": str(value)}
    except ClaimsFileError as error:
        raise OptionError(str(error)) from None


class HalfPi(FormatPlugin):
    name = NAME
    title = "Half-Pi"
    versions = ("1",)
    recognises = (
        "an SQLite file whose schema creates sessions and messages (read as bytes, its -wal too); "
        "its -wal, -shm or -journal named stands for it"
    )
    shared_rules = ("SA301", "SA302")
    reads = "path"
    extras = ("claims", "claims_path")
    options = (
        PluginOption(
            "--claims",
            "Claimed tool calls of Half-Pi approvals (schemas/claims.v1.schema.json): does each match?",
            ("verify",),
            parse=_claims,
        ),
    )

    def rule_phrases(self) -> Mapping[str, str]:
        from sessaudit.formats.half_pi.rules import CORE_RULE_PHRASES

        return CORE_RULE_PHRASES

    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        from sessaudit.formats.half_pi.rules import HALF_PI_RULES

        return (HALF_PI_RULES,)

    def sniff(self, head: bytes, real_path: str) -> bool:
        return is_store(head, real_path)

    def owner(self, real_path: str) -> str | None:
        return store_of_companion(real_path)

    def owned(self, real_path: str) -> Iterable[str]:
        return owned_by_store(real_path)

    def verify_path(self, path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
        from sessaudit.formats.half_pi.verifier import verify_half_pi

        return verify_half_pi(path, real_path, options)

    def conclude(self, options: VerifyOptions, carried: Sequence[Mapping[str, Any]]) -> list[Finding]:
        """SA695 for every `--claims` entry whose approval no verified store holds."""
        from sessaudit.rules import finding

        answered = {index for carry in carried for index in carry.get("answered", ())}
        return [
            finding(
                "SA695",
                f"claim {claim.pointer}: approval {claim.approval_id} ({claim.tool}) is in no Half-Pi store "
                "of this audit",
                path=options.extra("claims_path"),
                pointer=claim.pointer,
                evidence={"approval_id": claim.approval_id},
            )
            for index, claim in enumerate(options.extra("claims", ()))
            if index not in answered
        ]

    def warehouse(self) -> Any:
        from sessaudit.formats.half_pi.warehouse.source import extract_source
        from sessaudit.warehouse.parts import WarehousePart

        return WarehousePart(extract_source, counts_messages=True)


PLUGIN: Final = HalfPi()
