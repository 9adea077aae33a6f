"""The command line: every choice wired, exit codes as in CONTRACT §3, reports valid against the schema."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from sessaudit.cli import FailOn, app
from sessaudit.reporters import RENDERERS, OutputFormat
from sessaudit.reporters.console import safe
from sessaudit.reporters.json import report_json_schema, seed_json_schema
from sessaudit.resources import load_schema
from tests.golden import check_golden
from tests.reporters.test_sarif import validate as validate_sarif
from tests.sessions import clean_session, killed_during_deploy

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_every_output_format_choice_is_wired() -> None:
    assert set(RENDERERS) == set(OutputFormat)
    assert {choice.value for choice in FailOn} == {"error", "warning", "note", "never"}


def test_clean_session_exits_0_and_json_validates(tmp_path: Path) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(clean_session())
    result = runner.invoke(app, ["verify", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    Draft202012Validator(load_schema("report.v1.schema.json")).validate(document)
    assert document["schema"] == "sessaudit/report/v1"
    assert document["sources"][0]["verdict"] == "clean"
    assert document["sources"][0]["files"][0]["unchanged"] is True


def test_fail_on_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())  # warnings only: SA301 and SA302
    assert runner.invoke(app, ["verify", str(path)]).exit_code == 0
    assert runner.invoke(app, ["verify", str(path), "--fail-on", "warning"]).exit_code == 1
    assert runner.invoke(app, ["verify", str(path), "--fail-on", "never"]).exit_code == 0
    torn = tmp_path / "corrupt.jsonl"
    torn.write_bytes(clean_session() + b"not json\n")
    assert runner.invoke(app, ["verify", str(torn)]).exit_code == 1
    assert runner.invoke(app, ["verify", str(torn), "--fail-on", "never"]).exit_code == 0


def test_console_names_the_unknown_effect_in_plain_words(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())
    result = runner.invoke(app, ["verify", str(path)])
    words = " ".join(result.output.split())  # the console wraps long lines at the width
    assert "UNKNOWN: tool bash" in words
    assert '{"command": "./deploy.sh"} may or may not have run' in words


def test_named_missing_or_unrecognised_inputs_exit_3(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    result = runner.invoke(app, ["verify", str(tmp_path / "nope.jsonl"), "--format", "json"])
    assert result.exit_code == 3
    assert json.loads(result.stdout)["sources"][0]["verdict"] == "unreadable"
    result = runner.invoke(app, ["verify", str(tmp_path / "notes.txt"), "--format", "json"])
    assert result.exit_code == 3
    assert json.loads(result.stdout)["findings"][0]["rule"] == "SA002"


def test_walked_unrecognised_files_are_skipped_and_do_not_change_the_exit_code(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "clean.jsonl").write_bytes(clean_session())
    result = runner.invoke(app, ["verify", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0
    assert [Path(item["path"]).name for item in json.loads(result.stdout)["skipped"]] == ["notes.txt"]


def test_output_file_is_written_and_stdout_stays_empty(tmp_path: Path) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(clean_session())
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["verify", str(path), "--format", "json", "--output", str(out)])
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(out.read_text())["summary"]["sources"] == 1
    assert [item.name for item in tmp_path.iterdir() if item.name.startswith(".")] == []


def test_usage_errors_exit_2() -> None:
    assert runner.invoke(app, ["verify", "x", "--format", "yaml"]).exit_code == 2
    assert runner.invoke(app, ["rules", "SA999"]).exit_code == 2


def test_rules_lists_and_explains() -> None:
    listing = runner.invoke(app, ["rules"])
    assert listing.exit_code == 0 and "SA205  seq-mismatch" in listing.output
    one = runner.invoke(app, ["rules", "seq-mismatch"])
    assert one.exit_code == 0 and "native code:      SEQ_MISMATCH" in one.output


def test_internal_errors_exit_4_with_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def explode(paths: list[str], **options: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("sessaudit.cli.audit", explode)
    result = runner.invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == 4
    assert result.stderr.strip().splitlines() == [
        "sessaudit: internal error: RuntimeError: boom (rerun with --debug for details)"
    ]


def test_python_dash_m_runs_the_cli() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "sessaudit", "--version"],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(REPO / "src")},
    )
    assert completed.returncode == 0 and completed.stdout.startswith("sessaudit ")


def test_report_and_seed_schema_files_are_fresh(update_golden: bool) -> None:
    for name, schema in (
        ("report.v1.schema.json", report_json_schema()),
        ("seed.v1.schema.json", seed_json_schema()),
    ):
        Draft202012Validator.check_schema(schema)
        text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
        check_golden(REPO / "schemas" / name, text, update_golden)


def test_examples_reports_match_golden_files(update_golden: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    json_result = runner.invoke(app, ["verify", "examples/", "--format", "json"])
    assert json_result.exit_code == 1  # the corpus holds a corrupt session on purpose
    Draft202012Validator(load_schema("report.v1.schema.json")).validate(json.loads(json_result.stdout))
    check_golden(REPO / "tests" / "golden" / "examples.report.json", json_result.stdout, update_golden)
    # the console's golden files (80 and 160 columns, a fixed clock): tests/reporters/test_console.py
    for output_format, name in (
        ("sarif", "examples.sarif"),
        ("junit", "examples.junit.xml"),
        ("github", "examples.github.txt"),
    ):
        result = runner.invoke(app, ["verify", "examples/", "--format", output_format])
        assert result.exit_code == 1, result.output
        if output_format == "sarif":
            validate_sarif(json.loads(result.stdout))
        check_golden(REPO / "tests" / "golden" / name, result.stdout, update_golden)


def test_report_writes_several_formats_beside_the_main_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "killed.jsonl"
    path.write_bytes(killed_during_deploy())
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outputs = {name: tmp_path / f"out.{name}" for name in ("sarif", "junit", "github", "json", "console")}
    arguments = ["verify", str(path), "--format", "json"]
    for name, target in outputs.items():
        arguments += ["--report", f"{name}={target}"]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["schema"] == "sessaudit/report/v1"
    validate_sarif(json.loads(outputs["sarif"].read_text(encoding="utf-8")))
    assert outputs["junit"].read_text(encoding="utf-8").startswith("<?xml")
    assert outputs["github"].read_text(encoding="utf-8").startswith("::warning ")
    assert outputs["json"].read_text(encoding="utf-8") == result.stdout
    assert "\x1b[" not in outputs["console"].read_text(encoding="utf-8")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## sessaudit\n")  # appended, as GitHub expects
    assert sorted(item.name for item in tmp_path.iterdir()) == sorted(
        ["killed.jsonl", "summary.md", *(target.name for target in outputs.values())]
    )  # no temporary file left behind


@pytest.mark.parametrize("value", ["yaml=out.yaml", "sarif", "sarif=", "=out.sarif"])
def test_bad_report_value_is_a_usage_error(tmp_path: Path, value: str) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(clean_session())
    result = runner.invoke(app, ["verify", str(path), "--report", value])
    assert result.exit_code == 2
    assert "--report" in result.stderr


def test_step_summary_is_written_only_for_the_github_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(clean_session())
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert runner.invoke(app, ["verify", str(path), "--format", "sarif"]).exit_code == 0
    assert not summary.exists()
    assert runner.invoke(app, ["verify", str(path), "--format", "github"]).exit_code == 0
    assert "No findings." in summary.read_text(encoding="utf-8")


def test_console_escapes_terminal_control_sequences() -> None:
    assert safe("a\x1b[2Jb\u202ec\n") == "a\\x1b[2Jb\\u202ec\\x0a"


@pytest.mark.parametrize(
    ("module", "target", "arguments"),
    [
        ("sessaudit.cli", "audit", ["verify", "."]),
        ("sessaudit.cli", "audit", ["seed", "."]),
        ("sessaudit.warehouse.loader", "load_warehouse", ["load", ".", "--db", "w.duckdb"]),
        ("sessaudit.warehouse.queries", "run_sql", ["query", "--db", "w.duckdb", "--sql", "select 1"]),
    ],
)
def test_ctrl_c_prints_one_line_and_exits_130(
    module: str, target: str, arguments: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(f"{module}.{target}", interrupt)
    result = runner.invoke(app, arguments)
    assert (result.exit_code, result.stderr, result.stdout) == (130, "sessaudit: interrupted\n", "")


def test_sigint_during_verify_exits_130_without_a_traceback(tmp_path: Path) -> None:
    """A real Ctrl-C (SIGINT) reaching the installed entry point while the audit runs."""
    script = (
        "import sys, time, sessaudit.cli as cli\n"
        "def slow(*_, **__):\n"
        "    print('started', flush=True)\n"
        "    time.sleep(60)\n"
        "cli.audit = slow\n"
        "sys.argv = ['sessaudit', 'verify', '.']\n"
        "cli.main()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "started\n"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr) == (130, "sessaudit: interrupted\n")


@pytest.mark.parametrize("flag", ["--output", "--report"])
def test_a_report_that_cannot_be_written_is_named_not_its_temporary_file(tmp_path: Path, flag: str) -> None:
    path = tmp_path / "clean.jsonl"
    path.write_bytes(clean_session())
    target = tmp_path / "missing" / "report.txt"
    value = str(target) if flag == "--output" else f"json={target}"
    result = runner.invoke(app, ["verify", str(path), flag, value])
    assert result.exit_code == 2
    assert result.stderr == f"sessaudit: cannot write {target}: No such file or directory\n"
