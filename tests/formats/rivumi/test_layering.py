"""The Rivumi package's layering: no import cycle among its modules (function-level imports count), no
module outside rivumi/build imports the fixture builders, and each sub-package imports only the layers
below it (the order in ALLOWED)."""

from __future__ import annotations

from functools import cache

import grimp

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


@cache
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("sessaudit", cache_dir=None)


def rivumi_modules() -> list[str]:
    return sorted(module for module in graph().modules if in_package(module, PACKAGE))


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def imports_of(module: str) -> list[str]:
    return sorted(graph().find_modules_directly_imported_by(module))


def find_cycle(modules: list[str]) -> list[str] | None:
    """One import cycle among `modules` (the path that closes it), or None: a depth-first search."""
    inside = set(modules)
    done: set[str] = set()
    for root in modules:
        if root in done:
            continue
        path = [root]
        pending = [[item for item in imports_of(root) if item in inside]]
        while pending:
            if not pending[-1]:
                pending.pop()
                done.add(path.pop())
                continue
            following = pending[-1].pop()
            if following in path:
                return [*path[path.index(following) :], following]
            if following not in done:
                path.append(following)
                pending.append([item for item in imports_of(following) if item in inside])
    return None


def layer_of(module: str) -> str | None:
    """The sub-package a rivumi module belongs to (None for the package's own top-level modules)."""
    parts = module[len(PACKAGE) + 1 :].split(".") if module != PACKAGE else []
    return parts[0] if len(parts) > 1 or (parts and parts[0] in ALLOWED) else None


def test_no_import_cycle_among_rivumi_modules() -> None:
    cycle = find_cycle(rivumi_modules())
    assert cycle is None, f"import cycle: {' -> '.join(cycle or [])}"


def test_no_module_outside_build_imports_the_builders() -> None:
    offenders = sorted(
        f"{module} imports {imported}"
        for module in graph().modules
        if not in_package(module, BUILD)
        for imported in imports_of(module)
        if in_package(imported, BUILD)
    )
    assert offenders == [], "modules outside rivumi/build import it: " + "; ".join(offenders)


def test_each_sub_package_imports_only_the_layers_below_it() -> None:
    offenders: list[str] = []
    for module in rivumi_modules():
        layer = layer_of(module)
        if layer is None:
            continue
        assert layer in ALLOWED, f"{module}: sub-package {layer!r} has no place in ALLOWED"
        for imported in imports_of(module):
            if not imported.startswith(f"{PACKAGE}."):
                continue
            target = layer_of(imported)
            if target != layer and target not in ALLOWED[layer]:
                offenders.append(f"{module} imports {imported}")
    assert offenders == [], "imports against the layer order: " + "; ".join(offenders)
