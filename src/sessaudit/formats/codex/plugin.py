"""The Codex format plugin (`codex`): OpenAI Codex CLI rollouts under `~/.codex/sessions/YYYY/MM/DD/` and
`~/.codex/archived_sessions/`, one `rollout-<local time>-<uuid>.jsonl` per session. Its verifier and rules
are imported inside the hooks; recognising needs only read/layout.py (a first line at most)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

from sessaudit.formats.codex.read.layout import in_home
from sessaudit.formats.codex.spec.records import VERSIONS
from sessaudit.plugin import FormatPlugin, OptionError, PluginOption, SourceOutcome, VerifyOptions
from sessaudit.rulebase import Rule

NAME: Final = "codex"
META: Final = re.compile(
    rb'^\{\s*"timestamp"\s*:\s*"[^"]{10,40}"\s*,\s*"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:\s*\{'
)
OUTPUT: Final = "codex_output"


def first_line_announces(head: bytes) -> bool:
    """The first line opens as Codex writes a session_meta: `{"timestamp":"…","type":"session_meta",
    "payload":{` (spec §3.1, §3.2). A byte match of the line's start, no decode."""
    return META.match(head.lstrip(b" \t")) is not None


def _current(value: Any) -> Mapping[str, Any]:
    """`--current FILE` (shared with the other formats taking a tool table): Codex's replay policies."""
    from sessaudit.formats.codex.recover.current import EXTRA, load_tool_override
    from sessaudit.tooltables import ToolTableError

    try:
        return {EXTRA: load_tool_override(Path(value))}
    except ToolTableError as error:
        raise OptionError(str(error)) from None


def native_repair_takeover(
    path: str, run: str | None, sequence: int | None, extras: Mapping[str, Any]
) -> int:
    """`seed --native --output FILE`: a repaired copy of the rollout (native.py); the exit status."""
    output = extras.get(OUTPUT)
    if output is None:
        raise OptionError(
            "needs --output FILE (a new file for the repaired copy; the original is never written)"
        )
    from sessaudit.formats.codex.native import native_repair

    return native_repair(path, run, sequence, str(output))


class Codex(FormatPlugin):
    name = NAME
    title = "Codex"
    versions = VERSIONS
    recognises = (
        "an OpenAI Codex CLI rollout: JSONL whose first line is a session_meta "
        '({"timestamp","type":"session_meta","payload"}); rollout-<local time>-<uuid>.jsonl in a '
        "sessions/YYYY/MM/DD/ or archived_sessions/ folder even when damaged"
    )
    shared_rules = ("SA301", "SA302", "SA303")
    reads = "path"
    extras = ("codex_tools", OUTPUT)  # recover/current.py EXTRA; seed --output
    options = (
        PluginOption(
            "--current",
            "Tool replay policies overriding its built-in table (one object, or a map by session id).",
            ("verify", "seed"),
            parse=_current,
            refusal="a Codex tool table",
        ),
        PluginOption(
            "--output",
            "Codex's native repair: the new file it writes (never an existing one).",
            ("seed",),
            parse=lambda value: {OUTPUT: str(value)},
            needs="--native",
        ),
        PluginOption(
            "--native",
            "Write a copy of the rollout that `codex resume` can continue without running a call again "
            "(needs --output).",
            ("seed",),
            is_flag=True,
            takeover=native_repair_takeover,
        ),
    )

    timeline_marks: ClassVar[Mapping[tuple[str | None, str | None], str]] = {
        ("compacted", None): "compaction",
        ("event_msg", "context_compacted"): "compaction",
        ("event_msg", "turn_aborted"): "abort",
    }

    def rule_phrases(self) -> Mapping[str, str]:
        from sessaudit.formats.codex.rules import CORE_RULE_PHRASES

        return CORE_RULE_PHRASES

    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        from sessaudit.formats.codex.rules import CODEX_RULES

        return (CODEX_RULES,)

    def sniff(self, head: bytes, real_path: str) -> bool:
        return first_line_announces(head)

    def takes_walked(self, real_path: str) -> bool:
        return in_home(real_path)

    def verify_path(self, path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
        from sessaudit.formats.codex.verifier import verify_codex

        return verify_codex(path, real_path, options)

    def describe_plan(self, plan: dict[str, Any]) -> str | None:
        from sessaudit.formats.codex.recover.words import describe_plan

        return describe_plan(plan)

    def warehouse(self) -> Any:
        from sessaudit.formats.codex.warehouse.source import extract_source
        from sessaudit.warehouse.parts import WarehousePart

        return WarehousePart(extract_source)


PLUGIN: Final = Codex()
