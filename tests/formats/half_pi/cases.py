"""Named Half-Pi stores for golden reports, each built by the project's own builder under a root folder.

Each case returns the database path; `home/db/half-pi.db` keeps Half-Pi's layout (and its run/mind.lock
place). Damaged stores for every invariant rule come from the check tests' own damage tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sessaudit.formats.half_pi.build.parts import ToolCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.half_pi.spec.schema_generations import GENERATIONS, Generation
from tests.formats.half_pi.test_builder import crash_scenario
from tests.formats.half_pi.test_checks_history import build_store
from tests.formats.half_pi.test_checks_history_damage import DAMAGES, Damage
from tests.formats.half_pi.test_checks_runs import CASES as RUN_DAMAGES
from tests.formats.half_pi.test_checks_runs import Case as RunDamage
from tests.formats.half_pi.test_checks_runs import built_store

Case = Callable[[Path], Path]
RESTART_MS = 1_785_500_000_000


def _store(root: Path, seed: int, generation: Generation | None = None) -> StoreBuilder:
    if generation is None:
        return StoreBuilder(root / "home" / "db" / "half-pi.db", seed=seed)
    return StoreBuilder(root / "home" / "db" / "half-pi.db", seed=seed, generation=generation)


def crash_image(root: Path) -> Path:
    """Copied while the Mind was running: every row only in the -wal, runs in flight, a pending approval."""
    builder = _store(root, 7)
    crash_scenario(builder)
    return Path(builder.finish(keep_wal=True).path)


def after_restart(root: Path) -> Path:
    """The same store after the next start's restart recovery (spec §8), checkpointed."""
    builder = _store(root, 7)
    crash_scenario(builder)
    builder.recover(RESTART_MS)
    return Path(builder.finish().path)


def quiet(root: Path) -> Path:
    """A finished conversation: a question, a local tool, the answer; nothing open."""
    builder = _store(root, 21)
    chat = builder.session("/home/dev/calc").user("why does add() fail?")
    builder.admitted(chat, "why does add() fail?")
    call = ToolCall("call_1", "read_file", '{"path":"calc.py"}')
    chat.assistant("", calls=[call], results=["def add(a, b):\n    return a - b\n"])
    builder.local_tool(chat, "read_file", {"path": "calc.py"}, outcome="succeeded")
    chat.assistant("add() subtracts; it should return a + b.")
    return Path(builder.finish().path)


def tool_ran_unanswered(root: Path) -> Path:
    """Killed after a local tool ran but before its batch was saved: the user row is the last message."""
    builder = _store(root, 22)
    chat = builder.session().user("clean the build folder")
    builder.admitted(chat, "clean the build folder")
    builder.local_tool(chat, "bash", {"command": "rm -rf build"}, outcome="succeeded")
    return Path(builder.finish(keep_wal=True).path)


def earlier_request_unanswered(root: Path) -> Path:
    builder = _store(root, 23)
    chat = builder.session().user("first question, never answered")
    chat.user("second question")
    chat.assistant("the answer")
    return Path(builder.finish().path)


def _generation_case(generation: Generation) -> Case:
    def build(root: Path) -> Path:
        builder = _store(root, 24, generation)
        chat = builder.session().user("hello")
        chat.assistant("hi")
        chat.user("are you still there?")  # unfinished: before security_decisions, effect-unknown
        return Path(builder.finish().path)

    return build


def _damaged(damage: Damage) -> Case:
    def build(root: Path) -> Path:
        path, _ = build_store(root, damage.statements, foreign_keys=damage.foreign_keys)
        return Path(path)

    return build


def _run_damaged(damage: RunDamage) -> Case:
    def build(root: Path) -> Path:
        path, _ = built_store(root, recovered=damage.recovered, damage=damage.damage)
        return path

    return build


CASES: dict[str, Case] = {
    "crash-image-wal": crash_image,
    "after-restart-recovery": after_restart,
    "quiet": quiet,
    "tool-ran-unanswered": tool_ran_unanswered,
    "earlier-request-unanswered": earlier_request_unanswered,
    **{f"generation-{item.date}-{item.feature}": _generation_case(item) for item in GENERATIONS},
    **{f"damaged-{item.rule}-{item.name}": _damaged(item) for item in DAMAGES},
    **{
        f"damaged-{item.rule}-{item.damage.__name__.replace('_', '-')}": _run_damaged(item)
        for item in RUN_DAMAGES
    },
}
