"""Configuration: sessaudit.toml or [tool.sessaudit] in pyproject.toml, found upwards; flags win."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.config import find_config, load_config
from tests.sessions import clean_session, killed_during_deploy

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with a.jsonl corrupt (SA106) and b.jsonl killed during a deploy (SA301, SA302)."""
    (tmp_path / "a.jsonl").write_bytes(clean_session() + b"not json\n")
    (tmp_path / "b.jsonl").write_bytes(killed_during_deploy())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def verify(*arguments: str, code: int) -> dict[str, Any]:
    result = runner.invoke(app, ["verify", "a.jsonl", "b.jsonl", "--format", "json", *arguments])
    assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def findings(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["rule"], item["severity"]) for item in document["findings"]]


def test_sessaudit_toml_in_the_working_directory_is_read(project: Path) -> None:
    (project / "sessaudit.toml").write_text(
        'select = ["SA3"]\nignore = ["effect-outcome-unknown"]\nseverity = { SA301 = "error" }\n',
        encoding="utf-8",
    )
    document = verify(code=1)
    assert findings(document) == [("SA301", "error")]
    assert [source["verdict"] for source in document["sources"]] == ["corrupt", "needs-recovery"]


def test_pyproject_table_is_found_in_a_parent_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".git").mkdir()  # inside a repository the search climbs to its root
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.sessaudit]\nfail-on = "warning"\nignore = ["SA1"]\n', encoding="utf-8"
    )
    inner = project / "deep" / "er"
    inner.mkdir(parents=True)
    assert find_config(inner) == Path("pyproject.toml")  # relative to the working directory
    monkeypatch.chdir(inner)
    result = runner.invoke(app, ["verify", "../../a.jsonl", "../../b.jsonl", "--format", "json"])
    assert result.exit_code == 1, result.output  # fail-on warning from the file
    assert [item["rule"] for item in json.loads(result.stdout)["findings"]] == ["SA301", "SA302"]
    assert find_config(inner) == Path("../../pyproject.toml")


def test_the_search_stops_at_the_repository_root(project: Path) -> None:
    (project / "sessaudit.toml").write_text('select = ["SA1"]\n', encoding="utf-8")
    repository = project / "repo"
    (repository / ".git").mkdir(parents=True)
    (repository / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")  # no table
    (repository / "sub").mkdir()
    assert find_config(repository / "sub") is None  # the .git folder ends the search
    assert find_config(project) == Path("sessaudit.toml")


def test_outside_a_repository_only_the_working_directory_is_searched(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a settings file in a shared parent (/tmp, a home folder) must never turn a gate green unasked
    (project / "sessaudit.toml").write_text('ignore = ["SA"]\n', encoding="utf-8")
    inner = project / "ci" / "job"
    inner.mkdir(parents=True)
    assert find_config(inner) is None
    assert find_config(project) == Path("sessaudit.toml")
    monkeypatch.chdir(inner)
    result = runner.invoke(app, ["verify", "../../a.jsonl", "--format", "json"])
    assert result.exit_code == 1, result.output  # SA106 still fails
    assert json.loads(result.stdout)["settings"]["config"] is None
    (project / "pyproject.toml").write_text('[tool.sessaudit]\nignore = ["SA"]\n', encoding="utf-8")
    assert find_config(inner) is None


def test_the_report_names_the_settings_in_force(project: Path) -> None:
    (project / "sessaudit.toml").write_text(
        'select = ["SA1", "SA3"]\nignore = ["blank-line"]\nseverity = { SA301 = "error" }\n'
        'fail-on = "warning"\nfail-on-verdict = ["corrupt"]\nfail-on-condition = ["effect-unknown"]\n',
        encoding="utf-8",
    )
    settings = verify("--severity", "SA302=note", code=1)["settings"]
    assert settings == {
        "config": "sessaudit.toml",
        "select": ["SA1", "SA3"],
        "ignore": ["blank-line"],
        "severity": {"SA301": "error", "SA302": "note"},
        "fail_on": "warning",
        "fail_on_verdict": ["corrupt"],
        "fail_on_condition": ["effect-unknown"],
        "baseline": None,
        "allow_empty": False,
    }
    default = verify("--no-config", code=1)["settings"]
    assert default["config"] is None and default["select"] == [] and default["fail_on"] == "error"
    sarif = runner.invoke(app, ["verify", "a.jsonl", "--format", "sarif"])
    invocation = json.loads(sarif.stdout)["runs"][0]["invocations"][0]
    assert invocation["properties"]["settings"]["config"] == "sessaudit.toml"
    assert invocation["properties"]["settings"]["fail_on_verdict"] == ["corrupt"]
    assert "commandLine" not in invocation


def test_every_unknown_key_is_named_at_once(project: Path) -> None:
    (project / "sessaudit.toml").write_text('selct = ["SA1"]\nfail_on = "note"\n', encoding="utf-8")
    result = runner.invoke(app, ["verify", "a.jsonl"])
    assert result.exit_code == 2
    assert result.stderr.startswith("sessaudit: sessaudit.toml: fail_on, selct: unknown keys (known: ")


def test_sessaudit_toml_wins_over_pyproject_in_one_folder(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.sessaudit]\nselect = ["SA1"]\n', encoding="utf-8")
    (project / "sessaudit.toml").write_text('select = ["SA302"]\n', encoding="utf-8")
    assert findings(verify(code=0)) == [("SA302", "warning")]


def test_flags_win_over_the_file(project: Path) -> None:
    (project / "sessaudit.toml").write_text(
        'select = ["SA1"]\nfail-on = "never"\nseverity = { SA301 = "error", SA302 = "error" }\n',
        encoding="utf-8",
    )
    assert findings(verify(code=0)) == [("SA106", "error")]  # fail-on never
    assert verify("--fail-on", "error", code=1)
    chosen = verify("--select", "SA3", "--severity", "SA301=note", code=0)
    assert findings(chosen) == [("SA301", "note"), ("SA302", "error")]  # severity tables merge by rule
    assert findings(verify("--no-config", code=1)) == [
        ("SA106", "error"),
        ("SA301", "warning"),
        ("SA302", "warning"),
    ]


def test_config_baseline_is_relative_to_the_config_file(project: Path) -> None:
    settings = project / "settings"
    settings.mkdir()
    runner.invoke(
        app, ["verify", "a.jsonl", "b.jsonl", "--no-config", "--write-baseline", "settings/known.json"]
    )
    (settings / "sessaudit.toml").write_text('baseline = "known.json"\n', encoding="utf-8")
    document = verify("--config", "settings/sessaudit.toml", code=0)
    assert document["findings"] == [] and document["baseline"]["path"] == "settings/known.json"
    (settings / "sessaudit.toml").write_text('baseline = "missing.json"\n', encoding="utf-8")
    result = runner.invoke(app, ["verify", "a.jsonl", "--config", "settings/sessaudit.toml"])
    assert result.exit_code == 2
    assert (
        "settings/sessaudit.toml: baseline: settings/missing.json: (the document): cannot be read"
        in result.stderr
    )


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "sessaudit.toml",
            'selct = ["SA1"]\n',
            "sessaudit.toml: selct: unknown key (known: baseline, fail-on,",
        ),
        ("sessaudit.toml", 'select = "SA1"\n', "sessaudit.toml: select: expected an array"),
        ("sessaudit.toml", "ignore = [1]\n", "sessaudit.toml: ignore: expected an array"),
        ("sessaudit.toml", 'select = ["SA999"]\n', "sessaudit.toml: select: unknown rule 'SA999'"),
        ("sessaudit.toml", "severity = { SA301 = 3 }\n", "sessaudit.toml: severity.SA301: expected a level"),
        (
            "sessaudit.toml",
            'severity = { SA301 = "loud" }\n',
            "sessaudit.toml: severity.SA301: unknown level",
        ),
        ("sessaudit.toml", 'severity = { nope = "error" }\n', "sessaudit.toml: severity.nope: unknown rule"),
        ("sessaudit.toml", 'severity = "SA301=error"\n', "sessaudit.toml: severity: expected a table"),
        ("sessaudit.toml", 'fail-on = "sometimes"\n', "sessaudit.toml: fail-on: 'sometimes' is not one of"),
        ("sessaudit.toml", "baseline = 3\n", "sessaudit.toml: baseline: expected a file name"),
        (
            "sessaudit.toml",
            'fail-on-verdict = "corrupt"\n',
            "sessaudit.toml: fail-on-verdict: expected an array",
        ),
        (
            "sessaudit.toml",
            'fail-on-condition = ["effect-unknown", "lost"]\n',
            "sessaudit.toml: fail-on-condition: 'lost': not one of effect-unknown,",
        ),
        ("sessaudit.toml", "select = [\n", "sessaudit.toml: is not TOML"),
        ("sessaudit.toml", b"select = ['\xff']\n", "sessaudit.toml: is not"),
        (
            "pyproject.toml",
            "[tool.sessaudit]\nfail_on = 'note'\n",
            "pyproject.toml: tool.sessaudit.fail_on: unknown",
        ),
        ("pyproject.toml", "[tool\n", "pyproject.toml: is not TOML"),  # cannot tell: unreadable config
    ],
)
def test_a_bad_config_is_a_usage_error_naming_file_and_key(
    project: Path, name: str, content: str | bytes, expected: str
) -> None:
    target = project / name
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["verify", "a.jsonl"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"sessaudit: {name}: ")
    assert expected in result.stderr
    assert result.stdout == ""
    assert runner.invoke(app, ["verify", "a.jsonl", "--no-config"]).exit_code == 1  # not read at all


def test_explicit_config_files(project: Path) -> None:
    assert runner.invoke(app, ["verify", "a.jsonl", "--config", "none.toml"]).exit_code == 2
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    result = runner.invoke(app, ["verify", "a.jsonl", "--config", "pyproject.toml"])
    assert result.exit_code == 2 and "pyproject.toml: tool.sessaudit: no such table" in result.stderr
    (project / "other.toml").write_text('ignore = ["SA1"]\n', encoding="utf-8")
    assert runner.invoke(app, ["verify", "a.jsonl", "--config", "other.toml"]).exit_code == 0
    both = runner.invoke(app, ["verify", "a.jsonl", "--config", "other.toml", "--no-config"])
    assert both.exit_code == 2 and "exclude each other" in both.stderr
    assert load_config(project / "other.toml").ignore == ("SA1",)
