"""One real finding per rule, collected from the golden reports (`docs/rule-examples.json`).

For each rule the representative is the finding of the golden case that illustrates it most plainly:
the fewest distinct rules in the case, then the fewest findings, then corpus order (tiny-agent, Rivumi,
Half-Pi, Claude Code, Codex, examples) and case name; inside the case, the first finding of the rule in
report order. For tiny-agent, Rivumi, Claude Code and Codex line-based inputs the offending line is rebuilt
from the case builder."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPORA = (
    "tests/golden/reports",
    "tests/golden/rivumi",
    "tests/golden/half-pi",
    "tests/golden/claude-code",
    "tests/golden/codex",
    "tests/golden/examples.report.json",
)
EXAMPLES_FILE = REPO / "docs" / "rule-examples.json"
_WIDTH = 90  # characters of an input line shown


def _golden_files(repo: Path) -> list[tuple[int, str, Path]]:
    found: list[tuple[int, str, Path]] = []
    for rank, corpus in enumerate(CORPORA):
        path = repo / corpus
        files = sorted(path.glob("*.json")) if path.is_dir() else [path] if path.is_file() else []
        found += [(rank, file.stem if path.is_dir() else "examples", file) for file in files]
    return found


def _shown(raw: bytes) -> str:
    """A line as text, with control characters, NEL, LS, PS and undecodable bytes escaped."""
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(
        (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        if ord(char) < 0x20 or char in "\x7f\x85\u2028\u2029"
        else char
        for char in text
    )


def excerpt(line: str, pointer: str | None) -> str:
    """At most _WIDTH characters of `line`, around the key the JSON pointer ends in (… marks a cut)."""
    if len(line) <= _WIDTH:
        return line
    at = None
    for token in reversed([part for part in (pointer or "").split("/") if part and not part.isdigit()]):
        if f'"{token}":' in line:
            at = line.index(f'"{token}":')
            break
    start = 0 if at is None else max(0, at - 25)
    end = min(len(line), start + _WIDTH)
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")


def _input_line(rank: int, case: str, location: dict[str, Any]) -> str | None:
    """The physical line `location` names, rebuilt from the case's builder (tiny-agent, Rivumi, Claude Code
    and Codex only)."""
    line = location.get("line")
    path = location.get("path")
    if not isinstance(line, int) or line < 1 or not isinstance(path, str) or not path.endswith(".jsonl"):
        return None
    if rank == 0:
        from tests.test_golden_reports import CASES as TINY_AGENT

        if case not in TINY_AGENT:
            return None
        data = TINY_AGENT[case]()
    elif rank in (1, 3, 4):
        from tests.formats.claude_code.cases import CASES as CLAUDE_CODE
        from tests.formats.codex.cases import CASES as CODEX
        from tests.formats.rivumi.cases import CASES as RIVUMI

        # each golden test builds its case below this folder of the run's root
        cases, folder = {1: (RIVUMI, "runs"), 3: (CLAUDE_CODE, "transcripts"), 4: (CODEX, "rollouts")}[rank]
        if case not in cases:
            return None
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            cases[case](root / folder)
            file = root / path
            if not file.is_file():
                return None
            data = file.read_bytes()
    else:
        return None
    lines = data.split(b"\n")
    if line > len(lines):
        return None
    return _shown(lines[line - 1])


def collect_examples(repo: Path = REPO) -> dict[str, Any]:
    """{"examples": {code: example}} for every rule some golden report under `repo` shows."""
    best: dict[str, tuple[tuple[int, int, int, str], dict[str, Any], int, str]] = {}
    for rank, case, file in _golden_files(repo):
        findings: list[dict[str, Any]] = json.loads(file.read_text(encoding="utf-8"))["findings"]
        rules = {item["rule"] for item in findings}
        for item in findings:
            key = (len(rules), len(findings), rank, case)
            code = item["rule"]
            if code not in best or key < best[code][0]:
                best[code] = (
                    key,
                    {**item, "golden": file.relative_to(repo).as_posix(), "case": case},
                    rank,
                    case,
                )
    examples: dict[str, Any] = {}
    for code in sorted(best):
        _, item, rank, case = best[code]
        location = {name: value for name, value in item["location"].items() if value is not None}
        full = _input_line(rank, case, location)
        line = None if full is None else excerpt(full, location.get("pointer"))
        examples[code] = {
            "rule": code,
            "name": item["name"],
            "severity": item["severity"],
            "message": item["message"],
            "location": location,
            "golden": item["golden"],
            "case": case,
            "input_line": line,
            "input_line_cut": line is not None and line != full,
        }
    return {
        "about": "One real finding per rule from the golden reports; generated by tests/test_rules.py "
        "(--update-golden), read by sessaudit.rules_doc for docs/rules.md.",
        "examples": examples,
    }


def examples_json() -> str:
    return json.dumps(collect_examples(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
