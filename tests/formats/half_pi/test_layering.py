"""The Half-Pi package's import layering: no import cycle among its modules (function-level imports
count), and its test-store builder (`half_pi/build`) is imported by no module outside it.

grimp reads the imports statically, so the test sees the imports inside functions as well.
"""

from __future__ import annotations

from tests.formats.layering import builder_importers, cycles, modules_of, shown

HALF_PI = "sessaudit.formats.half_pi"
BUILD = f"{HALF_PI}.build"


def test_no_import_cycle_among_half_pi_modules() -> None:
    found = cycles(modules_of(HALF_PI))
    assert not found, "import cycles: " + shown(found)


def test_only_the_builder_imports_the_builder() -> None:
    offenders = builder_importers(BUILD)
    assert not offenders, "modules outside half_pi/build import it: " + "; ".join(offenders)
