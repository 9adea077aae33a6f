"""The words of the ready-made scenarios: prompts' files, tool outputs and patches (all made up)."""

from __future__ import annotations

from typing import Final

SLUG_PY: Final = '''import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """A URL slug: lower-case ASCII words joined by dashes."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return _NON_WORD.sub("-", text.lower()).lstrip("-")
'''

SLUG_PATCH: Final = """*** Begin Patch
*** Update File: textkit/slug.py
@@ def slugify(title: str) -> str:
     text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
-    return _NON_WORD.sub("-", text.lower()).lstrip("-")
+    return _NON_WORD.sub("-", text.lower()).strip("-")
*** End Patch
"""

SLUG_TESTS: Final = (
    "....                                                                     [100%]\n4 passed in 0.05s\n"
)

MAKEFILE: Final = """.PHONY: lint test fmt

lint:
\truff check src tests
\truff format --check src tests

test:
\tpytest -q

fmt:
\truff format src tests
"""

MAKEFILE_PATCH: Final = """*** Begin Patch
*** Update File: Makefile
@@
-.PHONY: lint test fmt
+.PHONY: lint test fmt typecheck
@@ fmt:
 \truff format src tests
+
+typecheck:
+\tmypy --strict src
*** End Patch
"""

WORKER_PY: Final = """     1\timport time
     2\t
     3\tfrom ingest.queue import Queue, Job
     4\tfrom ingest.store import Store
     5\t
     6\tMAX_ATTEMPTS = 5
     7\t
     8\t
     9\tdef run(queue: Queue, store: Store) -> None:
    10\t    while True:
    11\t        job = queue.pop(timeout=30)
    12\t        if job is None:
    13\t            continue
    14\t        for attempt in range(1, MAX_ATTEMPTS + 1):
    15\t            try:
    16\t                store.write(job.payload)
    17\t                break
    18\t            except TimeoutError:
    19\t                time.sleep(2 ** attempt)
    20\t        else:
    21\t            queue.dead_letter(job)
"""

CARGO_FAIL: Final = """running 12 tests
test dates::parses_iso_week ... ok
test dates::formats_local_midnight ... FAILED

failures:

---- dates::formats_local_midnight stdout ----
thread 'dates::formats_local_midnight' panicked at tests/dates.rs:41:5:
assertion `left == right` failed
  left: "2026-02-10T23:00:00"
 right: "2026-02-11T00:00:00"

test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.03s
"""

CI_PATCH: Final = """*** Begin Patch
*** Update File: .github/workflows/ci.yml
@@ jobs:
   test:
     runs-on: ubuntu-latest
+    env:
+      TZ: UTC
     steps:
*** End Patch
"""

DATES_PATCH: Final = """*** Begin Patch
*** Update File: tests/dates.rs
@@ fn formats_local_midnight() {
-    let midnight = Local.with_ymd_and_hms(2026, 2, 11, 0, 0, 0).unwrap();
-    assert_eq!(format_local(midnight), "2026-02-11T00:00:00");
+    let offset = FixedOffset::east_opt(3600).unwrap();
+    let midnight = offset.with_ymd_and_hms(2026, 2, 11, 0, 0, 0).unwrap();
+    assert_eq!(format_in(midnight, offset), "2026-02-11T00:00:00");
*** End Patch
"""

EXPORT_PY: Final = """def export_rows(rows, path):
    with open(path, "w") as out:
        out.write(",".join(rows[0].keys()) + "\\n")
        for row in rows:
            out.write(",".join(str(value) for value in row.values()) + "\\n")
"""

EXPORT_PATCH: Final = """*** Begin Patch
*** Update File: reports/export.py
@@
-def export_rows(rows, path):
-    with open(path, "w") as out:
-        out.write(",".join(rows[0].keys()) + "\\n")
-        for row in rows:
-            out.write(",".join(str(value) for value in row.values()) + "\\n")
+import csv
+
+
+def export_rows(rows, path):
+    with open(path, "w", newline="", encoding="utf-8") as out:
+        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
+        writer.writeheader()
+        writer.writerows(rows)
*** End Patch
"""

DELIMITER_PATCH: Final = """*** Begin Patch
*** Update File: reports/export.py
@@
-def export_rows(rows, path):
+def export_rows(rows, path, delimiter=","):
     with open(path, "w", newline="", encoding="utf-8") as out:
-        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
+        writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter=delimiter)
*** Update File: reports/cli.py
@@ def main(argv=None):
     parser.add_argument("output")
+    parser.add_argument("--delimiter", default=",", help="field separator (default: comma)")
*** End Patch
"""

COMPACT_SUMMARY: Final = (
    "The user asked to port reports/export.py to the csv module. export_rows() now uses csv.DictWriter "
    "with newline='' and UTF-8; the header comes from the first row's keys. Nothing else was changed; "
    "tests were not run yet."
)

RENAME_PATCH: Final = """*** Begin Patch
*** Update File: cli/args.py
@@
-def parse_opts(argv: list[str]) -> Options:
+def parse_options(argv: list[str]) -> Options:
*** Update File: cli/main.py
@@ def main() -> int:
-    options = parse_opts(sys.argv[1:])
+    options = parse_options(sys.argv[1:])
*** Update File: tests/test_args.py
@@
-from cli.args import parse_opts
+from cli.args import parse_options
@@ def test_defaults() -> None:
-    assert parse_opts([]).verbose is False
+    assert parse_options([]).verbose is False
*** End Patch
"""

RENAME_HITS: Final = """cli/args.py:14:def parse_opts(argv: list[str]) -> Options:
cli/main.py:9:    options = parse_opts(sys.argv[1:])
tests/test_args.py:3:from cli.args import parse_opts
tests/test_args.py:7:    assert parse_opts([]).verbose is False
"""

VERSION_PATCH: Final = (
    """*** Begin Patch
*** Update File: pyproject.toml
@@
-version = "2.3.1"
+version = "2.4.0"
*** Update File: CHANGELOG.md
@@
 # Changelog
"""
    + " \n"
    + """+## 2.4.0 — 2026-02-11
+
+- `export --delimiter` chooses the field separator.
+- Slugs no longer end in a dash.
+
 ## 2.3.1 — 2026-01-20
*** End Patch
"""
)

ISSUE_212: Final = (
    '{"number":212,"title":"Export drops rows with embedded newlines","state":"open",'
    '"labels":["bug","export"],"body":"Rows whose note contains \\\\n are split in two when '
    'opened in Excel. Seen with 2.3.1."}'
)

REPO_LISTING: Final = """total 48
drwxr-xr-x  8 dev dev 4096 Feb 11 13:58 .
drwxr-xr-x 21 dev dev 4096 Feb  2 09:14 ..
drwxr-xr-x  8 dev dev 4096 Feb 11 13:58 .git
-rw-r--r--  1 dev dev  412 Jan 30 17:02 Cargo.toml
-rw-r--r--  1 dev dev 1893 Feb  9 11:45 README.md
-rw-r--r--  1 dev dev  622 Jan 30 17:02 build.rs
drwxr-xr-x  3 dev dev 4096 Feb  3 10:21 crates
drwxr-xr-x  2 dev dev 4096 Feb 11 13:58 scripts
"""

CARGO_AUDIT: Final = """    Fetching advisory database from `https://github.com/RustSec/advisory-db.git`
      Loaded 812 security advisories (from /home/dev/.cargo/advisory-db)
    Scanning Cargo.lock for vulnerabilities (214 crate dependencies)
Crate:     idna
Version:   0.5.0
Title:     `idna` accepts Punycode labels that do not produce any non-ASCII when decoded
ID:        RUSTSEC-2024-0421
Solution:  Upgrade to >=1.0.0
error: 1 vulnerability found!
"""

NIGHTLY_LOG: Final = """2026-02-11T23:30:02Z INFO  nightly: starting export of 14 reports
2026-02-11T23:30:09Z INFO  nightly: sales-weekly done (2.1 MB)
2026-02-11T23:31:44Z WARN  nightly: inventory: upstream returned 503, retrying (1/3)
2026-02-11T23:32:14Z WARN  nightly: inventory: upstream returned 503, retrying (2/3)
2026-02-11T23:32:44Z ERROR nightly: inventory: giving up after 3 attempts
2026-02-11T23:32:44Z ERROR nightly: 13 of 14 reports exported; exit status 1
"""
