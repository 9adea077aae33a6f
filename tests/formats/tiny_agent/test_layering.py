"""The tiny_agent package's import graph: no cycle among its modules (function-level and TYPE_CHECKING
imports count), the test-fixture builders are imported by no module outside build/, and each part
imports only the parts below it."""

from __future__ import annotations

import grimp

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
    assert not offenders, "modules outside tiny_agent/build import it:\n" + "\n".join(offenders)


def test_each_part_imports_only_the_parts_below_it() -> None:
    def part(module: str) -> str:
        return module[len(PACKAGE) + 1 :].split(".")[0]

    offenders = sorted(
        f"{importer} imports {imported}"
        for importer, imports in _graph().items()
        if importer != PACKAGE
        for imported in imports
        if part(imported) != part(importer) and part(imported) not in LAYERS.get(part(importer), set())
    )
    assert not offenders, "imports against the layers:\n" + "\n".join(offenders)
