"""The Half-Pi package's import layering: no import cycle among its modules (function-level imports
count), and its test-store builder (`half_pi/build`) is imported by no module outside it.

grimp reads the imports statically, so the test sees the imports inside functions as well.
"""

from __future__ import annotations

import grimp
import pytest

HALF_PI = "sessaudit.formats.half_pi"
BUILD = f"{HALF_PI}.build"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("sessaudit", cache_dir=None)


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per back edge found by a depth-first search."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & modules):
            if state.get(imported) == 1:
                found.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported)
        path.pop()
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            visit(module)
    return found


def test_no_import_cycle_among_half_pi_modules(graph: grimp.ImportGraph) -> None:
    modules = {module for module in graph.modules if _inside(module, HALF_PI)}
    cycles = _cycles(graph, modules)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_only_the_builder_imports_the_builder(graph: grimp.ImportGraph) -> None:
    offenders = sorted(
        f"{module} imports {imported}"
        for module in graph.modules
        if not _inside(module, BUILD)
        for imported in graph.find_modules_directly_imported_by(module)
        if _inside(imported, BUILD)
    )
    assert not offenders, "modules outside half_pi/build import it: " + "; ".join(offenders)
