"""Golden JSON reports for project-built sessions: every native code, torn-tail variant and condition."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sessaudit.engine import audit
from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder
from sessaudit.reporters.json import render_json
from sessaudit.resources import load_schema
from tests.formats.tiny_agent.damaged import DAMAGED
from tests.formats.tiny_agent.scenarios import LEGAL
from tests.golden import check_golden

GOLDEN = Path(__file__).resolve().parent / "golden" / "reports"
REPORT_SCHEMA = Draft202012Validator(load_schema("report.v1.schema.json"))


def tool_not_started() -> bytes:
    builder = SessionBuilder(seed=21, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("read two files")
    builder.assistant(
        builder.step(run), None, calls=[Call("read", {"path": "a"}), Call("read", {"path": "b"})]
    )
    return builder.data()


def torn_tail_with_invalid_utf8() -> bytes:
    builder = SessionBuilder(seed=22, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("hello")
    builder.assistant(builder.step(run), "hi")
    builder.finish(run)
    return builder.data() + b'{"kind":"entry","seq":6,"x":"\xff\xfe'


def torn_tail_with_open_tool() -> bytes:
    builder = SessionBuilder(seed=23, created_at=1787410800000, cwd="/home/dev/shop")
    run = builder.start_run("deploy")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    builder.start_tool(answer, 0)
    return builder.data() + b'{"kind":"entry","seq":7,"id":"01a0'


EXTRA: dict[str, Callable[[], bytes]] = {
    "tool-not-started": tool_not_started,
    "torn-tail-invalid-utf8": torn_tail_with_invalid_utf8,
    "torn-tail-open-tool": torn_tail_with_open_tool,
}
CASES: dict[str, Callable[[], bytes]] = {
    **{f"legal-{name}": (lambda build=build: build()[0]) for name, build in LEGAL.items()},
    **{f"damaged-{name}": (lambda build=build: build()[0]) for name, build in DAMAGED.items()},
    **{f"extra-{name}": build for name, build in EXTRA.items()},
}


def report_for(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    (tmp_path / f"{name}.jsonl").write_bytes(CASES[name]())
    monkeypatch.chdir(tmp_path)
    document: dict[str, object] = json.loads(render_json(audit([f"{name}.jsonl"]).report))
    return document


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool
) -> None:
    document = report_for(name, tmp_path, monkeypatch)
    REPORT_SCHEMA.validate(document)
    check_golden(
        GOLDEN / f"{name}.json", json.dumps(document, indent=2, sort_keys=True) + "\n", update_golden
    )


def test_the_golden_set_covers_every_native_code_condition_and_torn_variant() -> None:
    codes: set[str] = set()
    conditions: set[str] = set()
    torn = 0
    for name in CASES:
        document = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
        for source in document["sources"]:
            if source["native"]["reducer"]["code"]:
                codes.add(source["native"]["reducer"]["code"])
            for session in source["sessions"]:
                torn += session["torn_tail_bytes"] > 0
                for run in session["runs"]:
                    if run["recovery"]:
                        conditions.update(run["recovery"]["conditions"])
    assert codes == {
        "INVALID_UTF8", "MISSING_HEADER", "INVALID_HEADER", "UNSUPPORTED_VERSION", "BLANK_LINE",
        "CRLF_NOT_ALLOWED", "MALFORMED_JSON", "EMPTY_TRANSACTION", "INVALID_FACT", "SEQ_MISMATCH",
        "DUPLICATE_ID", "INVALID_REFERENCE", "INVALID_TRANSITION", "INVALID_TRANSCRIPT",
    }  # fmt: skip
    assert conditions == {
        "effect-unknown", "abort-pending", "effect-replayable", "attempts-exhausted", "model-request-open",
        "tool-not-started", "awaiting-terminal", "step-pending",
    }  # fmt: skip
    assert torn >= 4
