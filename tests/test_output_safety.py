"""Output safety: what a log holds cannot rewrite a terminal, inject CI commands, break XML or leave the
seeds directory — whatever the content, ids or file names, in every output format."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import junitparser
import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.formats.rivumi.build.parts import Killed
from sessaudit.formats.rivumi.build.run_builder import RunBuilder
from sessaudit.formats.rivumi.build.scenarios import KILLED_AFTER_TOOL_STARTED, Script
from sessaudit.outputsafety import json_safe
from sessaudit.reporters.console import safe
from sessaudit.reporters.github import escape_data, escape_property
from sessaudit.reporters.junit import xml_safe
from sessaudit.seedfiles import seed_file_name, write_seed
from tests.content_corpus import SESSIONS, build_corpus

# an OSC title change, a screen clear, a carriage return, a bidi override, NUL, a C1 CSI, and a GitHub
# workflow command on a line of its own
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\r\u202eNUL\x00\x9b31m\n::set-env name=PWNED::1\n%0A"
HOSTILE_NAME = "evil\x1b]0;pwned\x07\x1b[31m\u202e\r"  # legal in a Linux file name
# what must never appear raw in a text output: C0 controls but LF, DEL, C1, separators, bidi, surrogates
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
FORMATS = ("console", "json", "sarif", "junit", "github")
runner = CliRunner()


def _hostile_corpus(root: Path) -> Path:
    build_corpus(root, f"text {HOSTILE} more")
    sessions = root / SESSIONS
    # a session file whose name carries escape sequences (recognised by content in a walk)
    original = sorted(sessions.iterdir())[0]
    shutil.copyfile(original, sessions / f"{HOSTILE_NAME}.jsonl")
    # a walked file that is no session: listed under `skipped` with its name
    (root / f"notes{HOSTILE_NAME}.txt").write_text("plain notes\n", encoding="utf-8")
    # a Rivumi run whose free-form run id (and so its directory name) is hostile, left open
    builder = RunBuilder(
        root / "rivumi-hostile", seed=5, run_id=f"run{HOSTILE_NAME}", crash=KILLED_AFTER_TOOL_STARTED
    )
    with contextlib.suppress(Killed):
        Script().run(builder)
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _hostile_corpus(tmp_path_factory.mktemp("hostile"))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _raw(text: str) -> list[str]:
    return sorted({repr(match.group()) for match in RAW.finditer(text)})


def test_every_output_escapes_what_the_logs_hold(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    arguments = ["verify", str(corpus), "--jobs", "1", "--seeds-dir", str(out / "seeds")]
    for name in FORMATS:
        arguments += ["--report", f"{name}={out / ('report.' + name)}"]
    out.mkdir()
    summary = out / "summary.md"
    result = runner.invoke(app, arguments, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.exit_code in (0, 1), result.output
    outputs = {"console stdout": result.output}
    for name in FORMATS[1:]:
        shown = runner.invoke(app, ["verify", str(corpus), "--jobs", "1", "--format", name])
        outputs[f"{name} stdout"] = shown.output
    for path in sorted(out.rglob("*")):
        if path.is_file():
            outputs[path.name] = path.read_text(encoding="utf-8")
    assert len([name for name in outputs if name.endswith(".seed.json")]) >= 6
    assert {name: _raw(text) for name, text in outputs.items() if _raw(text)} == {}
    # the hostile text did reach the outputs, escaped: the test looks at the right thing
    assert "\\x1b]0;pwned\\x07" in outputs["report.console"]
    assert "\\u202e" in outputs["report.json"]
    # JSON keeps every value exact: the hostile file name comes back from the report
    report = json.loads(outputs["report.json"])
    paths = [source["path"] for source in report["sources"]] + [item["path"] for item in report["skipped"]]
    assert any(path.endswith(f"{HOSTILE_NAME}.jsonl") for path in paths)
    assert any(path.endswith(f"notes{HOSTILE_NAME}.txt") for path in paths)
    seeds = [json.loads(text) for name, text in outputs.items() if name.endswith(".seed.json")]
    assert any(HOSTILE in text for seed in seeds for text in _strings(seed))  # contents stay exact
    json.loads(outputs["report.sarif"])
    # GitHub: only sessaudit's own commands start a line; the injected one is data
    lines = outputs["report.github"].splitlines()
    assert all(line.startswith(("::error ", "::warning ", "::notice ", "sessaudit: ")) for line in lines)
    assert not any("::set-env" in line.split("::", 2)[1] for line in lines if line.startswith("::"))
    # JUnit: well-formed XML 1.0, readable by junitparser
    ElementTree.fromstring(outputs["report.junit"].encode("utf-8"))
    suites = junitparser.JUnitXml.fromstring(outputs["report.junit"])
    assert sum(1 for _ in suites) >= 8
    # seeds: every file directly inside the seeds directory, with a safe name
    for path in (out / "seeds").iterdir():
        assert path.parent == out / "seeds"
        assert re.fullmatch(r"[A-Za-z0-9._-]+\.seed\.json", path.name) and not path.name.startswith(".")


def test_stderr_and_errors_escape_ids(corpus: Path) -> None:
    run_dir = next((corpus / "rivumi-hostile").iterdir())
    result = runner.invoke(app, ["seed", str(run_dir), "--run", f"nope{HOSTILE_NAME}"])
    assert result.exit_code == 2
    assert _raw(result.output) == []
    assert "\\x1b]0;pwned" in result.output
    seed = runner.invoke(app, ["seed", str(run_dir)])
    assert seed.exit_code == 0
    assert _raw(seed.output) == []
    # the id comes back exact (Rivumi strips ids of surrounding whitespace, the CR included)
    assert json.loads(seed.output)[0]["run_id"] == f"run{HOSTILE_NAME}".strip()


def test_lone_surrogates_neither_crash_nor_reach_outputs_raw(tmp_path: Path) -> None:
    """Logs holding `\\ud800` (valid JSON, no valid UTF-8): tiny-agent and Rivumi files are judged
    corrupt; no output fails to encode it or carries it raw."""
    build_corpus(tmp_path, "LONE")
    for path in [*(tmp_path / SESSIONS).iterdir(), *(tmp_path / "rivumi").glob("*/*.json*")]:
        path.write_bytes(path.read_bytes().replace(b"LONE", b"\\ud800x"))
    for name in FORMATS:
        result = runner.invoke(
            app,
            ["verify", str(tmp_path), "--jobs", "1", "--format", name, "--seeds-dir", str(tmp_path / "s")],
        )
        assert result.exit_code in (0, 1), result.output
        assert _raw(result.output) == [], name


@pytest.mark.parametrize(
    ("session", "run"),
    [
        ("../../etc/passwd", "run"),
        ("s", "../.."),
        ("a\x00b", "c\\d"),
        (".", ".."),
        ("", ""),
        ("ｅｔｃ／ｐａｓｓｗｄ", "‮run"),  # fullwidth look-alikes, a bidi override
        ("x" * 10_000, "y" * 10_000),
        (None, "r"),
    ],
)
def test_seed_file_names_never_leave_the_directory(tmp_path: Path, session: str | None, run: str) -> None:
    name = seed_file_name(session, run, "0123456789abcdef")
    assert re.fullmatch(r"[A-Za-z0-9._~-]+--[A-Za-z0-9._~-]+--01234567\.seed\.json", name), name
    assert not name.startswith(".") and len(name.encode()) <= 255
    path, written = write_seed(tmp_path, name, {"schema": "sessaudit/seed/v1"})
    assert written and path.parent == tmp_path


def test_long_ids_stay_distinct() -> None:
    base = "x" * 10_000
    assert seed_file_name(base + "a", "r", None) != seed_file_name(base + "b", "r", None)
    assert seed_file_name("s", base + "a", None) != seed_file_name("s", base + "b", None)


def test_escapers() -> None:
    assert safe("a\x1b[2J\u202e\ud800\x9b\r") == "a\\x1b[2J\\u202e\\ud800\\x9b\\x0d"
    assert escape_data("50% done\r\n::set-env x::1\x1b") == "50%25 done%0D%0A::set-env x::1\\x1b"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    assert xml_safe("a\x00\x1b\x9b\u202e\n") == "a\\x00\\x1b\\x9b\\u202e\n"
    text = json.dumps({"k": "\x7f\x85\u2028\u202e\ud800"}, ensure_ascii=False)
    assert json.loads(json_safe(text)) == {"k": "\x7f\x85\u2028\u202e\ud800"}
    assert _raw(json_safe(text)) == []
