"""Inputs → sources: recognise each path leniently by content (CONTRACT §1), asking each installed format
plugin in registry order, and walk directories safely."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sessaudit import evidence
from sessaudit.evidence import NotRegularFile, read_prefix
from sessaudit.limits import DEFAULT_MAX_FILES
from sessaudit.model import SKIPPED_UNREAD, Skipped
from sessaudit.registry import ask, registry

SNIFF_BYTES = 64 * 1024  # what a plugin sees of a file to recognise it (FormatPlugin.sniff)


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
    format: str | None  # the plugin's name
    named: bool
    problem: Problem | None = None
    detail: str | None = None


@dataclass(slots=True)
class Discovery:
    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    owned: set[str] = field(default_factory=set)  # companions of a found source: neither sources nor skips
    # walked files skipped as no session log, by real path: one a source found later owns is not listed
    unrecognised: dict[str, Skipped] = field(default_factory=dict)
    # why the audit is incomplete because of the walks: a walked entry (file or folder) that may hold a
    # session log could not be read (it is also in `skipped`, with the OS error)
    unread: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # named directories whose walk found no source at all

    def add(self, candidate: Candidate) -> None:
        self.candidates.append(candidate)
        plugin = registry().get(candidate.format) if candidate.problem is None else None
        if plugin is not None:  # CONTRACT §1: e.g. a store owns its -wal, -shm and lock files
            self.owned.update(ask(plugin, "owned", candidate.real_path) or ())


def discover(paths: list[str], *, max_files: int = DEFAULT_MAX_FILES) -> Discovery:
    """Every input path in order; directories are walked in sorted order, symlinks not followed.

    One walk looks at no more than `max_files` directory entries (files, folders, links, all depths);
    past that it stops and the named directory becomes a TOO_MANY_FILES candidate."""
    result = Discovery()
    for given in paths:
        _discover_named(given, result, max_files)
    result.candidates = _first_of_each(result.candidates)
    _drop_owned(result)
    return result


def _drop_owned(result: Discovery) -> None:
    """A walk meets a source's companions before the source itself when they sort first (a session's
    sub-agent folder before its file): once every source is known, what they own is not listed as
    skipped and is not verified on its own."""
    owned = result.owned
    if not owned:
        return
    dropped = {id(item) for real, item in result.unrecognised.items() if real in owned}
    result.skipped = [item for item in result.skipped if id(item) not in dropped]
    result.candidates = [
        item
        for item in result.candidates
        if item.named or item.problem is not None or item.real_path not in owned
    ]


def _first_of_each(candidates: list[Candidate]) -> list[Candidate]:
    """A source met twice is verified once, where first met: the same file named twice, a run directory named
    through its events.jsonl and its session.json, a store through itself and its -wal (pre-commit names
    every changed file), or a named file inside a named folder."""
    seen: set[tuple[str, str]] = set()
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
    owning = _directory_of_named_record(given)
    if owning is not None:
        # a named record of a directory source (a run's event log) stands for the directory,
        # whatever the name is (a regular file, a symbolic link, a file that cannot be read): CONTRACT §1
        name, directory = owning
        result.candidates.append(Candidate(os.path.dirname(given) or ".", directory, name, True))
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
        directory_format = directory_source(real_path)
        if directory_format is not None:
            result.candidates.append(Candidate(given, real_path, directory_format, True))
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
    linked = _record_format(os.path.basename(real_path), parent)
    if linked is not None:
        # a link elsewhere to a directory source's record stands for the directory (CONTRACT §1)
        result.candidates.append(Candidate(parent, parent, linked, True))
        return
    try:
        owner = _owner(real_path)
    except OSError as error:
        result.candidates.append(Candidate(given, real_path, None, True, Problem.UNREADABLE, error.strerror))
        return
    if owner is not None:
        # a named companion (a -wal) stands for the source that owns it (CONTRACT §1)
        name, store = owner
        result.add(Candidate(given[: len(given) - len(real_path) + len(store)], store, name, True))
        return
    try:
        detected = sniff_file(real_path)
    except OSError as error:
        result.candidates.append(Candidate(given, real_path, None, True, Problem.UNREADABLE, error.strerror))
        return
    if detected is None:  # a format may take a named file by its name: its damage is reported, not skipped
        # first by where it lies (a walk would take it so: that format's, never another's catch-all), then
        # by its name
        plugins = registry().plugins
        detected = next((plugin.name for plugin in plugins if ask(plugin, "takes_walked", real_path)), None)
        if detected is None:
            detected = next((plugin.name for plugin in plugins if ask(plugin, "takes_named", given)), None)
    if detected is None:
        result.candidates.append(
            Candidate(
                given, real_path, None, True, Problem.UNRECOGNISED, "not a session log of a known format"
            )
        )
        return
    result.add(Candidate(given, real_path, detected, True))


def _directory_of_named_record(given: str) -> tuple[str, str] | None:
    """(format, directory) when `given` names a record of a directory source (by the name as given, so a
    symbolic link in the directory stands for it too), or None."""
    name = os.path.basename(given)
    if not any(name in plugin.directory_records for plugin in registry().plugins):
        return None
    parent = os.path.realpath(os.path.dirname(given) or ".")
    found = _record_format(name, parent) if os.path.isdir(parent) else None
    return (found, parent) if found is not None else None


def _record_format(name: str, directory: str) -> str | None:
    """The format of the directory source `directory` when `name` is one of its records, or None."""
    for plugin in registry().plugins:
        if name in plugin.directory_records and ask(plugin, "is_directory_source", directory):
            return plugin.name
    return None


def directory_source(real_path: str) -> str | None:
    """The format whose directory source this directory is (never walked into), or None."""
    return next(
        (plugin.name for plugin in registry().plugins if ask(plugin, "is_directory_source", real_path)), None
    )


def _first_saying(hook: str, *arguments: Any) -> str | None:
    """The name of the first format (registry order) whose `hook` says yes, or None."""
    return next((plugin.name for plugin in registry().plugins if ask(plugin, hook, *arguments)), None)


def _owner(real_path: str) -> tuple[str, str] | None:
    """(format, source) when the file is a companion a source owns; OSError when that cannot be told."""
    for plugin in registry().plugins:
        owner = ask(plugin, "owner", real_path)
        if owner is not None:
            return plugin.name, owner
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
            directory_format = directory_source(entry.path)
            if directory_format is not None:
                result.candidates.append(Candidate(shown_child, entry.path, directory_format, False))
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
    if detected is None:  # a format may take a walked file by where it lies (an empty session file)
        detected = next(
            (plugin.name for plugin in registry().plugins if ask(plugin, "takes_walked", real)), None
        )
    if detected is None:
        skipped = Skipped(path=shown, reason="not a session log of a known format")
        result.skipped.append(skipped)
        result.unrecognised[real] = skipped
    else:
        result.add(Candidate(shown, real, detected, False))


def _kind(info: os.stat_result) -> str:
    mode = info.st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def sniff_file(real_path: str) -> str | None:
    """The format a regular file's content announces (the first plugin whose `sniff` says so), or None;
    OSError (NotRegularFile for a FIFO or device) when it cannot be read, or when a plugin cannot tell
    (a companion it needs cannot be read)."""
    head = read_prefix(real_path, SNIFF_BYTES)
    return _first_saying("sniff", head, real_path)
