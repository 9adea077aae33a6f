"""Named Codex rollouts for golden reports, each written under a root folder (a Codex home).

Every builder scenario is a case (the whole Codex home it writes is verified: its rollouts, forks and
sub-agents), and one hand-written rollout per rule SA801–SA817 shows that rule alone: the eleven-line
session of `hand_lines.rollout()` with one line damaged, added or moved (or a fork of it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sessaudit.formats.codex.build.scenarios import SCENARIOS, build_one
from tests.formats.codex.hand_lines import (
    AFTER_FIRST,
    AFTER_SECOND,
    FIRST,
    FORK,
    FORK_STAMP,
    OTHER,
    SID,
    Line,
    at,
    encoded,
    event,
    fork_lines,
    function_call,
    function_output,
    rollout,
    session_meta,
    token_count,
    usage,
    write,
)

Case = Callable[[Path], Path]


def _scenario(name: str) -> Case:
    def build(root: Path) -> Path:
        build_one(root, name)
        return root

    return build


def _lines(*lines: Line | bytes, tail: bytes = b"", sid: str = SID) -> Case:
    return lambda root: write(root, *lines, tail=tail, sid=sid)


def _replaced(at_line: int, *lines: Line | bytes) -> list[Line | bytes]:
    """rollout() with its line `at_line` (1-based) replaced by `lines`."""
    base: list[Line | bytes] = list(rollout())
    return base[: at_line - 1] + list(lines) + base[at_line:]


def _inserted(after_line: int, *lines: Line | bytes) -> list[Line | bytes]:
    base: list[Line | bytes] = list(rollout())
    return base[:after_line] + list(lines) + base[after_line:]


def _meta_second() -> list[Line | bytes]:
    """turn_context first (stamped with session_meta's instant), then session_meta."""
    first, context, *rest = rollout()
    return [context | {"timestamp": first["timestamp"]}, first, *rest]


def _fork_alone(root: Path) -> Path:
    return write(root, *fork_lines(rollout()), sid=FORK, stamp=FORK_STAMP)


def _fork_edited(root: Path) -> Path:
    """The parent's rollout beside the fork, and in the fork's copy the parent's line 8 (the shell
    output, fork line 9) says something else."""
    parent = rollout()
    write(root, *parent)
    lines = fork_lines(parent)
    edited = dict(lines[8]["payload"], output="c.py\n")
    lines[8] = lines[8] | {"payload": edited}
    return write(root, *lines, sid=FORK, stamp=FORK_STAMP)


LAST = rollout()[-1]
CACHED_OVER = (1000, 1200, 50, 20)  # cached 1200 > input 1000

CASES: dict[str, Case] = {
    **{name: _scenario(name) for name in SCENARIOS},
    "damaged-SA801-rollout-line-invalid": _lines(*_replaced(5, encoded(rollout()[4]) + b"\r")),
    "damaged-SA802-rollout-torn-tail": _lines(*rollout(), tail=b'{"timestamp":"2026-03-14T09:00:06.0'),
    "damaged-SA803-rollout-final-newline-missing": lambda root: write(
        root, *rollout()[:-1], tail=encoded(LAST)
    ),
    "damaged-SA804-rollout-line-not-object": _lines(*_inserted(9, b"[1,2]")),
    "damaged-SA805-rollout-line-shape": _lines(
        *_replaced(8, function_output(at(3.5), output={"content": "a.py\nb.py\n", "success": True}))
    ),
    "damaged-SA806-session-meta-not-first": _lines(*_meta_second()),
    "damaged-SA807-session-meta-repeated": _lines(*rollout(), session_meta(at(7.0))),
    "damaged-SA808-call-id-repeated": _lines(*_inserted(8, function_call(at(3.6)))),
    "damaged-SA809-output-without-call": _lines(*_inserted(8, function_output(at(3.6), "call_nowhere"))),
    "damaged-SA810-token-totals-decreased": _lines(
        *_replaced(10, token_count(at(5.1), (900, 100, 40, 20), (900, 100, 40, 20)))
    ),
    "damaged-SA811-token-last-usage-disagrees": _lines(
        *_replaced(10, token_count(at(5.1), AFTER_SECOND, (1000, 900, 30, 0)))
    ),
    "damaged-SA812-token-usage-inconsistent": _lines(
        *_replaced(
            7,
            token_count(at(3.1), AFTER_FIRST, FIRST, last_token_usage=usage(CACHED_OVER)),
        )
    ),
    "damaged-SA813-rollout-timestamp-backwards": _lines(*_replaced(9, rollout()[8] | {"timestamp": at(2.0)})),
    "damaged-SA814-rollout-name-mismatch": _lines(*rollout(), sid=OTHER),
    "damaged-SA815-rollout-type-unknown": _lines(*_inserted(9, event(at(5.05), "brand_new_event", n=1))),
    "damaged-SA816-fork-parent-unverified": _fork_alone,
    "damaged-SA817-fork-copy-differs": _fork_edited,
}
