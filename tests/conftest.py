"""Shared pytest options: `--update-golden` rewrites golden files instead of comparing with them.

The differential harness of the tiny-agent fast path (issue 21): every tiny-agent v2 verification the
suite makes, in this process or in a `sessaudit` it starts, answers with the exact pass and runs the
fast path beside it as a second assertion (src/sessaudit/formats/tiny_agent/v2/fast.py
`differential_check`): a fast path that accepts with another outcome, or doubts a session the exact pass
kept no finding on, fails the test. The summary line says how often each answer was seen."""

from __future__ import annotations

import os

import pytest

os.environ["SESSAUDIT_CHECK_FAST_PATH"] = "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="rewrite golden files from the current output"
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from sessaudit.formats.tiny_agent.v2.fast import COMPARED

    terminalreporter.write_line(
        "tiny-agent fast path, compared with the exact pass in this process (twice a session: as verify "
        f"runs it, and compacting): {COMPARED['accepted']} passes accepted with the same outcome "
        f"({COMPARED['compacted']} of them compacting their state), "
        f"{COMPARED['doubted']} doubted (the exact pass found something in each)"
    )
