"""The tiny_agent package's import graph: no cycle among its modules (function-level and TYPE_CHECKING
imports count), and the test-fixture builders are imported by no module outside builders/."""

from __future__ import annotations

import grimp

PACKAGE = "sessaudit.formats.tiny_agent"
BUILDERS = PACKAGE + ".builders"


def _graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("sessaudit")
    modules = {module for module in graph.modules if module == PACKAGE or module.startswith(PACKAGE + ".")}
    return {
        module: {
            imported
            for imported in graph.find_modules_directly_imported_by(module)
            if imported in modules and imported != module
        }
        for module in modules
    }


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per back edge of a depth-first search, each as the path that closes it."""
    cycles: list[list[str]] = []
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(module: str) -> None:
        path.append(module)
        on_path.add(module)
        for imported in sorted(edges[module]):
            if imported in on_path:
                cycles.append([*path[path.index(imported) :], imported])
            elif imported not in done:
                visit(imported)
        on_path.discard(module)
        path.pop()
        done.add(module)

    for module in sorted(edges):
        if module not in done:
            visit(module)
    return cycles


def test_no_import_cycle_among_tiny_agent_modules() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" → ".join(cycle) for cycle in cycles)


def test_only_builders_import_builders() -> None:
    graph = grimp.build_graph("sessaudit")
    offenders = sorted(
        f"{importer} imports {imported}"
        for imported in graph.modules
        if imported == BUILDERS or imported.startswith(BUILDERS + ".")
        for importer in graph.find_modules_that_directly_import(imported)
        if not (importer == BUILDERS or importer.startswith(BUILDERS + "."))
    )
    assert not offenders, "modules outside tiny_agent/builders import it:\n" + "\n".join(offenders)
