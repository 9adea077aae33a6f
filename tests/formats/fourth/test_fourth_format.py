"""A fourth format through the public plugin interface only: "tally" (tests/formats/fourth/plugin.py),
installed (a) as a real `sessaudit.formats` entry point of a distribution written into tmp_path and (b) by
`sessaudit.registry.registered()`. Nothing outside this folder knows it: discovery, verify in every output
format, the rule catalogue, `sessaudit formats`, the warehouse and the console script take it as they take
the built-in formats. Broken plugins are reported and never take the built-ins down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from xml.etree import ElementTree

import duckdb
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from sessaudit import registry as plugins
from sessaudit.cli import app
from sessaudit.discovery import discover
from sessaudit.resources import load_schema
from tests.formats.fourth.plugin import PLUGIN
from tests.sessions import clean_session

REPO = Path(__file__).resolve().parents[3]
runner = CliRunner()

OPEN_TALLY = (
    b'{"tally": 1, "session": "tally-open"}\n'
    b'{"seq": 1, "kind": "step", "tokens": 3}\n'
    b'{"seq": 2, "kind": "step", "tokens": 4}\n'
)
GAP_TALLY = (
    b'{"tally": 1, "session": "tally-gap"}\n'
    b'{"seq": 1, "kind": "step", "tokens": 3}\n'
    b'{"seq": 3, "kind": "done", "tokens": 4}\n'
)
GAP_LINE_OFFSET = GAP_TALLY.index(b'{"seq": 3')  # where SA901 points: line 3
OPEN_LAST_OFFSET = OPEN_TALLY.index(b'{"seq": 2')  # where SA301 points: the last verified line, 3
TALLY_POINT = "tests.formats.fourth.plugin:PLUGIN"
CLASHING_MODULE = """
from sessaudit.plugin import FormatPlugin
from sessaudit.rulebase import E, CORRUPT, _rule


class Clashing(FormatPlugin):
    name = "{name}"
    versions = ("1",)
    recognises = "nothing"

    def rule_tables(self):
        return ((_rule("SA101", "clash-rule", E, CORRUPT, "A rule code tiny-agent already has.", "None."),),)


PLUGIN = Clashing()
"""


def _distribution(site: Path, name: str, points: dict[str, str]) -> None:
    """A minimal installed distribution: METADATA and the entry points of the sessaudit.formats group."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    lines = "".join(f"{key} = {value}\n" for key, value in points.items())
    (info / "entry_points.txt").write_text(f"[sessaudit.formats]\n{lines}", encoding="utf-8")


@contextmanager
def installed(site: Path) -> Iterator[Path]:
    """`site` (a folder of distributions) on sys.path and the registry reloaded; both undone after."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(site))
        plugins.reload()
        try:
            yield site
        finally:
            plugins.reload()  # still on sys.path here: reloaded once more below, when it is gone
    plugins.reload()


@pytest.fixture
def tally_installed(tmp_path: Path) -> Iterator[Path]:
    """The tally plugin installed as the entry point of a distribution `tally_format` in tmp_path/site."""
    site = tmp_path / "site"
    _distribution(site, "tally_format", {"tally": TALLY_POINT})
    with installed(site):
        yield site
    assert plugins.registry().get("tally") is None  # gone again for the tests after this one


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder of a tiny-agent session, an open tally (SA301) and a tally with a seq gap (SA901)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "agent.jsonl").write_bytes(clean_session())
    (folder / "open.tally").write_bytes(OPEN_TALLY)
    (folder / "gap.tally").write_bytes(GAP_TALLY)
    return folder


def _verify(*arguments: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["verify", *arguments])
    return result.exit_code, result.stdout, result.stderr


def _check_verify_outputs(folder: Path) -> None:
    """verify in every output format shows the tally sources with their findings (exit 1: SA901)."""
    gap, opened = str(folder / "gap.tally"), str(folder / "open.tally")

    code, out, _ = _verify(str(folder), "--format", "json")
    assert code == 1, out
    document = json.loads(out)
    Draft202012Validator(load_schema("report.v1.schema.json")).validate(document)
    sources = {source["path"]: source for source in document["sources"]}
    assert sources[str(folder / "agent.jsonl")]["format"] == "tiny-agent"
    assert sources[str(folder / "agent.jsonl")]["verdict"] == "clean"
    assert sources[gap]["format"] == "tally" and sources[gap]["format_version"] == "1"
    assert sources[gap]["verdict"] == "corrupt"
    assert sources[gap]["evidence_unchanged"] is True
    assert sources[gap]["files"] == [
        {"path": gap, "bytes": len(GAP_TALLY), "sha256": sources[gap]["sha256"], "unchanged": True}
    ]
    assert sources[opened]["verdict"] == "needs-recovery"
    (session,) = sources[opened]["sessions"]
    assert (session["session_id"], session["facts"], session["last_seq"]) == ("tally-open", 2, 2)
    assert session["usage"]["output"] == 7
    (run,) = session["runs"]
    assert (run["run_id"], run["state"], run["recovery"]["condition"]) == (
        "tally-open/run",
        "open",
        "step-pending",
    )
    assert run["recovery"]["seed"]["source"]["sha256"] == sources[opened]["sha256"]
    (gap_session,) = sources[gap]["sessions"]
    # the done line is the corrupt one: as far as the verified lines go the run is open, but the engine
    # withholds the seed of a corrupt source, whatever the format
    (gap_run,) = gap_session["runs"]
    assert gap_run["state"] == "open" and gap_run["recovery"]["condition"] == "step-pending"
    assert gap_run["recovery"]["seed"] is None and gap_run["recovery"]["seed_kind"] is None
    assert gap_run["recovery"]["warnings"]
    findings = {(item["rule"], item["location"]["path"]): item for item in document["findings"]}
    sa901 = findings[("SA901", gap)]
    assert sa901["name"] == "tally-seq-gap" and sa901["severity"] == "error"
    assert (sa901["location"]["line"], sa901["location"]["byte_offset"]) == (3, GAP_LINE_OFFSET)
    sa301 = findings[("SA301", opened)]
    assert (sa301["location"]["line"], sa301["location"]["byte_offset"]) == (3, OPEN_LAST_OFFSET)
    assert sa301["location"]["seq"] == 2

    code, out, _ = _verify(str(folder), "--format", "console")
    assert code == 1
    words = " ".join(out.split())
    assert f"SA901 tally-seq-gap [line 3, byte {GAP_LINE_OFFSET}]: line 3 has seq 3, expected 2" in words
    assert "corrupt tally 1 gap.tally" in words and "needs-recovery tally 1 open.tally" in words
    assert "tiny-agent 0 agent.jsonl" in words
    opened_work = words.split("Open runs")[1]
    assert "run tally-open/run is open" in opened_work and "condition: step-pending" in opened_work

    code, out, _ = _verify(str(folder), "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    results = sarif["runs"][0]["results"]
    (gap_result,) = [item for item in results if item["ruleId"] == "SA901"]
    place = gap_result["locations"][0]["physicalLocation"]
    assert place["artifactLocation"]["uri"].endswith("gap.tally") and place["region"]["startLine"] == 3
    # tool.driver.rules: see test_a_plugin_added_after_import_reaches_sarif_and_selectors

    code, out, _ = _verify(str(folder), "--format", "junit")
    assert code == 1
    suites = {suite.get("name"): suite for suite in ElementTree.fromstring(out).iter("testsuite")}
    gap_suite = suites[gap]
    properties = {item.get("name"): item.get("value") for item in gap_suite.iter("property")}
    assert properties == {"format": "tally", "verdict": "corrupt"}
    (gap_case,) = gap_suite.iter("testcase")
    assert (gap_case.get("classname"), gap_case.get("name")) == ("sessaudit.tally", "tally-gap")
    failure = gap_case.find("failure")
    assert failure is not None and failure.get("type") == "SA901"
    assert failure.text == f"{gap}:3 (byte {GAP_LINE_OFFSET}): line 3 has seq 3, expected 2"

    code, out, _ = _verify(str(folder), "--format", "github")
    assert code == 1
    assert f"::error file={gap},line=3,title=SA901 tally-seq-gap::line 3 has seq 3, expected 2" in out
    assert f"::warning file={opened},line=3,title=SA301 run-left-open::" in out


# --- (a) a real entry point ----------------------------------------------------------------------------


def test_the_entry_point_is_found_and_validated(tally_installed: Path) -> None:
    installed_now = plugins.registry()
    assert installed_now.get("tally") is PLUGIN
    assert installed_now.broken == ()
    assert installed_now.names() == (
        "tiny-agent",
        "rivumi",
        "half-pi",
        "claude-code",
        "codex",
        "tally",
    )  # by first rule code


def test_a_walk_recognises_tally_beside_tiny_agent(tally_installed: Path, corpus: Path) -> None:
    found = {Path(item.path).name: item.format for item in discover([str(corpus)]).candidates}
    assert found == {"agent.jsonl": "tiny-agent", "gap.tally": "tally", "open.tally": "tally"}


def test_verify_shows_tally_in_every_output_format(tally_installed: Path, corpus: Path) -> None:
    _check_verify_outputs(corpus)


def test_rules_lists_and_explains_the_tally_rules(tally_installed: Path) -> None:
    listed = runner.invoke(app, ["rules"])
    assert listed.exit_code == 0
    rows = {line.split()[0]: line for line in listed.stdout.splitlines() if line.strip()}
    assert rows["SA901"].split()[1:4] == ["tally-seq-gap", "error", "corrupt"]
    assert rows["SA903"].split()[1:4] == ["tally-line-after-done", "warning", "-"]
    codes = list(rows)
    assert codes.index("SA696") < codes.index("SA901")  # the catalogue orders blocks by first code
    explained = runner.invoke(app, ["rules", "SA901"])
    assert explained.exit_code == 0
    assert explained.stdout.startswith("SA901 tally-seq-gap\n")
    assert "verdict effect:   corrupt" in explained.stdout
    assert "counting from 1 by one" in explained.stdout
    assert "How to fix: Restore the tally file" in explained.stdout
    assert explained.stdout.endswith(
        "From the tally format plugin, not part of sessaudit: see its own documentation\n"
    )
    by_name = runner.invoke(app, ["rules", "tally-torn-tail"])
    assert by_name.exit_code == 0 and "verdict effect:   repairable" in by_name.stdout


def test_formats_lists_tally_with_its_rule_range(tally_installed: Path) -> None:
    result = runner.invoke(app, ["formats"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)  # a terminal of 80 columns (CliRunner: no terminal)
    (index,) = [number for number, line in enumerate(lines) if line.startswith("tally ")]
    assert lines[index].split() == ["tally", "versions", "1", "rules", "SA901–SA904"]
    described = []
    for line in lines[index + 1 :]:
        if not line.startswith("    "):
            break
        described.append(line.strip())
    assert " ".join(described) == PLUGIN.recognises
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == [
        "tiny-agent",
        "rivumi",
        "half-pi",
        "claude-code",
        "codex",
        "tally",
    ]


def test_shared_rule_names_the_format(tally_installed: Path) -> None:
    from sessaudit.rules import rule

    assert "tally" in rule("SA301").formats
    assert "tally" not in rule("SA302").formats


def test_load_puts_tally_into_the_warehouse(tally_installed: Path, corpus: Path, tmp_path: Path) -> None:
    database = tmp_path / "w.duckdb"
    result = runner.invoke(app, ["load", str(corpus), "--db", str(database), "--jobs", "1"])
    assert result.exit_code in (0, 1), result.output
    connection = duckdb.connect(str(database), read_only=True)
    try:
        sources = connection.execute(
            "SELECT path, source_id, verdict, facts_loaded, complete, sha256 FROM sources "
            "WHERE format = 'tally' ORDER BY path"
        ).fetchall()
        assert [
            (Path(path).name, verdict, loaded, complete) for path, _, verdict, loaded, complete, _ in sources
        ] == [
            ("gap.tally", "corrupt", 1, False),  # cut at the seq gap: only the verified line is loaded
            ("open.tally", "needs-recovery", 2, True),
        ]
        open_id = sources[1][1]
        facts = connection.execute(
            "SELECT session_id, run_id, seq, line, byte_offset, kind, type, payload::VARCHAR FROM facts "
            "WHERE source_id = ? ORDER BY seq",
            [open_id],
        ).fetchall()
        assert [row[:7] for row in facts] == [
            ("tally-open", "tally-open/run", 1, 2, OPEN_TALLY.index(b'{"seq": 1'), "tally", "step"),
            ("tally-open", "tally-open/run", 2, 3, OPEN_LAST_OFFSET, "tally", "step"),
        ]
        assert json.loads(facts[1][7]) == {"seq": 2, "kind": "step", "tokens": 4}
        runs = connection.execute(
            "SELECT run_id, state, condition, first_seq, last_seq FROM runs WHERE source_id = ?", [open_id]
        ).fetchall()
        assert runs == [("tally-open/run", "open", "step-pending", 1, 2)]
        sessions = connection.execute(
            "SELECT session_id, format, facts, facts_loaded, open_runs FROM sessions WHERE source_id = ?",
            [open_id],
        ).fetchall()
        assert sessions == [("tally-open", "tally", 2, 2, 1)]
        rules = connection.execute(
            "SELECT rule FROM findings JOIN sources USING (source_id) WHERE format = 'tally' ORDER BY rule"
        ).fetchall()
        assert rules == [("SA301",), ("SA301",), ("SA901",)]
        agent = connection.execute("SELECT count(*) FROM sources WHERE format = 'tiny-agent'").fetchone()
        assert agent == (1,)
    finally:
        connection.close()


def test_the_console_script_finds_the_entry_point(tally_installed: Path, corpus: Path) -> None:
    """The real `sessaudit` script, in a process of its own: only PYTHONPATH tells it of the plugin."""
    script = Path(sys.executable).parent / "sessaudit"
    path = os.pathsep.join([str(tally_installed), str(REPO), str(REPO / "src")])
    environment = {**os.environ, "PYTHONPATH": path}
    formats = subprocess.run(
        [str(script), "formats"], capture_output=True, text=True, env=environment, timeout=120, check=False
    )
    assert formats.returncode == 0, formats.stderr
    assert any(line.startswith("tally ") for line in formats.stdout.splitlines())
    verified = subprocess.run(
        [str(script), "verify", str(corpus), "--format", "json"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 1, verified.stderr
    document = json.loads(verified.stdout)
    assert {source["format"] for source in document["sources"]} == {"tiny-agent", "tally"}
    assert "SA901" in {item["rule"] for item in document["findings"]}
    sarif = subprocess.run(
        [str(script), "verify", str(corpus), "--format", "sarif", "--select", "SA9"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert sarif.returncode == 1, sarif.stderr
    run = json.loads(sarif.stdout)["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert {"SA901", "SA902", "SA903", "SA904"} <= set(rules)
    (result,) = run["results"]  # --select SA9: the tally rules only
    assert result["ruleId"] == "SA901" and rules[result["ruleIndex"]] == "SA901"


def test_a_plugin_added_after_import_reaches_sarif_and_selectors(corpus: Path) -> None:
    """`sessaudit.cli` (and so the reporters) was imported before this test registers the plugin."""
    with plugins.registered(PLUGIN):
        code, out, err = _verify(str(corpus), "--format", "sarif", "--select", "SA9")
        assert code == 1, err
        run = json.loads(out)["runs"][0]
        rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
        assert "SA901" in rules
        (result,) = run["results"]
        assert rules[result["ruleIndex"]] == "SA901"


# --- (b) register() ------------------------------------------------------------------------------------


def test_registered_plugin_verifies_the_same(corpus: Path) -> None:
    assert plugins.registry().get("tally") is None
    with plugins.registered(PLUGIN):
        assert plugins.registry().get("tally") is PLUGIN
        _check_verify_outputs(corpus)
        listed = runner.invoke(app, ["formats"])
        assert listed.exit_code == 0 and "SA901–SA904" in listed.stdout
    assert plugins.registry().get("tally") is None
    code, out, _ = _verify(str(corpus), "--format", "json")  # gone: its files are skipped again
    assert code == 0
    assert {source["format"] for source in json.loads(out)["sources"]} == {"tiny-agent"}


def test_seed_of_the_open_tally_run(corpus: Path) -> None:
    with plugins.registered(PLUGIN):
        result = runner.invoke(app, ["seed", str(corpus / "open.tally"), "--run", "tally-open/run"])
    assert result.exit_code == 0, result.output
    seed = json.loads(result.stdout)
    Draft202012Validator(load_schema("seed.v1.schema.json")).validate(seed)
    assert (seed["seed_kind"], seed["condition"], seed["replay"]) == (
        "replay",
        "step-pending",
        {"next_seq": 3},
    )
    assert seed["fork_point"] == {"seq": 2, "line": 3, "byte_offset": OPEN_LAST_OFFSET, "fact_id": None}


def test_the_tally_checks(tmp_path: Path) -> None:
    """The format's own rules: a bad line, lines after done, a torn tail; a done tally is clean."""
    files = {
        "done.tally": b'{"tally": 1, "session": "d"}\n{"seq": 1, "kind": "done", "tokens": 1}\n',
        "bad.tally": b'{"tally": 1, "session": "b"}\n{"seq": 1, "kind": "jump", "tokens": 1}\n',
        "after.tally": (
            b'{"tally": 1, "session": "a"}\n{"seq": 1, "kind": "done", "tokens": 1}\n'
            b'{"seq": 2, "kind": "step", "tokens": 1}\n'
        ),
        "torn.tally": b'{"tally": 1, "session": "t"}\n{"seq": 1, "kind": "done", "tokens": 1}\n{"seq"',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    with plugins.registered(PLUGIN):
        code, out, _ = _verify(str(tmp_path), "--format", "json")
    assert code == 1
    document = json.loads(out)
    verdicts = {Path(source["path"]).name: source["verdict"] for source in document["sources"]}
    assert verdicts == {
        "after.tally": "clean",
        "bad.tally": "corrupt",
        "done.tally": "clean",
        "torn.tally": "repairable",
    }
    rules = sorted((Path(item["location"]["path"]).name, item["rule"]) for item in document["findings"])
    assert rules == [
        ("after.tally", "SA903"),
        ("bad.tally", "SA301"),  # open as far as its verified lines go (the plan is withheld: corrupt)
        ("bad.tally", "SA902"),
        ("torn.tally", "SA904"),
    ]
    (torn,) = [source for source in document["sources"] if source["path"].endswith("torn.tally")]
    assert torn["sessions"][0]["torn_tail_bytes"] == 6
    assert torn["files"][0]["bytes"] == len(files["torn.tally"])  # the torn bytes are hashed too


# --- broken plugins ------------------------------------------------------------------------------------


@pytest.fixture
def broken_installed(tmp_path: Path) -> Iterator[Path]:
    """A distribution with two broken entry points: a module that does not exist, and a plugin whose rule
    code SA101 is tiny-agent's; its entry-point name sorts after every built-in."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "tally_clash.py").write_text(CLASHING_MODULE.format(name="zz-clash"), encoding="utf-8")
    _distribution(
        site,
        "broken_formats",
        {"missing": "tally_nowhere.plugin:PLUGIN", "zz-clash": "tally_clash:PLUGIN"},
    )
    with installed(site):
        yield site
    sys.modules.pop("tally_clash", None)


def test_formats_shows_broken_plugins_and_exits_3(broken_installed: Path) -> None:
    result = runner.invoke(app, ["formats"])
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    heads = [number for number, line in enumerate(lines) if not line.startswith(" ")]
    ends = [*heads[1:], len(lines)]
    entries = [" ".join(part.strip() for part in lines[a:b]) for a, b in zip(heads, ends, strict=True)]
    assert [entry.split()[0] for entry in entries[:3]] == ["tiny-agent", "rivumi", "half-pi"]
    broken = {entry.split()[0]: entry for entry in entries if " BROKEN " in entry}
    assert set(broken) == {"missing", "zz-clash"}
    assert "(tally_nowhere.plugin:PLUGIN) cannot be loaded: ModuleNotFoundError" in broken["missing"]
    assert "has rule codes another format or the core already has: SA101" in broken["zz-clash"]


def test_verify_still_verifies_the_built_ins_beside_broken_plugins(
    broken_installed: Path, tmp_path: Path
) -> None:
    path = tmp_path / "agent.jsonl"
    path.write_bytes(clean_session())
    code, out, err = _verify(str(path), "--format", "json")
    assert code == 3  # the audit is incomplete: files of a broken format cannot be recognised
    (source,) = json.loads(out)["sources"]
    assert (source["format"], source["verdict"]) == ("tiny-agent", "clean")
    assert "format plugin missing (tally_nowhere.plugin:PLUGIN) cannot be loaded: ModuleNotFoundError" in err
    assert "format plugin zz-clash (tally_clash:PLUGIN) has rule codes another format or the core" in err
    assert "files of its format were not recognised" in err
    rules = runner.invoke(app, ["rules", "SA101"])
    assert rules.exit_code == 0 and rules.stdout.startswith("SA101 ")
    assert "clash-rule" not in rules.stdout


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("zz-clash", "tally_clash"),  # sorts after every built-in: set aside, as it should be
        ("tiny-agent", "tally_clash"),  # the same entry-point name: its value sorts after the built-in's
        ("aa-clash", "tally_clash"),  # sorts before every built-in: still the one set aside
        ("tiny-agent", "acme_clash"),  # the same name, a value sorting before the built-in's
    ],
)
def test_a_clashing_plugin_never_takes_a_built_in_down(tmp_path: Path, name: str, module: str) -> None:
    """A third-party plugin that claims tiny-agent's SA101 (and, named tiny-agent, its name) is the one set
    aside, whatever its entry point's name and value sort as."""
    site = tmp_path / "site"
    site.mkdir()
    (site / f"{module}.py").write_text(CLASHING_MODULE.format(name=name), encoding="utf-8")
    _distribution(site, "clash_format", {name: f"{module}:PLUGIN"})
    try:
        with installed(site):
            installed_now = plugins.registry()
            assert [item.target for item in installed_now.broken] == [f"{module}:PLUGIN"]
            tiny = installed_now.get("tiny-agent")
            assert tiny is not None and type(tiny).__module__ == "sessaudit.formats.tiny_agent.plugin"
    finally:
        sys.modules.pop(module, None)
