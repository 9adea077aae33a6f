"""Plugin options several formats declare (sessaudit.cli_plugins): one option per flag, its value parsed by
every declaring plugin, a usage error only when all of them refuse it; declarations that disagree on the
flag's shape are refused by the registry. (The takeover flags are tests/test_shared_takeover.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit import registry
from sessaudit.cli import app
from sessaudit.cli_plugins import shared_options
from sessaudit.engine import audit
from sessaudit.plugin import FormatPlugin, OptionError, PluginOption, VerifyOptions
from tests.sessions import killed_during_deploy

runner = CliRunner()


def probe_parser(word: str) -> Any:
    """A parse that takes a file whose text holds `word` (into the extra `<word>_probe`)."""

    def parse(value: Any) -> Mapping[str, Any]:
        text = Path(value).read_text(encoding="utf-8")
        if word not in text:
            raise OptionError(f"{value}: has no {word!r}")
        return {f"{word}_probe": text.strip()}

    return parse


class Probe(FormatPlugin):
    """A format with no sources, only an option (enough for the command line)."""

    def __init__(self, name: str, options: tuple[PluginOption, ...], extras: tuple[str, ...] = ()) -> None:
        self.name = name
        self.title = name.capitalize()
        self.options = options
        self.extras = extras


ALPHA = Probe(
    "alpha",
    (PluginOption("--probe", "Looks for alpha.", ("verify", "seed"), parse=probe_parser("alpha")),),
    ("alpha_probe",),
)
BETA = Probe(
    "beta",
    (
        PluginOption(
            "--probe", "Looks for beta.", ("verify",), parse=probe_parser("beta"), refusal="a beta probe"
        ),
    ),
    ("beta_probe",),
)


@pytest.fixture
def probes() -> Iterator[None]:
    with registry.registered(ALPHA), registry.registered(BETA):
        assert registry.registry().broken == ()
        yield


@pytest.fixture
def audited(monkeypatch: pytest.MonkeyPatch) -> list[VerifyOptions]:
    """The options `verify` hands the audit (the real audit runs)."""
    seen: list[VerifyOptions] = []
    real = audit

    def recording(*arguments: Any, **keywords: Any) -> Any:
        seen.append(keywords["options"])
        return real(*arguments, **keywords)

    monkeypatch.setattr("sessaudit.cli.audit", recording)
    return seen


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_one_option_for_a_flag_two_formats_declare(probes: None) -> None:
    (verify_probe,) = [item for item in shared_options("verify") if item.flag == "--probe"]
    assert [plugin.name for plugin, _ in verify_probe.declarations] == ["alpha", "beta"]
    assert verify_probe.help == "Alpha: looks for alpha. Beta: looks for beta."
    (seed_probe,) = [item for item in shared_options("seed") if item.flag == "--probe"]
    assert seed_probe.help == "Looks for alpha."  # only alpha declares it for seed
    shown = runner.invoke(app, ["verify", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    assert shown.output.count("--probe") == 1
    assert "Alpha: looks for alpha. Beta: looks for beta." in shown.output


def test_a_value_goes_to_every_declaring_plugin(
    probes: None, audited: list[VerifyOptions], tmp_path: Path
) -> None:
    both = write(tmp_path, "both.txt", "alpha and beta")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["verify", str(empty), "--allow-empty", "--probe", str(both)])
    assert result.exit_code == 0, result.output
    assert dict(audited[-1].extras) == {"alpha_probe": "alpha and beta", "beta_probe": "alpha and beta"}


def test_the_plugins_that_refuse_a_value_others_accept_are_silent(
    probes: None, audited: list[VerifyOptions], tmp_path: Path
) -> None:
    only = write(tmp_path, "only.txt", "beta")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["verify", str(empty), "--allow-empty", "--probe", str(only)])
    assert result.exit_code == 0, result.output
    assert dict(audited[-1].extras) == {"beta_probe": "beta"}
    assert "alpha" not in result.stderr


def test_a_value_every_declaring_plugin_refuses_is_a_usage_error_naming_each(
    probes: None, tmp_path: Path
) -> None:
    neither = write(tmp_path, "neither.txt", "gamma")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["verify", str(empty), "--allow-empty", "--probe", str(neither)])
    assert result.exit_code == 2
    # alpha says no `refusal`: its title stands before its reason
    assert result.stderr == (
        f"sessaudit: --probe: Alpha: {neither}: has no 'alpha'; not a beta probe: {neither}: has no 'beta'\n"
    )


def test_a_value_the_only_declaring_plugin_refuses_is_its_own_words(probes: None, tmp_path: Path) -> None:
    neither = write(tmp_path, "neither.txt", "gamma")
    result = runner.invoke(app, ["seed", str(tmp_path), "--probe", str(neither)])
    assert result.exit_code == 2
    assert result.stderr == f"sessaudit: --probe: {neither}: has no 'alpha'\n"


def broken_reason(plugin: FormatPlugin) -> str:
    with registry.registered(ALPHA), registry.registered(plugin):
        installed = registry.registry()
        assert installed.get("alpha") is ALPHA and installed.get(plugin.name) is None
        (broken,) = installed.broken
        return broken.reason


def test_declarations_of_one_flag_that_disagree_are_refused() -> None:
    as_flag = Probe("gamma", (PluginOption("--probe", "A flag.", ("verify",), is_flag=True),))
    assert broken_reason(as_flag) == "declares --probe as a flag, but alpha declares it with a value FILE"
    other_metavar = Probe("delta", (PluginOption("--probe", "A folder.", ("verify",), metavar="DIR"),))
    assert broken_reason(other_metavar) == (
        "declares --probe with a value DIR, but alpha declares it with a value FILE"
    )
    as_takeover = Probe("epsilon", (PluginOption("--probe", "Answers.", ("seed",), takeover=lambda *_: 0),))
    assert broken_reason(as_takeover) == (
        "declares --probe on seed as a takeover, but alpha declares it as an option (not a takeover)"
    )
    twice = Probe("zeta", (PluginOption("--x", "x", ("verify",)), PluginOption("--x", "x", ("seed",))))
    assert broken_reason(twice) == "declares an option twice: --x"
    same_extra = Probe("eta", (), ("alpha_probe",))
    assert broken_reason(same_extra) == "reads VerifyOptions extras another format already has: alpha_probe"


def test_a_flag_declared_on_other_commands_only_is_no_clash() -> None:
    """A takeover on `seed` and an option on `verify` of one flag and shape: no command has both."""
    on_verify = Probe("theta", (PluginOption("--probe", "On verify.", ("verify",)),))
    on_seed = Probe("iota", (PluginOption("--probe", "On seed.", ("seed",), takeover=lambda *_: 0),))
    with registry.registered(on_verify), registry.registered(on_seed):
        assert registry.registry().broken == ()


def test_tiny_agent_and_claude_code_share_current(tmp_path: Path) -> None:
    """The built-in formats: a tiny-agent configuration is taken by tiny-agent (its plan changes), a file
    neither takes is refused with both reasons."""
    session = tmp_path / "killed.jsonl"
    session.write_bytes(killed_during_deploy())
    elsewhere = {"configurationDigest": "sha256:" + "0" * 64, "environmentIdentity": "/else", "tools": []}
    current = write(tmp_path, "current.json", json.dumps(elsewhere))
    bad = write(tmp_path, "bad.json", json.dumps({"tools": {"name": "Bash"}}))
    (declared,) = [item for item in shared_options("verify") if item.flag == "--current"]
    assert [plugin.name for plugin, _ in declared.declarations] == ["tiny-agent", "claude-code", "codex"]
    result = runner.invoke(app, ["verify", str(session), "--current", str(current), "--format", "json"])
    refused = runner.invoke(app, ["verify", str(session), "--current", str(bad)])
    recovery = json.loads(result.stdout)["sources"][0]["sessions"][0]["runs"][0]["recovery"]
    assert recovery["native_plan"] == {"type": "blocked", "reason": "environment_changed"}
    assert refused.exit_code == 2
    assert refused.stderr == (
        f"sessaudit: --current: not a tiny-agent configuration: {bad}: 3 problems: (the document): "
        "'configurationDigest' is a required property; (the document): 'environmentIdentity' is a required "
        f"property; /tools: expected array, found an object; not a Claude Code tool table: {bad}: /tools: "
        f"expected array, found an object; not a Codex tool table: {bad}: /tools: expected array, found an "
        "object\n"
    )
