"""Start-up of `sessaudit verify` on a small file against issue 21's target, and (--against) against another
revision.

    python bench/startup.py [--repeat 10] [--against [REV]]

The target: the whole process of `sessaudit verify --format json --jobs 1` of one 20 KB tiny-agent session
(made by bench/corpus.py) <= 0.12 s. Measured in the same run, interleaved (round by round, so drift of a
noisy machine falls on every row), beside references: `python -c pass` (the interpreter), `import duckdb`,
and the imports every sessaudit command pays before doing anything of its own: typer (the command line),
pydantic (the report model) and sessaudit.model itself (its classes built). Each row gives the best and
the median wall time and the least CPU time (user + system: steadier than wall time on a busy machine).
Bytecode is cached in a private PYTHONPYCACHEPREFIX, as an installed package has it; the last row is
verify as this environment runs it (PYTHONDONTWRITEBYTECODE=1 and a tree without __pycache__ make
every run compile sessaudit's sources). When the target is missed, the figure that bounds it is named.

--against REV (default: the newest commit on HEAD's first-parent line without src/sessaudit/registry.py,
the code before the formats became plugins) checks REV out read-only into a temporary git worktree, and
runs both as `python -m sessaudit` with PYTHONPATH pointing at each one's `src/`, alternately (A B A B ...).
Three commands: `--version` (imports and the CLI), `verify` of one tiny-agent session from examples/ (one
format's code), and `verify examples/` (all formats). Each prints the median wall time of both and the
ratio this/REV (below 1.0: faster); the medians of the pairwise ratios are the figures to quote."""

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
TARGET_SECONDS = 0.12  # issue 21: `sessaudit verify` of a small file, the whole process
SMALL_SIZE = "20KB"
TYPER = "import typer.main"
PYDANTIC = "import pydantic.main"
BOTH = "import typer.main, pydantic.main"
MODEL = "import typer.main, sessaudit.model"
# the least a typer command line costs: one command of three parameters, run (typer converts every
# parameter's value through a pydantic TypeAdapter, so this imports pydantic too)
TYPER_APP = """import typer
app = typer.Typer(add_completion=False)
@app.command()
def main(path: str, count: int = 1, flag: bool = False) -> None:
    pass
app(["x", "--count", "2"])"""
TYPER_APP_LABEL = "a typer app: one command, three parameters"
VERSION = "sessaudit --version"
VERIFY = "sessaudit verify --format json --jobs 1 SMALL"
VERIFY_AS_RUN = "the same verify, bytecode as this environment has it"


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


def _measure(command: list[str], environment: dict[str, str], cwd: Path) -> tuple[float, float]:
    """One run of `command`: its wall time and its CPU time (user + system), in seconds."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=environment, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return wall, usage.ru_utime + usage.ru_stime


def _small_session(folder: Path) -> Path:
    """A 20 KB tiny-agent v2 session without a crash, written by bench/corpus.py."""
    out = folder / "small"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "corpus.py"),
            "--format",
            "tiny-agent",
            "--size",
            SMALL_SIZE,
            "--out",
            str(out),
            "--crash-every",
            "0",
        ],
        check=True,
        capture_output=True,
    )
    return next(out.rglob("*.jsonl"))


def target(repeat: int) -> None:
    """Issue 21's start-up target, with its references, interleaved round by round."""
    with tempfile.TemporaryDirectory() as folder:
        session = _small_session(Path(folder))
        cached = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "bytecode")
        cwd = Path(folder)  # no settings file: the audit reads none
        python = sys.executable
        verify = [python, "-m", "sessaudit", "verify", "--format", "json", "--jobs", "1", str(session)]
        rows: dict[str, tuple[list[str], dict[str, str]]] = {
            f"python -c '{code}'": ([python, "-c", code], cached)
            for code in ("pass", "import duckdb", TYPER, PYDANTIC, BOTH, MODEL)
        }
        rows |= {
            TYPER_APP_LABEL: ([python, "-c", TYPER_APP], cached),
            VERSION: ([python, "-m", "sessaudit", "--version"], cached),
            VERIFY: (verify, cached),
            VERIFY_AS_RUN: (verify, dict(os.environ)),
        }
        for command, environment in rows.values():  # fill the bytecode cache, warm the file cache
            _measure(command, environment, cwd)
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in rows}
        for _ in range(repeat):
            for label, (command, environment) in rows.items():
                times[label].append(_measure(command, environment, cwd))
    print(
        f"start-up: {repeat} rounds, best wall / median wall / least CPU (user + system); "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, small session {SMALL_SIZE}"
    )
    for label, measured in times.items():
        walls = [wall for wall, _ in measured]
        cpu = min(spent for _, spent in measured)
        print(f"  {label:<56} {min(walls):.3f} s  {statistics.median(walls):.3f} s  CPU {cpu:.3f} s")
    best = min(wall for wall, _ in times[VERIFY])
    met = best <= TARGET_SECONDS
    print(
        f"target: verify of a small file <= {TARGET_SECONDS:g} s: {best:.3f} s, {'met' if met else 'NOT met'}"
    )
    if not met:
        floor = min(wall for wall, _ in times[f"python -c '{MODEL}'"])
        both = min(wall for wall, _ in times[f"python -c '{BOTH}'"])
        app = min(wall for wall, _ in times[TYPER_APP_LABEL])
        print(
            f"  bound: {TYPER_APP_LABEL} takes {app:.3f} s (its parameters are converted by pydantic), "
            f"`{BOTH}` {both:.3f} s and `{MODEL}` {floor:.3f} s (the report model's classes built): every "
            "command pays these before its own work; the other "
            f"{best - floor:.3f} s are the registry (every installed format's plugin object and rule "
            "tables), the rest of the verify path's imports, typer building the commands, and the audit "
            "(`python -X importtime -m sessaudit verify FILE` lists the imports)"
        )


def against(revision: str, repeat: int) -> None:
    """This checkout (A) against `revision` (B), alternately."""
    session = next((ROOT / "examples" / "tiny-agent").rglob("*.jsonl"))
    commands = {
        "--version": ["--version"],
        "verify one tiny-agent session": ["verify", str(session), "--fail-on", "never"],
        "verify examples/ (every format)": [
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
            ["git", "worktree", "add", "--detach", "--quiet", str(other), revision], cwd=ROOT, check=True
        )
        try:
            print(f"start-up: this checkout (A) against {revision[:12]} (B), {repeat} pairs each")
            for label, arguments in commands.items():
                _time(ROOT / "src", arguments)  # warm the file cache
                _time(other / "src", arguments)
                mine, theirs = [], []
                for _ in range(repeat):
                    mine.append(_time(ROOT / "src", arguments))
                    theirs.append(_time(other / "src", arguments))
                ratio = statistics.median(a / b for a, b in zip(mine, theirs, strict=True))
                print(
                    f"  {label:<34} A {statistics.median(mine):.3f} s  B {statistics.median(theirs):.3f} s  "
                    f"A/B {ratio:.2f}"
                )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", nargs="?", const="", default=None, metavar="REV")
    parser.add_argument("--repeat", type=int, default=10)
    options = parser.parse_args()
    target(options.repeat)
    if options.against is not None:
        against(options.against or _before_plugins(), options.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
