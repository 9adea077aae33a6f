"""The load's single pass (issue 8): a new tiny-agent v2 session is extracted from the verifier's own
reading, and the warehouse is the two-pass load's, row for row, on every built session (legal, damaged,
torn) and on seeded damage of legal ones; where the single pass cannot know the verified history (a v1
session, --max-findings), it steps aside for the second read."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sessaudit.formats.tiny_agent.warehouse import passes as extract
from sessaudit.limits import Limits
from sessaudit.warehouse import loader
from sessaudit.warehouse.loader import LOADED, load_warehouse
from tests.formats.tiny_agent.scenarios import LEGAL
from tests.test_golden_reports import CASES
from tests.warehouse.conftest import FIXED_CLOCK, inside, query
from tests.warehouse.test_reload import dump

TWO_PASS = replace(FIXED_CLOCK, single_pass=False)


def passes(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Which sources the single pass loaded (`one`) and which it left to a second read (`two`)."""
    seen: dict[str, list[str]] = {"one": [], "two": []}
    complete = extract.SinglePass.complete

    def recorded(self: extract.SinglePass, source: Any, findings: Any) -> bool:
        answer = complete(self, source, findings)
        seen["one" if answer else "two"].append(source.path)
        return answer

    monkeypatch.setattr(extract.SinglePass, "complete", recorded)
    return seen


def beside_always(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Extract every source beside its verification (with jobs > 1); records whether its rows were kept."""
    monkeypatch.setattr(loader, "BESIDE_BYTES", 0)
    used: list[bool] = []
    matches = extract.WholeFile.matches

    def recorded(self: extract.WholeFile, source: Any, findings: Any) -> bool:
        used.append(matches(self, source, findings))
        return used[-1]

    monkeypatch.setattr(extract.WholeFile, "matches", recorded)
    return used


def both_ways(folder: Path, name: str, data: bytes, options: loader.LoadOptions = FIXED_CLOCK) -> None:
    """Load one session both ways: the reports, the row counts and every row must be equal."""
    (folder / f"{name}.jsonl").write_bytes(data)
    with inside(folder):
        one = load_warehouse([f"{name}.jsonl"], Path(f"{name}.one.duckdb"), options)
        two = load_warehouse(
            [f"{name}.jsonl"], Path(f"{name}.two.duckdb"), replace(options, single_pass=False)
        )
    assert one.report == two.report
    assert one.rows == two.rows
    assert dump(folder / f"{name}.one.duckdb") == dump(folder / f"{name}.two.duckdb"), name


def test_every_built_session_loads_alike_in_one_pass_and_in_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = passes(monkeypatch)
    for name in sorted(CASES):
        both_ways(tmp_path, name, CASES[name]())
    assert len(seen["one"]) + len(seen["two"]) == len(CASES)
    # the single pass is the rule (corrupt sessions included), the second read the exception
    # v1 is verified by the v1 verifier (no tap); a file with no LF has no line to see
    assert sorted(seen["two"]) == ["damaged-header-without-line-feed.jsonl", "damaged-legacy-v1.jsonl"]
    corrupt = [path for path in seen["one"] if path.startswith("damaged-")]
    assert len(corrupt) > 10  # cut at the first corrupting line, in the same pass


def _damage(data: bytes, rng: random.Random) -> bytes:
    """One seeded injury: a flipped byte, a cut, a line repeated, dropped or swapped, a CR before an LF."""
    lines = data.split(b"\n")[:-1]
    where = rng.randrange(1, len(lines))
    kind = rng.choice(["flip", "cut", "repeat", "drop", "swap", "crlf"])
    if kind == "flip":
        position = rng.randrange(len(data))
        return data[:position] + bytes([data[position] ^ (1 << rng.randrange(7))]) + data[position + 1 :]
    if kind == "cut":
        return data[: rng.randrange(len(data))]
    if kind == "repeat":
        lines.insert(where, lines[where])
    elif kind == "drop":
        del lines[where]
    elif kind == "swap" and where + 1 < len(lines):
        lines[where], lines[where + 1] = lines[where + 1], lines[where]
    else:
        lines[where] += b"\r"
    return b"\n".join(lines) + b"\n"


def test_seeded_damage_of_legal_sessions_loads_alike_in_one_pass_and_in_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = passes(monkeypatch)
    rng = random.Random(8)
    built = [data for data in (LEGAL[name]()[0] for name in sorted(LEGAL)) if data.count(b"\n") > 3]
    for index in range(40):
        both_ways(tmp_path, f"damaged-{index}", _damage(rng.choice(built), rng))
    assert len(seen["one"]) >= 30, seen["two"]


def test_max_findings_loads_alike_in_one_pass_and_in_two(tmp_path: Path) -> None:
    """Past --max-findings the verifier stops checking (SA014 at the end): the cut is the same both ways."""
    lines = max((LEGAL[name]()[0] for name in LEGAL), key=len).split(b"\n")[:-1]
    lines[3] = lines[3][:-1]  # no longer JSON: reduction stops, tracking goes on
    lines += lines[5:12]  # repeated seqs and ids: findings past the limit
    capped = replace(FIXED_CLOCK, verify=replace(FIXED_CLOCK.verify, limits=Limits(max_findings=2)))
    both_ways(tmp_path, "capped", b"\n".join(lines) + b"\n", capped)
    with inside(tmp_path):
        result = load_warehouse(["capped.jsonl"], Path("again.duckdb"), capped)
    assert [item.rule for item in result.report.findings] == ["SA106", "SA215", "SA014"]


def test_the_single_pass_reads_the_evidence_once_and_loads_the_bytes_it_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No second read: rewriting the file once it is verified changes nothing that is loaded (the rows are
    those of the bytes the report describes), where the two-pass load refuses it (test_streaming)."""
    data = CASES["legal-" + sorted(LEGAL)[0]]()
    (tmp_path / "s.jsonl").write_bytes(data)
    opened: list[str] = []
    open_evidence = extract.open_evidence
    monkeypatch.setattr(extract, "open_evidence", lambda path: opened.append(path) or open_evidence(path))
    verify = loader.verify_candidate

    def verify_then_rewrite(candidate: Any, options: Any, *tap: Any) -> Any:
        answer = verify(candidate, options, *tap)
        Path(candidate.real_path).write_bytes(data.replace(b'"kind"', b'"KIND"'))
        return answer

    monkeypatch.setattr(loader, "verify_candidate", verify_then_rewrite)
    with inside(tmp_path):
        result = load_warehouse(["s.jsonl"], Path("w.duckdb"), FIXED_CLOCK)
    assert opened == []  # extraction never opened the file again
    assert [item.status for item in result.outcomes] == [LOADED]
    (source,) = result.report.sources
    assert query(tmp_path / "w.duckdb", "SELECT sha256, facts_loaded FROM sources") == [
        (source.sha256, source.sessions[0].facts)
    ]
    kinds = query(tmp_path / "w.duckdb", "SELECT DISTINCT kind FROM facts ORDER BY kind")
    assert ("entry",) in kinds and ("KIND",) not in kinds


def test_a_large_session_extracted_beside_its_verification_loads_alike_in_one_pass_and_in_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two jobs, a new session of at least BESIDE_BYTES is verified in a worker while the loading
    process extracts it whole; a cut, other bytes or a v1 header send it to the second read."""
    used = beside_always(monkeypatch)
    names = [
        *(f"legal-{name}" for name in sorted(LEGAL)[:4]),
        "damaged-duplicate-fact-id",  # cut: extracted again from the verified prefix
        "damaged-legacy-v1",  # not v2: extracted again by the v1 extractor
        "extra-torn-tail-open-tool",  # a torn tail is not history: no cut, same committed lines
    ]
    jobs = replace(FIXED_CLOCK, jobs=2)
    for name in names:
        both_ways(tmp_path, name, CASES[name](), jobs)
    assert used == [True, True, True, True, False, False, True]


def _reload_both_ways(
    folder: Path, name: str, first: bytes, second: bytes, options: loader.LoadOptions = FIXED_CLOCK
) -> list[Any]:
    """Load `first`, then rewrite the file as `second` and load it again into the same database, with the
    single pass and without it (two databases): the reports, row counts and rows must be equal. Returns
    the single-pass reload's outcomes."""
    path = folder / f"{name}.jsonl"
    outcomes = []
    for mode, chosen in (("one", options), ("two", replace(options, single_pass=False))):
        path.write_bytes(first)
        with inside(folder):
            load_warehouse([path.name], Path(f"{name}.{mode}.duckdb"), chosen)
            path.write_bytes(second)
            outcomes.append(load_warehouse([path.name], Path(f"{name}.{mode}.duckdb"), chosen))
    one, two = outcomes
    assert one.report == two.report
    assert one.rows == two.rows
    assert dump(folder / f"{name}.one.duckdb") == dump(folder / f"{name}.two.duckdb"), name
    return one.outcomes


def _prefix(data: bytes, keep: int) -> bytes:
    lines = data.split(b"\n")[:-1]
    return b"\n".join(lines[:keep]) + b"\n"


def test_a_session_that_grew_is_reloaded_in_one_pass_alike_in_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded session at another size (a log that grew, or one cut or damaged since) is verified and
    extracted in one pass, its old rows set aside meanwhile and dropped at the end."""
    seen = passes(monkeypatch)
    cases = []
    for name in sorted(LEGAL)[:6]:
        data = CASES[f"legal-{name}"]()
        half = max(2, data.count(b"\n") // 2)
        cases.append((name, _prefix(data, half), data))  # grew
    data = CASES["legal-" + sorted(LEGAL)[0]]()
    cases.append(("damaged-growth", _prefix(data, 3), data + data.split(b"\n")[2] + b"\n"))  # a repeated seq
    cases.append(("shrunk", data, _prefix(data, 2)))
    for name, first, second in cases:
        outcomes = _reload_both_ways(tmp_path, name, first, second)
        assert [item.status for item in outcomes] == [loader.REPLACED], name
    # every reload with the single pass on took it (the loads of `first` are new sources: they take it too)
    assert len(seen["one"]) == 2 * len(cases) and seen["two"] == []


def test_a_reload_at_the_same_size_is_verified_before_it_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most likely unchanged: verified first, extracted only when its sha256 differs (two passes then)."""
    data = CASES["legal-" + sorted(LEGAL)[0]]()
    same_size = data.replace(b'"user"', b'"USER"', 1)
    assert len(same_size) == len(data) and same_size != data
    seen = passes(monkeypatch)
    outcomes = _reload_both_ways(tmp_path, "same-size", data, same_size)
    assert [item.status for item in outcomes] == [loader.REPLACED]
    assert len(seen["one"]) == 1  # the first load only
    seen["one"].clear()
    with inside(tmp_path):
        again = load_warehouse(["same-size.jsonl"], Path("same-size.one.duckdb"), FIXED_CLOCK)
    assert [item.status for item in again.outcomes] == [loader.UNCHANGED] and seen["one"] == []


def test_a_source_whose_size_alone_differs_stays_unchanged_with_its_old_rows(tmp_path: Path) -> None:
    """The single pass is taken on a size that differs from the loaded one; when the bytes prove the
    loaded ones after all (here: the recorded size was altered), the rows written are dropped and the old
    ones stay, untouched."""
    data = CASES["legal-" + sorted(LEGAL)[0]]()
    (tmp_path / "s.jsonl").write_bytes(data)
    with inside(tmp_path):
        load_warehouse(["s.jsonl"], Path("w.duckdb"), FIXED_CLOCK)
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    connection.execute("UPDATE sources SET bytes = bytes + 1")
    connection.close()
    before = dump(tmp_path / "w.duckdb")
    with inside(tmp_path):
        again = load_warehouse(["s.jsonl"], Path("w.duckdb"), FIXED_CLOCK)
    assert [item.status for item in again.outcomes] == [loader.UNCHANGED]
    assert again.rows["facts"] == 0
    assert dump(tmp_path / "w.duckdb") == before


def test_a_large_session_that_grew_is_reloaded_beside_its_verification_alike_in_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    used = beside_always(monkeypatch)
    data = CASES["legal-" + sorted(LEGAL)[1]]()
    jobs = replace(FIXED_CLOCK, jobs=2)
    outcomes = _reload_both_ways(tmp_path, "grew", _prefix(data, 3), data, jobs)
    assert [item.status for item in outcomes] == [loader.REPLACED]
    damaged = data + data.split(b"\n")[2] + b"\n"  # a cut at the end: extracted again from the prefix
    outcomes = _reload_both_ways(tmp_path, "grew-damaged", _prefix(data, 3), damaged, jobs)
    assert [item.status for item in outcomes] == [loader.REPLACED]
    assert used == [True, True, True, False]  # the first loads, then the reloads


def test_several_sources_with_jobs_are_each_extracted_as_they_are_verified_alike_in_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With more than one source and job, a small new tiny-agent session is extracted where it is verified
    (a pool's worker, or this process below the pool's threshold), from the verifier's own reading: the
    warehouse is the two-pass load's, for every built session and seeded damage loaded together; then a
    reload where some grew (one pass again) and one changed at the same size (verified first)."""
    seen = passes(monkeypatch)
    rng = random.Random(9)
    built = [data for data in (LEGAL[name]()[0] for name in sorted(LEGAL)) if data.count(b"\n") > 3]
    sessions = {name: CASES[name]() for name in sorted(CASES)}
    sessions.update({f"injured-{index}": _damage(rng.choice(built), rng) for index in range(20)})
    names = [f"{name}.jsonl" for name in sessions]
    jobs = replace(FIXED_CLOCK, jobs=2)
    results = {}
    for mode, options in (("one", jobs), ("two", replace(jobs, single_pass=False))):
        for name, data in sessions.items():
            (tmp_path / f"{name}.jsonl").write_bytes(data)
        with inside(tmp_path):
            first = load_warehouse(names, Path(f"{mode}.duckdb"), options)
        grown = sorted(LEGAL)[:3]
        for name in grown:
            data = CASES[f"legal-{name}"]()
            (tmp_path / f"legal-{name}.jsonl").write_bytes(data + data.split(b"\n")[-2] + b"\n")  # a repeat
        same_size = sessions["legal-" + sorted(LEGAL)[4]].replace(b'"user"', b'"USER"', 1)
        (tmp_path / f"legal-{sorted(LEGAL)[4]}.jsonl").write_bytes(same_size)
        with inside(tmp_path):
            second = load_warehouse(names, Path(f"{mode}.duckdb"), options)
        results[mode] = (first, second, dump(tmp_path / f"{mode}.duckdb"))
    (one_first, one_second, one_rows), (two_first, two_second, two_rows) = results["one"], results["two"]
    assert one_first.report == two_first.report and one_first.rows == two_first.rows
    assert one_second.report == two_second.report and one_second.rows == two_second.rows
    assert one_rows == two_rows
    assert sorted(item.status for item in one_second.outcomes).count(loader.REPLACED) == 4
    # the first load: every source but the v1 one and the one with no LF took the single pass; the
    # reload: the three that grew (the one changed at the same size was verified first)
    assert len(seen["one"]) == len(sessions) - 2 + 3
    assert sorted(set(seen["two"])) == ["damaged-header-without-line-feed.jsonl", "damaged-legacy-v1.jsonl"]
