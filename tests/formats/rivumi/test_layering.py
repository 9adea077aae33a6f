"""The Rivumi package's layering: no import cycle among its modules (function-level imports count), no
module outside rivumi/build imports the fixture builders, and each sub-package imports only the layers
below it (the order in ALLOWED)."""

from __future__ import annotations

from tests.formats.layering import (
    against_layers,
    builder_importers,
    cycles,
    modules_of,
    shown,
)

PACKAGE = "sessaudit.formats.rivumi"
BUILD = f"{PACKAGE}.build"
# sub-package -> the sub-packages it may import besides itself; spec < read < native < seed < verify
ALLOWED: dict[str, frozenset[str]] = {
    "spec": frozenset(),
    "read": frozenset({"spec"}),
    "native": frozenset({"spec", "read"}),
    "seed": frozenset({"spec", "read", "native"}),
    "verify": frozenset({"spec", "read", "native", "seed"}),
    "build": frozenset({"spec"}),
    "warehouse": frozenset({"spec", "read"}),
}


def rivumi_modules() -> list[str]:
    return modules_of(PACKAGE)


def layer_of(module: str) -> str | None:
    """The sub-package a rivumi module belongs to (None for the package's own top-level modules)."""
    parts = module[len(PACKAGE) + 1 :].split(".") if module != PACKAGE else []
    return parts[0] if len(parts) > 1 or (parts and parts[0] in ALLOWED) else None


def test_no_import_cycle_among_rivumi_modules() -> None:
    found = cycles(rivumi_modules())
    assert found == [], f"import cycle: {shown(found)}"


def test_no_module_outside_build_imports_the_builders() -> None:
    offenders = builder_importers(BUILD)
    assert offenders == [], "modules outside rivumi/build import it: " + "; ".join(offenders)


def test_each_sub_package_imports_only_the_layers_below_it() -> None:
    for module in rivumi_modules():
        layer = layer_of(module)
        assert layer is None or layer in ALLOWED, f"{module}: sub-package {layer!r} has no place in ALLOWED"
    offenders = against_layers(PACKAGE, ALLOWED, layer_of)
    assert offenders == [], "imports against the layer order: " + "; ".join(offenders)
