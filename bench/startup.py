"""Start-up of this checkout against another revision, in the same run: is it worse?

    python bench/startup.py [--against REV] [--repeat 15]

REV (default: the newest commit on HEAD's first-parent line without src/sessaudit/registry.py, the code
before the formats became plugins; any commit may be given) is checked out read-only into a temporary git
worktree, and both are run as `python -m sessaudit` with PYTHONPATH pointing at each one's `src/`,
alternately (A B A B ...), so drift of a noisy machine falls on both. Three commands: `--version` (imports
and the CLI), `verify` of one tiny-agent session from examples/ (one format's code), and `verify examples/`
(all three formats). Each prints the median wall time of both and the ratio this/REV (below 1.0: faster);
the medians of the pairwise ratios are the figures to quote."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _before_plugins() -> str:
    """The newest commit whose tree has no src/sessaudit/registry.py."""
    commits = subprocess.run(
        ["git", "rev-list", "--first-parent", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for commit in commits:
        listed = subprocess.run(
            ["git", "ls-tree", "--name-only", commit, "src/sessaudit/registry.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if not listed.strip():
            return commit
    raise SystemExit("no commit before the plugin registry: give --against REV")


def _time(src: Path, arguments: list[str]) -> float:
    environment = dict(os.environ, PYTHONPATH=str(src))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "sessaudit", *arguments],
        env=environment,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against")
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    against = options.against or _before_plugins()
    session = next((ROOT / "examples" / "tiny-agent").rglob("*.jsonl"))
    commands = {
        "--version": ["--version"],
        "verify one tiny-agent session": ["verify", str(session), "--fail-on", "never"],
        "verify examples/ (three formats)": [
            "verify",
            str(ROOT / "examples"),
            "--fail-on",
            "never",
            "--jobs",
            "1",
        ],
    }
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "other"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(other), against], cwd=ROOT, check=True
        )
        try:
            print(f"start-up: this checkout (A) against {against[:12]} (B), {options.repeat} pairs each")
            for label, arguments in commands.items():
                _time(ROOT / "src", arguments)  # warm the file cache
                _time(other / "src", arguments)
                mine, theirs = [], []
                for _ in range(options.repeat):
                    mine.append(_time(ROOT / "src", arguments))
                    theirs.append(_time(other / "src", arguments))
                ratio = statistics.median(a / b for a, b in zip(mine, theirs, strict=True))
                print(
                    f"  {label:<34} A {statistics.median(mine):.3f} s  B {statistics.median(theirs):.3f} s  "
                    f"A/B {ratio:.2f}"
                )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
