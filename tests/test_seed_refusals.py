"""No plan and no seed from a corrupt history, in every format; `sessaudit seed` says why and exits 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sessaudit.cli import app
from sessaudit.engine import audit
from sessaudit.model import Recovery, Source
from sessaudit.reporters.console import render_console
from tests.formats.half_pi.cases import CASES as HALF_PI_CASES

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO / "examples" / "tiny-agent" / ".tiny-agent" / "sessions"
CORRUPT_V2 = SESSIONS / "2026-11-30T16-48-36-264Z_01a22d5b-bba8-7e0c-9657-f5bf97611f4e.jsonl"
CORRUPT_V2_RUN = "01a22d5b-bba9-7862-a482-a73fc4b0bf71"
RIVUMI_OPEN = REPO / "examples" / "rivumi" / "runs" / "6b9bb2f6535a7e07b6dffce8112d9d11"
runner = CliRunner()


def zero_filled_rivumi(tmp_path: Path) -> Path:
    """A Rivumi run directory after a power loss: every file keeps its size, its bytes are zeros."""
    run = tmp_path / RIVUMI_OPEN.name
    shutil.copytree(RIVUMI_OPEN, run)
    for name in ("events.jsonl", "session.json", "request.json"):
        target = run / name
        target.write_bytes(b"\0" * target.stat().st_size)
    return run


def corrupt_v1(tmp_path: Path) -> Path:
    """A legacy v1 session: a question, an answer whose call is unanswered, then a line that is no JSON."""
    lines = [
        {
            "type": "session",
            "version": 1,
            "id": "01a228fb-99a2-70e0-87a7-4367dd5b6582",
            "createdAt": "2026-11-29T20:25:07.234Z",
            "cwd": "/home/dev/legacy",
            "provider": "openrouter",
            "model": "deepseek/deepseek-v4-flash-0731",
            "timestamp": "2026-11-29T20:25:07.235Z",
        },
        {
            "type": "message",
            "message": {"role": "user", "content": "clean the build"},
            "timestamp": "2026-11-29T20:25:08.000Z",
        },
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command":"rm -rf build"}'},
                    }
                ],
            },
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0},
            "timestamp": "2026-11-29T20:25:09.000Z",
        },
    ]
    path = tmp_path / "legacy.jsonl"
    text = "".join(json.dumps(line) + "\n" for line in lines) + '{"type": "message", "message": \n'
    path.write_text(text)
    return path


def only_source(path: Path) -> Source:
    (source,) = audit([str(path)]).report.sources
    return source


def open_recoveries(source: Source) -> list[Recovery]:
    return [run.recovery for session in source.sessions for run in session.runs if run.recovery is not None]


def assert_withheld(source: Source, *, native: str | None) -> None:
    assert source.verdict == "corrupt"
    recoveries = open_recoveries(source)
    assert recoveries, "the corrupt source keeps its open runs (their state as far as verified)"
    for recovery in recoveries:
        assert (recovery.native_plan, recovery.seed, recovery.seed_kind) == (None, None, None)
        assert recovery.warnings[0].startswith(
            "no recovery plan and no seed: the history is corrupt (first: SA"
        )
        if native is not None:
            assert native in recovery.warnings[0]
    console = render_console(audit([source.path]).report)
    assert "next (tiny-agent's own recovery)" not in console and "(seed:" not in console


def test_corrupt_tiny_agent_v2_example_has_no_plan_and_no_seed() -> None:
    source = only_source(CORRUPT_V2)
    assert source.native["reducer"]["code"] == "SEQ_MISMATCH"
    assert_withheld(source, native="tiny-agent refuses the file (SEQ_MISMATCH at line 5, seq 7)")
    (recovery,) = open_recoveries(source)
    assert recovery.condition == "tool-not-started"  # as far as lines 1-4 say
    assert "known only through line 4 (seq 5)" in recovery.warnings[0]


def test_zero_filled_rivumi_run_has_no_seed(tmp_path: Path) -> None:
    run = zero_filled_rivumi(tmp_path)
    source = only_source(run)
    assert_withheld(source, native="Rivumi's replay refuses the log (event JSONL has a partial final line)")
    report = audit([str(run)]).report
    (open_finding,) = [item for item in report.findings if item.rule == "SA301"]
    assert "no event could be read" in open_finding.message and "no seed" in open_finding.message
    assert "seed kind" not in open_finding.message and "no event yet" not in open_finding.message


def test_corrupt_legacy_v1_session_has_no_seed(tmp_path: Path) -> None:
    source = only_source(corrupt_v1(tmp_path))
    assert source.format_version == "1"
    assert_withheld(source, native="tiny-agent v1's reader cannot parse line 4")


def test_corrupt_half_pi_store_has_no_seed(tmp_path: Path) -> None:
    store = HALF_PI_CASES["damaged-SA630-seq-gap"](tmp_path / "stores")
    source = only_source(store)
    assert_withheld(source, native="Half-Pi's startup does not verify the store")
    report = audit([str(store)]).report
    opened = [item for item in report.findings if item.rule in ("SA301", "SA302")]
    assert opened and all("seed kind" not in item.message for item in opened)


@pytest.mark.parametrize("with_run", [False, True])
def test_seed_of_a_corrupt_source_prints_nothing_names_the_first_corrupting_finding_and_exits_1(
    with_run: bool,
) -> None:
    arguments = ["seed", str(CORRUPT_V2)] + (["--run", CORRUPT_V2_RUN] if with_run else [])
    result = runner.invoke(app, arguments)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "the history is corrupt; first corrupting finding: SA205 seq-mismatch [" in result.stderr
    assert "line 5, byte 2543, seq 7, /seq]: seq: expected 6, found 7" in result.stderr


def test_seed_of_each_corrupt_format_exits_1_with_the_reason(tmp_path: Path) -> None:
    for path, rule in (
        (zero_filled_rivumi(tmp_path), "SA503"),
        (corrupt_v1(tmp_path), "SA106"),
        (HALF_PI_CASES["damaged-SA630-seq-gap"](tmp_path / "stores"), "SA630"),
    ):
        result = runner.invoke(app, ["seed", str(path)])
        assert (result.exit_code, result.stdout) == (1, ""), (path, result.stdout, result.stderr)
        assert f"first corrupting finding: {rule} " in result.stderr, result.stderr


def test_seed_of_an_intact_source_still_prints_its_seeds() -> None:
    path = SESSIONS / "2026-11-30T14-05-51-930Z_01a22cc6-bdba-7faa-9d33-fda9b6dc0914.jsonl"
    result = runner.invoke(app, ["seed", str(path)])
    assert result.exit_code == 0 and result.stderr == ""
    (seed,) = json.loads(result.stdout)
    assert seed["seed_kind"] == "fork"


def test_seed_of_a_folder_holding_a_corrupt_source_prints_nothing_and_says_how_to_get_the_rest() -> None:
    result = runner.invoke(app, ["seed", str(SESSIONS)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert "first corrupting finding: SA205 seq-mismatch" in result.stderr
    assert "no seed is printed for any source of this folder; name an intact source" in result.stderr
    intact = runner.invoke(app, ["seed", str(SESSIONS), "--run", "01a22cc6-bdbc-79a4-87cd-8773bd387424"])
    assert intact.exit_code == 0, intact.stderr
    assert json.loads(intact.stdout)["run_id"] == "01a22cc6-bdbc-79a4-87cd-8773bd387424"  # --run: one seed
