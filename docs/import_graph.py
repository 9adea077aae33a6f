"""Draw docs/import-graph.svg from the code itself: grimp's import graph of `sessaudit`, grouped by the
layers of pyproject.toml's import-linter contract, with each format as one box of its parts.

    python docs/import_graph.py          # rewrite docs/import-graph.svg
    python docs/import_graph.py --check  # exit 1 when the committed picture is stale (tests run this)

An arrow is the direct imports from one box to another (function-level imports included), its label the
number of importing-imported module pairs. Imports inside one box are not drawn."""

from __future__ import annotations

import sys
import tomllib
from collections import Counter
from html import escape
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "import-graph.svg"
WIDTH = 1180
ROW = 62
GAP = 40
FORMAT_TOP = 20


def core_layers() -> list[list[str]]:
    """The core's layers below `formats`, top first, each a list of top-level module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layered = next(item for item in contracts if item["type"] == "layers")
    layers = [[name.strip() for name in layer.replace("|", ":").split(":")] for layer in layered["layers"]]
    assert layers[0] == ["formats"], layers[0]
    return layers[1:]


def box_of(module: str, layers: list[list[str]]) -> str | None:
    """`formats.<name>` for a format's module, `layer<i>` for a core module, None outside."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    if parts[1] == "formats":
        return f"formats.{parts[2]}" if len(parts) > 2 else None
    return next((f"layer{index}" for index, layer in enumerate(layers) if parts[1] in layer), None)


def edges(layers: list[list[str]]) -> tuple[Counter[tuple[str, str]], dict[str, list[str]]]:
    graph = grimp.build_graph("sessaudit", cache_dir=None)
    counted: Counter[tuple[str, str]] = Counter()
    parts: dict[str, set[str]] = {}
    for module in sorted(graph.modules):
        source = box_of(module, layers)
        if source is None:
            continue
        if source.startswith("formats."):
            pieces = module.split(".")
            found = parts.setdefault(source, set())
            if len(pieces) == 4:  # a part: a sub-package (has modules of its own) or a module
                found.add(pieces[3] + ("/" if graph.find_children(module) else ".py"))
        for imported in graph.find_modules_directly_imported_by(module):
            target = box_of(imported, layers)
            if target is not None and target != source:
                counted[(source, target)] += 1
    return counted, {name: sorted(found) for name, found in sorted(parts.items())}


def svg(layers: list[list[str]]) -> str:
    counted, formats = edges(layers)
    shapes: list[str] = []
    anchors: dict[str, tuple[float, float, float]] = {}  # box → (x centre, top y, bottom y)
    columns = max(len(formats), 1)
    column = (WIDTH - 40) / columns
    height = 150
    for index, (name, parts) in enumerate(formats.items()):
        x = 20 + index * column
        w = column - 20
        shapes.append(_rect(x, FORMAT_TOP, w, height, "#eef5ff", "#3a6ea5"))
        shapes.append(_text(x + 10, FORMAT_TOP + 22, f"formats/{name.split('.', 1)[1]}/", bold=True))
        for position, part in enumerate(parts):
            row, col = divmod(position, 3)
            shapes.append(_text(x + 14 + col * (w - 20) / 3, FORMAT_TOP + 48 + row * 20, part, size=12))
        anchors[name] = (x + w / 2, FORMAT_TOP, FORMAT_TOP + height)
    y = FORMAT_TOP + height + 90
    core_width = 800
    labels = {
        0: "entry points and jobs",
        1: "reporters",
        2: "the audit",
        3: "finding sources",
        4: "registry and catalogue",
        5: "the plugin interface",
        6: "basics",
    }
    for index, layer in enumerate(layers):
        name = f"layer{index}"
        shapes.append(_rect(20, y, core_width, ROW - 14, "#f6f6f6", "#777777"))
        shapes.append(_text(30, y + 19, labels.get(index, f"layer {index + 1}"), bold=True, size=12))
        shapes.append(_text(30, y + 38, ", ".join(layer), size=12))
        anchors[name] = (20 + core_width / 2, y, y + ROW - 14)
        y += ROW + GAP - 14
    total = y + 10
    arrows: list[str] = []
    targets = sorted({target for _, target in counted})
    for (source, target), count in sorted(counted.items()):
        sx, stop, sbottom = anchors[source]
        tx, ttop, tbottom = anchors[target]
        upward = ttop < sbottom  # an import of a box above: the contract forbids it
        colour = "#c0392b" if upward else "#3a6ea5" if source.startswith("formats.") else "#555555"
        if source.startswith("formats."):  # down from the format's box onto the core box's top
            spread = (targets.index(target) - len(targets) / 2) * 14
            x1, y1, x2, y2 = sx + spread, sbottom, tx + spread + (sx - WIDTH / 2) * 0.45, ttop
            arrows.append(_arrow(f"M {x1:.0f} {y1:.0f} L {x2:.0f} {y2:.0f}", colour))
            arrows.append(
                _text(x1 + (x2 - x1) * 0.25 + 3, y1 + (y2 - y1) * 0.25, str(count), size=10, colour=colour)
            )
        else:  # core to core: out of the box's right side, down a lane of its own, into the target's side
            lane = 20 + core_width + 24 + int(source.removeprefix("layer")) * 46
            y1 = (stop + sbottom) / 2 - 6 + 4 * int(target.removeprefix("layer"))
            y2 = (ttop + tbottom) / 2 + 8 - 4 * int(source.removeprefix("layer"))
            path = f"M {20 + core_width} {y1:.0f} H {lane} V {y2:.0f} H {20 + core_width + 2}"
            arrows.append(_arrow(path, colour))
            arrows.append(_text(lane + 3, y2 - 3, str(count), size=10, colour=colour))
    legend = _text(
        20,
        total + 4,
        "Arrows: direct imports between boxes (number of module pairs); blue from a format down to the core, "
        "grey between core layers (right), red an import upwards (lint-imports forbids it).",
        size=11,
    )
    head = (
        '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>'
    )
    body = "\n".join([head, *shapes, *arrows, legend])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{total + 20:.0f}" '
        f'viewBox="0 0 {WIDTH} {total + 20:.0f}" font-family="DejaVu Sans, sans-serif">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n'
    )


def _arrow(path: str, colour: str) -> str:
    return (
        f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.2" marker-end="url(#head)" '
        'opacity="0.8"/>'
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, stroke: str) -> str:
    return (
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{w:.0f}" height="{h:.0f}" rx="6" fill="{fill}" '
        f'stroke="{stroke}"/>'
    )


def _text(x: float, y: float, text: str, *, bold: bool = False, size: int = 13, colour: str = "#222") -> str:
    weight = ' font-weight="bold"' if bold else ""
    return f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" fill="{colour}"{weight}>{escape(text)}</text>'


def main(arguments: list[str]) -> int:
    drawn = svg(core_layers())
    if "--check" in arguments:
        if not PICTURE.exists() or PICTURE.read_text(encoding="utf-8") != drawn:
            print(f"{PICTURE} is stale: run python docs/import_graph.py", file=sys.stderr)
            return 1
        return 0
    PICTURE.write_text(drawn, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
