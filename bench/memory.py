"""What a peak RSS is made of: the fixed part (interpreter, imports, an open warehouse) and the state the
tiny-agent verifier holds at the end of a session, structure by structure. bench/profile.py writes it into
bench/PROFILE.md (the memory targets' profile, beside cProfile's for time).

    python bench/memory.py state SESSION.jsonl     # one probe, in its own process: JSON on stdout
    python bench/memory.py imports [MODULE...]     # import them; this process's memory as JSON
    python bench/memory.py warehouse DB.duckdb     # also open (create) a warehouse; the same JSON

The state probe verifies the session in process and walks the reducer's structures with `sys.getsizeof`,
charging every object to the first structure that reaches it (the order is `STATE_PARTS`'), so the
namespace's share is what only the namespace holds: its dict table and the ids no record holds."""

from __future__ import annotations

import importlib
import json
import os
import resource
import subprocess
import sys
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

MIB: Final = 1 << 20
ID_BITS_BYTES: Final = 16  # what an id carries: 128 bits

# The reducer's attributes, grouped; each object is charged to the first group that reaches it.
STATE_PARTS: Final = (
    (
        "entries: ids, kinds, places, message order",
        ("entry_ids", "entry_kinds", "entry_offsets", "entry_indexes", "message_ids"),
    ),
    ("runs and compactions (`Operation`)", ("operations", "runs", "current")),
    ("step attempts (`Attempt`)", ("attempts", "steps")),
    ("tool calls: intents, their runs", ("intent_operation", "pending_intents", "pending_calls")),
    ("run inputs used", ("used_inputs",)),
    ("id namespace: its table, and the ids held only there", ("namespace",)),
)
NOT_STATE: Final = frozenset({"observations", "reread_digest", "line_at", "journal"})


def _children(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        yield from value.keys()
        yield from value.values()
    elif isinstance(value, (list, tuple, set, frozenset)):
        yield from value
    else:
        kind = type(value)
        for klass in kind.__mro__:
            for name in getattr(klass, "__slots__", ()):
                if hasattr(value, name):
                    yield getattr(value, name)
        if kind.__module__.startswith("sessaudit") and hasattr(value, "__dict__"):
            yield from vars(value).values()


CODE: Final = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _countable(value: Any) -> bool:
    """Data, not code: modules, classes and functions are shared by every session and not state."""
    return not isinstance(value, CODE)


def deep_sizes(parts: Sequence[tuple[str, Sequence[Any]]]) -> list[tuple[str, int]]:
    """(name, bytes) for each part: the `sys.getsizeof` of every object reachable from its roots, each
    object charged once, to the first part that reaches it."""
    seen: set[int] = set()
    sizes = []
    for name, roots in parts:
        total = 0
        pending = list(roots)
        while pending:
            value = pending.pop()
            if id(value) in seen or not _countable(value):
                continue
            seen.add(id(value))
            total += sys.getsizeof(value)
            pending.extend(_children(value))
        sizes.append((name, total))
    return sizes


def own_memory() -> dict[str, int]:
    """This process's peak RSS (VmHWM, its own address space's: not inflated by its spawner), and its
    resident memory now split into anonymous (private: the heap) and file-backed pages (shared libraries
    and other mapped files: shared with every process mapping them, and dropped first under pressure;
    how many are resident depends on the page cache, so that part of an RSS varies from run to run)."""
    fields = {
        "VmHWM:": "peak",
        "VmRSS:": "rss",
        "RssAnon:": "anonymous",
        "RssFile:": "file",
        "RssShmem:": "shared",
    }
    found = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key = line.split(maxsplit=1)[0] if line.strip() else ""
            if key in fields:
                found[fields[key]] = int(line.split()[1]) * 1024
    return found


def state_probe(path: str) -> dict[str, Any]:
    """Verify one tiny-agent session in this process; what its reducer holds at the end, and this
    process's RSS before and at its peak."""
    from sessaudit.formats.tiny_agent.v2.verification import _Verification
    from sessaudit.plugin import DEFAULT_OPTIONS

    before = own_memory()["rss"]
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        verification = _Verification(path, path, stream, size, DEFAULT_OPTIONS)
        verification.run()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    reducer = verification.reducer
    attributes = vars(reducer)
    grouped = {name for _, names in STATE_PARTS for name in names}
    other = [value for name, value in attributes.items() if name not in grouped | NOT_STATE]
    parts = [(title, [attributes[name] for name in names]) for title, names in STATE_PARTS]
    parts.append(("the reducer's other fields", other))
    parts.append(("findings and observations", [verification.findings, verification.observations]))
    namespace = reducer.namespace
    entries = len(reducer.entry_ids)
    return {
        "bytes": size,
        "findings": len(verification.findings),
        "ids": len(namespace),
        "entries": entries,
        "namespace_table": sys.getsizeof(namespace),
        "parts": deep_sizes(parts),
        "rss_before": before,
        "rss_peak": peak,
    }


def run_probe(argv: Sequence[str]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *argv], capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"memory probe {' '.join(argv)} failed: {completed.stderr.strip()[-500:]}")
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def state_table(probe: dict[str, Any], label: str) -> list[str]:
    """The markdown rows of one state probe."""
    total = sum(size for _, size in probe["parts"])
    ids, kilobytes = probe["ids"], probe["bytes"] / 1000
    growth = probe["rss_peak"] - probe["rss_before"]
    lines = [
        f"**{label}** ({probe['bytes']:,} bytes, {probe['findings']} finding(s)): {ids:,} ids in the "
        f"namespace ({ids / kilobytes:.2f} per KB), "
        f"{probe['entries']:,} of them entries. Peak RSS {probe['rss_peak'] / MIB:.0f} MiB, "
        f"{probe['rss_before'] / MIB:.0f} MiB of it before the first line (interpreter and imports); "
        f"the state left at the end is {total / MIB:.1f} MiB of the {growth / MIB:.1f} MiB grown "
        "(the rest is memory taken while reading, by decoded lines and the allocator's pools, and kept).",
        "",
        "| structure | MiB | share | bytes per id |",
        "|---|---:|---:|---:|",
    ]
    for name, size in probe["parts"]:
        share = 100 * size / total if total else 0.0
        lines.append(f"| {name} | {size / MIB:.2f} | {share:.0f} % | {size / max(ids, 1):.0f} |")
    lines += [
        f"| **all of it** | **{total / MIB:.2f}** | 100 % | **{total / max(ids, 1):.0f}** |",
        "",
        f"The namespace's dict table alone is {probe['namespace_table'] / MIB:.2f} MiB "
        f"({probe['namespace_table'] / max(ids, 1):.0f} bytes per id); an id's information is "
        f"{ID_BITS_BYTES} bytes, {ID_BITS_BYTES * ids / MIB:.2f} MiB for all of them. At this rate a 1 GB "
        f"session of the same kind would hold {total / probe['bytes'] * 1e9 / MIB:.0f} MiB of state.",
        "",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if len(arguments) == 2 and arguments[0] == "state":
        print(json.dumps(state_probe(arguments[1])))
        return 0
    if arguments[:1] == ["imports"]:
        for name in arguments[1:]:
            importlib.import_module(name)
        print(json.dumps(own_memory()))
        return 0
    if len(arguments) == 2 and arguments[0] == "warehouse":
        from sessaudit.warehouse.loader import open_database
        from sessaudit.warehouse.schema import create_schema

        connection = open_database(Path(arguments[1]))
        try:
            create_schema(connection)
            print(json.dumps(own_memory()))  # while it is open
        finally:
            connection.close()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
