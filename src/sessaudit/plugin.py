"""What every format verifier returns to the engine, and the input it is handed."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, ClassVar, Final, Protocol

from sessaudit.framing import Line
from sessaudit.limits import DEFAULT_LIMITS, Limits
from sessaudit.model import Finding, Session
from sessaudit.rulebase import Rule


@dataclass(slots=True)
class FileRead:
    """One file a verifier read: its path as reported, the byte range verified and that range's hash."""

    path: str
    real_path: str
    bytes: int
    sha256: str
    # the file's size when it was opened; more than `bytes` when the file shrank while it was read
    opened_bytes: int | None = None


@dataclass(slots=True)
class SourceOutcome:
    """A verifier's answer for one source; the engine adds evidence re-hashing and the source verdict."""

    format: str
    format_version: str | None
    files: list[FileRead]
    sessions: list[Session] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    native: dict[str, Any] = field(default_factory=dict)
    # what this source tells its own plugin's `conclude` after the last source (the plugin's data, e.g. the
    # indices of the option entries it answered)
    carry: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, init=False)
class VerifyOptions:
    """What a verifier may be told beyond the bytes: a chosen fork point, the limits, and the values of the
    options format plugins declare (`FormatPlugin.options`), by name, in `extras`.

    `VerifyOptions(current=..., claims=...)`: a keyword that is not one of the fields below is such a
    plugin option; `audit()` refuses one no installed plugin declares (a typo never goes unnoticed)."""

    fork_run: str | None  # `sessaudit seed --run`: the run whose seed `fork_sequence` moves
    fork_sequence: int | None  # `sessaudit seed --sequence N`
    limits: Limits  # `--max-line-bytes` and the other resource limits (sessaudit.limits)
    allow_empty: bool  # `--allow-empty`: a named directory without a session log does not make the
    # audit incomplete (its SA006 note is still reported)
    extras: Mapping[str, Any]

    def __init__(
        self,
        *,
        fork_run: str | None = None,
        fork_sequence: int | None = None,
        limits: Limits = DEFAULT_LIMITS,
        allow_empty: bool = False,
        extras: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        object.__setattr__(self, "fork_run", fork_run)
        object.__setattr__(self, "fork_sequence", fork_sequence)
        object.__setattr__(self, "limits", limits)
        object.__setattr__(self, "allow_empty", allow_empty)
        object.__setattr__(self, "extras", {**(extras or {}), **options})

    def extra(self, name: str, default: Any = None) -> Any:
        """A plugin option's value (`default` when it was not given)."""
        value = self.extras.get(name)
        return default if value is None else value


DEFAULT_OPTIONS = VerifyOptions()

# A line's value, handed to a LineTap, when the line could not be decoded.
UNDECODED: Final[Any] = object()


class LineTap(Protocol):
    """Sees each line a line-by-line verifier has just checked, in order, with its decoded value (or
    UNDECODED), the session id its header gave, and the findings so far (a list that only grows while the
    file is read). `sessaudit load` extracts rows this way in the verifier's own pass."""

    def __call__(self, line: Line, value: Any, session_id: str | None, findings: list[Finding]) -> None: ...


def source_sha256(files: list[FileRead]) -> str | None:
    """One file: its hash; several: sha256 of `<sha256>  <relative path>\\n` lines sorted by path.

    Paths are relative to the first file's folder (a run directory, a store's folder), so
    the hash does not depend on how the source was named on the command line."""
    if not files:
        return None
    if len(files) == 1:
        return files[0].sha256
    root = os.path.dirname(files[0].path)
    lines = sorted(f"{item.sha256}  {os.path.relpath(item.path, root or '.')}\n" for item in files)
    return hashlib.sha256("".join(lines).encode()).hexdigest()


class OptionError(Exception):
    """A plugin option's value is unusable (a file that cannot be read, not valid): a usage error, exit 2."""


# what a takeover is handed: the named path, `--run`, `--sequence`, and the VerifyOptions extras of the
# other plugin options given (each parsed by its plugins, e.g. an `--output FILE` its format declares)
Takeover = Callable[[str, str | None, int | None, Mapping[str, Any]], int]


@dataclass(frozen=True, slots=True)
class PluginOption:
    """A command-line option a format declares, e.g. `--claims FILE` on `verify`.

    `parse(value)` turns the option's value (a path, or True for a flag) into VerifyOptions extras (a
    mapping merged into them; its keys are the plugin's own `extras`), or raises OptionError. A `takeover`
    flag instead hands the whole command to `takeover(path, run, sequence, extras)`, which prints the
    source system's own answer and returns the exit status (e.g. `seed --native`); such an answer is exact
    bytes, so `--redact` refuses it.

    Several formats may declare one flag (`--current`, `seed --native`): the command gets one option, and
    the declarations must agree on `is_flag` and `metavar` (and on being a takeover on a command both
    declare it for), else the later plugin is set aside as broken. A value goes to every declaring plugin's
    `parse`; it is a usage error only when all of them refuse it (each one's reason is named, introduced by
    `refusal`, e.g. "not a tool table of the format"). A takeover is answered by the declaring plugin whose
    source the named path is (docs/architecture.md)."""

    flag: str  # "--claims"
    help: str
    commands: tuple[str, ...]  # the sessaudit commands that take it: "verify", "seed"
    is_flag: bool = False
    metavar: str = "FILE"
    parse: Callable[[Any], Mapping[str, Any]] | None = None
    takeover: Takeover | None = None
    # what its parse accepts, as said when every declaring plugin refuses a value ("not " + refusal); by
    # default the plugin's title
    refusal: str = ""
    # a flag this one is meaningless without (`seed --output FILE` needs `--native`): refused without it
    needs: str = ""

    @property
    def dest(self) -> str:
        return "plugin_" + self.flag.lstrip("-").replace("-", "_")


# what a fact can be on a timeline (FormatPlugin.timeline_kind): a person's message, a model request
# starting, a model's answer, a compaction of the context, an abort asked for, a resumed session
TIMELINE_KINDS: Final = ("user", "model-request", "model", "compaction", "abort", "resume")


class FormatPlugin:
    """One input format as the core sees it: a plugin object registered under the `sessaudit.formats`
    entry points (docs/architecture.md). Subclass it, set the class attributes, override what applies:
    every hook has a do-nothing default. Its hooks must import the format's heavy modules lazily (inside
    the hook), so that a format's code is loaded only when a source of it is met."""

    name: str = ""  # as in reports and the entry point: lower-case letters, digits, "-"
    title: str = ""  # as in prose (capitals as its authors write them)
    versions: tuple[str, ...] = ()  # the format versions it verifies
    recognises: str = ""  # one line for `sessaudit formats`: what it takes for a source of its own
    # catalogue rules the core owns that this format's sources can give (SA301 run-left-open, ...)
    shared_rules: tuple[str, ...] = ()
    reads: str = "file"  # "file": verify_file gets the open file; "path": verify_path reads itself
    # file names inside one of its directory sources that, named on the command line, stand for it
    directory_records: tuple[str, ...] = ()
    options: tuple[PluginOption, ...] = ()
    extras: tuple[str, ...] = ()  # the VerifyOptions extras its verifier reads (its options' values)
    # (facts kind, type) -> its TIMELINE_KINDS word, where the message role alone does not tell
    timeline_marks: ClassVar[Mapping[tuple[str | None, str | None], str]] = {}

    # --- the rule catalogue ----------------------------------------------------------------------
    def rule_tables(self) -> Sequence[Sequence[Rule]]:
        """The format's rules, as blocks shown together; the catalogue orders all blocks by first code."""
        return ()

    def rule_phrases(self) -> Mapping[str, str]:
        """This format's passages in the core rules' texts, by place (sessaudit.rules.PLACES)."""
        return {}

    # --- recognising sources (CONTRACT §1: by content, leniently) ------------------------------------
    def is_directory_source(self, real_path: str) -> bool:
        """A directory that is one source of this format (never walked into)."""
        return False

    def sniff(self, head: bytes, real_path: str) -> bool:
        """A regular file whose first bytes (`head`, up to 64 KiB) announce this format. May raise
        OSError when whether it is one cannot be told (a companion that cannot be read)."""
        return False

    def owner(self, real_path: str) -> str | None:
        """The source file a companion file (a -wal) belongs to, or None; OSError when it cannot be told."""
        return None

    def owned(self, real_path: str) -> Iterable[str]:
        """The real paths a found source owns (companions): neither sources nor skipped files."""
        return ()

    def takes_named(self, given: str) -> bool:
        """A named file no format recognised by content that is still taken as this format's (and so
        verified, its damage reported, rather than skipped)."""
        return False

    def takes_walked(self, real_path: str) -> bool:
        """The same for a file met in a walk (by where it lies and its name)."""
        return False

    # --- verifying -----------------------------------------------------------------------------------
    def verify_file(
        self,
        path: str,
        real_path: str,
        stream: BinaryIO,
        size: int,
        options: VerifyOptions,
        tap: LineTap | None,
    ) -> SourceOutcome:
        raise NotImplementedError(f"{self.name} reads {self.reads}s")

    def verify_path(self, path: str, real_path: str, options: VerifyOptions) -> SourceOutcome:
        raise NotImplementedError(f"{self.name} reads {self.reads}s")

    def conclude(self, options: VerifyOptions, carried: Sequence[Mapping[str, Any]]) -> list[Finding]:
        """Findings about the audit as a whole, after its last source: `carried` holds each of this
        format's sources' `SourceOutcome.carry`, in input order (none when it met no source)."""
        return []

    # --- the warehouse -------------------------------------------------------------------------------
    def warehouse(self) -> Any:
        """The format's row extraction for `sessaudit load` (a sessaudit.warehouse.parts.WarehousePart),
        or None when its sources give no rows."""
        return None

    # --- words for people ----------------------------------------------------------------------------
    def describe_plan(self, plan: dict[str, Any]) -> str | None:
        """A native recovery plan (runs[].recovery.native_plan) in words, or None (not shown)."""
        return None

    def describe_native(self, native: dict[str, Any]) -> list[str]:
        """What the source system itself says of a source (its `native` answers), in lines."""
        return []

    def timeline_kind(self, kind: str | None, type_: str | None, role: str | None) -> str | None:
        """What a loaded fact (its `facts` row's kind, type and role) is on a session's timeline
        (sessaudit.timeline, `sessaudit show`, the HTML report): one of TIMELINE_KINDS, or None (not drawn
        on its own; tool calls are drawn from the tool_calls rows, not from facts). The format's
        `timeline_marks` first, then the message role."""
        marked = self.timeline_marks.get((kind, type_))
        if marked is not None:
            return marked
        if role == "user":
            return "user"
        if role == "assistant":
            return "model"
        return None
