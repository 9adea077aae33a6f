"""Fuzz targets shared by tests/test_fuzz_*.py and bench/fuzz.py: seed inputs, mutations, the property.

The property (issue 9 item 1): whatever the bytes, `audit` returns a report that validates against
`schemas/report.v1.schema.json`, every finding is located in a file, and nothing raises."""

from __future__ import annotations

import atexit
import io
import json
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sessaudit.engine import AuditResult, audit
from sessaudit.framing import LineReader
from sessaudit.reporters.json import render_json
from sessaudit.resources import load_schema
from sessaudit.strictjson import LineProblem, decode_line

REPORT_SCHEMA = Draft202012Validator(load_schema("report.v1.schema.json"))
RIVUMI_FILES = ("events.jsonl", "session.json", "request.json", ".writer.lock")


def check_audit(paths: list[str]) -> AuditResult:
    """Audit `paths` and assert the property; returns the result for further checks."""
    result = audit(paths)
    document = json.loads(render_json(result.report))
    REPORT_SCHEMA.validate(document)
    for item in document["findings"]:
        assert item["location"]["path"], f"finding {item['rule']} has no location path"
    return result


def check_framing(data: bytes, chunk_size: int) -> None:
    """Framing and strict JSON alone: every committed line decodes or is a located LineProblem."""
    reader = LineReader(io.BytesIO(data), len(data), chunk_size=chunk_size)
    lines = list(reader)
    assert reader.repaired_length + reader.torn_tail_bytes == len(data)
    assert b"".join(line.data + b"\n" for line in lines) == data[: reader.repaired_length]
    for line in lines:
        try:
            decode_line(line.data, strip_bom=line.number == 1 and reader.has_bom)
        except LineProblem as problem:
            # a framing/JSON rule, or the nesting limit (SA011) that names itself
            assert problem.rule.startswith("SA1") or problem.rule == "SA011", problem


# --- mutations ------------------------------------------------------------------------------------------

INTERESTING_BYTES = [
    b"\n",
    b"\r\n",
    b"\x00",
    b"\xff",
    b'"',
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\xed\xa0\x80",
    b"\xef\xbb\xbf",
    b"\\ud800",
    b"9" * 40,
    b"-0",
    b"1e999",
    b"null",
]
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**53 + 1, 2**63, 2**64, 1.5, -0.0, 1e308]),
    st.text(max_size=20),
    st.sampled_from(["", "x" * 300, "\u2028", "\x00", "../../etc/passwd", "sha256:" + "0" * 64]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


@dataclass(frozen=True, slots=True)
class ByteEdit:
    kind: str  # flip | insert | delete | truncate | overwrite
    position: int
    payload: bytes
    amount: int

    def apply(self, data: bytes) -> bytes:
        at = self.position % (len(data) + 1)
        if self.kind == "flip" and data:
            at %= len(data)
            return data[:at] + bytes([data[at] ^ (1 << (self.amount % 8))]) + data[at + 1 :]
        if self.kind == "insert":
            return data[:at] + self.payload + data[at:]
        if self.kind == "delete":
            return data[:at] + data[at + 1 + self.amount % 64 :]
        if self.kind == "truncate":
            return data[:at]
        if self.kind == "overwrite":
            return data[:at] + self.payload + data[at + len(self.payload) :]
        return data


BYTE_EDITS = st.builds(
    ByteEdit,
    kind=st.sampled_from(["flip", "insert", "delete", "truncate", "overwrite"]),
    position=st.integers(min_value=0, max_value=2**24),
    payload=st.one_of(st.sampled_from(INTERESTING_BYTES), st.binary(min_size=1, max_size=8)),
    amount=st.integers(min_value=0, max_value=255),
)


@dataclass(frozen=True, slots=True)
class LineEdit:
    kind: str  # drop | duplicate | swap | json
    line: int
    other: int
    choice: int
    value: Any

    def apply(self, data: bytes) -> bytes:
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        index, other = self.line % len(lines), self.other % len(lines)
        if self.kind == "drop":
            del lines[index]
        elif self.kind == "duplicate":
            lines.insert(other, lines[index])
        elif self.kind == "swap":
            lines[index], lines[other] = lines[other], lines[index]
        elif self.kind == "json":
            lines[index] = _replace_in_json(lines[index], self.choice, self.value)
        return b"".join(lines)


def _replace_in_json(line: bytes, choice: int, value: Any) -> bytes:
    """Replace (or delete, when `value` is the string "<delete>") one node of the line's JSON value."""
    try:
        document = json.loads(line)
    except ValueError:
        return line
    places: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, child in node.items():
                places.append((node, key))
                walk(child)
        elif isinstance(node, list):
            for position, child in enumerate(node):
                places.append((node, position))
                walk(child)

    walk(document)
    if not places:
        document = value
    else:
        container, key = places[choice % len(places)]
        if value == "<delete>":
            del container[key]
        else:
            container[key] = value
    ending = b"\n" if line.endswith(b"\n") else b""
    return (
        json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        + ending
    )


LINE_EDITS = st.builds(
    LineEdit,
    kind=st.sampled_from(["drop", "duplicate", "swap", "json", "json", "json"]),
    line=st.integers(min_value=0, max_value=10_000),
    other=st.integers(min_value=0, max_value=10_000),
    choice=st.integers(min_value=0, max_value=10_000),
    value=st.one_of(st.just("<delete>"), JSON_VALUES),
)
JSONL_EDITS = st.lists(st.one_of(BYTE_EDITS, LINE_EDITS), min_size=1, max_size=4)
RAW_EDITS = st.lists(BYTE_EDITS, min_size=1, max_size=4)


def mutate(data: bytes, edits: list[Any]) -> bytes:
    for edit in edits:
        data = edit.apply(data)
    return data


@dataclass(frozen=True, slots=True)
class PageEdit:
    """A page-level SQLite mutation: `kind` on page `page` at `offset` inside it."""

    kind: str  # flip | zero-page | overwrite | copy-page | truncate
    page: int
    offset: int
    payload: bytes
    other: int

    def apply(self, data: bytes) -> bytes:
        page_size = _page_size(data)
        pages = max(1, len(data) // page_size)
        start = (self.page % pages) * page_size
        at = start + self.offset % page_size
        if self.kind == "flip" and at < len(data):
            return data[:at] + bytes([data[at] ^ (1 << (self.other % 8))]) + data[at + 1 :]
        if self.kind == "zero-page":
            return data[:start] + bytes(min(page_size, len(data) - start)) + data[start + page_size :]
        if self.kind == "overwrite":
            return data[:at] + self.payload + data[at + len(self.payload) :]
        if self.kind == "copy-page":
            source = (self.other % pages) * page_size
            return data[:start] + data[source : source + page_size] + data[start + page_size :]
        if self.kind == "truncate":
            return data[: start + (self.offset % (page_size + 1))]
        return data


def _page_size(data: bytes) -> int:
    if data.startswith(b"SQLite format 3\x00") and len(data) >= 18:
        size = int.from_bytes(data[16:18], "big")
        return 65536 if size == 1 else max(size, 512)
    return 4096


PAGE_EDITS = st.lists(
    st.builds(
        PageEdit,
        kind=st.sampled_from(["flip", "flip", "zero-page", "overwrite", "copy-page", "truncate"]),
        page=st.integers(min_value=0, max_value=10_000),
        offset=st.integers(min_value=0, max_value=65_535),
        payload=st.one_of(st.binary(min_size=1, max_size=8), st.sampled_from([b"\xff" * 4, b"\x00" * 4])),
        other=st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=3,
)


# --- seed inputs, built once per process by the project's own builders -------------------------------


@cache
def _workspace() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="sessaudit-fuzz-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@cache
def tiny_agent_seeds() -> dict[str, bytes]:
    from tests.formats.tiny_agent.damaged import legacy_v1
    from tests.formats.tiny_agent.scenarios import LEGAL
    from tests.sessions import clean_session, killed_during_deploy

    seeds = {name: scenario()[0] for name, scenario in LEGAL.items()}
    seeds["legacy-v1"] = legacy_v1()[0]
    seeds["clean"] = clean_session()
    seeds["killed-during-deploy"] = killed_during_deploy()
    return dict(sorted(seeds.items()))


RIVUMI_SEEDS = ("clean", "killed-after-tool-started", "pending-approval", "fork-run", "torn-last-line")


@cache
def rivumi_template(name: str) -> Path:
    from tests.formats.rivumi.cases import CASES

    return CASES[name](_workspace() / "rivumi" / name)


HALF_PI_SEEDS = ("crash-image-wal", "after-restart-recovery", "quiet", "tool-ran-unanswered")


@cache
def half_pi_template(name: str) -> Path:
    from tests.formats.half_pi.cases import CASES

    return CASES[name](_workspace() / "half-pi" / name)


# --- one execution per target ----------------------------------------------------------------------------


def run_tiny_agent(seed: str, edits: list[Any]) -> None:
    data = mutate(tiny_agent_seeds()[seed], edits)
    with tempfile.TemporaryDirectory(prefix="sessaudit-fuzz-ta-") as folder:
        path = Path(folder) / "session.jsonl"
        path.write_bytes(data)
        check_audit([str(path)])


def run_arbitrary_file(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory(prefix="sessaudit-fuzz-raw-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        check_audit([str(path)])
        check_audit([folder])  # walked, not named


def run_rivumi(seed: str, target: str, edits: list[Any], remove: bool) -> None:
    template = rivumi_template(seed)
    with tempfile.TemporaryDirectory(prefix="sessaudit-fuzz-rv-") as folder:
        run_dir = Path(folder) / template.name
        shutil.copytree(template, run_dir, symlinks=True)
        path = run_dir / target
        if remove:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(mutate(path.read_bytes() if path.exists() else b"", edits))
        check_audit([str(run_dir)])


def run_half_pi(seed: str, edits: list[PageEdit], wal_edits: list[Any] | None) -> None:
    template = half_pi_template(seed)
    with tempfile.TemporaryDirectory(prefix="sessaudit-fuzz-hp-") as folder:
        home = Path(folder) / "home"
        shutil.copytree(template.parent.parent, home, symlinks=True)
        database = home / template.relative_to(template.parent.parent)
        database.write_bytes(mutate(database.read_bytes(), edits))
        wal = Path(f"{database}-wal")
        if wal_edits is not None and wal.exists():
            wal.write_bytes(mutate(wal.read_bytes(), wal_edits))
        check_audit([str(database)])


def fuzz_settings(examples: int) -> settings:
    """CI settings: a fixed number of examples, derandomized (the same inputs on every run), no database."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def run_rivumi_bytes(template: Path, target: str, data: bytes) -> None:
    """A copy of the run directory `template` whose `target` file holds `data`, audited."""
    with tempfile.TemporaryDirectory(prefix="sessaudit-fuzz-rv-") as folder:
        run_dir = Path(folder) / template.name
        shutil.copytree(template, run_dir, symlinks=True)
        (run_dir / target).write_bytes(data)
        check_audit([str(run_dir)])
