"""The HTML incident report at scale (issue 22): its size and how soon a browser shows it, for a corpus of
about 10,000 runs (targets: <= 5 MB, first paint <= 3 s).

    python bench/html_report.py [--runs 10000] [--corpus-dir DIR] [--results bench/RESULTS-html.md]

The corpus is bench/corpus.py's dense tiny-agent sessions (about 10 runs each, every 50th crashed), made
once per seed into --corpus-dir; its run count is read back from the report, and the benchmark stops if it
is more than 10% off what was asked. Timed, in this run: `sessaudit verify --format json` alone (the
reference), and with `--report html=FILE` (the page's own cost is the difference); then headless Chromium
(Playwright, Debian's chromium) opens the page `--repeat` times: first contentful paint, and the moment its
script has drawn the sessions it draws at once, each against a blank page opened by the same browser in the
same run. Prints a Markdown table; `--results` also writes it to that file."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus as corpus_module  # noqa: E402

RUNS_PER_MB: Final = 87.0  # dense sessions: 8,678 runs in 100 MB (bench/RESULTS.md's dense scenario)
RUNS_PER_SESSION: Final = 10
SIZE_TARGET: Final = 5 * 1000 * 1000  # bytes
PAINT_TARGET: Final = 3.0  # seconds


def ensure_corpus(directory: Path, runs: int, seed: int) -> Path:
    root = directory / f"html-report-{runs}runs-seed{seed}"
    if (root / corpus_module.MANIFEST).exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    size = int(runs / RUNS_PER_MB * 1e6)
    corpus_module.generate(
        "tiny-agent-dense", size, root, seed=seed, sessions=max(1, runs // RUNS_PER_SESSION), workers=2
    )
    return root


def timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    return time.perf_counter() - started, done


def browser_times(page: Path, blank: Path, repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(HERE.parent))
    from tests.browser import chromium_path

    executable = chromium_path()
    if executable is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    found: dict[str, list[float]] = {"paint": [], "drawn": [], "blank paint": []}
    script = """() => new Promise(done => {
        const paint = () => performance.getEntriesByName('first-contentful-paint')[0];
        const wait = () => paint() ? done({paint: paint().startTime,
            drawn: document.querySelectorAll('svg.timeline').length ? performance.now() : null}) :
            setTimeout(wait, 10);
        wait();
    })"""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for _ in range(repeat):
            for target, key in ((blank, "blank paint"), (page, "paint")):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                tab = context.new_page()
                tab.goto(target.resolve().as_uri(), wait_until="load")
                measured: Any = tab.evaluate(script)
                found[key].append(measured["paint"] / 1000)
                if key == "paint":
                    tab.wait_for_selector("svg.timeline", timeout=60_000)
                    found["drawn"].append(tab.evaluate("performance.now()") / 1000)
                context.close()
        browser.close()
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus-dir", type=Path, default=HERE / ".corpus")
    parser.add_argument("--results", type=Path)
    options = parser.parse_args(argv)
    root = ensure_corpus(options.corpus_dir, options.runs, options.seed)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="sessaudit-html-bench-") as scratch:
        folder = Path(scratch)
        page, report = folder / "incident.html", folder / "report.json"
        alone: list[float] = []
        with_page: list[float] = []
        for _ in range(options.repeat):
            seconds, done = timed(
                [python, "-m", "sessaudit", "verify", str(root), "--format", "json", "--output", str(report)]
            )
            alone.append(seconds)
            seconds, done = timed(
                [
                    python,
                    "-m",
                    "sessaudit",
                    "verify",
                    str(root),
                    "--format",
                    "json",
                    "--report",
                    f"html={page}",
                ]
            )
            with_page.append(seconds)
            if done.returncode not in (0, 1):
                raise SystemExit(f"verify exited {done.returncode}: {done.stderr.decode(errors='replace')}")
        document = json.loads(report.read_text(encoding="utf-8"))
        runs = sum(len(session["runs"]) for source in document["sources"] for session in source["sessions"])
        events_page = page.read_text(encoding="utf-8")
        if abs(runs - options.runs) > options.runs * 0.1:
            raise SystemExit(f"the corpus has {runs:,} runs, not about {options.runs:,}: fix RUNS_PER_MB")
        blank = folder / "blank.html"
        blank.write_text("<!DOCTYPE html><html><body><p>blank</p></body></html>", encoding="utf-8")
        browser = browser_times(page, blank, options.repeat)
        size = page.stat().st_size
    sources = len(document["sources"])
    corpus_bytes = sum(item["bytes"] for source in document["sources"] for item in source["files"])
    paint, drawn, reference = min(browser["paint"]), min(browser["drawn"]), min(browser["blank paint"])
    rows = [
        (
            "corpus",
            f"{sources:,} sessions, {runs:,} runs, {corpus_bytes / 1e6:.1f} MB "
            f"(dense tiny-agent, seed {options.seed})",
            "",
        ),
        (
            "page size",
            f"{size / 1e6:.2f} MB ({len(events_page):,} characters)",
            f"target <= 5 MB: {'met' if size <= SIZE_TARGET else 'not met'}",
        ),
        (
            "verify --format json",
            f"{min(alone):.2f} s best, {statistics.median(alone):.2f} s median",
            "the reference",
        ),
        (
            "verify + --report html",
            f"{min(with_page):.2f} s best, {statistics.median(with_page):.2f} s median",
            f"{min(with_page) / min(alone):.2f}x the reference",
        ),
        (
            "first contentful paint",
            f"{paint:.3f} s best, {statistics.median(browser['paint']):.3f} s median",
            f"target <= 3 s: {'met' if paint <= PAINT_TARGET else 'not met'}; "
            f"a blank page: {reference:.3f} s",
        ),
        (
            "first timelines drawn",
            f"{drawn:.3f} s best, {statistics.median(browser['drawn']):.3f} s median",
            "the sessions drawn at once (12); the rest when scrolled to",
        ),
    ]
    table = ["| measure | value | |", "|---|---|---|", *(f"| {a} | {b} | {c} |" for a, b, c in rows)]
    text = (
        f"## The HTML report at {runs:,} runs\n\n"
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by "
        f"`python bench/html_report.py --runs {options.runs}` ({options.repeat} runs of each).\n\n"
        + "\n".join(table)
        + "\n"
    )
    print(text)
    if options.results is not None:
        options.results.write_text("# HTML report benchmark\n\n" + text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
