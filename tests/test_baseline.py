"""Baselines: known findings do not fail the gate, new ones do, vanished ones are SA020 notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from sessaudit.baseline import (
    BaselineFileError,
    baseline_document,
    compare,
    load_baseline,
    parse_baseline,
    render_baseline,
)
from sessaudit.cli import app
from sessaudit.fingerprints import FINGERPRINT_KEY, fingerprint
from sessaudit.resources import load_schema
from sessaudit.verdicts import Severity
from tests.reporters.corpus import finding
from tests.reporters.test_sarif import validate as validate_sarif
from tests.sessions import clean_session, killed_during_deploy

runner = CliRunner()
CORRUPTION = b"not json\n"


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """logs/a.jsonl corrupt (SA106), logs/b.jsonl clean, logs/c.jsonl killed mid-deploy (SA301, SA302)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(clean_session() + CORRUPTION)
    (folder / "b.jsonl").write_bytes(clean_session())
    (folder / "c.jsonl").write_bytes(killed_during_deploy())
    monkeypatch.chdir(tmp_path)
    return folder


def verify(*arguments: str, code: int, paths: tuple[str, ...] = ("logs",)) -> dict[str, Any]:
    result = runner.invoke(app, ["verify", *paths, "--no-config", "--format", "json", *arguments])
    assert result.exit_code == code, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    Draft202012Validator(load_schema("report.v1.schema.json")).validate(document)
    return document


def where(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["rule"], item["location"]["path"]) for item in document["findings"]]


def baseline_file(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator(load_schema("baseline.v1.schema.json")).validate(document)
    return document


def test_round_trip_only_the_new_corruption_fails(logs: Path) -> None:
    written = verify("--write-baseline", "baseline.json", code=0)  # writing a baseline accepts the findings
    assert [rule for rule, _ in where(written)] == ["SA106", "SA301", "SA302"]  # still reported
    document = baseline_file(Path("baseline.json"))
    assert document["schema"] == "sessaudit/baseline/v1" and document["fingerprint"] == FINGERPRINT_KEY
    assert [(item["rule"], item["path"], item["count"]) for item in document["findings"]] == [
        ("SA106", "logs/a.jsonl", 1),
        ("SA301", "logs/c.jsonl", 1),
        ("SA302", "logs/c.jsonl", 1),
    ]

    known = verify("--baseline", "baseline.json", code=0)
    assert known["findings"] == []
    assert known["summary"]["findings"] == {"error": 0, "warning": 0, "note": 0}
    assert known["baseline"]["path"] == "baseline.json"
    assert [item["rule"] for item in known["baseline"]["matched"]] == ["SA106", "SA301", "SA302"]
    assert (known["baseline"]["new"], known["baseline"]["absent"]) == (0, 0)
    assert [source["verdict"] for source in known["sources"]] == ["corrupt", "clean", "needs-recovery"]

    with (logs / "b.jsonl").open("ab") as handle:  # a new corruption in another session
        handle.write(CORRUPTION)
    gated = verify("--baseline", "baseline.json", code=1)
    assert where(gated) == [("SA106", "logs/b.jsonl")]
    assert gated["summary"]["findings"] == {"error": 1, "warning": 0, "note": 0}
    assert (gated["baseline"]["new"], len(gated["baseline"]["matched"])) == (1, 3)
    assert [source["verdict"] for source in gated["sources"]] == ["corrupt", "corrupt", "needs-recovery"]


def test_a_fixed_finding_is_a_note_at_the_baseline_entry(logs: Path) -> None:
    verify("--write-baseline", "baseline.json", code=0)
    (logs / "a.jsonl").write_bytes(clean_session())  # the corruption is gone
    document = verify("--baseline", "baseline.json", code=0)
    (note,) = document["findings"]
    assert (note["rule"], note["name"], note["severity"]) == ("SA020", "baseline-finding-absent", "note")
    assert note["location"]["path"] == "baseline.json" and note["location"]["pointer"] == "/findings/0"
    assert "SA106 (malformed-json) in logs/a.jsonl no longer occurs" in note["message"]
    assert note["evidence"]["found"] == 0 and note["evidence"]["baseline_count"] == 1
    assert document["baseline"]["absent"] == 1
    verify("--baseline", "baseline.json", "--fail-on", "note", code=1)  # a stale baseline fails a strict gate
    assert (
        verify("--baseline", "baseline.json", "--ignore", "baseline-finding-absent", code=0)["findings"] == []
    )
    # refreshing: the old baseline is compared, the new one written without the fixed finding
    verify("--baseline", "baseline.json", "--write-baseline", "baseline.json", code=0)
    assert [item["rule"] for item in baseline_file(Path("baseline.json"))["findings"]] == ["SA301", "SA302"]
    assert verify("--baseline", "baseline.json", code=0)["findings"] == []


def test_the_baseline_matches_however_the_same_file_is_named(logs: Path) -> None:
    verify("--write-baseline", "baseline.json", code=0)
    for path in ("./logs", str(logs), f"{logs}/../logs"):
        document = verify("--baseline", "baseline.json", code=0, paths=(path,))
        assert document["findings"] == [] and len(document["baseline"]["matched"]) == 3, path


def test_a_baseline_is_deterministic_and_independent_of_levels(logs: Path) -> None:
    verify("--write-baseline", "one.json", code=0)
    verify("--write-baseline", "two.json", "--severity", "SA3=error", code=0)
    assert Path("one.json").read_bytes() == Path("two.json").read_bytes()
    assert Path("one.json").read_text(encoding="utf-8").endswith("}\n")
    # a level override does not make a baselined finding new
    assert verify("--baseline", "one.json", "--severity", "SA3=error", code=0)["findings"] == []
    assert [item.name for item in Path().iterdir() if item.name.startswith(".")] == []  # no temp files left


def test_selection_decides_what_is_recorded_and_expected(logs: Path) -> None:
    verify("--write-baseline", "errors.json", "--select", "SA1", code=0)
    assert [item["rule"] for item in baseline_file(Path("errors.json"))["findings"]] == ["SA106"]
    document = verify("--baseline", "errors.json", "--fail-on", "warning", code=1)
    assert [rule for rule, _ in where(document)] == ["SA301", "SA302"]  # not in the baseline: new
    verify("--write-baseline", "all.json", code=0)
    selected = verify("--baseline", "all.json", "--select", "SA1", "--fail-on", "note", code=0)
    assert selected["findings"] == []  # entries of unselected rules are not expected, so not absent


def test_sarif_carries_baseline_states_and_suppressions(logs: Path) -> None:
    verify("--write-baseline", "baseline.json", code=0)
    (logs / "a.jsonl").write_bytes(clean_session())
    with (logs / "b.jsonl").open("ab") as handle:
        handle.write(CORRUPTION)
    result = runner.invoke(
        app, ["verify", "logs", "--no-config", "--format", "sarif", "--baseline", "baseline.json"]
    )
    assert result.exit_code == 1, result.output
    sarif = json.loads(result.stdout)
    validate_sarif(sarif)
    results = sarif["runs"][0]["results"]
    states = [
        (
            item["ruleId"],
            item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            item["baselineState"],
        )
        for item in results
    ]
    assert states == [
        ("SA020", "baseline.json", "absent"),
        ("SA106", "logs/b.jsonl", "new"),
        ("SA301", "logs/c.jsonl", "unchanged"),
        ("SA302", "logs/c.jsonl", "unchanged"),
    ]
    suppressed = [item["ruleId"] for item in results if item.get("suppressions")]
    assert suppressed == ["SA301", "SA302"]
    assert results[2]["suppressions"][0]["kind"] == "external"
    # SARIF and the baseline agree on fingerprints
    recorded = {item["fingerprint"] for item in baseline_file(Path("baseline.json"))["findings"]}
    assert {item["partialFingerprints"][FINGERPRINT_KEY] for item in results[2:]} <= recorded
    plain = runner.invoke(app, ["verify", "logs", "--no-config", "--format", "sarif"])
    assert "baselineState" not in plain.stdout and "suppressions" not in plain.stdout


def test_other_outputs_leave_baselined_findings_out(logs: Path) -> None:
    verify("--write-baseline", "baseline.json", code=0)
    console = runner.invoke(app, ["verify", "logs", "--no-config", "--baseline", "baseline.json"])
    assert console.exit_code == 0 and "SA106" not in console.stdout
    assert "3 baselined in baseline.json" in console.stdout
    github = runner.invoke(
        app, ["verify", "logs", "--no-config", "--format", "github", "--baseline", "baseline.json"]
    )
    assert github.exit_code == 0 and "::error" not in github.stdout and "3 baselined" in github.stdout
    junit = runner.invoke(
        app, ["verify", "logs", "--no-config", "--format", "junit", "--baseline", "baseline.json"]
    )
    assert junit.exit_code == 0 and "<failure" not in junit.stdout


def test_write_baseline_does_not_hide_an_incomplete_audit(logs: Path) -> None:
    result = runner.invoke(
        app, ["verify", "logs", "missing.jsonl", "--no-config", "--write-baseline", "baseline.json"]
    )
    assert result.exit_code == 3, result.output
    assert Path("baseline.json").is_file()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "baseline.json: (the document): cannot be read"),
        ("{not json", "baseline.json: (the document): is not JSON"),
        (
            '{"schema": "sessaudit/baseline/v2", "fingerprint": "sessauditFinding/v1", "findings": []}',
            "/schema",
        ),
        ("[]", "(the document): expected object"),
        (
            '{"schema": "sessaudit/baseline/v1", "fingerprint": "sessauditFinding/v1", "findings": '
            '[{"fingerprint": "' + "a" * 64 + '", "count": 0, "rule": "SA106", "name": "x", "path": null, '
            '"message": "m"}]}',
            "/findings/0/count",
        ),
        (
            '{"schema": "sessaudit/baseline/v1", "fingerprint": "sessauditFinding/v1", "findings": ['
            + ", ".join(
                [
                    '{"fingerprint": "'
                    + "a" * 64
                    + '", "count": 1, "rule": "SA106", "name": "x", "path": null, '
                    '"message": "m"}'
                ]
                * 2
            )
            + "]}",
            "/findings/1/fingerprint: repeats the fingerprint of /findings/0",
        ),
    ],
)
def test_an_unreadable_or_invalid_baseline_is_a_usage_error(
    logs: Path, content: str | None, expected: str
) -> None:
    if content is not None:
        Path("baseline.json").write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["verify", "logs", "--no-config", "--baseline", "baseline.json"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("sessaudit: --baseline: baseline.json: ")
    assert expected in result.stderr
    assert result.stdout == ""


def test_an_unwritable_baseline_is_a_usage_error(logs: Path) -> None:
    result = runner.invoke(
        app, ["verify", "logs", "--no-config", "--write-baseline", "nowhere/baseline.json"]
    )
    assert result.exit_code == 2
    assert "--write-baseline: cannot write nowhere/baseline.json" in result.stderr


def test_identical_findings_are_counted() -> None:
    same = [finding("SA104", "blank-line", Severity.ERROR, "line 3 is empty", path="x.jsonl", line=3)] * 3
    other = finding("SA106", "malformed-json", Severity.ERROR, "bad", path="x.jsonl", line=9)
    baseline = parse_baseline(baseline_document([*same[:2], other]), source="b.json")
    assert [(entry.rule, entry.count) for entry in baseline.entries] == [("SA104", 2), ("SA106", 1)]
    three = compare(same, baseline)
    assert (len(three.matched), len(three.new)) == (2, 1)  # a third occurrence is new
    assert [item.evidence["rule"] for item in three.absent] == ["SA106"]
    one = compare(same[:1], baseline)
    assert (len(one.matched), len(one.new), one.absent_count) == (1, 0, 2)
    assert "(1 of its 2 occurrences)" in one.absent[0].message
    assert one.absent[0].location.pointer == "/findings/0"


def test_fingerprints_ignore_moving_numbers_and_dot_segments() -> None:
    first = finding("SA301", "run-left-open", Severity.WARNING, "open after 12 bytes", path="x", seq=4)
    moved = finding("SA301", "run-left-open", Severity.ERROR, "open after 9000 bytes", path="x", seq=4)
    assert fingerprint(first, "logs/x.jsonl") == fingerprint(moved, "./logs/x.jsonl")
    assert fingerprint(first, "logs/x.jsonl") != fingerprint(first, "logs/y.jsonl")
    elsewhere = finding("SA301", "run-left-open", Severity.WARNING, "open after 12 bytes", path="x", seq=5)
    assert fingerprint(first, "logs/x.jsonl") != fingerprint(elsewhere, "logs/x.jsonl")


def test_baseline_file_round_trips_through_the_loader(tmp_path: Path) -> None:
    items = [finding("SA104", "blank-line", Severity.ERROR, "line 3 is empty", path="a b.jsonl", line=3)]
    path = tmp_path / "baseline.json"
    path.write_text(render_baseline(items), encoding="utf-8")
    loaded = load_baseline(path)
    assert loaded.source == str(path)
    assert [(entry.path, entry.pointer) for entry in loaded.entries] == [("a b.jsonl", "/findings/0")]
    with pytest.raises(BaselineFileError, match="cannot be read"):
        load_baseline(tmp_path / "absent.json")


def _mutations(document: dict[str, Any]) -> list[Any]:
    """The document with one value replaced, one key added or one key removed, at every place."""
    values: list[Any] = [
        None,
        True,
        0,
        1,
        -1,
        2.0,
        "",
        "x",
        "SA1",
        "sa106",
        "SA1060",
        "a" * 64 + "\n",
        "A" * 64,
    ]
    values += ["sessaudit/baseline/v2", [], {}, [1], {"k": 1}, "a" * 63]
    found: list[Any] = [[], {}, None, 7, "text"]
    for key in document:
        for value in values:
            found.append({**document, key: value})
        found.append({name: item for name, item in document.items() if name != key})
    found.append({**document, "extra": 1})
    entry = document["findings"][0]
    for key in entry:
        for value in values:
            found.append({**document, "findings": [{**entry, key: value}, document["findings"][1]]})
        found.append({**document, "findings": [{name: item for name, item in entry.items() if name != key}]})
    found.append({**document, "findings": [{**entry, "extra": "x"}]})
    found.append({**document, "findings": [entry, "not an entry"]})
    return found


def test_the_fast_check_is_never_more_lenient_than_the_schema() -> None:
    from sessaudit.baseline import _plainly_valid

    items = [
        finding("SA104", "blank-line", Severity.ERROR, "line 3 is empty", path="x.jsonl", line=3),
        finding("SA301", "run-left-open", Severity.WARNING, "open", session_id="s", seq=4),
    ]
    document = baseline_document(items)
    schema = Draft202012Validator(load_schema("baseline.v1.schema.json"))
    assert _plainly_valid(document) and schema.is_valid(document)
    mutated = _mutations(document)
    assert len(mutated) > 150
    for candidate in mutated:
        if _plainly_valid(candidate):
            assert schema.is_valid(candidate), candidate
    # where only the schema accepts (a count of 2.0), the loader still gives an integer count
    lenient = {**document, "findings": [{**document["findings"][0], "count": 2.0}]}
    assert not _plainly_valid(lenient) and schema.is_valid(lenient)
    assert parse_baseline(lenient).entries[0].count == 2


def test_every_problem_of_a_baseline_is_reported_at_once() -> None:
    entry = {"fingerprint": "a" * 64, "count": 1, "rule": "SA106", "name": "x", "path": None, "message": "m"}
    document = {
        "schema": "sessaudit/baseline/v1",
        "fingerprint": "sessauditFinding/v1",
        "findings": [dict(entry, cont=2), dict(entry, count=0), dict(entry, rule=3)],
        "comment": "x",
    }
    with pytest.raises(BaselineFileError) as caught:
        parse_baseline(document, source="b.json")
    assert [pointer for pointer, _ in caught.value.problems] == [
        "/comment",
        "/findings/0/cont",
        "/findings/1/count",
        "/findings/2/rule",
    ]
    repeated = dict(document, findings=[entry, entry, entry])
    del repeated["comment"]
    with pytest.raises(BaselineFileError) as again:
        parse_baseline(repeated, source="b.json")
    assert [pointer for pointer, _ in again.value.problems] == [
        "/findings/1/fingerprint",
        "/findings/2/fingerprint",
    ]
