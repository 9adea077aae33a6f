"""The benchmark's corpus generator (bench/corpus.py): valid output of every format, crash endings exactly
where the manifest puts them, byte-identical output for the same arguments."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sessaudit.engine import audit
from sessaudit.reporters.json import render_json

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load_corpus_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus_module()


def _verify(out: Path, manifest: dict[str, object]) -> None:
    """Every source verifies with no error finding and the verdict its manifest entry says."""
    sources = manifest["sources"]
    assert isinstance(sources, list)
    paths = [str(out / source["path"]) for source in sources]
    report = audit(paths).report
    errors = [f"{item.rule} {item.message}" for item in report.findings if item.severity.value == "error"]
    assert errors == []
    assert corpus.disagreements(out, json.loads(render_json(report))) == []


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_a_one_megabyte_tiny_agent_session_is_clean_and_has_every_kind_of_fact(tmp_path: Path) -> None:
    made = corpus.generate("tiny-agent", 1_000_000, tmp_path, seed=1)
    manifest = json.loads((tmp_path / corpus.MANIFEST).read_text(encoding="utf-8"))
    assert manifest == made.manifest()
    (source,) = manifest["sources"]
    assert source["ending"] == "clean"
    assert 1_000_000 <= source["bytes"] < 1_300_000
    data = (tmp_path / source["path"]).read_bytes()
    assert len(data) == source["bytes"]
    for needle in (b'"compactionStarted"', b'"type":"compaction"', b'"kind":"usage"', b'"toolStarted"',
                   b'"type":"error"', b'"tool_calls"'):  # fmt: skip
        assert needle in data, needle
    lengths = [len(line) for line in data.split(b"\n")]
    assert min(lengths[:-1]) < 400 and max(lengths) > 30_000  # short events and long tool results
    _verify(tmp_path, manifest)


def test_tiny_agent_crash_endings_are_where_the_manifest_says(tmp_path: Path) -> None:
    corpus.generate("tiny-agent", 600_000, tmp_path, seed=2, sessions=6, crash_every=2)
    manifest = json.loads((tmp_path / corpus.MANIFEST).read_text(encoding="utf-8"))
    endings = [source["ending"] for source in manifest["sources"]]
    assert endings == ["clean", "torn-tail", "clean", "open-tool", "clean", "open-model"]
    _verify(tmp_path, manifest)


@pytest.mark.parametrize(("format_name", "sessions"), [("rivumi", None), ("half-pi", 3)])
def test_rivumi_and_half_pi_corpora_verify_with_their_crash_endings(
    tmp_path: Path, format_name: str, sessions: int | None
) -> None:
    corpus.generate(format_name, 1_000_000, tmp_path, seed=3, sessions=sessions, crash_every=2)
    manifest = json.loads((tmp_path / corpus.MANIFEST).read_text(encoding="utf-8"))
    sources = manifest["sources"]
    assert len(sources) >= 3
    assert 900_000 <= manifest["total_bytes"] < 1_600_000
    assert {source["ending"] for source in sources} - {"clean"}  # some crash endings
    _verify(tmp_path, manifest)


@pytest.mark.parametrize("format_name", corpus.FORMATS)
def test_the_same_arguments_give_the_same_bytes(tmp_path: Path, format_name: str) -> None:
    # a Codex corpus is the builder's own mixture: no sessions or crash_every to give
    options: dict[str, int] = (
        {"seed": 5} if format_name == "codex" else {"seed": 5, "sessions": 2, "crash_every": 2}
    )
    corpus.generate(format_name, 150_000, tmp_path / "a", **options)
    corpus.generate(format_name, 150_000, tmp_path / "b", workers=2, **options)
    corpus.generate(format_name, 150_000, tmp_path / "c", **{**options, "seed": 6})
    first, second, other = (_files(tmp_path / name) for name in "abc")
    assert first == second
    assert first != other


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown format"):
        corpus.generate("tiny-agnet", 1000, tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "note.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError):
        corpus.generate("tiny-agent", 1000, tmp_path / "full")
    with pytest.raises(ValueError, match="own mixture"):
        corpus.generate("codex", 1000, tmp_path / "codex", sessions=2)
    with pytest.raises(ValueError, match="own mixture"):
        corpus.generate("codex", 1000, tmp_path / "codex", crash_every=2)
    assert corpus.parse_size("1GB") == 10**9 and corpus.parse_size("512KiB") == 512 * 1024
    with pytest.raises(SystemExit) as stopped:
        corpus.main(["--format", "tiny-agent", "--size", "lots", "--out", str(tmp_path / "y")])
    assert stopped.value.code == 2
    assert corpus.main(["--format", "tiny-agent", "--size", "1KB", "--out", str(tmp_path / "full")]) == 2


# Every scenario the generator has, small but with sessions past the first compaction (256 KiB): 3 MB over
# 3 sessions was enough to put a compaction right after an aborted run, whose retained tail was then a lone
# tool result (SA209), in a corpus whose manifest said "clean".
SCENARIOS = [
    ("tiny-agent", 3_000_000, 3, 0),
    ("tiny-agent", 3_000_000, 6, 2),
    ("tiny-agent-dense", 1_500_000, 3, 1),
    ("rivumi", 1_500_000, None, 3),
    ("half-pi", 1_000_000, 2, 2),
]


@pytest.mark.parametrize(("format_name", "size", "sessions", "crash_every"), SCENARIOS)
def test_every_scenario_verifies_as_its_manifest_says(
    tmp_path: Path, format_name: str, size: int, sessions: int | None, crash_every: int
) -> None:
    corpus.generate(format_name, size, tmp_path, seed=1, sessions=sessions, crash_every=crash_every)
    manifest = json.loads((tmp_path / corpus.MANIFEST).read_text(encoding="utf-8"))
    for source in manifest["sources"]:
        assert source["verdict"] == corpus.EXPECTED_VERDICT[source["ending"]]
    _verify(tmp_path, manifest)


def test_a_compaction_after_an_aborted_run_keeps_no_lone_tool_result(tmp_path: Path) -> None:
    """The session of the SA209 report (seed 1, index 2, 1 MB): its compaction follows an aborted run whose
    last message is a tool result; the compaction retains none of it, and the session is clean."""
    corpus.generate("tiny-agent", 3_000_000, tmp_path, seed=1, sessions=3, crash_every=0)
    manifest = json.loads((tmp_path / corpus.MANIFEST).read_text(encoding="utf-8"))
    data = (tmp_path / manifest["sources"][2]["path"]).read_bytes()
    assert b'"retainedTail":[]' in data
    _verify(tmp_path, manifest)


def test_disagreements_name_each_source_whose_verdict_is_not_the_manifests(tmp_path: Path) -> None:
    corpus.generate("tiny-agent", 200_000, tmp_path, seed=1, sessions=2, crash_every=2)
    manifest = json.loads((tmp_path / corpus.MANIFEST).read_text(encoding="utf-8"))
    first = str(tmp_path / manifest["sources"][0]["path"])
    report = {"sources": [{"path": first, "verdict": "corrupt"}, {"path": "/elsewhere", "verdict": "clean"}]}
    assert corpus.disagreements(tmp_path, report) == [
        f"{manifest['sources'][0]['path']}: verdict corrupt, manifest: clean",
        f"{manifest['sources'][1]['path']}: verdict not reported, manifest: repairable",
        "/elsewhere: reported, not in the manifest",
    ]


def _claude_code_corpus(out: Path) -> dict[str, object]:
    """6 families over 1.5 MB, every second one crashed: seed 1 gives a resume and both sub-agent layouts."""
    corpus.generate("claude-code", 1_500_000, out, seed=1, sessions=6, crash_every=2)
    manifest = json.loads((out / corpus.MANIFEST).read_text(encoding="utf-8"))
    assert isinstance(manifest, dict)
    return manifest


def test_a_claude_code_corpus_is_what_its_manifest_says(tmp_path: Path) -> None:
    manifest = _claude_code_corpus(tmp_path)
    sources = manifest["sources"]
    assert isinstance(sources, list)
    on_disk = sorted(path for path in tmp_path.rglob("*") if path.is_file() and path.name != corpus.MANIFEST)
    # 7 session files (6 families, one resumed), 8 sub-agent transcripts (5 nested with their 5
    # .meta.json, 3 beside their session): 20 files, all in one project directory
    assert (manifest["sessions"], manifest["files"], len(on_disk)) == (7, 20, 20)
    assert {path.parent.name for path in on_disk if path.parent.name != "subagents"} == {"-home-dev-shop-000"}
    assert sum(path.name.endswith(".meta.json") for path in on_disk) == 5
    beside = [path for path in on_disk if path.name.startswith("agent-") and path.parent.name != "subagents"]
    assert len(beside) == 3
    assert manifest["total_bytes"] == sum(path.stat().st_size for path in on_disk) == 1_578_006
    assert [(source["ending"], source["verdict"], source["subagents"]) for source in sources] == [
        ("clean", "clean", 2),
        ("dangling-tool", "needs-recovery", 0),
        ("clean", "clean", 0),
        ("clean", "clean", 1),
        ("torn-result", "needs-recovery", 2),
        ("clean", "clean", 3),
        ("torn-prompt", "repairable", 0),
    ]
    assert sources[3]["resumed_from"] == sources[2]["path"]
    assert [len(source["files"]) for source in sources] == [5, 1, 1, 3, 5, 4, 1]
    for source in sources:
        assert sum(entry["bytes"] for entry in source["files"]) == source["bytes"]
        for entry in source["files"]:
            assert (tmp_path / entry["path"]).stat().st_size == entry["bytes"]
    # the two torn endings leave a last line without its newline; the others end with one
    for source in sources:
        data = (tmp_path / source["path"]).read_bytes()
        assert data.endswith(b"\n") == (not source["ending"].startswith("torn")), source["path"]
    # streamed multi-block responses: thinking, text and tool_use lines sharing one message id
    session = (tmp_path / sources[0]["path"]).read_bytes()
    for needle in (b'"type":"thinking"', b'"type":"tool_use"', b'"type":"tool_result"', b'"name":"Task"',
                   b'"stop_reason":null', b'"cache_read_input_tokens"'):  # fmt: skip
        assert needle in session, needle
    assert corpus.manifest_errors(tmp_path, 0.06) == []  # 6 families overshoot 1.5 MB by 5.2%
    assert corpus.manifest_errors(tmp_path, 0.05) == [
        "total_bytes 1578006 is more than 5% away from the size asked, 1500000"
    ]
    # sessaudit's own verdicts (and transcript files) per session file are the manifest's
    report = audit([str(tmp_path / "projects")]).report
    assert [item.rule for item in report.findings if item.severity.value == "error"] == []
    assert corpus.disagreements(tmp_path, json.loads(render_json(report))) == []


def test_manifest_errors_name_a_changed_missing_or_unlisted_file(tmp_path: Path) -> None:
    manifest = _claude_code_corpus(tmp_path)
    sources = manifest["sources"]
    assert isinstance(sources, list)
    grown, gone = sources[0]["files"][1]["path"], sources[5]["files"][1]["path"]
    with (tmp_path / grown).open("ab") as stream:
        stream.write(b"{}\n")
    (tmp_path / gone).unlink()
    (tmp_path / "projects" / "-home-dev-shop-000" / "notes.txt").write_text("mine", encoding="utf-8")
    size = sources[0]["files"][1]["bytes"]
    assert corpus.manifest_errors(tmp_path, 0.1) == [
        f"{grown}: {size + 3} bytes on disk, manifest: {size}",
        f"{gone}: listed, not on disk",
        "projects/-home-dev-shop-000/notes.txt: on disk, not in the manifest",
        f"total_bytes 1578006, on disk: {1_578_006 + 3 - sources[5]['files'][1]['bytes'] + 4}",
    ]


def test_disagreements_name_a_session_reported_without_a_sub_agent_file(tmp_path: Path) -> None:
    manifest = _claude_code_corpus(tmp_path)
    sources = manifest["sources"]
    assert isinstance(sources, list)
    report = json.loads(render_json(audit([str(tmp_path / "projects")]).report))
    first = str((tmp_path / sources[0]["path"]).resolve())
    (item,) = [item for item in report["sources"] if str(Path(item["path"]).resolve()) == first]
    item["files"] = item["files"][:1]
    assert corpus.disagreements(tmp_path, report) == [
        f"{sources[0]['path']}: reported with 1 transcript file(s), manifest: 3"
    ]


def _codex_corpus(out: Path) -> dict[str, object]:
    """1.5 MB of seed 23: every kind of family the builder has, once or more (12 rollouts, 10 families)."""
    corpus.generate("codex", 1_500_000, out, seed=23)
    manifest = json.loads((out / corpus.MANIFEST).read_text(encoding="utf-8"))
    assert isinstance(manifest, dict)
    return manifest


def test_a_codex_corpus_is_what_its_manifest_says(tmp_path: Path) -> None:
    manifest = _codex_corpus(tmp_path)
    sources = manifest["sources"]
    builder = manifest["builder"]
    assert isinstance(sources, list) and isinstance(builder, dict)
    rollouts = sorted(path for path in (tmp_path / "sessions").rglob("*") if path.is_file())
    others = sorted(path.name for path in tmp_path.rglob("*") if path.is_file() and path not in rollouts)
    assert others == ["corpus.json", "manifest.json"]  # the bench's and the builder's
    assert (manifest["files"], manifest["families"], len(rollouts)) == (12, 10, 12)
    assert manifest["total_bytes"] == sum(path.stat().st_size for path in rollouts) == 1_537_413
    assert builder["kinds"] == {
        "compaction": 1, "doubled": 1, "fork": 1, "killed": 1, "long": 4, "subagent": 1, "torn": 1,
    }  # fmt: skip
    assert [
        (source["role"], source["family"], source["ending"], source["verdict"]) for source in sources
    ] == [
        ("root", "doubled", "clean", "clean"),
        ("root", "torn", "torn-turn", "needs-recovery"),
        ("root", "long", "clean", "clean"),
        ("root", "long", "clean", "clean"),
        ("root", "long", "clean", "clean"),
        ("root", "compaction", "clean", "clean"),
        ("root", "killed", "killed", "needs-recovery"),
        ("root", "long", "clean", "clean"),
        ("root", "subagent", "clean", "clean"),
        ("subagent", "subagent", "clean", "clean"),
        ("root", "fork", "clean", "clean"),
        ("fork", "fork", "clean", "clean"),
    ]
    assert sources[9]["parent"] == sources[8]["session_id"] == "019c5093-5f8b-746d-98bc-a4f74ac23422"
    assert sources[11]["parent"] == sources[10]["session_id"] == "019c5208-e88b-70d3-9c33-88bf1d6675f7"
    assert sources[11]["path"] == (
        "sessions/2026/02/12/rollout-2026-02-12T13-36-36-019c5211-61a2-7f99-9555-6de2bcf8e767.jsonl"
    )
    assert sources[11]["session_id"] == "019c5211-61a2-7f99-9555-6de2bcf8e767"
    assert [source["cli_version"] for source in sources] == ["0.46.0"] + ["0.98.0"] * 11
    for source in sources:
        data = (tmp_path / source["path"]).read_bytes()
        assert len(data) == source["bytes"]
        assert data.endswith(b"\n") == (source["ending"] != "torn-turn"), source["path"]
        assert (b'"type":"compacted"' in data) == (source["family"] == "compaction"), source["path"]
    assert builder["totals"] == {
        "input_tokens": 7_296_300,
        "cached_input_tokens": 6_415_872,
        "output_tokens": 244_238,
        "reasoning_output_tokens": 77_952,
        "total_tokens": 7_540_538,
        "responses": 318,
    }
    assert corpus.manifest_errors(tmp_path) == []
    # sessaudit's own report: the verdicts, sessions, open runs, torn tails and usage the manifest says
    report = json.loads(render_json(audit([str(tmp_path / "sessions")]).report))
    assert [item for item in report["findings"] if item["severity"] == "error"] == []
    assert report["summary"]["verdicts"] == {"clean": 10, "needs-recovery": 2}
    assert corpus.disagreements(tmp_path, report) == []


def test_codex_manifest_errors_name_a_grown_rollout_a_stray_file_and_a_broken_fork(tmp_path: Path) -> None:
    manifest = _codex_corpus(tmp_path)
    sources = manifest["sources"]
    assert isinstance(sources, list)
    grown, fork, parent = sources[2]["path"], sources[11]["path"], sources[10]["path"]
    with (tmp_path / grown).open("ab") as stream:
        stream.write(b"{}\n")
    (tmp_path / "sessions" / "notes.txt").write_text("mine", encoding="utf-8")
    assert corpus.manifest_errors(tmp_path) == [
        "sessions/notes.txt: on disk, not in the manifest",
        f"{grown}: bytes 111827 on disk, manifest: 111824",
        "bytes: 1537416 on disk, the builder's manifest.json: 1537413",
        "corpus.json: 12 files, 1537413 bytes",
    ]
    (tmp_path / "sessions" / "notes.txt").unlink()
    with (tmp_path / grown).open("r+b") as stream:
        stream.truncate(111_824)
    # the fork now copies a session that is not in the corpus (same length: its bytes are as listed)
    data = (tmp_path / fork).read_bytes()
    elsewhere = "019c0000-0000-7000-8000-000000000000"
    (tmp_path / fork).write_bytes(
        data.replace(b"019c5208-e88b-70d3-9c33-88bf1d6675f7", elsewhere.encode(), 1)
    )
    assert corpus.manifest_errors(tmp_path) == [
        f"{parent}: family 'long' on disk, manifest: 'fork'",
        f"{fork}: parent '{elsewhere}' on disk, manifest: '019c5208-e88b-70d3-9c33-88bf1d6675f7'",
        f"{fork}: family None on disk, manifest: 'fork'",
        f"{fork}: copies {elsewhere}, not a session of the corpus",
        "kinds: {'compaction': 1, 'doubled': 1, 'killed': 1, 'long': 5, 'subagent': 1, 'torn': 1} on disk, "
        "the builder's manifest.json: {'compaction': 1, 'doubled': 1, 'fork': 1, 'killed': 1, 'long': 4, "
        "'subagent': 1, 'torn': 1}",
    ]


def test_codex_disagreements_name_a_missing_open_run_torn_tail_and_token(tmp_path: Path) -> None:
    manifest = _codex_corpus(tmp_path)
    sources = manifest["sources"]
    assert isinstance(sources, list)
    report = json.loads(render_json(audit([str(tmp_path / "sessions")]).report))
    by_path = {str(Path(item["path"]).resolve()): item for item in report["sources"]}
    torn, killed, first = (by_path[str((tmp_path / sources[i]["path"]).resolve())] for i in (1, 6, 0))
    (torn_session,) = torn["sessions"]
    torn_session["torn_tail_bytes"] = 0
    (killed_session,) = killed["sessions"]
    for run in killed_session["runs"]:
        run["state"] = "completed"
    first["sessions"][0]["usage"]["output"] += 1
    assert corpus.disagreements(tmp_path, report) == [
        f"{sources[1]['path']}: torn tail not reported, manifest: ending torn-turn",
        f"{sources[6]['path']}: 0 open run(s), manifest: ending killed",
        "usage output: 244239 reported, the builder's totals: 244238",
        "usage total: 7540539 reported, the builder's totals: 7540538",
    ]
