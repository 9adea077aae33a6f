"""Start-up (issue 21): `sessaudit verify --format json` of one small session imports only what that audit
runs. Guarded by what a fresh interpreter imports (`python -X importtime` lists every module), never by
timing: the console reporter and rich, the other reporters, the warehouse and duckdb, multiprocessing,
baselines, redaction, seeds, the settings file's TOML reader, tiny-agent's v1 verifier and the other
formats' verifiers stay unloaded until an audit needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sessions import clean_session, killed_during_deploy

# never imported by `verify --format json --jobs 1` of one tiny-agent v2 session in a folder without a
# settings file (a name here also stands for every module under it)
NOT_NEEDED = (
    "rich",
    "duckdb",
    "pyarrow",
    "multiprocessing",
    "concurrent.futures",
    "xml",
    "tomllib",
    "jsonschema",
    "genai_prices",
    "sessaudit.reporters.console",
    "sessaudit.reporters.sarif",
    "sessaudit.reporters.junit",
    "sessaudit.reporters.github",
    "sessaudit.warehouse.loader",
    "sessaudit.warehouse.queries",
    "sessaudit.warehouse.render",
    "sessaudit.baseline",
    "sessaudit.fingerprints",
    "sessaudit.redact",
    "sessaudit.seeds",
    "sessaudit.prices",
    "sessaudit.repairs",
    "sessaudit.formats.tiny_agent.v1",
    "sessaudit.formats.tiny_agent.warehouse",
    "sessaudit.formats.tiny_agent.build",
)

# what discovery and the rule catalogue need of every installed format: its plugin object, recognisers
# and rule tables (tests/test_architecture.py names the same)
LIGHT = {"plugin", "recognise", "rules", "rules.history", "rules.runs", "rules.store"}
LIGHT |= {"read", "read.layout", "spec", "spec.records"}


def imported(arguments: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `python -X importtime -m sessaudit ARGUMENTS`: the process and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sessaudit", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and not line.rstrip().endswith("imported package")
    }
    return done, modules


def unneeded(modules: set[str]) -> list[str]:
    return sorted(
        name for name in modules if any(name == item or name.startswith(item + ".") for item in NOT_NEEDED)
    )


def other_formats_code(modules: set[str]) -> list[str]:
    """Modules of formats other than tiny-agent beyond their plugin objects, recognisers and rules."""
    return sorted(
        name
        for name in modules
        if name.startswith("sessaudit.formats.")
        and not name.startswith("sessaudit.formats.tiny_agent")
        and name.count(".") > 2
        and name.split(".", 3)[-1] not in LIGHT
    )


@pytest.mark.parametrize("session", [clean_session, killed_during_deploy], ids=["clean", "open-run"])
def test_verify_json_of_a_small_session_imports_only_what_it_runs(
    tmp_path: Path, session: Callable[[], bytes]
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(session())
    done, modules = imported(["verify", "--format", "json", "--jobs", "1", str(path)], tmp_path)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert [source["format"] for source in report["sources"]] == ["tiny-agent"]
    assert any(name.startswith("sessaudit.formats.tiny_agent.v2.") for name in modules)
    assert unneeded(modules) == []
    assert other_formats_code(modules) == []


def test_the_console_report_still_imports_its_reporter(tmp_path: Path) -> None:
    """The check above sees imports: the console report (the default format) loads rich."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(clean_session())
    done, modules = imported(["verify", "--jobs", "1", str(path)], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"rich.console", "sessaudit.reporters.console"} <= modules
    console = ("rich", "sessaudit.reporters.console")
    others = [name for name in unneeded(modules) if not name.startswith(console)]
    assert others == []


def test_formats_and_version_load_no_verifier(tmp_path: Path) -> None:
    """`sessaudit formats` and `--version` need the plugin objects and rule tables, never a verifier."""
    for arguments in (["formats"], ["--version"]):
        done, modules = imported(arguments, tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        assert unneeded(modules) == []
        verifiers = sorted(
            name
            for name in modules
            if name.startswith("sessaudit.formats.")
            and name.count(".") > 2
            and name.split(".", 3)[-1] not in LIGHT
        )
        assert verifiers == [], arguments
