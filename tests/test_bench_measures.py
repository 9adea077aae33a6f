"""The benchmark's measures: bench/run.py's `run_timed` reports a command's own peak RSS (not the benchmark's,
which Linux would charge it with), and bench/memory.py, the memory profile's probe, charges each object
once, to the first structure that reaches it, reading the verifier's state from a real verification."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.formats.tiny_agent.test_memory import dense_session

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


memory = _load("memory")
run = _load("run")


class _Slotted:
    __slots__ = ("left", "right")

    def __init__(self, left: object, right: object) -> None:
        self.left = left
        self.right = right


def test_a_shared_object_is_charged_once_to_the_first_part_that_reaches_it() -> None:
    shared = "x" * 1000
    first = {"key": shared}
    second = [shared, _Slotted(shared, 12345678901)]
    sizes = dict(memory.deep_sizes([("first", [first]), ("second", [second])]))
    assert sizes["first"] == sys.getsizeof(first) + sys.getsizeof("key") + sys.getsizeof(shared)
    assert sizes["second"] == sys.getsizeof(second) + sys.getsizeof(second[1]) + sys.getsizeof(12345678901)
    alone = dict(memory.deep_sizes([("second", [second])]))
    assert alone["second"] == sizes["second"] + sys.getsizeof(shared)  # now it pays for the string


def test_code_is_not_state() -> None:
    assert memory.deep_sizes([("code", [[len, dict, memory]])]) == [
        ("code", sys.getsizeof([len, dict, memory]))
    ]


def test_the_state_probe_reads_what_the_verifier_holds(tmp_path: Path) -> None:
    path = dense_session(tmp_path, 300_000)
    entries, fact_ids = 0, set()
    for line in path.read_bytes().splitlines()[1:]:
        value = json.loads(line)
        for fact in value if isinstance(value, list) else [value]:
            fact_ids.add(fact["id"])
            entries += fact["kind"] == "entry"
    probe = memory.state_probe(str(path))
    assert probe["bytes"] == path.stat().st_size
    assert probe["findings"] == 0
    assert probe["entries"] == entries
    assert probe["ids"] > len(fact_ids)  # every fact id, and the ids facts reserve (step, attempt, …)
    parts = dict(probe["parts"])
    assert all(size > 0 for name, size in parts.items() if not name.startswith(("findings", "the reducer")))
    # the namespace's share is its table and the ids only it holds, less than the whole namespace
    assert probe["namespace_table"] < parts["id namespace: its table, and the ids held only there"]
    assert probe["rss_peak"] > 0 and probe["rss_before"] > 0  # (Linux's RSS counters are approximate)
    table = "\n".join(memory.state_table(probe, "A test session"))
    assert f"{probe['ids']:,} ids in the namespace" in table


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB and /proc: Linux")
def test_a_small_command_is_not_charged_with_the_benchmarks_own_memory() -> None:
    ballast = bytearray(160 << 20)
    for offset in range(0, len(ballast), 4096):
        ballast[offset] = 1  # resident: a command spawned from here directly would show ≥ 160 MiB
    timed = run.run_timed(["true"])
    assert timed.code == 0
    assert timed.peak_rss < 40 << 20 and timed.bounded  # at most the launcher's own high-water mark
    assert 0 <= timed.cpu <= timed.elapsed + 0.05
    del ballast


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB and /proc: Linux")
def test_a_command_shows_its_own_peak_and_exit_code() -> None:
    grow = "import sys; block = bytearray(96 << 20); block[::4096] = b'x' * len(block[::4096]); sys.exit(3)"
    timed = run.run_timed([sys.executable, "-c", grow])
    assert timed.code == 3
    assert 96 << 20 <= timed.peak_rss < 160 << 20 and not timed.bounded


def test_a_command_that_cannot_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="could not run"):
        run.run_timed(["/nonexistent/sessaudit-bench-command"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status: Linux")
def test_a_process_reports_its_own_memory_split_into_anonymous_and_file_backed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert memory.main(["imports", "json"]) == 0
    reported = json.loads(capsys.readouterr().out)
    assert reported["peak"] >= reported["anonymous"] > 0 and reported["file"] > 0
    ballast = bytearray(64 << 20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # resident, anonymous
    grown = memory.own_memory()
    assert grown["anonymous"] - reported["anonymous"] >= 60 << 20
    del ballast


def test_the_benchmark_stops_on_a_corpus_that_does_not_verify_as_its_manifest_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """measure() checks the first verify's report against corpus.json: a source whose verdict is not the
    manifest's stops the benchmark (its numbers would describe other work than the tables claim)."""
    root = tmp_path / "corpus"
    run.corpus_module.generate("tiny-agent", 200_000, root, seed=1, sessions=2, crash_every=2)
    everything = run.commands
    monkeypatch.setattr(run, "commands", lambda *a: {run.VERIFY: everything(*a)[run.VERIFY]})
    scenario = run.Scenario("corpus", "two sessions", "tiny-agent", 200_000, 2, sources=2)
    run.measure(scenario, root, 2, True, lambda _: None)
    assert len(scenario.results[run.VERIFY].times) == 2
    manifest_path = root / run.corpus_module.MANIFEST
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    torn = manifest["sources"][1]
    assert (torn["ending"], torn["verdict"]) == ("torn-tail", "repairable")
    torn["verdict"] = "clean"
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(run.CorpusMismatch, match=r"(?s)1 source.*verdict repairable, manifest: clean"):
        run.measure(run.Scenario("corpus", "two", "tiny-agent", 200_000, 2, sources=2), root, 2, True, print)
