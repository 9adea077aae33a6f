"""Draw docs/report.png, the README's picture of the HTML incident report of examples/.

    python docs/screenshot.py

Writes the report with `sessaudit verify examples/ --report html=…`, opens it in headless Chromium
(Playwright driving Debian's chromium, as the browser tests do) at 1280 px and keeps the first 1,400 px of
the page: the answer, the effects of unknown outcome and the verdicts. Not run by the tests: a picture
changes with fonts and browser versions, so it is redrawn by hand when the page changes."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.browser import chromium_path  # noqa: E402


def main() -> int:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="sessaudit-screenshot-") as scratch:
        page_file = Path(scratch) / "incident.html"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "sessaudit",
                "verify",
                "examples/",
                "--report",
                f"html={page_file}",
                "--quiet",
            ],
            cwd=REPO,
            check=False,
        )
        if done.returncode not in (0, 1):
            raise SystemExit(f"sessaudit verify exited {done.returncode}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(page_file.as_uri(), wait_until="load")
            page.wait_for_selector("svg.timeline")
            page.screenshot(
                path=str(REPO / "docs" / "report.png"), clip={"x": 0, "y": 0, "width": 1280, "height": 1400}
            )
            browser.close()
    print(REPO / "docs" / "report.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
