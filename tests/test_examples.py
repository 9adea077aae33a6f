"""The committed example corpus is exactly what `examples/make_examples.py` builds now."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_generator() -> ModuleType:
    specification = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    assert specification is not None and specification.loader is not None
    module = importlib.util.module_from_spec(specification)
    specification.loader.exec_module(module)
    return module


def test_committed_examples_equal_a_fresh_build() -> None:
    built: dict[Path, bytes] = load_generator().build_examples()
    for relative, data in built.items():
        committed = EXAMPLES / relative
        assert committed.is_file(), f"{relative} is missing: run python examples/make_examples.py"
        assert committed.read_bytes() == data, f"{relative} is stale: run python examples/make_examples.py"
    sessions = {path.relative_to(EXAMPLES) for path in (EXAMPLES / "tiny-agent").rglob("*") if path.is_file()}
    assert sessions == {relative for relative in built if relative.parts[0] == "tiny-agent"}


def test_building_twice_gives_the_same_bytes() -> None:
    generator = load_generator()
    assert generator.build_examples() == generator.build_examples()


def test_the_readme_names_every_example() -> None:
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for relative in load_generator().build_examples():
        assert relative.name[:34] in readme, relative


# The README's table: file name prefix → expected source verdict and first recovery condition (a corrupt
# session's runs describe the state where reduction stopped, so its condition is not compared).
EXPECTED_VERDICTS = {
    "2026-11-30T09-12-03-412Z": ("clean", None),
    "2026-11-30T11-40-27-088Z": ("repairable", None),
    "2026-11-30T14-05-51-930Z": ("needs-recovery", "effect-unknown"),
    "2026-11-30T15-22-09-517Z": ("needs-recovery", "model-request-open"),
    "2026-11-30T16-48-36-264Z": ("corrupt", None),
    "6b9bb2f6535a7e07b6dffce8": ("needs-recovery", "effect-unknown"),  # Rivumi run directories
    "780c4b16a51059fa62b2bbd1": ("repairable", None),
    "half-pi.db": ("needs-recovery", "remote-run-in-flight"),  # a Half-Pi store
    "cb711eaa-47b3-4e47-92e7-": ("needs-recovery", "effect-unknown"),  # a Claude Code transcript
    "rollout-2026-11-30T19-41": ("needs-recovery", "effect-unknown"),  # a Codex rollout
}
LEGACY_V1_EXAMPLE = "2026-11-29T20-25-07-234Z"


def verdicts() -> dict[str, tuple[str, str | None, str | None]]:
    from sessaudit.engine import audit

    report = audit([str(EXAMPLES)]).report
    assert [Path(item.path).name for item in report.skipped if item.path.endswith(".txt")] == ["notes.txt"]
    found: dict[str, tuple[str, str | None, str | None]] = {}
    for source in report.sources:
        conditions = [
            run.recovery.condition for session in source.sessions for run in session.runs if run.recovery
        ]
        found[Path(source.path).name[:24]] = (
            source.verdict.value,
            conditions[0] if conditions else None,
            source.format_version,
        )
    return found


def test_the_examples_get_the_verdicts_the_readme_promises() -> None:
    found = verdicts()
    for stamp, (verdict, condition) in EXPECTED_VERDICTS.items():
        assert found[stamp][0] == verdict, stamp
        if verdict != "corrupt":
            assert found[stamp][1] == condition, stamp


def test_the_legacy_example_is_verified_as_v1_and_clean() -> None:
    assert verdicts()[LEGACY_V1_EXAMPLE] == ("clean", None, "1")
