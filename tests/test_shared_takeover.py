"""A takeover flag two formats declare (`seed --native`): the format whose source the named path is answers,
handed the extras of the other plugin options given; a path that is no source of a declaring format, or
holds sources of several, is a usage error."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit import registry
from sessaudit.cli import app
from sessaudit.plugin import OptionError, PluginOption
from tests.formats.fourth.plugin import Tally
from tests.formats.rivumi.test_cli_rivumi import small_run

runner = CliRunner()
OPEN_TALLY = b'{"tally": 1, "session": "t"}\n{"seq": 1, "kind": "step", "tokens": 2}\n'


class NativeTally(Tally):
    """The test format "tally" with a native seed of its own (`seed --native`) and `seed --output FILE`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, int | None, dict[str, Any]]] = []
        self.extras = ("tally_output",)
        self.options = (
            PluginOption(
                "--native", "Print tally's own seed.", ("seed",), is_flag=True, takeover=self._native
            ),
            PluginOption("--output", "Where tally writes its repair.", ("seed",), parse=self._output),
        )

    def _native(self, path: str, run: str | None, sequence: int | None, extras: Mapping[str, Any]) -> int:
        self.calls.append((path, run, sequence, dict(extras)))
        if run == "refused":
            raise OptionError("tally will not seed run 'refused'")
        print("tally's own seed")
        return 0

    def _output(self, value: Any) -> Mapping[str, Any]:
        return {"tally_output": str(value)}


@pytest.fixture
def tally() -> Iterator[NativeTally]:
    plugin = NativeTally()
    with registry.registered(plugin):
        assert registry.registry().get("tally") is plugin and registry.registry().broken == ()
        yield plugin


def test_a_rivumi_run_goes_to_rivumis_takeover(tally: NativeTally, tmp_path: Path) -> None:
    run = small_run(tmp_path)
    result = runner.invoke(app, ["seed", str(run), "--native", "--sequence", "0"])
    assert result.exit_code == 0, result.output
    seed = json.loads(result.stdout)
    assert (seed["source_run_id"], seed["fork_point_sequence"], seed["events_included"]) == ("r1", 0, 1)
    assert tally.calls == []


def test_a_tally_file_goes_to_tallys_takeover_with_the_other_options(
    tally: NativeTally, tmp_path: Path
) -> None:
    path = tmp_path / "open.tally"
    path.write_bytes(OPEN_TALLY)
    out = tmp_path / "repaired.tally"
    result = runner.invoke(
        app, ["seed", str(path), "--native", "--run", "t/run", "--sequence", "1", "--output", str(out)]
    )
    assert (result.exit_code, result.stdout) == (0, "tally's own seed\n")
    # --output is Claude Code's and Codex's too: every declaring format parses it, each into its own key
    outputs = {"tally_output": str(out), "claude_code_output": str(out), "codex_output": str(out)}
    assert tally.calls == [(str(path), "t/run", 1, outputs)]


def test_the_answering_plugins_refusal_is_a_usage_error(tally: NativeTally, tmp_path: Path) -> None:
    path = tmp_path / "open.tally"
    path.write_bytes(OPEN_TALLY)
    result = runner.invoke(app, ["seed", str(path), "--native", "--run", "refused"])
    assert result.exit_code == 2
    assert result.stderr == "sessaudit: --native: tally will not seed run 'refused'\n"


def test_a_path_of_no_declaring_format_is_a_usage_error(tally: NativeTally, tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_bytes(b'{"kind":"header","version":2}\n')
    result = runner.invoke(app, ["seed", str(notes), "--native"])
    assert result.exit_code == 2
    # the declaring formats in registry order (Rivumi's first rule code is lower than tally's)
    said = result.stderr.removeprefix(f"sessaudit: --native: {notes} is no source of a format that takes ")
    assert said.startswith("seed --native (rivumi, ") and "tally)" in said
    assert said.endswith("; it holds tiny-agent sources\n")
    assert tally.calls == []
    missing = runner.invoke(app, ["seed", str(tmp_path / "gone"), "--native"])
    assert missing.exit_code == 2 and missing.stderr.endswith("tally): no such file or directory\n")


def test_a_folder_of_two_declaring_formats_is_a_usage_error(tally: NativeTally, tmp_path: Path) -> None:
    small_run(tmp_path)
    (tmp_path / "open.tally").write_bytes(OPEN_TALLY)
    result = runner.invoke(app, ["seed", str(tmp_path), "--native"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"sessaudit: --native: {tmp_path} holds sources of several formats that take seed --native "
        "(rivumi, tally): name one source\n"
    )
    assert tally.calls == []


def test_redact_still_refuses_a_takeover(tally: NativeTally, tmp_path: Path) -> None:
    path = tmp_path / "open.tally"
    path.write_bytes(OPEN_TALLY)
    result = runner.invoke(app, ["seed", str(path), "--native", "--redact"])
    assert result.exit_code == 2 and "cannot be redacted" in result.stderr
    assert tally.calls == []


def test_one_option_and_both_helps_in_seed_help(tally: NativeTally) -> None:
    shown = runner.invoke(app, ["seed", "--help"], env={"COLUMNS": "250"})
    assert shown.exit_code == 0 and shown.output.count("--native") == 1
    said = " ".join(shown.output.replace("│", " ").split())  # the help's box and wrapping left out
    assert (
        "Rivumi: print the source system's own seed, byte for byte (Rivumi: its --fork-from-event). "
        "Claude Code: write a copy of the session that `claude --resume` can continue (needs --output). "
        "Codex: write a copy of the rollout that `codex resume` can continue without running a call again "
        "(needs --output). Tally: print tally's own seed."
    ) in said
