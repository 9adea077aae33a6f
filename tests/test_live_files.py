"""Live evidence (issue 9 item 3): a log appended to while it is verified is verified as the snapshot at open,
never half a line; a file truncated, rewritten, replaced or removed meanwhile is SA004 and exit 3."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import pytest
from typer.testing import CliRunner

import sessaudit.engine
import sessaudit.formats.rivumi.read.reader
from sessaudit.cli import app
from sessaudit.engine import AuditResult
from sessaudit.evidence import open_evidence
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, build_run
from tests.fuzz_targets import check_audit
from tests.sessions import clean_session, killed_during_deploy

READ_SIZE = 64  # the hooked stream answers at most this many bytes a read, so the hook runs mid-file
HOOK_AT = 200  # past the header probe (which seeks back to 0), inside the verifying read
HALF_LINE = b'{"kind":"fact","seq":99,"record":{"type":"us'
FULL_LINE = b'{"kind":"fact","seq":100}\n'


class _HookedStream:
    """A read-only evidence stream that reads in small pieces and runs `hook` once, as soon as HOOK_AT bytes
    are read: the verifier is mid-file when the file changes, as with a concurrent writer."""

    def __init__(self, stream: BinaryIO, hook: Callable[[], None]) -> None:
        self._stream = stream
        self._hook: Callable[[], None] | None = hook

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(READ_SIZE if size < 0 else min(size, READ_SIZE))
        if self._hook is not None and self._stream.tell() >= HOOK_AT:
            hook, self._hook = self._hook, None
            hook()
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __enter__(self) -> _HookedStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stream.close()


def hook_reads(monkeypatch: pytest.MonkeyPatch, module: Any, target: Path, hook: Callable[[], None]) -> None:
    """Make `module`'s open_evidence hand out a hooked stream for `target` (other files open as usual)."""

    def opening(real_path: str) -> tuple[Any, int]:
        stream, size = open_evidence(real_path)
        if Path(real_path).resolve() == target.resolve():
            return _HookedStream(stream, hook), size
        return stream, size

    monkeypatch.setattr(module, "open_evidence", opening)


def _append(path: Path, data: bytes) -> Callable[[], None]:
    def append() -> None:
        with path.open("ab") as stream:
            stream.write(data)

    return append


def _rules(result: AuditResult) -> list[str]:
    return [item.rule for item in result.report.findings]


def _sessions(result: AuditResult) -> list[dict[str, Any]]:
    """The sessions of the first source, without what legitimately differs between two copies."""
    return [
        session.model_dump(mode="json", exclude={"runs"}) for session in result.report.sources[0].sessions
    ]


# --- tiny-agent ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("appended", [HALF_LINE, FULL_LINE + HALF_LINE, b"\n\x00garbage"])
def test_a_session_appended_to_while_read_is_verified_as_the_snapshot_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, appended: bytes
) -> None:
    original = killed_during_deploy()
    pristine, live = tmp_path / "pristine" / "s.jsonl", tmp_path / "live" / "s.jsonl"
    for path in (pristine, live):
        path.parent.mkdir()
        path.write_bytes(original)
    expected = check_audit([str(pristine)])
    hook_reads(monkeypatch, sessaudit.engine, live, _append(live, appended))
    result = check_audit([str(live)])
    assert live.read_bytes() == original + appended, "the hook did not run"
    source = result.report.sources[0]
    assert source.files[0].bytes == len(original) and source.evidence_unchanged
    assert source.files[0].sha256 == expected.report.sources[0].files[0].sha256
    assert _sessions(result) == _sessions(expected)
    assert source.sessions[0].torn_tail_bytes == 0
    assert source.verdict == expected.report.sources[0].verdict
    assert sorted(_rules(result)) == sorted([*_rules(expected), "SA005"])
    assert result.incomplete == []


def test_a_writer_thread_appending_whole_lines_never_gives_a_torn_or_changed_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    original = clean_session()
    path.write_bytes(original)
    started, stop = threading.Event(), threading.Event()

    def writer() -> None:
        started.wait(5)
        while not stop.is_set():
            _append(path, FULL_LINE)()  # one write(2) of a whole line, as tiny-agent appends

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        hook_reads(monkeypatch, sessaudit.engine, path, started.set)
        result = check_audit([str(path)])
    finally:
        stop.set()
        thread.join()
    source = result.report.sources[0]
    assert source.files[0].bytes == len(original) and source.evidence_unchanged
    assert source.sessions[0].torn_tail_bytes == 0 and source.verdict.value == "clean"
    assert "SA004" not in _rules(result)


def _truncate(path: Path) -> Callable[[], None]:
    return lambda: os.truncate(path, path.stat().st_size // 2)


def _rewrite(path: Path) -> Callable[[], None]:
    def rewrite() -> None:
        data = bytearray(path.read_bytes())
        data[40] ^= 1
        with path.open("r+b") as stream:  # in place, same inode
            stream.write(bytes(data))

    return rewrite


def _replace(path: Path) -> Callable[[], None]:
    def replace() -> None:
        data = bytearray(path.read_bytes())
        data[40] ^= 1
        other = path.with_name("other.tmp")
        other.write_bytes(bytes(data))
        os.replace(other, path)  # a new inode; the open descriptor still reads the old one

    return replace


CHANGES: dict[str, tuple[Callable[[Path], Callable[[], None]], str]] = {
    "truncated": (_truncate, "shrank"),
    "rewritten-in-place": (_rewrite, "rewritten"),
    "replaced-by-rename": (_replace, "rewritten"),
    "removed": (lambda path: path.unlink, "removed"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_session_changed_while_read_is_reported_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    make_hook, detail = CHANGES[change]
    path = tmp_path / "s.jsonl"
    path.write_bytes(killed_during_deploy())
    hook_reads(monkeypatch, sessaudit.engine, path, make_hook(path))
    result = check_audit([str(path)])
    changed = [item for item in result.report.findings if item.rule == "SA004"]
    assert len(changed) == 1 and detail in changed[0].message
    assert changed[0].location.path == str(path)
    assert not result.report.sources[0].evidence_unchanged
    assert result.incomplete == [f"{path}: evidence changed while it was read"]
    path.write_bytes(killed_during_deploy())  # again, for the CLI
    cli = CliRunner().invoke(app, ["verify", str(path), "--format", "json"])
    assert cli.exit_code == 3, cli.output


# --- Rivumi -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("appended", [HALF_LINE, FULL_LINE + HALF_LINE])
def test_a_rivumi_log_grown_during_the_audit_is_verified_as_the_snapshot_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, appended: bytes
) -> None:
    pristine = build_run(tmp_path / "pristine", crash=KILLED_AFTER_TOOL_STARTED).run_dir
    live = build_run(tmp_path / "live", crash=KILLED_AFTER_TOOL_STARTED).run_dir
    events = live / "events.jsonl"
    original = events.read_bytes()
    assert original == (pristine / "events.jsonl").read_bytes()
    expected = check_audit([str(pristine)])
    hook_reads(monkeypatch, sessaudit.formats.rivumi.read.reader, events, _append(events, appended))
    result = check_audit([str(live)])
    assert events.read_bytes() == original + appended, "the hook did not run"
    source = result.report.sources[0]
    read = {Path(item.path).name: item for item in source.files}
    assert read["events.jsonl"].bytes == len(original) and source.evidence_unchanged
    assert _sessions(result) == _sessions(expected)
    assert source.verdict == expected.report.sources[0].verdict
    assert sorted(_rules(result)) == sorted([*_rules(expected), "SA005"])
    assert result.incomplete == []


def test_a_rivumi_log_truncated_during_the_audit_is_reported_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = build_run(tmp_path, crash=KILLED_AFTER_TOOL_STARTED).run_dir
    events = run_dir / "events.jsonl"
    original = events.read_bytes()
    hook_reads(monkeypatch, sessaudit.formats.rivumi.read.reader, events, _truncate(events))
    result = check_audit([str(run_dir)])
    changed = [item for item in result.report.findings if item.rule == "SA004"]
    assert [Path(item.location.path or "").name for item in changed] == ["events.jsonl"]
    assert result.incomplete and not result.report.sources[0].evidence_unchanged
    events.write_bytes(original)
    cli = CliRunner().invoke(app, ["verify", str(run_dir), "--format", "json"])
    assert cli.exit_code == 3, cli.output
