"""The rule catalogue: every finding's stable code, name, default level, verdict effect and documentation."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sessaudit.model import Finding, Location
from sessaudit.rulebase import (
    NEEDS_RECOVERY,
    UNREADABLE,
    UNSUPPORTED,
    E,
    N,
    Rule,
    W,
    _rule,
)
from sessaudit.verdicts import Verdict

if TYPE_CHECKING:
    from sessaudit.plugin import FormatPlugin

_CORE_RULES: tuple[Rule, ...] = (
    # --- inputs and evidence --------------------------------------------------------------
    _rule(
        "SA001",
        "input-unreadable",
        E,
        UNREADABLE,
        "A named input could not be opened or read.",
        """The path named on the command line does not exist, is not a regular file or directory,
          or could not be read. Nothing about its contents is known; the audit is incomplete
          (exit 3).""",
        formats=(),
        fix="""Check the path: it must name an existing regular file or directory that the user running
          sessaudit may read (permissions, a broken symlink, a typo). Re-run once it is readable;
          nothing was verified.""",
        example=(
            "`sessaudit verify sessions/missing.jsonl`, where the file does not exist (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  sessions/missing.jsonl\n"
            "    error   SA001 input-unreadable: sessions/missing.jsonl: no such file or directory\n"
            "```"
        ),
    ),
    _rule(
        "SA002",
        "input-unrecognised",
        E,
        UNSUPPORTED,
        "A named input matches no supported format.",
        """A file named on the command line is not {inputs}, as judged by content (CONTRACT §1). Files
          met during a directory walk are listed under `skipped` instead and do not affect the exit
          code.""",
        formats=(),
        fix="""Name {inputs-named}; to audit a whole tree, name the directory instead so unrelated files
          are only listed as skipped.""",
        example=(
            "`sessaudit verify notes.txt`, a plain text file (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  notes.txt\n"
            "    error   SA002 input-unrecognised: notes.txt: not a session log of a known format\n"
            "```"
        ),
    ),
    _rule(
        "SA003",
        "version-unsupported",
        E,
        UNSUPPORTED,
        "The input is of a version this release cannot verify.",
        """The input was recognised, but its format or version ({unsupported}) is not verified by this
          release.{unsupported-notes}""",
        formats=(),
        fix="""Verify the input with a sessaudit release that supports this version, or with the source
          system's own tools; `native` shows what its reducer or readers answer in the meantime. Do not
          treat the input as verified.""",
    ),
    _rule(
        "SA004",
        "evidence-changed",
        E,
        None,
        "The evidence changed inside the verified range while it was read.",
        """The bytes that were verified hash differently when read again after verification: the file
          was rewritten, truncated or replaced during the audit. The verdict describes the bytes as
          first read; the audit is incomplete (exit 3).""",
        formats=(),
        fix="""Stop the process that writes the evidence (or copy it first, e.g. `cp -p`) and run the audit
          again on a file nobody is changing; this report does not describe the file as it is now.""",
        example=(
            "A session whose already-verified bytes were rewritten by another process while "
            "sessaudit read it (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  session.jsonl\n"
            "    error   SA004 evidence-changed: session.jsonl: the verified bytes were rewritten "
            "during the audit (sha256 differs); the report describes the bytes as first read\n"
            "```"
        ),
    ),
    _rule(
        "SA005",
        "evidence-grew",
        N,
        None,
        "The file grew while it was verified; the snapshot at open was verified.",
        """An append-only log was appended to while sessaudit read it. Only the bytes present when the
          file was opened were verified (never half a line); the appended bytes are not part of the
          verdict.""",
        formats=(),
        fix="""Nothing to fix: an agent was still appending. Re-run after the agent has stopped to verify the
          new bytes as well.""",
        example=(
            "A session that an agent appended 44 bytes to while sessaudit read it:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  session.jsonl\n"
            "    note    SA005 evidence-grew: session.jsonl: the file grew by 44 bytes during the audit\n"
            "```"
        ),
    ),
    _rule(
        "SA006",
        "input-empty",
        N,
        None,
        "A directory named on the command line holds no session log; nothing in it was verified.",
        """The walk of a named directory found no {input-kinds} (its files, if any, are listed under
          `skipped`). Nothing was verified, so nothing passed: a CI step pointed at the wrong path, or
          at logs not written yet, must not look like a clean audit. The audit is incomplete (exit 3)
          unless `--allow-empty` is given; the note is reported either way.""",
        formats=(),
        fix="""Check the path (a typo, a build step that did not write its logs, logs moved elsewhere) and
          name the folder that holds the sessions. Where an empty folder is expected (no agent ran), pass
          `--allow-empty`.""",
        example=(
            "`sessaudit verify build/logs`, where `build/logs/` holds only `notes.txt` (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  build/logs\n"
            "    note    SA006 input-empty: build/logs: no session log was found in this directory; "
            "nothing was verified\n"
            "```"
        ),
    ),
    # --- resource limits (sessaudit.limits; each makes the audit incomplete, exit 3) ----------
    _rule(
        "SA010",
        "line-too-long",
        E,
        UNREADABLE,
        "A line is longer than `--max-line-bytes`; it was hashed and counted but not read.",
        """A JSONL line ({jsonl-lines}, or a torn tail) holds more bytes before its LF than
          `--max-line-bytes` allows (default 32 MiB). sessaudit keeps memory bounded: the line's bytes
          are hashed and counted, never held, so its content is not verified and semantic reduction
          stops there (framing, JSON and sequence checks continue on later lines). The finding gives
          the line, its byte offset and its length; the audit is incomplete (exit 3). `native` answers
          describe only what was read.""",
        formats=(),
        fix="""If the line is a legitimate large record (a big tool result), re-run with a larger limit, e.g.
          `sessaudit verify --max-line-bytes 268435456 PATH` (peak memory grows to a few times the
          limit). A line of gigabytes, or of NUL bytes, is damage: restore the file from a backup.""",
        example=(
            "`sessaudit verify --max-line-bytes 1000 long.jsonl`, whose line 2 holds 40,000,000 bytes "
            "(exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  long.jsonl\n"
            "    error   SA010 line-too-long [line 2, byte 228]: line 2 is 40000000 bytes long (without its "
            "LF), over the --max-line-bytes limit of 1000 bytes: it was hashed but not read or verified\n"
            "```"
        ),
    ),
    _rule(
        "SA011",
        "nesting-too-deep",
        E,
        UNREADABLE,
        "A JSON value nests arrays and objects deeper than 512 levels; it was not verified.",
        """Strict JSON decoding stops at 512 levels of nested arrays and objects (Python's decoder
          recurses once per level, so the limit is fixed to keep every verdict independent of the call
          stack). The value is not judged: it is not called malformed, since the source system may
          still accept it; the line is reported with its byte offset and JSON pointer and the audit is
          incomplete (exit 3).{nesting-notes}""",
        formats=(),
        fix="""No session log nests this deep on purpose: inspect the line (`sed -n 'LINEp' FILE | head -c
          2000`) and restore the file from a backup. The limit is not configurable.""",
        example=("{nesting-example}"),
    ),
    _rule(
        "SA012",
        "file-too-large",
        E,
        UNREADABLE,
        "A file that must be read whole is larger than `--max-file-bytes`; it was not read.",
        """{held-whole}; such a file is refused above `--max-file-bytes` (default 128
          MiB{held-whole-limits}).{held-whole-notes} The source is not verified (verdict `unreadable`)
          and the audit is incomplete (exit 3).{held-whole-after}""",
        formats=(),
        fix="""Re-run with a larger limit, e.g. `sessaudit verify --max-file-bytes 1073741824 PATH`: peak
          memory grows to {held-whole-memory}.{held-whole-fix}""",
        example=("{held-whole-example}"),
    ),
    _rule(
        "SA013",
        "too-many-files",
        E,
        UNREADABLE,
        "A directory walk met more entries than `--max-files`; the rest was not looked at.",
        """A directory named on the command line holds (at any depth) more entries than `--max-files`
          (default 100,000). The walk stops there, so sessions past the limit are neither verified nor
          listed as skipped; the directory is reported as a source with verdict `unreadable` and the
          audit is incomplete (exit 3). The limit bounds time and memory (each entry is sniffed, and each
          folder is sorted before it is walked).""",
        formats=(),
        fix="""Name narrower directories{narrower}, or raise the limit with `sessaudit verify --max-files N
          DIR`.""",
        example=(
            "`sessaudit verify --max-files 5 logs`, where `logs/` holds six files (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  logs\n"
            "    error   SA013 too-many-files: logs: the walk met more than 5 directory entries (the "
            "--max-files limit) and stopped; the sessions past that point were neither verified nor listed\n"
            "```"
        ),
    ),
    _rule(
        "SA014",
        "too-many-findings",
        E,
        UNREADABLE,
        "A source produced more findings than `--max-findings`; checking stopped there.",
        """One source ({findings-sources}) reached `--max-findings` findings (default 10,000). Each
          finding costs memory and time, and a hostile line such as a transaction of millions of tiny
          facts would otherwise make millions, so checking stops at the line named: later lines are
          hashed and counted but not checked, and findings past the limit are not listed. The verdict
          is at least `unreadable` and the audit is incomplete (exit 3).""",
        formats=(),
        fix="""A source this damaged is best restored from a backup. To see every finding, re-run with a
          larger limit, e.g. `sessaudit verify --max-findings 1000000 PATH` (about 5 KiB of memory per
          finding).""",
        example=(
            "`sessaudit verify --max-findings 5 facts.jsonl`, whose line 2 is a transaction of 20 facts "
            "that are all `0` (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  facts.jsonl\n"
            "    error   SA014 too-many-findings [line 2]: 5 findings were recorded (the --max-findings "
            "limit); checking stopped at line 2 and the rest of the file was hashed but not verified\n"
            "```"
        ),
    ),
    # --- baselines (`--baseline FILE`) ---------------------------------------------------
    _rule(
        "SA020",
        "baseline-finding-absent",
        N,
        None,
        "A finding recorded in the baseline no longer occurs.",
        """The `--baseline` file holds a finding (matched by its fingerprint, the one SARIF writes as
          `partialFingerprints`) that this audit did not find, or found fewer times than recorded. The
          problem was fixed, the log was removed, or it is no longer audited from the same working
          directory. The finding is located at the baseline entry (`/findings/<i>`); it never changes a
          verdict.""",
        formats=(),
        fix="""Refresh the baseline with `--write-baseline FILE` so it no longer carries the fixed
          finding, or `--ignore baseline-finding-absent` if stale entries should not be reported.""",
        example=(
            "`sessaudit verify logs/ --write-baseline baseline.json`, then the corrupt last line of "
            "`logs/a.jsonl` is removed and `sessaudit verify logs/ --baseline baseline.json` runs:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  baseline.json\n"
            "    note    SA020 baseline-finding-absent [/findings/0]: baselined SA106 (malformed-json) in "
            "logs/a.jsonl no longer occurs: expected a JSON value, found 'n'\n"
            "```"
        ),
    ),
)

# the open-work rules every format with runs may give (FormatPlugin.shared_rules names them)
_OPEN_WORK_RULES: tuple[Rule, ...] = (
    # --- open work ------------------------------------------------------------------------
    _rule(
        "SA301",
        "run-left-open",
        W,
        NEEDS_RECOVERY,
        "An operation was left open.",
        """The log ends while a run or compaction is open: the agent stopped (crash, kill, power loss)
          before the terminal record. The finding names the recovery condition; `runs[].recovery` says
          what is known, what is not and what comes next.{open-run-notes}""",
        native_code=None,
        fix="""Continue the run with the source system's own recovery ({own-recovery}), or start a new
          session from `sessaudit seed PATH --run RUN_ID`. Check `runs[].recovery` first: it says what
          is known and what will happen next.""",
    ),
    _rule(
        "SA302",
        "effect-outcome-unknown",
        W,
        NEEDS_RECOVERY,
        "A tool's intent was recorded but not its result: it may or may not have run.",
        """A `toolStarted` intent with replay policy `never` has no result. The effect may have
          happened or not; nobody can tell from the log, and the tool must not be re-run blindly.
          Reported also inside a finished (failed) run.{unknown-outcome-notes}""",
        native_code=None,
        fix="""Find out by hand whether the effect happened (look at the files, repository, remote system or
          the Hand the tool touched) before continuing; do not re-run the tool blindly. `sessaudit seed`
          gives a fork seed that states the unknown effect explicitly.""",
    ),
    _rule(
        "SA303",
        "replayable-effect-pending",
        N,
        NEEDS_RECOVERY,
        "A safe-to-replay tool's intent has no result.",
        """A `toolStarted` intent with replay policy `safe` has no result; recovery may re-run it into
          its provisioned result slot when the declaration and environment still
          match.{safe-replay-notes}""",
        native_code=None,
        fix="""{safe-replay-fix}""",
    ),
)

CORE_CODES: frozenset[str] = frozenset(rule.code for rule in _CORE_RULES + _OPEN_WORK_RULES)


def _or_list(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _clauses(parts: list[str]) -> str:
    text = ", and ".join(parts)
    return text[:1].upper() + text[1:]


def _sentences(parts: list[str]) -> str:
    return "".join(" " + part for part in parts)  # after what precedes the place


def _first(parts: list[str]) -> str:
    return parts[0]


# The places in the core rules' texts where each format says its own part (FormatPlugin.rule_phrases):
# how the formats' phrases are joined there, taken in registry order (or, `True`, by format name).
PLACES: dict[str, tuple[Callable[[list[str]], str], bool]] = {
    "inputs": (_or_list, False),  # SA002: "a <format>'s session, a run directory or a store"
    "inputs-named": (_or_list, False),
    "input-kinds": (_or_list, False),  # SA006
    "unsupported": ("; ".join, False),  # SA003
    "unsupported-notes": (_sentences, False),
    "jsonl-lines": (", ".join, False),  # SA010
    "nesting-notes": (_sentences, False),  # SA011
    "nesting-example": (_first, False),
    "held-whole": (_clauses, False),  # SA012
    "held-whole-limits": ("".join, False),
    "held-whole-notes": (_sentences, False),
    "held-whole-after": (_sentences, False),
    "held-whole-memory": (" and ".join, True),
    "held-whole-fix": (_sentences, False),
    "held-whole-example": (_first, False),
    "narrower": ("".join, False),  # SA013
    "findings-sources": (", ".join, False),  # SA014
    "open-run-notes": (_sentences, False),  # SA301
    "own-recovery": ("; ".join, False),
    "unknown-outcome-notes": (_sentences, False),  # SA302
    "safe-replay-notes": (_sentences, False),  # SA303
    "safe-replay-fix": (_sentences, False),
}
_PLACE = re.compile(r"\{([a-z-]+)\}")


# each installed format's name and its phrases for the core's places (FormatPlugin.rule_phrases)
Said = list[tuple[str, Mapping[str, str]]]


def _filled(rule: Rule, said: Said) -> Rule:
    """A core rule with each place in its texts filled with the installed formats' phrases ("" when no
    format says anything there: a sentence's place then leaves no trace)."""
    if "{" not in rule.doc + rule.fix + rule.example:
        return rule

    def fill(match: re.Match[str]) -> str:
        place = match.group(1)
        join, by_name = PLACES[place]
        found = [(name, phrases[place]) for name, phrases in said if place in phrases]
        if by_name:
            found.sort()
        return join([phrase for _, phrase in found]) if found else ""

    def sentences(text: str) -> str:
        return " ".join(_PLACE.sub(fill, text).split())

    return replace(
        rule, doc=sentences(rule.doc), fix=sentences(rule.fix), example=_PLACE.sub(fill, rule.example)
    )


class _Catalogue:
    """The whole catalogue: the core's tables and every installed format's, each table a block of rules
    shown together, the blocks in the order of their first codes. A shared rule's `formats` are the
    formats that declare it, in registry order. Built on first use (the registry loads the plugins)."""

    def __init__(self) -> None:
        from sessaudit.registry import registry

        installed = registry()
        said = [(plugin.name, plugin.rule_phrases()) for plugin in installed.plugins]
        core = tuple(_filled(rule, said) for rule in _CORE_RULES)
        blocks: list[tuple[Rule, ...]] = [core, self._shared(installed.plugins, said)]
        blocks += [tuple(table) for plugin in installed.plugins for table in plugin.rule_tables() if table]
        blocks.sort(key=lambda block: block[0].code)
        self.rules: tuple[Rule, ...] = tuple(rule for block in blocks for rule in block)
        self.by_code = {rule.code: rule for rule in self.rules}
        self.by_name = {rule.name: rule for rule in self.rules}

    @staticmethod
    def _shared(plugins: Sequence[FormatPlugin], said: Said) -> tuple[Rule, ...]:
        return tuple(
            replace(
                _filled(rule, said),
                formats=tuple(plugin.name for plugin in plugins if rule.code in plugin.shared_rules),
            )
            for rule in _OPEN_WORK_RULES
        )


_catalogue: _Catalogue | None = None


def catalogue() -> _Catalogue:
    global _catalogue
    if _catalogue is None:
        _catalogue = _Catalogue()
    return _catalogue


def reset_catalogue() -> None:
    """Forget the catalogue (the registry changed); the next use rebuilds it."""
    global _catalogue
    _catalogue = None


def __getattr__(name: str) -> Any:
    if name == "RULES":  # every rule, in catalogue order (a module attribute built on first use)
        return catalogue().rules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rule(code: str) -> Rule:
    return catalogue().by_code[code]


def find_rule(code_or_name: str) -> Rule | None:
    """A rule by its code (`SA205`) or its name (`seq-mismatch`), case-insensitively for codes."""
    found = catalogue()
    return found.by_code.get(code_or_name.upper()) or found.by_name.get(code_or_name)


def finding(
    code: str,
    message: str,
    *,
    path: str | None = None,
    session_id: str | None = None,
    line: int | None = None,
    byte_offset: int | None = None,
    seq: int | None = None,
    pointer: str | None = None,
    table: str | None = None,
    rowid: int | None = None,
    evidence: dict[str, Any] | None = None,
    native_code: str | None = None,
) -> Finding:
    """Build a finding for catalogue rule `code`; severity, name and native code come from the catalogue."""
    entry = catalogue().by_code[code]
    return Finding(
        rule=entry.code,
        name=entry.name,
        severity=entry.severity,
        message=message,
        location=Location(
            path=path,
            session_id=session_id,
            line=line,
            byte_offset=byte_offset,
            seq=seq,
            pointer=pointer,
            table=table,
            rowid=rowid,
        ),
        native_code=native_code if native_code is not None else entry.native_code,
        evidence=evidence or {},
    )


def verdict_of(findings: list[Finding], *, open_work: bool = False) -> Verdict:
    """The worst verdict effect of these findings (catalogue data, never severity overrides).

    `open_work` adds `needs-recovery` (an open run, or an effect of unknown outcome)."""
    result = Verdict.NEEDS_RECOVERY if open_work else Verdict.CLEAN
    by_code = catalogue().by_code
    for item in findings:
        effect = by_code[item.rule].verdict
        if effect is not None and effect.rank > result.rank:
            result = effect
    return result


def in_session(item: Finding, session_id: str | None) -> Finding:
    """`item` located in session `session_id` when it names no session yet (a file-level finding of a
    one-session source); an unreadable file (SA001) stays where it is."""
    if session_id is None or item.location.session_id is not None or item.rule == "SA001":
        return item
    location = Location(**{**item.location.model_dump(), "session_id": session_id})
    return item.model_copy(update={"location": location})
