"""The Claude Code package's layering: no import cycle among its modules (function-level imports count), no
module outside claude_code/build imports the fixture builders, each sub-package imports only the layers
below it (the order in ALLOWED; so far build/ is the only one, and it imports only itself), and no module
of the package imports another format."""

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

PACKAGE = "sessaudit.formats.claude_code"
BUILD = f"{PACKAGE}.build"
# sub-package -> the sub-packages it may import besides itself; build/ stands alone, the verifier's parts
# go spec/ -> read/ -> check/ -> recover/ (plugin.py, rules.py and verifier.py sit on top)
ALLOWED: dict[str, frozenset[str]] = {
    "build": frozenset(),
    "spec": frozenset(),
    "read": frozenset({"spec"}),
    "check": frozenset({"spec", "read"}),
    "seed": frozenset({"spec", "read", "check"}),
    "recover": frozenset({"spec", "read", "check", "seed"}),
    "usage": frozenset({"spec"}),
    "warehouse": frozenset({"spec", "usage"}),
}


def claude_code_modules() -> list[str]:
    return modules_of(PACKAGE)


def layer_of(module: str) -> str | None:
    """The sub-package a claude_code module belongs to (None for the package's own top-level modules)."""
    parts = module[len(PACKAGE) + 1 :].split(".") if module != PACKAGE else []
    return parts[0] if len(parts) > 1 or (parts and parts[0] in ALLOWED) else None


def test_no_import_cycle_among_claude_code_modules() -> None:
    found = cycles(claude_code_modules())
    assert found == [], f"import cycle: {shown(found)}"


def test_no_module_outside_build_imports_the_builders() -> None:
    offenders = builder_importers(BUILD)
    assert offenders == [], "modules outside claude_code/build import it: " + "; ".join(offenders)


def test_each_sub_package_imports_only_the_layers_below_it() -> None:
    for module in claude_code_modules():
        layer = layer_of(module)
        assert layer is None or layer in ALLOWED, f"{module}: sub-package {layer!r} has no place in ALLOWED"
    offenders = against_layers(PACKAGE, ALLOWED, layer_of)
    assert offenders == [], "imports against the layer order: " + "; ".join(offenders)


def test_no_claude_code_module_imports_another_format() -> None:
    offenders = sorted(
        f"{module} imports {imported}"
        for module in claude_code_modules()
        for imported in imports_of(module)
        if imported.startswith("sessaudit.formats.") and not in_package(imported, PACKAGE)
    )
    assert offenders == [], "claude_code imports another format: " + "; ".join(offenders)


def test_the_builders_exist_and_import_only_each_other() -> None:
    builders = [module for module in claude_code_modules() if in_package(module, BUILD)]
    assert f"{BUILD}.transcript" in builders and f"{BUILD}.scenarios" in builders
    offenders = sorted(
        f"{module} imports {imported}"
        for module in builders
        for imported in imports_of(module)
        if imported.startswith("sessaudit.") and not in_package(imported, BUILD)
    )
    assert offenders == [], "the builders import outside build/: " + "; ".join(offenders)
