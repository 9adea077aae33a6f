"""The Claude Code format plugin (`claude-code`): session transcripts under `~/.claude/projects/`, one
`<session-uuid>.jsonl` per session with its sub-agent files. Its verifier and rules are imported inside the
hooks; recognising needs only spec/records.py and read/layout.py (a first line at most)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

from sessaudit.formats.claude_code.read.layout import (
    companions,
    in_projects,
    session_of_subagent,
    session_stem,
)
from sessaudit.formats.claude_code.spec.records import VERSIONS, known_type
from sessaudit.plugin import FormatPlugin, OptionError, PluginOption, SourceOutcome, VerifyOptions
from sessaudit.rulebase import Rule

NAME: Final = "claude-code"
IDS: Final = re.compile(rb'"(?:sessionId|uuid)"\s*:\s*"')
LEAF: Final = re.compile(rb'"leafUuid"\s*:\s*"')
TYPE: Final = re.compile(rb'"type"\s*:\s*"([A-Za-z0-9_-]{1,64})"')
SNAPSHOT: Final = re.compile(rb'"snapshot"\s*:\s*\{')
LOOKED_AT: Final = 8  # lines of the head a recogniser reads


def first_line_announces(head: bytes) -> bool:
    """The first complete lines of `head` (or all of it, when it has no LF yet) are JSON objects of known
    record types, and one of the first few has a `sessionId` or `uuid`, is a summary with `leafUuid`, or is
    a `file-history-snapshot` with its `snapshot` (2.x files often open with one, spec §3.6). A byte
    search of those lines, no decode."""
    for line in head.split(b"\n")[:LOOKED_AT]:
        line = line.strip(b" \t\r")
        if not line:
            continue
        if not line.startswith(b"{"):
            return False
        found = TYPE.search(line)
        if found is None or not known_type(found.group(1).decode()):
            return False
        kind = found.group(1)
        if kind == b"summary" and LEAF.search(line) is not None:
            return True
        if kind == b"file-history-snapshot" and SNAPSHOT.search(line) is not None:
            return True
        if kind != b"summary" and IDS.search(line) is not None:
            return True
    return False


def _current(value: Any) -> Mapping[str, Any]:
    """`--current FILE` (shared with tiny-agent): a tool table overriding the replay policies of spec §10."""
    from sessaudit.formats.claude_code.recover.current import EXTRA, ToolTableError, load_tool_override

    try:
        return {EXTRA: load_tool_override(Path(value))}
    except ToolTableError as error:
        raise OptionError(str(error)) from None


OUTPUT: Final = "claude_code_output"


def native_repair_takeover(
    path: str, run: str | None, sequence: int | None, extras: Mapping[str, Any]
) -> int:
    """`seed --native --output FILE`: a repaired copy of the session file (native.py); the exit status."""
    output = extras.get(OUTPUT)
    if output is None:
        raise OptionError(
            "needs --output FILE (a new file for the repaired copy; the original is never written)"
        )
    from sessaudit.formats.claude_code.native import native_repair

    return native_repair(path, run, sequence, str(output))


OUTPUT_OPTION: Final = PluginOption(
    "--output",
    "Claude Code's native repair: the new file it writes (never an existing one).",
    ("seed",),
    parse=lambda value: {OUTPUT: str(value)},
    needs="--native",
)
NATIVE_OPTION: Final = PluginOption(
    "--native",
    "Write a copy of the session that `claude --resume` can continue (needs --output).",
    ("seed",),
    is_flag=True,
    takeover=native_repair_takeover,
)
# `seed --native` is Rivumi's flag too: the core hands it to the format whose source PATH is
NATIVE_REPAIR_OPTIONS: Final = (OUTPUT_OPTION, NATIVE_OPTION)


class ClaudeCode(FormatPlugin):
    name = NAME
    title = "Claude Code"
    versions = VERSIONS
    recognises = (
        "a session transcript: JSONL whose first line is a known record type with sessionId or uuid (or a "
        "summary with leafUuid); <uuid>.jsonl in a projects/<dir>/ folder even when damaged; its sub-agent "
        "files (<uuid>/subagents/agent-*.jsonl, or agent-*.jsonl beside it) belong to it"
    )
    shared_rules = ("SA301", "SA302", "SA303")
    reads = "path"
    extras = ("claude_code_tools", OUTPUT)  # recover/current.py EXTRA; seed --output
    options = (
        PluginOption(
            "--current",
            "Tool replay policies overriding its built-in table (one object, or a map by session id).",
            ("verify", "seed"),
            parse=_current,
            refusal="a Claude Code tool table",
        ),
        *NATIVE_REPAIR_OPTIONS,
    )

    timeline_marks: ClassVar[Mapping[tuple[str | None, str | None], str]] = {
        ("system", "compact_boundary"): "compaction",
    }

    def rule_phrases(self) -> Mapping[str, str]:
        from sessaudit.formats.claude_code.rules import CORE_RULE_PHRASES

        return CORE_RULE_PHRASES

    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        from sessaudit.formats.claude_code.rules import CLAUDE_CODE_RULES

        return (CLAUDE_CODE_RULES,)

    def sniff(self, head: bytes, real_path: str) -> bool:
        # a sub-agent file whose session file exists is verified with that session, never on its own
        return first_line_announces(head) and session_of_subagent(real_path) is None

    def owner(self, real_path: str) -> str | None:
        return session_of_subagent(real_path)

    def owned(self, real_path: str) -> Iterable[str]:
        return companions(real_path)

    def takes_walked(self, real_path: str) -> bool:
        return session_stem(real_path) is not None and in_projects(real_path)

    def verify_path(self, path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
        from sessaudit.formats.claude_code.verifier import verify_claude_code

        return verify_claude_code(path, real_path, options)

    def describe_plan(self, plan: dict[str, Any]) -> str | None:
        from sessaudit.formats.claude_code.recover.words import describe_plan

        return describe_plan(plan)

    def warehouse(self) -> Any:
        from sessaudit.formats.claude_code.warehouse.source import extract_source
        from sessaudit.warehouse.parts import WarehousePart

        return WarehousePart(extract_source)


PLUGIN: Final = ClaudeCode()
