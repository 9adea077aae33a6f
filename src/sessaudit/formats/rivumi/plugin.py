"""The Rivumi format plugin (entry point `rivumi`): a run directory with `events.jsonl` and an atomically
replaced `session.json`. Its verifier, seeds and warehouse extraction are imported inside the hooks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from sessaudit.formats.rivumi.recognise import RECORDS, rivumi_run_directory
from sessaudit.plugin import FormatPlugin, PluginOption, SourceOutcome, VerifyOptions
from sessaudit.rulebase import Rule

NAME: Final = "rivumi"


def _native_seed(path: str, run: str | None, sequence: int | None, extras: Mapping[str, Any]) -> int:
    from sessaudit.formats.rivumi.seed.native_output import native_seed

    return native_seed(path, run, sequence)  # Rivumi's seed takes none of the other options (`extras`)


class Rivumi(FormatPlugin):
    name = NAME
    title = "Rivumi"
    versions = ("1",)
    recognises = (
        "a run directory: session.json with schema_version, or events.jsonl of events (damaged runs too); "
        "its events.jsonl or session.json named stands for it"
    )
    shared_rules = ("SA301", "SA302", "SA303")
    reads = "path"
    directory_records = RECORDS
    options = (
        PluginOption(
            "--native",
            "Print the source system's own seed, byte for byte (Rivumi: its --fork-from-event).",
            ("seed",),
            is_flag=True,
            takeover=_native_seed,
        ),
    )

    timeline_marks: ClassVar[Mapping[tuple[str | None, str | None], str]] = {
        ("event", "model.requested"): "model-request",
        ("event", "session.resumed"): "resume",
        ("event", "run.cancelled"): "abort",
    }

    def rule_phrases(self) -> Mapping[str, str]:
        from sessaudit.formats.rivumi.rules import CORE_RULE_PHRASES

        return CORE_RULE_PHRASES

    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        from sessaudit.formats.rivumi.rules import RIVUMI_RULES

        return (RIVUMI_RULES,)

    def is_directory_source(self, real_path: str) -> bool:
        return rivumi_run_directory(real_path)

    def verify_path(self, path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
        from sessaudit.formats.rivumi.verify.verifier import verify_rivumi

        return verify_rivumi(path, real_path, options)

    def warehouse(self) -> Any:
        from sessaudit.formats.rivumi.warehouse.source import extract_source
        from sessaudit.warehouse.parts import WarehousePart

        return WarehousePart(extract_source)

    def describe_native(self, native: dict[str, Any]) -> list[str]:
        from sessaudit.formats.rivumi.native.words import describe_resume

        return describe_resume(native)


PLUGIN: Final = Rivumi()
