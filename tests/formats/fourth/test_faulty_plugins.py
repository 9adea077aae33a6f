"""A third-party plugin that fails while it works (not while it loads) never takes the built-in formats down:
one whose recogniser raises is set aside for the rest of the process (the audit says so, exit 3); one whose
verifier raises leaves only its own source unverified (SA001, exit 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO

from typer.testing import CliRunner

from sessaudit import registry as plugins
from sessaudit.cli import app
from sessaudit.plugin import LineTap, SourceOutcome, VerifyOptions
from tests.formats.fourth.plugin import Tally
from tests.sessions import clean_session

runner = CliRunner()


class SniffRaises(Tally):
    name = "sniff-raises"

    def rule_tables(self) -> tuple[()]:
        return ()

    def sniff(self, head: bytes, real_path: str) -> bool:
        raise ValueError("a bug in the plugin")


class VerifyRaises(Tally):
    name = "verify-raises"

    def rule_tables(self) -> tuple[()]:
        return ()

    def verify_file(
        self,
        path: str,
        real_path: str,
        stream: BinaryIO,
        size: int,
        options: VerifyOptions,
        tap: LineTap | None,
    ) -> SourceOutcome:
        raise KeyError("tokens")


class ConcludeRaises(Tally):
    name = "conclude-raises"

    def rule_tables(self) -> tuple[()]:
        return ()

    def conclude(self, options: VerifyOptions, carried: Any) -> list[Any]:
        raise RuntimeError("after the last source")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "agent.jsonl").write_bytes(clean_session())
    (folder / "one.tally").write_bytes(
        b'{"tally": 1, "session": "s1"}\n{"seq": 1, "kind": "done", "tokens": 3}\n'
    )
    return folder


def _report(folder: Path) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["verify", str(folder), "--format", "json"])
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_a_recogniser_that_raises_is_set_aside_and_the_built_ins_still_verify(tmp_path: Path) -> None:
    with plugins.registered(SniffRaises()):
        code, report, stderr = _report(_folder(tmp_path))
        assert plugins.registry().get("sniff-raises") is None  # set aside for the rest of the process
        assert [item.name for item in plugins.registry().broken] == ["sniff-raises"]
    assert code == 3, stderr
    assert [(source["format"], source["verdict"]) for source in report["sources"]] == [
        ("tiny-agent", "clean")
    ]
    assert "format plugin sniff-raises" in stderr
    assert "its sniff() raised ValueError: a bug in the plugin" in stderr
    assert plugins.registry().broken == ()  # unregistered: the next audit starts afresh


def test_a_verifier_that_raises_leaves_its_own_source_unverified(tmp_path: Path) -> None:
    with plugins.registered(VerifyRaises()):
        code, report, stderr = _report(_folder(tmp_path))
    assert code == 3, stderr
    verdicts = {
        Path(source["path"]).name: (source["format"], source["verdict"]) for source in report["sources"]
    }
    assert verdicts == {"agent.jsonl": ("tiny-agent", "clean"), "one.tally": ("verify-raises", "unreadable")}
    (problem,) = [item for item in report["findings"] if item["rule"] == "SA001"]
    assert problem["message"].endswith(
        "the verify-raises format plugin failed while verifying it: KeyError: 'tokens'"
    )


def test_a_conclusion_that_raises_is_set_aside_and_the_sources_stay_verified(tmp_path: Path) -> None:
    with plugins.registered(ConcludeRaises()):
        code, report, stderr = _report(_folder(tmp_path))
    assert code == 3, stderr
    verdicts = {
        Path(source["path"]).name: (source["format"], source["verdict"]) for source in report["sources"]
    }
    assert verdicts == {
        "agent.jsonl": ("tiny-agent", "clean"),
        "one.tally": ("tally", "clean"),
    }  # its verify_file names its format
    assert "format plugin conclude-raises" in stderr
    assert "its conclude() raised RuntimeError: after the last source" in stderr
