"""The fixture corpus of the warehouse tests, made by the project's own builders (never copied data).

`examples/` is what examples/make_examples.py builds; the wide corpus adds every built tiny-agent report
case, every Rivumi case and every Half-Pi case, one folder per format."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

from tests.formats.half_pi.cases import CASES as HALF_PI_CASES
from tests.formats.rivumi.cases import CASES as RIVUMI_CASES
from tests.test_golden_reports import CASES as TINY_AGENT_CASES

REPOSITORY = Path(__file__).resolve().parent.parent.parent


def _generator() -> ModuleType:
    path = REPOSITORY / "examples" / "make_examples.py"
    specification = importlib.util.spec_from_file_location("make_examples", path)
    assert specification is not None and specification.loader is not None
    module = importlib.util.module_from_spec(specification)
    specification.loader.exec_module(module)
    return module


def build_examples(root: Path) -> Path:
    """The example corpus under `root/examples` (files 0644, as committed)."""
    target = root / "examples"
    for relative, data in _generator().build_examples().items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, 0o644)
    return target


def build_wide(root: Path) -> Path:
    """Every built case of every format under `root/wide`."""
    target = root / "wide"
    sessions = target / "tiny-agent"
    sessions.mkdir(parents=True)
    for name, build in sorted(TINY_AGENT_CASES.items()):
        (sessions / f"{name}.jsonl").write_bytes(build())
    for name, case in sorted(RIVUMI_CASES.items()):
        folder = target / "rivumi" / name
        folder.mkdir(parents=True)
        case(folder)
    for name, case in sorted(HALF_PI_CASES.items()):
        folder = target / "half-pi" / name
        folder.mkdir(parents=True)
        case(folder)
    return target
