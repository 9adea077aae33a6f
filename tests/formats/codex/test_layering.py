"""The Codex package's layering: no import cycle among its modules (function-level imports count), no
module outside codex/build imports the fixture builders (which import only each other), each part imports
only the parts below it (ALLOWED), and no module of the package imports another format.

The order, as the code imports today: spec < read < check < seed < recover, and usage beside them (it needs
check's token readers, not seed or recover) < verifier < warehouse (it reads rollouts as the verifier does)
and native (the repair re-verifies) < plugin; rules.py imports no part of the package."""

from __future__ import annotations

from tests.formats.layering import (
    against_layers,
    builder_importers,
    cycles,
    imports_of,
    in_package,
    modules_of,
    shown,
)

PACKAGE = "sessaudit.formats.codex"
BUILD = f"{PACKAGE}.build"
_BASE = frozenset({"spec", "read", "check"})
_VERIFIED = _BASE | {"seed", "recover", "usage", "verifier"}
# part (a sub-package, or a top-level module) -> the parts it may import besides itself
ALLOWED: dict[str, frozenset[str]] = {
    "build": frozenset(),
    "spec": frozenset(),
    "rules": frozenset(),
    "read": frozenset({"spec"}),
    "check": frozenset({"spec", "read"}),
    "seed": _BASE,
    "recover": _BASE | {"seed"},
    "usage": _BASE,
    "verifier": _BASE | {"seed", "recover", "usage"},
    "warehouse": _VERIFIED,
    "native": _VERIFIED,
    "plugin": _VERIFIED | {"warehouse", "native", "rules"},
}


def codex_modules() -> list[str]:
    return modules_of(PACKAGE)


def layer_of(module: str) -> str | None:
    """The part a codex module belongs to: its sub-package or its own top-level module (None for the
    package's __init__)."""
    return module[len(PACKAGE) + 1 :].split(".")[0] if module != PACKAGE else None


def test_no_import_cycle_among_codex_modules() -> None:
    found = cycles(codex_modules())
    assert found == [], f"import cycle: {shown(found)}"


def test_no_module_outside_build_imports_the_builders() -> None:
    offenders = builder_importers(BUILD)
    assert offenders == [], "modules outside codex/build import it: " + "; ".join(offenders)


def test_each_part_imports_only_the_layers_below_it() -> None:
    for module in codex_modules():
        layer = layer_of(module)
        assert layer is None or layer in ALLOWED, f"{module}: part {layer!r} has no place in ALLOWED"
    offenders = against_layers(PACKAGE, ALLOWED, layer_of)
    assert offenders == [], "imports against the layer order: " + "; ".join(offenders)


def test_the_order_is_acyclic() -> None:
    for part, below in ALLOWED.items():
        for lower in below:
            assert part not in ALLOWED[lower], f"{part} and {lower} may import each other"


def test_no_codex_module_imports_another_format() -> None:
    offenders = sorted(
        f"{module} imports {imported}"
        for module in codex_modules()
        for imported in imports_of(module)
        if imported.startswith("sessaudit.formats.") and not in_package(imported, PACKAGE)
    )
    assert offenders == [], "codex imports another format: " + "; ".join(offenders)


def test_the_builders_exist_and_import_only_each_other() -> None:
    builders = [module for module in codex_modules() if in_package(module, BUILD)]
    assert f"{BUILD}.rollout" in builders and f"{BUILD}.scenarios" in builders
    offenders = sorted(
        f"{module} imports {imported}"
        for module in builders
        for imported in imports_of(module)
        if imported.startswith("sessaudit.") and not in_package(imported, BUILD)
    )
    assert offenders == [], "the builders import outside build/: " + "; ".join(offenders)
