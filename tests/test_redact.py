"""`--redact`: a canary in every content field of all three formats reaches no output; ids stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.model import Report
from sessaudit.redact import _Redactor as _Kept
from sessaudit.redact import mask, redact_document, redact_report
from tests.content_corpus import build_corpus

CANARY = "CANARY-b7e2q"
FORMATS = ("console", "json", "sarif", "junit", "github")
runner = CliRunner()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_corpus(tmp_path_factory.mktemp("corpus"), f"secret {CANARY} text")


def _verify(corpus: Path, out: Path, *extra: str, redact: bool) -> tuple[int, dict[str, str]]:
    """Run verify with every report format, seeds and a baseline; returns the exit code and every output."""
    out.mkdir()
    summary = out / "step-summary.md"
    arguments = ["verify", str(corpus), "--jobs", "1", "--format", "json", "--output", str(out / "main.json")]
    for name in FORMATS:
        arguments += ["--report", f"{name}={out / ('report.' + name)}"]
    arguments += ["--seeds-dir", str(out / "seeds"), *extra]
    if redact:
        arguments.append("--redact")
    result = runner.invoke(app, arguments, env={"GITHUB_STEP_SUMMARY": str(summary)})
    outputs = {"stdout+stderr": result.output}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            outputs[str(path.relative_to(out))] = path.read_text(encoding="utf-8")
    console = runner.invoke(app, ["verify", str(corpus), "--jobs", "1", *(["--redact"] if redact else [])])
    outputs["console stdout"] = console.output
    for name in ("sarif", "junit", "github"):
        shown = runner.invoke(
            app, ["verify", str(corpus), "--jobs", "1", "--format", name, *(["--redact"] if redact else [])]
        )
        outputs[f"{name} stdout"] = shown.output
    return result.exit_code, outputs


def test_the_canary_is_in_the_outputs_without_redact(corpus: Path, tmp_path: Path) -> None:
    code, outputs = _verify(corpus, tmp_path / "plain", redact=False)
    assert code in (0, 1)
    leaking = {name for name, text in outputs.items() if CANARY in text}
    # the test below can fail: unredacted, the content is in the report, the seeds and the messages
    assert "main.json" in leaking
    assert any(name.startswith("seeds/") for name in leaking)
    assert {"report.console", "report.github", "report.junit", "report.sarif"} <= leaking


def test_redact_masks_every_content_in_every_output(corpus: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    code, outputs = _verify(corpus, tmp_path / "redacted", "--write-baseline", str(baseline), redact=True)
    assert code in (0, 1), outputs["stdout+stderr"]
    outputs["baseline"] = baseline.read_text(encoding="utf-8")
    leaking = sorted(name for name, text in outputs.items() if CANARY in text)
    assert leaking == []
    report = json.loads(outputs["main.json"])
    Report.model_validate(report)
    seeds = [json.loads(text) for name, text in outputs.items() if name.startswith("seeds/")]
    assert len(seeds) >= 5 and all(seed["redacted"] is True for seed in seeds)
    # ids, digests and names stay: the redacted report still says what happened where
    text = outputs["main.json"]
    for source in report["sources"]:
        assert source["path"] in text and source["sha256"]
        for session in source["sessions"]:
            for run in session["runs"]:
                if run["recovery"]:
                    for effect in run["recovery"]["pending_effects"]:
                        assert effect["tool_name"] in {"bash", "exec_command", "replace_text"}
                        assert effect["tool_call_id"]
    assert "[redacted: " in text


def test_seed_redact(corpus: Path) -> None:
    sessions = corpus / "tiny-agent/.tiny-agent/sessions"
    killed = next(path for path in sessions.iterdir() if path.name.startswith("2026-11-30T14"))
    plain = runner.invoke(app, ["seed", str(killed)])
    assert plain.exit_code == 0 and CANARY in plain.output
    redacted = runner.invoke(app, ["seed", str(killed), "--redact"])
    assert redacted.exit_code == 0, redacted.output
    assert CANARY not in redacted.output
    (seed,) = json.loads(redacted.output)
    assert seed["redacted"] is True
    assert seed["pending_effects"][0]["tool_name"] == "bash"
    assert seed["pending_effects"][0]["arguments"] == {"command": mask(f"./deploy.sh secret {CANARY} text")}
    run_dir = next(path for path in (corpus / "rivumi").iterdir() if (path / "events.jsonl").is_file())
    refused = runner.invoke(app, ["seed", str(run_dir), "--native", "--redact"])
    assert refused.exit_code == 2
    assert "cannot be redacted" in refused.output


def test_rules_of_the_transformation() -> None:
    finding = {
        "rule": "SA204",
        "name": "bad-entry",
        "severity": "error",
        "location": {"path": "a.jsonl", "session_id": "s-1", "line": 4, "pointer": "/entry/stopReason"},
        "message": "tool 'bash' (call_1): found \"stop it now\", and 'it\\'s' then 'unterminated",
        "native_code": None,
        "evidence": {"expected": "toolUse", "found": 7, "tool_name": "bash", "tool_call_id": "call_1"},
    }
    document = {
        "findings": [finding],
        "seed": {
            "schema": "sessaudit/seed/v1",
            "redacted": False,
            "session_id": "s-1",
            "arguments": {"id": "secret-id", "count": 3, "flag": True, "nested": [{"x": "y"}]},
            "context": {"messages": [{"role": "user", "content": "hello there", "timestamp": 12}]},
            "native_text": '{"prompt": "hello"}',
            "usage": {"input": 10, "output": 2},
        },
        "skipped": [{"path": "notes.txt", "reason": "not a session log: 'top secret' header"}],
    }
    redacted = redact_document(document)
    message = redacted["findings"][0]["message"]
    # quoted literals masked unless the report keeps them elsewhere (the tool name, the call id)
    assert message == (
        "tool 'bash' (call_1): found \"[redacted: 11 chars]\", and '[redacted: 5 chars]' then "
        "'[redacted: 12 chars]'"
    )
    assert redacted["findings"][0]["evidence"] == {
        "expected": mask("toolUse"),
        "found": 7,
        "tool_name": "bash",
        "tool_call_id": "call_1",
    }
    assert redacted["findings"][0]["location"] == finding["location"]
    seed = redacted["seed"]
    assert seed["redacted"] is True and seed["session_id"] == "s-1"
    # a tool's arguments: every leaf masked, an `id` and numbers too; parameter names stay
    assert seed["arguments"] == {
        "id": mask("secret-id"),
        "count": "[redacted: number]",
        "flag": True,
        "nested": [{"x": mask("y")}],
    }
    assert seed["context"]["messages"] == [{"role": "user", "content": mask("hello there"), "timestamp": 12}]
    assert seed["native_text"] == mask('{"prompt": "hello"}')
    assert seed["usage"] == {"input": 10, "output": 2}  # a count named `input` is not a tool input
    assert redacted["skipped"][0] == {
        "path": "notes.txt",
        "reason": "not a session log: '[redacted: 10 chars]' header",
    }
    # the mask is the length only: no digest a reader could test a guess against
    assert mask("yes") == "[redacted: 3 chars]"


def test_redact_report_keeps_the_report_valid_and_the_verdicts(corpus: Path) -> None:
    from sessaudit.engine import audit

    report = audit([str(corpus)]).report
    redacted = redact_report(report)
    assert [source.verdict for source in redacted.sources] == [source.verdict for source in report.sources]
    assert redacted.summary == report.summary
    assert [item.rule for item in redacted.findings] == [item.rule for item in report.findings]
    assert CANARY not in redacted.model_dump_json()
    assert CANARY in report.model_dump_json()


CONTENT_KEYS = {"content", "text", "native_text", "instruction", "preview", "output", "summary", "detail"}


def _contents(value: object, key: str | None = None, inside: bool = False) -> list[str]:
    """Strings of a report that are contents: under a content key, or anywhere inside tool arguments."""
    if isinstance(value, dict):
        return [
            text
            for name, item in value.items()
            for text in _contents(item, name, inside or name in {"arguments", "args", "Args"})
        ]
    if isinstance(value, list):
        return [text for item in value for text in _contents(item, key, inside)]
    if isinstance(value, str) and (inside or key in CONTENT_KEYS):
        return [value]
    return []


GOLDEN_REPORTS = sorted(
    path
    for path in (Path(__file__).parent / "golden").rglob("*.json")
    if '"findings"' in path.read_text(encoding="utf-8") and '"sources"' in path.read_text(encoding="utf-8")
)


@pytest.mark.parametrize("path", GOLDEN_REPORTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_golden_reports_redacted_hold_no_content(path: Path) -> None:
    """Every stored report (damaged stores and runs of every kind): no content string of 8 or more
    characters survives redaction anywhere in the report, messages and evidence included."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or "sources" not in document:
        pytest.skip("not a report")
    redacted = redact_document(document)
    text = json.dumps(redacted, ensure_ascii=False)
    collector = _Kept()
    collector.collect(document)
    kept = collector.kept  # an id or a name that is also some content stays visible as the id
    contents = {item for item in _contents(document) if len(item) >= 8 and item not in kept}
    leaked = sorted(item for item in contents if item in text)
    assert leaked == []
    Report.model_validate(redacted)


def test_redact_covers_baselined_findings(corpus: Path, tmp_path: Path) -> None:
    """Findings a baseline accepts are listed under `baseline.matched`: they are redacted there too."""
    baseline = tmp_path / "baseline.json"
    written = runner.invoke(app, ["verify", str(corpus), "--jobs", "1", "--write-baseline", str(baseline)])
    assert written.exit_code == 0, written.output
    assert CANARY in baseline.read_text(encoding="utf-8")  # an unredacted baseline quotes content
    arguments = ["verify", str(corpus), "--jobs", "1", "--baseline", str(baseline), "--format", "json"]
    plain = runner.invoke(app, arguments)
    redacted = runner.invoke(app, [*arguments, "--redact"])
    assert redacted.exit_code == plain.exit_code == 0
    assert json.loads(plain.output)["baseline"]["matched"] and CANARY in plain.output
    assert CANARY not in redacted.output
    assert len(json.loads(redacted.output)["baseline"]["matched"]) == len(
        json.loads(plain.output)["baseline"]["matched"]
    )


def test_internal_error_lines_are_redacted() -> None:
    from sessaudit.redact import redact_error

    assert redact_error("KeyError: 'my secret key'") == "KeyError: '[redacted: 13 chars]'"
