"""What every format's test_layering.py checks, one implementation: grimp's static import graph (imports
inside functions and under TYPE_CHECKING count; no cache is written), import cycles among a package's
modules, modules outside a package's build/ that import it, and imports against a layer order."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set
from functools import cache

import grimp


@cache
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("sessaudit", cache_dir=None)


def in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def modules_of(package: str) -> list[str]:
    return sorted(module for module in graph().modules if in_package(module, package))


def imports_of(module: str) -> list[str]:
    return sorted(graph().find_modules_directly_imported_by(module))


def cycles(modules: list[str]) -> list[list[str]]:
    """One cycle per back edge of a depth-first search over `modules` (each as the path that closes it)."""
    inside = set(modules)
    found: list[list[str]] = []
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(module: str) -> None:
        path.append(module)
        on_path.add(module)
        for imported in imports_of(module):
            if imported not in inside or imported == module:
                continue
            if imported in on_path:
                found.append([*path[path.index(imported) :], imported])
            elif imported not in done:
                visit(imported)
        on_path.discard(module)
        path.pop()
        done.add(module)

    for module in sorted(inside):
        if module not in done:
            visit(module)
    return found


def shown(found: list[list[str]]) -> str:
    return "; ".join(" -> ".join(cycle) for cycle in found)


def builder_importers(build: str) -> list[str]:
    """`X imports Y` for every module outside the package `build` that imports a module of it."""
    return sorted(
        f"{module} imports {imported}"
        for module in graph().modules
        if not in_package(module, build)
        for imported in imports_of(module)
        if in_package(imported, build)
    )


def against_layers(
    package: str, allowed: Mapping[str, Set[str]], part: Callable[[str], str | None]
) -> list[str]:
    """`X imports Y` for every import inside `package` from one part to another that `allowed` (part → the
    parts it may import besides itself) does not list; a module whose part is None imports freely."""
    offenders = []
    for module in modules_of(package):
        layer = part(module)
        if layer is None:
            continue
        for imported in imports_of(module):
            if not in_package(imported, package):
                continue
            target = part(imported)
            if target != layer and target not in allowed.get(layer, ()):
                offenders.append(f"{module} imports {imported}")
    return offenders
