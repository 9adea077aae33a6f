"""Inputs → sources: recognise each path leniently by content (CONTRACT §1), walk directories safely."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from sessaudit import evidence
from sessaudit.evidence import NotRegularFile, read_prefix
from sessaudit.limits import DEFAULT_MAX_FILES
from sessaudit.model import SKIPPED_UNREAD, Skipped

SNIFF_BYTES = 64 * 1024
SQLITE_MAGIC = b"SQLite format 3\x00"
# Half-Pi detection reads the schema text on the first pages without opening SQLite (which could write).
SQLITE_SNIFF_BYTES = 1024 * 1024
HALF_PI_COMPANIONS = ("-wal", "-shm", "-journal")
WAL_SNIFF_BYTES = 4 * 1024 * 1024
RIVUMI_RECORDS = ("events.jsonl", "session.json")
RIVUMI_COMPANIONS = ("request.json", ".writer.lock", "workspace")

_TINY_V2_HEADER = re.compile(rb'"kind"\s*:\s*"header"')
_TINY_V1_HEADER = re.compile(rb'"type"\s*:\s*"session"')
_SESSION_FILE_NAME = re.compile(
    r"^.+_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}\.jsonl$"
)
_CREATE_TABLE = r"create\s+table\s+(?:if\s+not\s+exists\s+)?[\"'`\[]?{name}[\"'`\]]?\s*\("


class Format(StrEnum):
    TINY_AGENT = "tiny-agent"
    RIVUMI = "rivumi"
    HALF_PI = "half-pi"


class Problem(StrEnum):
    """Why a named input is not a source that can be verified."""

    MISSING = "missing"
    NOT_REGULAR = "not-regular"
    UNREADABLE = "unreadable"
    UNRECOGNISED = "unrecognised"
    TOO_MANY_FILES = "too-many-files"  # a named directory's walk passed `--max-files` (SA013)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One source to verify, or a named input that cannot be (with `problem` set)."""

    path: str  # as reported: the argument, or the argument joined with the walked relative path
    real_path: str
    format: Format | None
    named: bool
    problem: Problem | None = None
    detail: str | None = None


@dataclass(slots=True)
class Discovery:
    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    owned: set[str] = field(default_factory=set)  # companions of a found source: neither sources nor skips
    # why the audit is incomplete because of the walks: a walked entry (file or folder) that may hold a
    # session log could not be read (it is also in `skipped`, with the OS error)
    unread: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # named directories whose walk found no source at all

    def add(self, candidate: Candidate) -> None:
        self.candidates.append(candidate)
        if candidate.format is Format.HALF_PI and candidate.problem is None:
            # CONTRACT §1: a Half-Pi store owns its -wal, -shm (and -journal) and its run/mind.lock
            self.owned.update(candidate.real_path + suffix for suffix in HALF_PI_COMPANIONS)
            folder = os.path.dirname(candidate.real_path)
            if os.path.basename(folder) == "db":
                self.owned.add(os.path.join(os.path.dirname(folder), "run", "mind.lock"))


def discover(paths: list[str], *, max_files: int = DEFAULT_MAX_FILES) -> Discovery:
    """Every input path in order; directories are walked in sorted order, symlinks not followed.

    One walk looks at no more than `max_files` directory entries (files, folders, links, all depths);
    past that it stops and the named directory becomes a TOO_MANY_FILES candidate."""
    result = Discovery()
    for given in paths:
        _discover_named(given, result, max_files)
    result.candidates = _first_of_each(result.candidates)
    return result


def _first_of_each(candidates: list[Candidate]) -> list[Candidate]:
    """A source met twice is verified once, where first met: the same file named twice, a Rivumi run named
    through its events.jsonl and its session.json, a store through itself and its -wal (pre-commit names
    every changed file), or a named file inside a named folder."""
    seen: set[tuple[str, Format]] = set()
    kept = []
    for candidate in candidates:
        if candidate.problem is None and candidate.format is not None:
            key = (candidate.real_path, candidate.format)
            if key in seen:
                continue
            seen.add(key)
        kept.append(candidate)
    return kept


def _discover_named(given: str, result: Discovery, max_files: int = DEFAULT_MAX_FILES) -> None:
    run = _run_of_named_record(given)
    if run is not None:
        # a named events.jsonl or session.json of a Rivumi run stands for the run directory, whatever the
        # name is (a regular file, a symbolic link, a file that cannot be read): CONTRACT §1
        result.candidates.append(Candidate(os.path.dirname(given) or ".", run, Format.RIVUMI, True))
        return
    try:
        info = os.stat(given)  # a path named by the user may be a symlink: follow it, once
    except FileNotFoundError:
        result.candidates.append(
            Candidate(given, given, None, True, Problem.MISSING, "no such file or directory")
        )
        return
    except OSError as error:
        result.candidates.append(Candidate(given, given, None, True, Problem.UNREADABLE, error.strerror))
        return
    real_path = os.path.realpath(given)
    if stat.S_ISDIR(info.st_mode):
        if rivumi_run_directory(real_path):
            result.candidates.append(Candidate(given, real_path, Format.RIVUMI, True))
            return
        found = len(result.candidates)
        _walk(given, real_path, result, max_files)
        if len(result.candidates) == found:
            result.empty.append(given)  # nothing verified is not a pass (SA006 unless --allow-empty)
        return
    if not stat.S_ISREG(info.st_mode):
        result.candidates.append(
            Candidate(
                given, real_path, None, True, Problem.NOT_REGULAR, f"not a regular file ({_kind(info)})"
            )
        )
        return
    parent = os.path.dirname(real_path)
    if os.path.basename(real_path) in ("events.jsonl", "session.json") and rivumi_run_directory(parent):
        # a link elsewhere to a Rivumi run's record stands for the run directory (CONTRACT §1)
        result.candidates.append(Candidate(parent, parent, Format.RIVUMI, True))
        return
    try:
        store = _half_pi_owner(real_path)
    except OSError as error:
        result.candidates.append(Candidate(given, real_path, None, True, Problem.UNREADABLE, error.strerror))
        return
    if store is not None:
        # a named -wal/-shm/-journal stands for its Half-Pi store (CONTRACT §1: the store owns it)
        result.add(Candidate(given[: len(given) - len(real_path) + len(store)], store, Format.HALF_PI, True))
        return
    try:
        detected = sniff_file(real_path)
    except OSError as error:
        result.candidates.append(Candidate(given, real_path, None, True, Problem.UNREADABLE, error.strerror))
        return
    if detected is None and given.endswith(".jsonl"):
        detected = Format.TINY_AGENT  # the strictest reader: a broken header is corruption, not a skip
    if detected is None:
        result.candidates.append(
            Candidate(
                given, real_path, None, True, Problem.UNRECOGNISED, "not a session log of a known format"
            )
        )
        return
    result.add(Candidate(given, real_path, detected, True))


def _run_of_named_record(given: str) -> str | None:
    """The Rivumi run directory a named `events.jsonl` or `session.json` lies in (by the name as given, so a
    symbolic link in the run stands for the run too), or None."""
    if os.path.basename(given) not in RIVUMI_RECORDS:
        return None
    parent = os.path.realpath(os.path.dirname(given) or ".")
    return parent if os.path.isdir(parent) and rivumi_run_directory(parent) else None


def _half_pi_owner(real_path: str) -> str | None:
    """The Half-Pi store a companion file belongs to, or None; OSError when the store beside it exists but
    cannot be read (so the companion is not called "not a session log" for a permission problem)."""
    for suffix in HALF_PI_COMPANIONS:
        if real_path.endswith(suffix):
            store = real_path[: -len(suffix)]
            if not os.path.isfile(store):
                return None
            try:
                return store if sniff_file(store) is Format.HALF_PI else None
            except NotRegularFile:
                return None
            except OSError as error:
                shown = os.path.basename(store)
                raise OSError(error.errno, f"its store {shown} could not be read: {error.strerror}") from None
    return None


class _Budget:
    """The directory entries a walk may still scan (`--max-files`)."""

    def __init__(self, entries: int) -> None:
        self.left = entries
        self.exceeded = False


def _walk(given: str, root: str, result: Discovery, max_files: int = DEFAULT_MAX_FILES) -> None:
    """Depth-first in name order, hidden folders included, `.git` excluded, links never followed."""
    stack: list[tuple[str, Iterator[os.DirEntry[str]]]] = []
    budget = _Budget(max_files)
    problem = _enter(given, root, stack, budget)
    if problem is not None:  # the named directory itself: a source of its own (SA001, exit 3)
        detail = f"directory {SKIPPED_UNREAD}: {problem}"
        result.candidates.append(Candidate(given, root, None, True, Problem.UNREADABLE, detail))
        return
    while stack:
        if budget.exceeded:
            result.candidates.append(
                Candidate(
                    given,
                    root,
                    None,
                    True,
                    Problem.TOO_MANY_FILES,
                    f"the walk met more than {max_files} directory entries (the --max-files limit) and "
                    "stopped; the sessions past that point were neither verified nor listed",
                )
            )
            return
        shown, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        shown_child = os.path.join(shown, entry.name)
        if entry.is_symlink():
            result.skipped.append(Skipped(path=shown_child, reason="symbolic link (not followed)"))
        elif entry.is_dir(follow_symlinks=False):
            if entry.name == ".git":
                continue
            if rivumi_run_directory(entry.path):
                result.candidates.append(Candidate(shown_child, entry.path, Format.RIVUMI, False))
            else:
                problem = _enter(shown_child, entry.path, stack, budget)
                if problem is not None:
                    _unread(result, shown_child, f"directory {SKIPPED_UNREAD}: {problem}")
        elif not entry.is_file(follow_symlinks=False):
            result.skipped.append(Skipped(path=shown_child, reason="not a regular file"))
        else:
            _classify_walked_file(shown_child, entry.path, result)


def _enter(
    shown: str,
    real: str,
    stack: list[tuple[str, Iterator[os.DirEntry[str]]]],
    budget: _Budget,
) -> str | None:
    """Push the folder's sorted entries; the OS error when it cannot be listed (nothing pushed)."""
    # The budget is spent while scanning, so a folder of ten million entries is never held whole.
    entries: list[os.DirEntry[str]] = []
    try:
        with evidence.scan_directory(real) as iterator:
            for entry in iterator:
                if budget.left == 0:
                    budget.exceeded = True
                    break
                budget.left -= 1
                entries.append(entry)
    except OSError as error:
        return error.strerror or str(error)
    entries.sort(key=lambda entry: entry.name)
    stack.append((shown, iter(entries)))
    return None


def _unread(result: Discovery, shown: str, reason: str) -> None:
    """A walked entry that may hold a session log and could not be read: skipped, and the audit is
    incomplete (exit 3) — a permission problem is never taken for "not a session log"."""
    result.skipped.append(Skipped(path=shown, reason=reason))
    result.unread.append(f"{shown}: {reason}")


def _classify_walked_file(shown: str, real: str, result: Discovery) -> None:
    if real in result.owned:
        return
    try:
        detected = sniff_file(real)
    except NotRegularFile:  # replaced by a FIFO or device since the folder was listed: never read
        result.skipped.append(Skipped(path=shown, reason="not a regular file"))
        return
    except OSError as error:
        _unread(result, shown, f"{SKIPPED_UNREAD}: {error.strerror or error}")
        return
    if detected is None and _is_tiny_agent_session_name(real):
        detected = Format.TINY_AGENT  # empty or headerless session files are damaged sessions, not skips
    if detected is None:
        result.skipped.append(Skipped(path=shown, reason="not a session log of a known format"))
    else:
        result.add(Candidate(shown, real, detected, False))


def _is_tiny_agent_session_name(real_path: str) -> bool:
    path = Path(real_path)
    return (
        _SESSION_FILE_NAME.match(path.name) is not None
        and path.parent.name == "sessions"
        and path.parent.parent.name == ".tiny-agent"
    )


def _kind(info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def sniff_file(real_path: str) -> Format | None:
    """The format a regular file's content announces, or None; OSError (NotRegularFile for a FIFO or
    device) when it cannot be read, or when it is an SQLite file whose `-wal` cannot be read and whose
    own pages do not decide."""
    head = read_prefix(real_path, SNIFF_BYTES)
    if head.startswith(SQLITE_MAGIC):
        return Format.HALF_PI if _looks_like_half_pi(real_path) else None
    first_line = head.split(b"\n", 1)[0]
    if _TINY_V2_HEADER.search(first_line) or _TINY_V1_HEADER.search(first_line):
        return Format.TINY_AGENT
    return None


def _looks_like_half_pi(real_path: str) -> bool:
    """The schema text names `sessions` and `messages`, in the database's first pages or, for a store whose
    schema was never checkpointed, in its `-wal` (read as bytes; SQLite is never opened here)."""
    text = read_prefix(real_path, SQLITE_SNIFF_BYTES).decode("latin-1").lower()
    try:
        text += read_prefix(real_path + "-wal", WAL_SNIFF_BYTES).decode("latin-1").lower()
    except (FileNotFoundError, NotRegularFile):  # no -wal (or not a file): the database alone decides
        pass
    except OSError as error:
        if error.errno != errno.ELOOP and not _has_half_pi_schema(text):
            # the schema may be in the -wal: whether this is a session log is unknown, not "no"
            raise OSError(error.errno, f"its -wal could not be read: {error.strerror}") from None
    return _has_half_pi_schema(text)


def _has_half_pi_schema(text: str) -> bool:
    return all(re.search(_CREATE_TABLE.format(name=name), text) for name in ("sessions", "messages"))


def rivumi_run_directory(real_path: str) -> bool:
    """A directory with `session.json` holding `schema_version`, or an `events.jsonl` of events (CONTRACT §1);
    also, leniently, one whose `session.json` or `events.jsonl` is damaged beyond that test (zero-filled by a
    power loss, unreadable, a symbolic link) but which holds both of them, or one of them and a run's
    companions (`request.json`, `.writer.lock` or `workspace/`): a damaged run is verified and its damage
    reported, never walked into and skipped."""
    manifest = os.path.join(real_path, "session.json")
    events = os.path.join(real_path, "events.jsonl")
    if b'"schema_version"' in _prefix_or_empty(manifest):
        return True
    first_line = _prefix_or_empty(events).split(b"\n", 1)[0]
    if all(key in first_line for key in (b'"event_type"', b'"run_id"', b'"sequence"')):
        return True
    records = sum(os.path.lexists(os.path.join(real_path, name)) for name in RIVUMI_RECORDS)
    return records == len(RIVUMI_RECORDS) or (
        records > 0 and any(os.path.lexists(os.path.join(real_path, name)) for name in RIVUMI_COMPANIONS)
    )


def _prefix_or_empty(real_path: str) -> bytes:
    """The first bytes of a regular file, or b"" when it is absent, not a regular file or unreadable (the
    Rivumi verifier reports each of those on its own)."""
    try:
        return read_prefix(real_path, SNIFF_BYTES)
    except OSError:
        return b""
