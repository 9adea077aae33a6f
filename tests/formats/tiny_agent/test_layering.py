"""The tiny_agent package's import graph: no cycle among its modules (function-level and TYPE_CHECKING
imports count), the test-fixture builders are imported by no module outside build/, and each part
imports only the parts below it."""

from __future__ import annotations

from tests.formats.layering import against_layers, builder_importers, cycles, modules_of

PACKAGE = "sessaudit.formats.tiny_agent"
BUILDERS = PACKAGE + ".build"
# Which parts (sub-packages, or the top-level module verifier) each part may import.
LAYERS = {
    "plugin": {"verifier", "recover", "warehouse", "rules"},  # what the core sees; imports lazily
    "verifier": {"v1", "v2"},  # the entry point, verify_tiny_agent_file
    "v2": {"recover", "check", "read"},
    "recover": {"check", "read"},
    "check": {"read"},
    "read": set(),
    "v1": set(),
    "warehouse": {"v1", "read", "check"},
    "build": {"read"},
}


def part(module: str) -> str | None:
    """The part a module belongs to: its first name below the package (None: the package itself)."""
    return module[len(PACKAGE) + 1 :].split(".")[0] if module != PACKAGE else None


def test_no_import_cycle_among_tiny_agent_modules() -> None:
    found = cycles(modules_of(PACKAGE))
    assert not found, "import cycles:\n" + "\n".join(" → ".join(cycle) for cycle in found)


def test_only_builders_import_builders() -> None:
    offenders = builder_importers(BUILDERS)
    assert not offenders, "modules outside tiny_agent/build import it:\n" + "\n".join(offenders)


def test_each_part_imports_only_the_parts_below_it() -> None:
    offenders = against_layers(PACKAGE, LAYERS, part)
    assert not offenders, "imports against the layers:\n" + "\n".join(offenders)
