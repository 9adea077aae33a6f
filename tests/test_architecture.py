"""The layering is checked, not hoped for (docs/architecture.md): import-linter's contracts hold, the core
names no format, and the committed import-graph picture is the code's."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessaudit.registry import registry

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "src" / "sessaudit"


def test_import_linter_contracts_hold() -> None:
    command = shutil.which("lint-imports")
    if command is None:
        pytest.fail("lint-imports is missing: install the test extras (pip install -e '.[test]')")
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_core_names_no_format() -> None:
    """Outside formats/, no module of the package names a built-in format (its name, title or folder)."""
    words = set()
    for plugin in registry().plugins:
        if plugin.name in registry().builtin:
            words |= {plugin.name, plugin.title, plugin.name.replace("-", "_")}
    pattern = re.compile("|".join(re.escape(word) for word in sorted(words)), re.IGNORECASE)
    named = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted(CORE.rglob("*.py"))
        if "formats" not in path.relative_to(CORE).parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert len(words) >= 6 and named == []


def test_the_import_graph_picture_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "import_graph.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_formats_code_is_imported_only_when_a_source_of_it_is_met(tmp_path: Path) -> None:
    """Verifying a tiny-agent file loads the other formats' plugin objects, recognisers and rule tables (the
    catalogue needs them), never their verifiers, readers or warehouse code."""
    session = ROOT / "examples" / "tiny-agent"
    script = (
        "import sys\n"
        "from sessaudit.engine import audit\n"
        f"audit([{str(session)!r}])\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('sessaudit.formats.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded = done.stdout.split()
    # the recognisers: Claude Code's are its record types (spec/records.py) and file layout (read/layout.py)
    light = {"plugin", "recognise", "rules", "rules.history", "rules.runs", "rules.store"}
    light |= {"read", "read.layout", "spec", "spec.records"}
    heavy = [
        name
        for name in loaded
        if not name.startswith("sessaudit.formats.tiny_agent")
        and name.split(".", 3)[-1] not in light
        and name.count(".") > 2
    ]
    assert any(name.startswith("sessaudit.formats.tiny_agent.v2") for name in loaded), loaded
    assert heavy == []
