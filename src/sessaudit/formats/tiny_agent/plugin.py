"""The tiny-agent format plugin (entry point `tiny-agent`): append-only JSONL session logs, v1 and v2.

Light on purpose: discovery asks it about every file, so its verifier, recovery planner and warehouse
extraction are imported inside the hooks, when a tiny-agent source is first met."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Final

from sessaudit.plugin import (
    FormatPlugin,
    LineTap,
    OptionError,
    PluginOption,
    SourceOutcome,
    VerifyOptions,
)
from sessaudit.rulebase import Rule

NAME: Final = "tiny-agent"
_V2_HEADER = re.compile(rb'"kind"\s*:\s*"header"')
_V1_HEADER = re.compile(rb'"type"\s*:\s*"session"')
_SESSION_FILE_NAME = re.compile(
    r"^.+_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}\.jsonl$"
)


def _current(value: Any) -> Mapping[str, Any]:
    from sessaudit.formats.tiny_agent.recover.current import CurrentFileError, load_current

    try:
        return {"current": load_current(Path(value))}
    except CurrentFileError as error:
        raise OptionError(str(error)) from None


class TinyAgent(FormatPlugin):
    name = NAME
    title = "tiny-agent"
    versions = ("1", "2")
    recognises = (
        "a JSONL file whose first line is a v2 header or a v1 session line; any named *.jsonl file; "
        "a walked .tiny-agent/sessions/<name>_<uuidv7>.jsonl"
    )
    shared_rules = ("SA301", "SA302", "SA303")
    reads = "file"
    extras = ("current",)
    options = (
        PluginOption(
            "--current",
            "The current agent configuration (one object, or a map by session id).",
            ("verify", "seed"),
            parse=_current,
            refusal="a tiny-agent configuration",
        ),
    )

    timeline_marks: ClassVar[Mapping[tuple[str | None, str | None], str]] = {
        ("record", "stepAttempt"): "model-request",
        ("entry", "compaction"): "compaction",
        ("record", "abortRequested"): "abort",
    }

    def rule_phrases(self) -> Mapping[str, str]:
        from sessaudit.formats.tiny_agent.rules import CORE_RULE_PHRASES

        return CORE_RULE_PHRASES

    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        from sessaudit.formats.tiny_agent.rules import TINY_AGENT_RULES

        return TINY_AGENT_RULES

    def sniff(self, head: bytes, real_path: str) -> bool:
        first_line = head.split(b"\n", 1)[0]
        return _V2_HEADER.search(first_line) is not None or _V1_HEADER.search(first_line) is not None

    def takes_named(self, given: str) -> bool:
        return given.endswith(".jsonl")  # the strictest reader: a broken header is corruption, not a skip

    def takes_walked(self, real_path: str) -> bool:
        path = Path(real_path)  # empty or headerless session files are damaged sessions, not skips
        return (
            _SESSION_FILE_NAME.match(path.name) is not None
            and path.parent.name == "sessions"
            and path.parent.parent.name == ".tiny-agent"
        )

    def verify_file(
        self,
        path: str,
        real_path: str,
        stream: BinaryIO,
        size: int,
        options: VerifyOptions,
        tap: LineTap | None,
    ) -> SourceOutcome:
        from sessaudit.formats.tiny_agent.verifier import verify_tiny_agent_file

        return verify_tiny_agent_file(path, real_path, stream, size, options, tap)

    def warehouse(self) -> Any:
        from sessaudit.formats.tiny_agent.warehouse.passes import SinglePass, WholeFile, extract_source
        from sessaudit.warehouse.parts import WarehousePart

        return WarehousePart(extract_source, one_pass=SinglePass, beside=WholeFile)

    def describe_plan(self, plan: dict[str, Any]) -> str | None:
        from sessaudit.formats.tiny_agent.recover.words import describe_plan

        return describe_plan(plan)


PLUGIN: Final = TinyAgent()
