"""CI integrations (issue 7 item 6): our pre-commit hook run by the real pre-commit in a throwaway git
repository, the composite GitHub Action's structure and its verify script, and the CI's SARIF check."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sessaudit.engine import audit
from sessaudit.verdicts import Severity
from tests.sessions import clean_session

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_RUN = REPO / "examples" / "rivumi" / "runs" / "6b9bb2f6535a7e07b6dffce8112d9d11"
EXAMPLE_STORE = REPO / "examples" / "half-pi" / "home" / "db"

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit (the test extra)")


def sessaudit_bin() -> str:
    found = shutil.which("sessaudit", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if found is None:
        pytest.fail("the sessaudit command is not installed beside this python (pip install -e .)")
    return found


def isolated_env(tmp_path: Path) -> dict[str, str]:
    """No user configuration or cache: HOME, pre-commit's cache and git's global config all in tmp_path."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": f"{Path(sessaudit_bin()).parent}{os.pathsep}{Path(sys.executable).parent}"
        f"{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        # a checkout run with PYTHONPATH=src tests its own code, not an installed copy
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }


# --- pre-commit ---------------------------------------------------------------------------------------


def our_hook() -> dict[str, Any]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert isinstance(hooks, list) and [hook["id"] for hook in hooks] == ["sessaudit-verify"]
    return dict(hooks[0])


def test_hook_file_declares_a_python_hook_on_session_files() -> None:
    hook = our_hook()
    assert hook["entry"] == "sessaudit verify" and hook["language"] == "python"
    pattern = re.compile(hook["files"])
    for name in (
        "logs/.tiny-agent/sessions/2026-11-29T20-25-57-606Z_0199.jsonl",
        "runs/6b9b/events.jsonl",
        "runs/6b9b/session.json",
        "home/db/half-pi.db",
        "home/db/half-pi.db-wal",
    ):
        assert pattern.search(name), name
    for name in ("notes.txt", "runs/6b9b/request.json", "home/db/half-pi.db-shm", "my-session.json.bak"):
        assert not pattern.search(name), name


def test_hook_file_is_a_valid_pre_commit_manifest(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra; CI installs it")
    checked = run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
        REPO,
        isolated_env(tmp_path),
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_pre_commit_runs_our_hook_on_a_clean_commit_and_blocks_a_corrupt_one(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra; CI installs it")
    env = isolated_env(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    assert run(["git", "init", "-q"], repo, env).returncode == 0
    # the hook as our .pre-commit-hooks.yaml declares it, as a local hook on the installed sessaudit
    hook = {key: value for key, value in our_hook().items() if key != "minimum_pre_commit_version"}
    hook["language"] = "system"  # no hook environment to build, no network
    config = {"repos": [{"repo": "local", "hooks": [hook]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    installed = run([sys.executable, "-m", "pre_commit", "install"], repo, env)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    sessions = repo / "logs" / ".tiny-agent" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "2026-11-29T20-25-57-606Z_clean.jsonl").write_bytes(clean_session())
    shutil.copytree(EXAMPLE_RUN, repo / "runs" / EXAMPLE_RUN.name)  # events.jsonl and session.json both
    shutil.copytree(EXAMPLE_STORE, repo / "half-pi" / "db")  # the store and its -wal
    (repo / "notes.txt").write_text("not a session\n", encoding="utf-8")
    assert run(["git", "add", "-A"], repo, env).returncode == 0
    clean = run(["git", "commit", "-q", "-m", "clean sessions"], repo, env)
    output = clean.stdout + clean.stderr
    assert clean.returncode == 0, output
    assert re.search(r"sessaudit verify\.+Passed", output), output

    corrupt = sessions / "2026-11-29T21-00-00-000Z_corrupt.jsonl"
    corrupt.write_bytes(clean_session() + b"not json\n")
    errors = [item for item in audit([str(corrupt)]).report.findings if item.severity is Severity.ERROR]
    assert errors
    assert run(["git", "add", "-A"], repo, env).returncode == 0
    blocked = run(["git", "commit", "-q", "-m", "corrupt session"], repo, env)
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert re.search(r"sessaudit verify\.+Failed", output), output
    assert "exit code: 1" in output
    for item in errors:  # the output names each error finding and the file
        assert item.rule in output, output
    assert corrupt.name in output
    log = run(["git", "log", "--oneline"], repo, env)
    assert log.stdout.count("\n") == 1  # the corrupt session was not committed


def test_a_run_named_through_both_of_its_files_is_verified_once(tmp_path: Path) -> None:
    run_dir = tmp_path / EXAMPLE_RUN.name
    shutil.copytree(EXAMPLE_RUN, run_dir)
    store = tmp_path / "db"
    shutil.copytree(EXAMPLE_STORE, store)
    report = audit(
        [
            str(run_dir / "events.jsonl"),
            str(run_dir / "session.json"),
            str(store / "half-pi.db"),
            str(store / "half-pi.db-wal"),
        ]
    ).report
    assert [(source.path, source.format) for source in report.sources] == [
        (str(run_dir), "rivumi"),  # a named file of a run stands for the run, as a named -wal for its store
        (str(store / "half-pi.db"), "half-pi"),
    ]
    once = audit([str(run_dir), str(store / "half-pi.db")]).report
    assert len(report.findings) == len(once.findings)


# --- the GitHub Action -----------------------------------------------------------------------------


def action() -> dict[str, Any]:
    document = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def step(document: dict[str, Any], identifier: str) -> dict[str, Any]:
    return next(item for item in document["runs"]["steps"] if item.get("id") == identifier)


def test_action_is_a_composite_whose_references_are_all_declared() -> None:
    document = action()
    assert document["runs"]["using"] == "composite"
    inputs = document["inputs"]
    assert {"paths", "fail-on", "args", "sarif-file", "upload-sarif"} <= set(inputs)
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert used <= set(inputs), used - set(inputs)
    assert set(inputs) <= used, set(inputs) - used  # no input is declared and ignored
    produced = set(re.findall(r'echo "([a-z-]+)=', step(document, "verify")["run"]))
    referenced = set(re.findall(r"steps\.verify\.outputs\.([A-Za-z0-9_-]+)", text))
    assert referenced <= produced
    assert {"sarif-file", "exit-code"} <= set(document["outputs"])
    for name, output in document["outputs"].items():
        assert output["value"] == f"${{{{ steps.verify.outputs.{name} }}}}"
    for item in document["runs"]["steps"]:
        assert ("run" in item) != ("uses" in item)
        if "run" in item:
            assert item["shell"] == "bash"
            assert "${{" not in item["run"]  # expressions reach scripts through env, never spliced in
    install = next(item for item in document["runs"]["steps"] if "pip install" in item.get("run", ""))
    assert install["env"]["SESSAUDIT_ACTION_PATH"] == "${{ github.action_path }}"
    upload = next(item for item in document["runs"]["steps"] if "upload-sarif" in item.get("uses", ""))
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    assert upload["with"]["sarif_file"] == "${{ steps.verify.outputs.sarif-file }}"


def test_every_flag_the_action_passes_exists_in_verify_help() -> None:
    script = step(action(), "verify")["run"]
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", script))
    assert {"--format", "--report", "--fail-on"} <= flags
    shown = subprocess.run(
        [sessaudit_bin(), "verify", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"},
        timeout=120,
        check=True,
    ).stdout
    for flag in flags:
        assert re.search(rf"(?<![\w-]){flag}(?![\w-])", shown), flag
    assert "github" in shown and "sarif" in shown  # the --format and --report choices it uses
    fail_on = action()["inputs"]["fail-on"]["default"]
    assert fail_on in {"error", "warning", "note", "never"}


def run_verify_step(tmp_path: Path, **inputs: str) -> tuple[dict[str, str], str]:
    """The action's verify script under bash as GitHub runs it (`bash -e -o pipefail`), inputs given as
    the action would set them (defaults from action.yml); its outputs and stdout."""
    document = action()
    values = {name: str(spec.get("default", "")) for name, spec in document["inputs"].items()}
    values.update({name.replace("_", "-"): value for name, value in inputs.items()})
    verify_step = step(document, "verify")
    env = isolated_env(tmp_path)
    for key, expression in verify_step["env"].items():
        name = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", expression)
        assert name is not None, expression
        env[key] = values[name.group(1)]
    outputs = tmp_path / "github-output"
    outputs.write_text("", encoding="utf-8")
    env["GITHUB_OUTPUT"] = str(outputs)
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step-summary.md")
    script = tmp_path / "verify.sh"
    script.write_text(verify_step["run"], encoding="utf-8")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", str(script)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # the step itself never fails: a later step does
    written = dict(line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines())
    return written, done.stdout


def test_the_verify_script_writes_sarif_and_reports_the_exit_code(tmp_path: Path) -> None:
    sarif = tmp_path / "out" / "report.sarif"
    sarif.parent.mkdir()
    outputs, stdout = run_verify_step(
        tmp_path, paths="examples/tiny-agent\n examples/rivumi", sarif_file=str(sarif)
    )
    assert outputs == {"sarif-file": str(sarif), "exit-code": "1"}  # the examples hold a corrupt session
    document = json.loads(sarif.read_text(encoding="utf-8"))
    assert document["version"] == "2.1.0" and document["runs"][0]["results"]
    assert "::error " in stdout  # --format github: annotations on the run
    assert (tmp_path / "step-summary.md").read_text(encoding="utf-8").strip()

    outputs, _ = run_verify_step(
        tmp_path, paths="examples/tiny-agent", fail_on="never", sarif_file=str(sarif)
    )
    assert outputs["exit-code"] == "0"
    # args are split at any whitespace: the corrupt example's SA205 error is ignored, nothing else fails
    outputs, _ = run_verify_step(
        tmp_path, paths="examples/tiny-agent", args="--ignore \n  SA205", sarif_file=str(sarif)
    )
    assert outputs == {"sarif-file": str(sarif), "exit-code": "0"}
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert results and all(item["ruleId"] != "SA205" for item in results)
    outputs, _ = run_verify_step(tmp_path, args="--no-such-flag", sarif_file=str(sarif))
    assert outputs == {"exit-code": "2"}  # a usage error: no SARIF to upload


def test_the_action_gates_on_verdicts_and_conditions(tmp_path: Path) -> None:
    sarif = tmp_path / "report.sarif"
    common = {"paths": "examples/half-pi", "fail_on": "never", "sarif_file": str(sarif)}
    outputs, _ = run_verify_step(tmp_path, **common, fail_on_condition="effect-unknown")
    assert outputs["exit-code"] == "0"  # warnings only, no effect of unknown outcome
    outputs, _ = run_verify_step(tmp_path, **common, fail_on_condition="effect-unknown,remote-run-in-flight")
    assert outputs["exit-code"] == "1"
    outputs, _ = run_verify_step(tmp_path, **common, fail_on_verdict="needs-recovery")
    assert outputs["exit-code"] == "1"
    settings = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["invocations"][0]["properties"]
    assert settings["settings"]["fail_on_verdict"] == ["needs-recovery"]


# --- .ci/run's SARIF validation verdict -------------------------------------------------------------


def ci_sarif_validation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sarif_validation", REPO / ".ci" / "sarif_validation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def validator_log(*results: dict[str, Any]) -> dict[str, Any]:
    """A log in the shape the multitool writes: messages as ids with arguments, texts in the rules."""
    return {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "SARIF Multitool",
                        "rules": [
                            {
                                "id": "SARIF1002",
                                "messageStrings": {
                                    "Error_UrisMustConformToRfc3986": {"text": "{0}: bad '{1}'."}
                                },
                            }
                        ],
                    }
                },
                "invocations": [{"executionSuccessful": True}],
                "results": list(results),
            }
        ],
    }


def result(rule: str, level: str, message_id: str, *arguments: str) -> dict[str, Any]:
    location = {
        "physicalLocation": {"artifactLocation": {"uri": "file:///x.sarif"}, "region": {"startLine": 7}}
    }
    return {
        "ruleId": rule,
        "level": level,
        "message": {"id": message_id, "arguments": list(arguments)},
        "locations": [location],
    }


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ([], 0),
        ([result("SARIF2005", "warning", "Warning_ProvideToolnformationUri", "runs[0]", "sessaudit")], 0),
        ([result("SARIF2017", "warning", "Warning_MissingRegion", "runs[0].results[0]")], 0),
        ([result("SARIF2012", "note", "Note_FriendlyNameNotAPascalIdentifier", "x", "y")], 0),
        ([result("SARIF2004", "warning", "Warning_EliminateIdOnlyRules", "runs[0]")], 1),
        (
            [
                result(
                    "SARIF1002", "error", "Error_UrisMustConformToRfc3986", "helpUri", "docs/rules.md#sa104"
                )
            ],
            1,
        ),
        ([result("JSON1002", "error", "Error_Missing", "runs[0].results[7]")], 1),
    ],
)
def test_ci_fails_on_validator_errors_and_unaccepted_warnings(
    tmp_path: Path, results: list[dict[str, Any]], expected: int
) -> None:
    module = ci_sarif_validation()
    path = tmp_path / "validation.sarif"
    path.write_text(json.dumps(validator_log(*results)), encoding="utf-8")
    out = io.StringIO()
    assert module.check(path, out) == expected
    if results and results[0]["ruleId"] == "SARIF1002":
        assert "file:///x.sarif:7: helpUri: bad 'docs/rules.md#sa104'." in out.getvalue()


def test_ci_fails_when_the_validator_itself_did_not_run_cleanly(tmp_path: Path) -> None:
    module = ci_sarif_validation()
    log = validator_log()
    log["runs"][0]["invocations"] = [
        {
            "executionSuccessful": False,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": "could not parse"}}],
        }
    ]
    path = tmp_path / "validation.sarif"
    path.write_text(json.dumps(log), encoding="utf-8")
    out = io.StringIO()
    assert module.check(path, out) == 1
    assert "could not parse" in out.getvalue()


def test_the_ci_corpus_is_one_valid_sarif_log_of_every_golden_report(tmp_path: Path) -> None:
    from tests.reporters.test_sarif import validate

    module = ci_sarif_validation()
    target = tmp_path / "golden-reports.sarif"
    count = module.write_corpus(target)
    goldens = []
    for path in (REPO / "tests" / "golden").rglob("*.json"):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict) and loaded.get("schema") == "sessaudit/report/v1":
            goldens.append(loaded)
    assert count == len(goldens) > 100
    document = json.loads(target.read_text(encoding="utf-8"))
    validate(document)
    total = sum(len(loaded["findings"]) for loaded in goldens)
    assert len(document["runs"][0]["results"]) == total
