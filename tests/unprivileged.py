"""Run the sessaudit CLI without the privilege to read every file, so mode 000 means what it means.

CI runs as root, and root reads a file of mode 000. Two ways to drop that, tried in order:
- `setpriv --reuid=65534 --regid=65534 --clear-groups` (nobody), when this interpreter, its libraries and
  sessaudit's sources can be run by uid 65534 (not so when Python lives under a 0700 /root);
- `setpriv --bounding-set=-dac_override,-dac_read_search`: still uid 0 but without the two capabilities
  that let root ignore file modes, so a root-owned file of mode 000 cannot be opened by its owner either.
Tests skip, saying why, only where neither works (not root, no setpriv, a kernel that refuses both)."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
NOBODY = ("--reuid=65534", "--regid=65534", "--clear-groups")
NO_DAC = ("--bounding-set=-dac_override,-dac_read_search",)


@functools.cache
def _drop_privileges() -> tuple[str, ...] | str:
    """The setpriv arguments that work here, or why none do."""
    if os.geteuid() != 0:
        return "not running as root: the privileges that make mode 000 readable cannot be dropped"
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "setpriv (util-linux) is not installed: privileges cannot be dropped"
    probe = Path(tempfile.mkdtemp(prefix="sessaudit-probe-"))
    try:
        probe.chmod(0o755)
        secret = probe / "secret"
        secret.write_bytes(b"x")
        secret.chmod(0)
        code = (
            f"import sys; sys.path.insert(0, {str(SRC)!r}); import sessaudit.cli\n"
            f"try:\n    open({str(secret)!r})\nexcept PermissionError:\n    print('denied')\n"
        )
        for arguments in (NOBODY, NO_DAC):
            completed = subprocess.run(
                [setpriv, *arguments, sys.executable, "-c", code],
                capture_output=True,
                text=True,
                check=False,
                cwd="/",
            )
            if completed.returncode == 0 and completed.stdout.strip() == "denied":
                return (setpriv, *arguments)
        return "setpriv could not run this interpreter without the privilege to read mode-000 files"
    finally:
        secret.chmod(0o600)
        shutil.rmtree(probe)


def world_readable_folder() -> Path:
    """A fresh folder uid 65534 can traverse (pytest's tmp_path may sit in a 0700 folder)."""
    folder = Path(tempfile.mkdtemp(prefix="sessaudit-modes-"))
    folder.chmod(0o755)
    return folder


def restore_modes(folder: Path) -> None:
    """Make everything under `folder` removable again (root could anyway; an unprivileged CI user not)."""
    for root, directories, files in os.walk(folder):
        for name in directories + files:
            path = Path(root, name)
            if not path.is_symlink():
                path.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    shutil.rmtree(folder)


def run_unprivileged(*arguments: str) -> subprocess.CompletedProcess[str]:
    """`python -m sessaudit ARGUMENTS` without the privilege to ignore file modes (or skip the test)."""
    dropped = _drop_privileges()
    if isinstance(dropped, str):
        pytest.skip(dropped)
    return subprocess.run(
        [*dropped, sys.executable, "-m", "sessaudit", *arguments],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        cwd="/",
    )
