"""Fuzz targets shared by tests/test_fuzz_*.py and bench/fuzz.py: seed inputs, mutations, the property.

The property (issue 9 item 1): whatever the bytes, `audit` returns a report that validates against
`schemas/report.v1.schema.json`, every finding is located in a file, and nothing raises.

The tiny-agent fast path's property (issue 21, `check_fast_path`): valid sessions varied so that they stay
valid, and flipped to each kind of corruption, get the exact pass's answer from the fast path or a doubt,
never another answer, never an acceptance of a corrupt file, never a doubt of a valid one."""

from __future__ import annotations

import atexit
import copy
import hashlib
import io
import json
import math
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from sessaudit.engine import AuditResult, audit
from sessaudit.formats.tiny_agent.v2 import fast
from sessaudit.formats.tiny_agent.v2.verification import _Verification
from sessaudit.framing import LineReader
from sessaudit.plugin import DEFAULT_OPTIONS, SourceOutcome
from sessaudit.reporters.json import render_json
from sessaudit.resources import load_schema
from sessaudit.strictjson import LineProblem, decode_line
from sessaudit.verdicts import Severity

T = TypeVar("T")
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


# --- the tiny-agent fast path (issue 21): valid-preserving variations and targeted corruptions ---------
#
# A seed session is decoded into its header and transactions (`Decoded`), varied in ways that keep it valid
# (`Variation`), optionally flipped to one kind of corruption (`Corruption`), and written back, either as
# the builder writes JSON or in another spelling of the same values (`LineStyle`). Every input then goes
# through `check_fast_path`: the exact pass answers, `fast.differential_check` compares the fast path with
# it, and the recorded expectation (accepted, corrupt or unknown) is asserted on the exact pass's answer.

FAST_PATH_NAME = "fast-path.jsonl"  # the path the checks name; nothing is written to disk
MAX_SAFE = 2**53 - 1
BOM = b"\xef\xbb\xbf"
# JavaScript's String.prototype.trim() whitespace: a final answer needs a character outside it.
JS_TRIMMED = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | frozenset(
    chr(code) for code in range(0x2000, 0x200B)
)


@dataclass(frozen=True, slots=True)
class FastCheck:
    """What one input gave: the exact pass's outcome, and the fast path's (None when it doubted)."""

    exact: SourceOutcome
    fast: SourceOutcome | None

    @property
    def rules(self) -> list[str]:
        """The exact pass's rule codes, sorted, each once."""
        return sorted({item.rule for item in self.exact.findings})

    @property
    def errors(self) -> list[str]:
        """The rule codes of its error findings: the file is corrupt when there is one."""
        return sorted({item.rule for item in self.exact.findings if item.severity is Severity.ERROR})


def check_fast_path(data: bytes, *, accepted: bool | None = None) -> FastCheck:
    """The fast path's property on one input (issue 21): the exact pass verifies it, the differential check
    compares the fast path with that answer, and a fast path that answers at all answers the same and only
    for a file without an error. `accepted` is what the input was made to be: True (a valid-preserving
    variation: no error, and the fast path must prove it), False (a corruption: an error, and the fast path
    must doubt it) or None (no expectation)."""
    size = len(data)
    name = FAST_PATH_NAME
    exact = _Verification(name, name, io.BytesIO(data), size, DEFAULT_OPTIONS, None).run()
    fast.differential_check(exact, name, name, io.BytesIO(data), size, DEFAULT_OPTIONS)
    proven = fast.prove_accepted(name, name, io.BytesIO(data), size, DEFAULT_OPTIONS)
    result = FastCheck(exact, proven)
    if proven is not None:
        assert proven == exact, "the fast path accepted with another outcome than the exact pass"
        assert not result.errors, f"the fast path accepted a file the exact pass finds {result.errors} in"
    if accepted is True:
        assert not result.errors, f"a valid-preserving input has errors: {result.errors}"
        assert proven is not None, "the fast path doubted a valid input"
    elif accepted is False:
        assert result.errors, f"a corrupted input has no error finding: {result.rules}"
        assert proven is None, "the fast path accepted a corrupted input"
    return result


# --- seeds: the builder's legal scenarios and longer sessions -----------------------------------------


def _long_mixed() -> bytes:
    """Many runs in one session: multi-call tool steps, tool usage, a retry, a failed step, aborts in both
    phases, every synthetic result, compactions, a configuration change, a late result, and a crash at the
    end with a tool of unknown outcome."""
    from sessaudit.formats.tiny_agent.build.session import Call, Configuration, SessionBuilder, TokenUsage
    from tests.formats.tiny_agent.scenarios import add_model_abort, add_tool_abort

    builder = SessionBuilder(seed=101)
    builder.exchange("Grüße! Was macht total()? 👋", "Es summiert Preise.\u2028Mengen fehlen.")
    run = builder.start_run("Find and fix the cart bug.")
    calls = [
        Call("read", {"path": "src/cart.js"}),
        Call("grep", {"pattern": "qty"}),
        Call("bash", {"command": "npm test"}),
    ]
    answer = builder.assistant(builder.step(run), "Looking.", calls=calls)
    for index, text in enumerate(("export function total(items) {…}", "src/cart.js:3: qty", "1 failing")):
        intent = builder.start_tool(answer, index)
        usage = TokenUsage(input=3 + index, output=1)
        builder.tool_result(intent, text, outcome="error" if index == 2 else "success", usage=usage)
    edit = Call("edit", {"path": "src/cart.js", "old": "price", "new": "price * qty"})
    answer = builder.assistant(builder.step(run), None, calls=[edit, Call("bash", {"command": "npm test"})])
    builder.tool_result(builder.start_tool(answer, 0), "edited")
    builder.tool_result(builder.start_tool(answer, 1), "all passing", usage=TokenUsage(cache_write=7))
    builder.assistant(builder.step(run), "Fixed: total() multiplies by qty.")
    builder.finish(run)
    run = builder.start_run("Explain the fix.")
    builder.assistant(builder.retry(builder.step(run)), "price * qty per line item.")
    builder.finish(run)
    run = builder.start_run("Summarise.")
    builder.step_failed(builder.step(run))
    builder.finish(run, "failed")
    builder.compact("Cart bug found and fixed.", keep_last=builder.retainable(2))
    add_tool_abort(builder)
    run = builder.start_run("Lint and read.")
    calls = [Call("lint", {}), Call("read", raw_arguments='{"path": "src/ca'), Call("read", {"path": "a"})]
    answer = builder.assistant(builder.step(run), "Checking.", calls=calls)
    with builder.transaction():
        builder.pre_execution(answer, 0, "unknownTool")
        builder.pre_execution(answer, 1, "invalidArguments")
    builder.tool_result(builder.start_tool(answer, 2), "# Shop")
    builder.assistant(builder.step(run), "Nothing to lint here.")
    builder.finish(run)
    entry = builder.user("And the tests?")
    run = builder.start_run(input_entry_id=entry)
    builder.assistant(builder.step(run), "They pass now.")
    builder.finish(run)
    run = builder.start_run("Write the whole module.")
    calls = [Call("write", raw_arguments='{"path":"src/cart.js","content":"export'), Call("bash", {"c": 1})]
    answer = builder.assistant(builder.step(run), None, calls=calls, stop_reason="length")
    with builder.transaction():
        builder.pre_execution(answer, 0, "truncated")
        builder.pre_execution(answer, 1, "truncated")
    builder.finish(run)
    builder.compact("Everything so far.", keep_last=0)
    add_model_abort(builder)
    builder.configure(Configuration(model="deepseek/deepseek-v4-pro", tools=("read", "bash")))
    run = builder.start_run("Deploy it.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    intent = builder.start_tool(answer, 0)
    builder.finish(run, "failed", error=("tool_error", "deploy runner crashed"))
    builder.tool_result(intent, "deployed", duration_ms=60000)
    run = builder.start_run("Check the server, then restart it.")
    calls = [Call("read", {"path": "/var/log/app.log"}), Call("bash", {"command": "systemctl restart app"})]
    answer = builder.assistant(builder.step(run), "Checking first.", calls=calls)
    builder.tool_result(builder.start_tool(answer, 0), "ok", usage=TokenUsage(input=2, output=2))
    builder.start_tool(answer, 1)  # the crash: its outcome is unknown
    return builder.data()


def _long_torn() -> bytes:
    """Tool runs, a compaction and a final assistant line torn mid-line by a crash."""
    from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder

    builder = SessionBuilder(seed=102)
    for number in range(3):
        run = builder.start_run(f"Step {number}: read file {number}.")
        answer = builder.assistant(
            builder.step(run), None, calls=[Call("read", {"path": f"f{number}"}), Call("grep", {"p": "x"})]
        )
        builder.tool_result(builder.start_tool(answer, 0), f"content {number}")
        builder.tool_result(builder.start_tool(answer, 1), "")
        builder.assistant(builder.step(run), f"File {number} read.")
        builder.finish(run)
    builder.compact("Three files read.", keep_last=builder.retainable(3))
    run = builder.start_run("And now?")
    step = builder.step(run)
    builder.tear_next(57)
    builder.assistant(step, "Nothing more.")
    return builder.data()


def _long_sorted() -> bytes:
    """Sorted keys (as Go writes), a non-ASCII cwd, an open attempt 2 after a tool run, and usage."""
    from sessaudit.formats.tiny_agent.build.session import Call, KeyOrder, SessionBuilder

    builder = SessionBuilder(seed=103, key_order=KeyOrder.SORTED, cwd="/home/dév/shop 🛒")
    builder.exchange("Hi.", "Hello.")
    run = builder.start_run("Show the README.")
    answer = builder.assistant(builder.step(run), "", calls=[Call("read", {"path": "README.md"})])
    builder.tool_result(builder.start_tool(answer, 0), '# Shop\n\tTabs and "quotes" and \\.')
    builder.retry(builder.step(run))
    return builder.data()


def _long_compacting() -> bytes:
    """Exchanges, then a compaction whose step is open when the file ends."""
    from sessaudit.formats.tiny_agent.build.session import SessionBuilder

    builder = SessionBuilder(seed=104)
    for number in range(4):
        builder.exchange(f"Question {number}?", f"Answer {number}.")
    builder.step(builder.start_compaction(keep_last=2))
    return builder.data()


def _many_runs() -> bytes:
    """Twelve tool runs, each with two calls and tool usage: more than the notes' cap of one rule."""
    from sessaudit.formats.tiny_agent.build.session import Call, SessionBuilder, TokenUsage

    builder = SessionBuilder(seed=105)
    for number in range(12):
        run = builder.start_run(f"Task {number}.")
        calls = [Call("read", {"path": f"src/{number}.js"}), Call("bash", {"command": f"test {number}"})]
        answer = builder.assistant(builder.step(run), None, calls=calls)
        builder.tool_result(builder.start_tool(answer, 0), "ok", usage=TokenUsage(input=number))
        builder.tool_result(builder.start_tool(answer, 1), "passed", outcome="error")
        builder.assistant(builder.step(run), f"Task {number} done.")
        builder.finish(run)
    return builder.data()


LONG_SEED = "long-mixed"  # the seed with a site for every kind of corruption
# seeds with tool intents, where the "numbers" variation has something to change
TOOL_SEEDS = (LONG_SEED, "long-sorted", "many-runs", "pending-safe-tool", "tools-completed", "abort-tools")


@cache
def fast_path_seeds() -> dict[str, bytes]:
    """The v2 seeds of `tiny_agent_seeds` (not the v1 one: the fast path is v2's) and the longer ones."""
    seeds = {name: data for name, data in tiny_agent_seeds().items() if name != "legacy-v1"}
    seeds[LONG_SEED] = _long_mixed()
    seeds["long-torn"] = _long_torn()
    seeds["long-sorted"] = _long_sorted()
    seeds["long-compacting"] = _long_compacting()
    seeds["many-runs"] = _many_runs()
    return dict(sorted(seeds.items()))


# --- the decoded session and how it is written ---------------------------------------------------------


@dataclass(slots=True)
class Transaction:
    """One line after the header: its facts, and whether it is written as an array."""

    facts: list[dict[str, Any]]
    array: bool


@dataclass(frozen=True, slots=True)
class LineStyle:
    """Another spelling of one line's values: key order (keep, sorted, reversed or shuffled), whitespace
    between tokens, \\u escapes in strings, and integer fields written as integral floats (`floats` names
    them; `float_form` picks 3.0, 3e0, 3E+0, 3.000, 3.0e0 or 30e-1). `seed` drives the random choices."""

    order: str = "keep"
    spacing: bool = False
    escapes: bool = False
    floats: frozenset[str] = frozenset()
    float_form: int = 0
    seed: int = 0


@dataclass(slots=True)
class Decoded:
    """A session as values: the BOM, the header, the transactions and the torn tail, with the style of
    each physical line (0 is the header) and a final cut (bytes kept after the header, None: all)."""

    bom: bytes
    header: dict[str, Any]
    lines: list[Transaction]
    tail: bytes
    styles: dict[int, LineStyle]
    cut: int | None = None

    def facts(self) -> list[dict[str, Any]]:
        return [fact for line in self.lines for fact in line.facts]


def decode_session(data: bytes) -> Decoded:
    """The values of a builder-made session (valid JSON on every committed line)."""
    bom = BOM if data.startswith(BOM) else b""
    body = data[len(bom) :]
    end = body.rfind(b"\n")
    rows = body[:end].split(b"\n")
    lines = []
    for row in rows[1:]:
        value = json.loads(row)
        lines.append(Transaction(value if isinstance(value, list) else [value], isinstance(value, list)))
    return Decoded(bom, json.loads(rows[0]), lines, body[end + 1 :], {})


def encode_session(decoded: Decoded) -> bytes:
    """The bytes of a decoded session, each line in its style (the builder's spelling by default)."""
    out = [decoded.bom]
    for index in range(len(decoded.lines) + 1):
        writer = _Writer(decoded.styles.get(index, LineStyle()))
        if index == 0:
            text = writer.line(decoded.header, "header")
        else:
            line = decoded.lines[index - 1]
            text = writer.line(line.facts if line.array else line.facts[0], "fact")
        out.append(text.encode("utf-8") + b"\n")
    out.append(decoded.tail)
    data = b"".join(out)
    if decoded.cut is not None:
        header_end = data.index(b"\n") + 1
        data = data[: header_end + decoded.cut % (len(data) - header_end + 1)]
    return data


# the integer fields tiny-agent reads as numbers, by (the object's context, key): `floats` may name them
FLOAT_FIELDS = frozenset(
    {
        ("fact", "seq"),
        ("fact", "timestamp"),
        ("header", "createdAt"),
        ("header", "version"),
        ("record", "toolIndex"),
        ("entry", "toolIndex"),
        ("record", "attempt"),
        ("usage", "input"),
        ("usage", "output"),
        ("usage", "cacheRead"),
        ("usage", "cacheWrite"),
    }
)
FLOAT_NAMES = tuple(sorted({name for _, name in FLOAT_FIELDS}))
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def integral_float(number: int, form: int) -> str:
    """An integral float token for a non-negative integer: one of six spellings of the same value."""
    digits = str(number)
    scientific = f"{digits[0]}.{digits[1:] or '0'}e{len(digits) - 1}"
    shifted = f"{digits}0e-1" if number else "0e-1"
    return (f"{digits}.0", f"{digits}e0", f"{digits}E+0", f"{digits}.000", scientific, shifted)[form % 6]


class _Writer:
    """JSON text of one line in a `LineStyle`; with the default style, exactly the builder's bytes."""

    def __init__(self, style: LineStyle) -> None:
        self.style = style
        self.random = random.Random(style.seed)

    def line(self, value: Any, context: str) -> str:
        lead = self._space()
        trail = self.random.choice(("", " ", "\t", " \t")) if self.style.spacing else ""
        if isinstance(value, list):
            return lead + self._array(value, context) + trail
        return lead + self._value(value, context, "") + trail

    def _space(self) -> str:
        if not self.style.spacing:
            return ""
        return self.random.choice(("", "", " ", "\t", "  ", "\r", " \t\r "))

    def _value(self, value: Any, parent: str, key: str) -> str:
        if isinstance(value, dict):
            return self._object(value, key or parent)
        if isinstance(value, list):
            return self._array(value, key)
        if isinstance(value, str):
            return self._string(value)
        if value is None or isinstance(value, bool):
            return json.dumps(value)
        if isinstance(value, int):
            if (parent, key) in FLOAT_FIELDS and key in self.style.floats and value >= 0:
                return integral_float(value, self.style.float_form)
            return str(value)
        assert isinstance(value, float) and math.isfinite(value), value
        return repr(value)

    def _object(self, value: dict[str, Any], context: str) -> str:
        keys = list(value)
        order = self.style.order
        if order == "sorted":
            keys.sort()
        elif order == "reversed":
            keys.reverse()
        elif order == "shuffled":
            self.random.shuffle(keys)
        space = self._space
        items = [
            space()
            + self._string(key)
            + space()
            + ":"
            + space()
            + self._value(value[key], context, key)
            + space()
            for key in keys
        ]
        return "{" + (",".join(items) if items else space()) + "}"

    def _array(self, value: list[Any], context: str) -> str:
        space = self._space
        items = [space() + self._value(item, context, "") + space() for item in value]
        return "[" + (",".join(items) if items else space()) + "]"

    def _string(self, text: str) -> str:
        out = ['"']
        escapes = self.style.escapes
        for character in text:
            if escapes and self.random.random() < 0.3:
                out.append(self._escaped(character))
            elif character in _SHORT_ESCAPES:
                out.append(_SHORT_ESCAPES[character])
            elif character < " ":
                out.append(f"\\u{ord(character):04x}")
            else:
                out.append(character)
        out.append('"')
        return "".join(out)

    def _escaped(self, character: str) -> str:
        """The character as a \\u escape (a surrogate pair beyond the BMP), or `\\/` for a slash."""
        if character == "/" and self.random.random() < 0.5:
            return "\\/"
        hexadecimal = "{:04x}" if self.random.random() < 0.5 else "{:04X}"
        code = ord(character)
        if code > 0xFFFF:
            code -= 0x10000
            return (
                "\\u"
                + hexadecimal.format(0xD800 + (code >> 10))
                + "\\u"
                + hexadecimal.format(0xDC00 + (code & 0x3FF))
            )
        return "\\u" + hexadecimal.format(code)


def canonical_text(value: Any) -> str:
    """tiny-agent's canonical JSON (spec §11) of messages, written independently of the verifier's: keys
    sorted by UTF-16 code units, only \\\\ \\" \\b \\t \\n \\f \\r and other C0 controls escaped."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: item[0].encode("utf-16-be"))
        return "{" + ",".join(canonical_text(key) + ":" + canonical_text(child) for key, child in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical_text(child) for child in value) + "]"
    if isinstance(value, str):
        return (
            '"'
            + "".join(
                _SHORT_ESCAPES.get(character)
                or (f"\\u{ord(character):04x}" if character < " " else character)
                for character in value
            )
            + '"'
        )
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    assert isinstance(value, int), value
    return str(value)


def fix_compactions(decoded: Decoded) -> None:
    """Make every compaction agree with the messages as they now are: its sourceDigest over the messages
    it partitions, and its retained tail's copies of them (spec §8.6, §11)."""
    messages: dict[str, Any] = {}
    for fact in decoded.facts():
        kind = fact_type(fact)
        if kind in ("user", "assistant", "started-result", "pre-execution"):
            messages[fact["id"]] = fact["entry"]["message"]
        elif kind == "compactionStarted":
            record = fact["record"]
            items = [
                {"sourceEntryId": entry_id, "message": messages[entry_id]}
                for entry_id in record["compactedEntryIds"] + record["retainedEntryIds"]
            ]
            digest = hashlib.sha256(canonical_text(items).encode("utf-8")).hexdigest()
            record["sourceDigest"] = "sha256:" + digest
        elif kind == "compaction":
            for item in fact["entry"]["retainedTail"]:
                item["message"] = copy.deepcopy(messages[item["sourceEntryId"]])


def fact_type(fact: Any) -> str:
    """user, assistant, started-result, pre-execution, compaction, a record type, usage (or other)."""
    if not isinstance(fact, dict):
        return "other"
    kind = fact.get("kind")
    if kind == "entry" and isinstance(entry := fact.get("entry"), dict):
        if entry.get("type") == "compaction":
            return "compaction"
        message = entry.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            return (
                "pre-execution" if "toolIndex" in entry or "assistantEntryId" in entry else "started-result"
            )
        return str(role)
    if kind == "record" and isinstance(record := fact.get("record"), dict):
        return str(record.get("type"))
    return "usage" if kind == "usage" else "other"


def _of_type(decoded: Decoded, *kinds: str) -> list[dict[str, Any]]:
    return [fact for fact in decoded.facts() if fact_type(fact) in kinds]


def _pick(items: list[T], index: int) -> T | None:
    """The index-th item, counted round the list (None for an empty one)."""
    return items[index % len(items)] if items else None


def _one(items: list[T], index: int) -> T:
    """The index-th item, counted round a list that is not empty."""
    return items[index % len(items)]


def _calls(decoded: Decoded) -> list[tuple[dict[str, Any], int]]:
    """Every tool call: (its assistant entry fact, its index)."""
    return [
        (fact, index)
        for fact in _of_type(decoded, "assistant")
        for index in range(len(fact["entry"]["message"].get("tool_calls") or ()))
    ]


def _assistants(decoded: Decoded) -> dict[str, dict[str, Any]]:
    return {fact["id"]: fact for fact in _of_type(decoded, "assistant")}


def _intents_of(decoded: Decoded, assistant_id: str, index: int) -> list[dict[str, Any]]:
    return [
        fact
        for fact in _of_type(decoded, "toolStarted")
        if fact["record"]["assistantEntryId"] == assistant_id and fact["record"]["toolIndex"] == index
    ]


# --- valid-preserving variations -------------------------------------------------------------------------

# Texts for contents, summaries and identities: non-ASCII, emoji, U+2028, quotes and backslashes (escapes),
# control characters, a BOM, a combining mark, and text that looks like an escape or a tag.
SPECIAL_TEXTS = (
    "é",
    "日本語のテキスト",
    "😀🎉 👩‍💻",
    "\u2028",
    "line\u2028separated\u2029paragraph",
    "a\nb\r\nc",
    "tab\there",
    '"quoted"',
    "back\\slash \\n \\u0041",
    "\x00\x01\x1f\x7f",
    "\ufeffBOM",
    "e\u0301",
    "A\u00a0B",
    "</script><!--",
    "/slashes/",
    "x" * 300,
)
USAGE_COUNTERS = ("input", "output", "cacheRead", "cacheWrite")


def _nested(depth: int) -> Any:
    """[[…[1]…]], `depth` arrays deep."""
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


# The intent's `arguments` value of the "numbers" variation; the call's text spells that number, a
# neighbour of it or another value (`number_tokens`), so that rounding differences between JSON readers
# show (2^64 + 1 and -2^63 - 1 once hid SA415 on the fast path): the two paths must agree on SA415. A
# value nested 200 deep goes through the planner's copy of a pending intent's arguments (deeper ones
# would outgrow this writer's recursion; tests/test_fuzz_fast_path.py holds one 500 deep).
ARGUMENT_VALUES: tuple[Any, ...] = (
    0,
    1,
    -1,
    1.0,
    -0.0,
    1.5,
    0.1,
    2**53,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    -(2**63) + 1,
    -(2**63),
    10**23,
    1e23,
    1e300,
    True,
    "1",
    None,
    _nested(200),
)
OTHER_TOKENS = ("true", '"1"', "null", "NaN", "1e400", "-0", "[1]", "{}")


def number_tokens(value: Any) -> tuple[str, ...]:
    """JSON spellings of `value` and of its neighbours, then a few tokens of other values."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return (json.dumps(value), *OTHER_TOKENS)
    if isinstance(value, float):
        spellings = [
            repr(value),
            repr(value) + "0" if "e" not in repr(value) else repr(value),
            f"{value:.17e}",
        ]
        if value.is_integer():
            spellings += [str(int(value)), str(int(value) + 1)]
        return (*spellings, *OTHER_TOKENS)
    return (
        str(value),
        str(value + 1),
        str(value - 1),
        f"{value}.0",
        f"{value}e0",
        repr(float(value)),
        *OTHER_TOKENS,
    )


@dataclass(frozen=True, slots=True)
class Variation:
    """One change that keeps a valid session valid (the kinds are VARIATION_KINDS); `site` picks where,
    `choice` and `number` how, `text` what text it writes."""

    kind: str
    site: int
    choice: int
    number: int
    text: str

    @property
    def phase(self) -> int:
        return VARIATION_KINDS[self.kind][0]

    @property
    def accepted(self) -> bool:
        """Whether the file stays accepted (no error): the expectation the property asserts."""
        return VARIATION_KINDS[self.kind][1]

    def apply(self, decoded: Decoded) -> None:
        VARIATION_KINDS[self.kind][2](decoded, self)


def _visible(text: str) -> str:
    """The text, with a letter in front when JavaScript's trim() would leave nothing of it."""
    return text if any(character not in JS_TRIMMED for character in text) else "x" + text


def _vary_content(decoded: Decoded, variation: Variation) -> None:
    """Another content for a user, assistant or executed tool message (synthetic texts are fixed)."""
    sites = [
        fact
        for fact in _of_type(decoded, "user", "assistant", "started-result")
        if fact_type(fact) != "started-result" or fact["entry"]["result"]["type"] != "synthetic"
    ]
    fact = _pick(sites, variation.site)
    if fact is None:
        return
    message = fact["entry"]["message"]
    if message["role"] == "assistant" and message.get("tool_calls") and variation.choice % 4 == 0:
        message["content"] = None if variation.choice % 8 == 0 else ""  # a tool step needs no text
    elif message["role"] == "assistant":
        message["content"] = _visible(variation.text)  # a final answer needs non-blank content
    elif message["role"] == "user":
        message["content"] = variation.text or "?"
    else:
        message["content"] = variation.text


def _vary_summary(decoded: Decoded, variation: Variation) -> None:
    fact = _pick(_of_type(decoded, "compaction"), variation.site)
    if fact is not None:
        fact["entry"]["summary"] = variation.text


def _vary_error_text(decoded: Decoded, variation: Variation) -> None:
    sites = [
        fact for fact in _of_type(decoded, "stepFailed", "operationFinished") if "error" in fact["record"]
    ]
    fact = _pick(sites, variation.site)
    if fact is not None:
        fact["record"]["error"][("code", "message")[variation.choice % 2]] = variation.text or "x"


def _vary_timestamps(decoded: Decoded, variation: Variation) -> None:
    """Move one transaction's timestamps: backwards is SA403, before createdAt SA404, before an id's time
    SA401; tiny-agent checks none of them."""
    line = _pick(decoded.lines, variation.site)
    if line is not None:
        for fact in line.facts:
            fact["timestamp"] = max(0, min(MAX_SAFE, fact["timestamp"] + variation.number))


def _vary_created_at(decoded: Decoded, variation: Variation) -> None:
    decoded.header["createdAt"] = max(0, min(MAX_SAFE, decoded.header["createdAt"] + variation.number))


def _vary_usage(decoded: Decoded, variation: Variation) -> None:
    fact = _pick(_of_type(decoded, "usage"), variation.site)
    if fact is not None:
        counter = USAGE_COUNTERS[variation.choice % 4]
        fact["usage"][counter] = abs(variation.number) % (2**40 + 1)


def _vary_usage_boundary(decoded: Decoded, variation: Variation) -> None:
    """The last usage fact brings one session total to exactly 2^53−1: still accepted."""
    facts = _of_type(decoded, "usage")
    if facts:
        counter = USAGE_COUNTERS[variation.choice % 4]
        others = sum(fact["usage"][counter] for fact in facts[:-1])
        facts[-1]["usage"][counter] = MAX_SAFE - others


def _arguments_text(text: str, variation: Variation) -> str:
    """Another arguments text for a call: the same object spelled otherwise, or other (malformed) text."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # an earlier variation's malformed or deeply nested text
        parsed = {}
    if not isinstance(parsed, dict):
        parsed = {}
    forms = (
        lambda: json.dumps(parsed, indent=2),
        lambda: json.dumps(dict(reversed(list(parsed.items())))),
        lambda: json.dumps(parsed, ensure_ascii=True, separators=(", ", ": ")),
        lambda: " " + json.dumps(parsed) + "\t\n",
        lambda: "{}",
        lambda: "",
        lambda: "null",
        lambda: "[1]",
        lambda: '{"a":',
        lambda: variation.text,
        lambda: json.dumps({**parsed, "extra": variation.text}),
        lambda: "\ufeff" + json.dumps(parsed),
        lambda: '{"a":NaN}',
        lambda: '{"a":"\\ud800"}',
        lambda: '{"a":1,"a":2}',
        lambda: "[" * 5000 + "]" * 5000,  # deeper than any reader's recursion: an unreadable text
        lambda: '{"a":' + "[" * 600 + "]" * 600 + "}",
    )
    return forms[variation.choice % len(forms)]()


def _vary_call_arguments(decoded: Decoded, variation: Variation) -> None:
    """Another arguments text for a call: an intent's arguments that differ from it are SA415 (a note)."""
    site = _pick(_calls(decoded), variation.site)
    if site is not None:
        fact, index = site
        function = fact["entry"]["message"]["tool_calls"][index]["function"]
        function["arguments"] = _arguments_text(function["arguments"], variation)


def _vary_numbers(decoded: Decoded, variation: Variation) -> None:
    """A tool intent's arguments {"n": value} against its call's text {"n": token}."""
    fact = _pick(_of_type(decoded, "toolStarted"), variation.site)
    if fact is None:
        return
    record = fact["record"]
    value = ARGUMENT_VALUES[variation.choice % len(ARGUMENT_VALUES)]
    tokens = number_tokens(value)
    record["arguments"] = {"n": value}
    answer = _assistants(decoded)[record["assistantEntryId"]]
    call = answer["entry"]["message"]["tool_calls"][record["toolIndex"]]
    call["function"]["arguments"] = '{"n":' + tokens[variation.number % len(tokens)] + "}"


def _vary_environment(decoded: Decoded, variation: Variation) -> None:
    """A tool intent's environmentIdentity other than the header's: SA416 (a note)."""
    fact = _pick(_of_type(decoded, "toolStarted"), variation.site)
    if fact is not None:
        fact["record"]["environmentIdentity"] = variation.text or "elsewhere"


def _vary_header_environment(decoded: Decoded, variation: Variation) -> None:
    decoded.header["environmentIdentity"] = variation.text or "elsewhere"


def _vary_call_id(decoded: Decoded, variation: Variation) -> None:
    """Rename a provider call id (unique in the file) wherever it is named."""
    site = _pick(_calls(decoded), variation.site)
    if site is None:
        return
    fact, index = site
    calls = fact["entry"]["message"]["tool_calls"]
    old = calls[index]["id"]
    new = f"{variation.text}#{index}"
    named = [call["id"] for call in calls]
    everywhere = [answer["entry"]["message"]["tool_calls"][i]["id"] for answer, i in _calls(decoded)]
    if everywhere.count(old) != 1 or new in named:
        return
    calls[index]["id"] = new
    for other in decoded.facts():
        kind = fact_type(other)
        if kind == "toolStarted" and other["record"]["toolCallId"] == old:
            other["record"]["toolCallId"] = new
        elif kind in ("started-result", "pre-execution") and other["entry"]["message"]["tool_call_id"] == old:
            other["entry"]["message"]["tool_call_id"] = new
        elif kind == "abortRequested" and other["record"].get("toolCallId") == old:
            other["record"]["toolCallId"] = new


def _vary_replay(decoded: Decoded, variation: Variation) -> None:
    fact = _pick(_of_type(decoded, "toolStarted"), variation.site)
    if fact is not None:
        fact["record"]["replay"] = "never" if fact["record"]["replay"] == "safe" else "safe"


def _vary_replay_key(decoded: Decoded, variation: Variation) -> None:
    fact = _pick(_of_type(decoded, "toolStarted"), variation.site)
    if fact is not None:
        fact["record"]["replayKey"] = variation.text or "custom:key:v2"


def _vary_split(decoded: Decoded, variation: Variation) -> None:
    """An array transaction as one line per fact: the reducer's rules are per fact, and the transcript's
    per message, so the file stays accepted."""
    arrays = [index for index, line in enumerate(decoded.lines) if len(line.facts) > 1]
    if arrays:
        index = _one(arrays, variation.site)
        decoded.lines[index : index + 1] = [Transaction([fact], False) for fact in decoded.lines[index].facts]


def _vary_merge(decoded: Decoded, variation: Variation) -> None:
    """Two to four consecutive transactions as one array line (accepted for the same reason)."""
    if decoded.lines:
        start = variation.site % len(decoded.lines)
        merged = decoded.lines[start : start + 2 + variation.choice % 3]
        decoded.lines[start : start + len(merged)] = [
            Transaction([fact for line in merged for fact in line.facts], True)
        ]


def _vary_wrap(decoded: Decoded, variation: Variation) -> None:
    """A single fact written as a one-element array."""
    line = _pick([line for line in decoded.lines if not line.array], variation.site)
    if line is not None:
        line.array = True


def _styled(decoded: Decoded, variation: Variation, **changes: Any) -> None:
    index = variation.site % (len(decoded.lines) + 1)
    decoded.styles[index] = replace(decoded.styles.get(index, LineStyle()), seed=variation.number, **changes)


def _vary_floats(decoded: Decoded, variation: Variation) -> None:
    """Integer fields of one line as integral floats (3 → 3.0, 3e0 …): SA111, a note."""
    names = frozenset(name for bit, name in enumerate(FLOAT_NAMES) if variation.choice >> bit & 1)
    chosen = names or frozenset(FLOAT_NAMES)
    _styled(decoded, variation, floats=chosen, float_form=variation.number)


def _vary_key_order(decoded: Decoded, variation: Variation) -> None:
    _styled(decoded, variation, order=("sorted", "reversed", "shuffled")[variation.choice % 3])


def _vary_spacing(decoded: Decoded, variation: Variation) -> None:
    """JSON whitespace between the tokens of one line (the strict decoder reads it, not the fast one)."""
    _styled(decoded, variation, spacing=True)


def _vary_escapes(decoded: Decoded, variation: Variation) -> None:
    """\\u escapes (and `\\/`) in one line's strings, keys included: `"k\\u0069nd"` is `"kind"`."""
    _styled(decoded, variation, escapes=True)


def _vary_tear(decoded: Decoded, variation: Variation) -> None:
    """A crash: the file ends anywhere after the header, so a committed prefix and perhaps a torn tail."""
    decoded.cut = abs(variation.number)


# kind → (phase, accepted, apply). Phases: 0 values, 1 the usage boundary (after every usage change), 2 the
# line layout, 3 the spelling of each line, 4 the cut; compactions are fixed after phase 1.
VARIATION_KINDS: dict[str, tuple[int, bool, Callable[[Decoded, Variation], None]]] = {
    "content": (0, True, _vary_content),
    "summary": (0, True, _vary_summary),
    "error-text": (0, True, _vary_error_text),
    "timestamps": (0, True, _vary_timestamps),
    "created-at": (0, True, _vary_created_at),
    "usage": (0, True, _vary_usage),
    "call-arguments": (0, True, _vary_call_arguments),
    "numbers": (0, True, _vary_numbers),
    "environment": (0, True, _vary_environment),
    "header-environment": (0, True, _vary_header_environment),
    "call-id": (0, True, _vary_call_id),
    "replay": (0, True, _vary_replay),
    "replay-key": (0, True, _vary_replay_key),
    "usage-boundary": (1, True, _vary_usage_boundary),
    "split": (2, True, _vary_split),
    "merge": (2, True, _vary_merge),
    "wrap": (2, True, _vary_wrap),
    "floats": (3, True, _vary_floats),
    "key-order": (3, True, _vary_key_order),
    "spacing": (3, True, _vary_spacing),
    "escapes": (3, True, _vary_escapes),
    "tear": (4, True, _vary_tear),
}


# --- targeted corruptions --------------------------------------------------------------------------------

UNKNOWN_ID = "00000000-0000-7000-8000-00000000dead"  # a UUIDv7 no builder session names


def fresh_id(number: int) -> str:
    return f"00000000-0000-7000-8000-{number:012x}"


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


def _has(value: Any, path: tuple[Any, ...]) -> bool:
    for key in path:
        present = key in value if isinstance(value, dict) else isinstance(key, int) and key < len(value)
        if not isinstance(value, (dict, list)) or not present:
            return False
        value = value[key]
    return True


def _reservations(fact: dict[str, Any]) -> list[str]:
    """The ids a fact reserves in the session's one namespace (spec §6)."""
    kind = fact_type(fact)
    record = fact.get("record", {})
    if kind == "runStarted":
        return [record["operationId"]]
    if kind == "compactionStarted":
        return [record["operationId"], record["resultEntryId"]]
    if kind == "stepAttempt":
        return ([record["stepId"]] if record["attempt"] == 1 else []) + [record["attemptId"]]
    if kind == "toolStarted":
        return [record["resultEntryId"]]
    return []


# the reference fields of each fact type: an unknown (or upper-case) id there is never accepted
REFERENCES: dict[str, tuple[tuple[Any, ...], ...]] = {
    "runStarted": (("record", "inputEntryId"),),
    "stepAttempt": (("record", "operationId"), ("record", "contextThroughEntryId")),
    "stepFailed": (("record", "operationId"), ("record", "stepId"), ("record", "attemptId")),
    "toolStarted": (("record", "operationId"), ("record", "assistantEntryId"), ("record", "stepId")),
    "abortRequested": (("record", "operationId"),),
    "operationFinished": (("record", "operationId"), ("record", "finalEntryId")),
    "compactionStarted": (
        ("record", "inputThroughEntryId"),
        ("record", "compactedEntryIds", 0),
        ("record", "retainedEntryIds", 0),
    ),
    "assistant": (("entry", "stepId"), ("entry", "attemptId")),
    "started-result": (("entry", "stepId"), ("entry", "toolStartedId")),
    "pre-execution": (("entry", "stepId"), ("entry", "assistantEntryId")),
    "compaction": (
        ("entry", "operationId"),
        ("entry", "compactedThroughEntryId"),
        ("entry", "retainedTail", 0, "sourceEntryId"),
    ),
    "usage": (("operationId",), ("attemptId",), ("toolStartedId",)),
}


Fact = dict[str, Any]


def _corrupt_seq_skip(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A gap in seq from one fact on (SA205)."""
    facts = decoded.facts()
    if not facts:
        return None
    index = site % len(facts)
    for fact in facts[index:]:
        fact["seq"] += 1
    return facts[index]


def _corrupt_seq_repeat(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A fact repeats the previous fact's seq (SA205)."""
    facts = decoded.facts()
    if len(facts) < 2:
        return None
    index = 1 + site % (len(facts) - 1)
    facts[index]["seq"] = facts[index - 1]["seq"]
    return facts[index]


def _corrupt_duplicate_id(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A fact takes the id of an earlier fact (SA206)."""
    facts = decoded.facts()
    if len(facts) < 2:
        return None
    index = 1 + site % (len(facts) - 1)
    facts[index]["id"] = facts[choice % index]["id"]
    return facts[index]


def _corrupt_reserved_id(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A fact takes an id reserved by it or an earlier fact: an operationId, stepId, attemptId or a result
    slot it does not fill (SA206; SA207 for a result entry, which must name its own slot)."""
    facts = decoded.facts()
    reserved = [(index, value) for index, fact in enumerate(facts) for value in _reservations(fact)]
    if not reserved:
        return None
    start, value = _one(reserved, site)
    takers = [index for index in range(start, len(facts)) if facts[index]["id"] != value]
    fact: Fact = facts[_one(takers, choice)]
    fact["id"] = value
    return fact


def _corrupt_unknown_reference(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A reference to an id the session never had (SA207), or one in upper case (SA214)."""
    sites = [
        (fact, path)
        for fact in decoded.facts()
        for path in REFERENCES.get(fact_type(fact), ())
        if _has(fact, path) and not (path == ("record", "stepId") and fact["record"].get("attempt") == 1)
    ]
    attempts_two = [fact for fact in _of_type(decoded, "stepAttempt") if fact["record"]["attempt"] == 2]
    sites += [(fact, ("record", "stepId")) for fact in attempts_two]
    if not sites:
        return None
    fact, path = _one(sites, site)
    current = _get(fact, path)
    _set(fact, path, current.upper() if choice % 2 and current.upper() != current else UNKNOWN_ID)
    return fact


def _corrupt_other_kind(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A reference to a known id of the wrong kind: a run's input a record, a final entry or a tool's
    assistant the user's entry, an attempt an operation or a step, a tool intent a step, usage for an
    attempt or intent of another operation (SA207)."""
    facts = decoded.facts()
    inputs = {
        fact["record"]["operationId"]: fact["record"]["inputEntryId"]
        for fact in _of_type(decoded, "runStarted")
    }
    sites: list[tuple[Fact, tuple[Any, ...], str]] = []
    owners: dict[str, list[tuple[str, str]]] = {"attemptId": [], "toolStartedId": []}
    for position, fact in enumerate(facts):
        kind = fact_type(fact)
        record = fact.get("record", {})
        if kind == "stepAttempt":
            owners["attemptId"].append((record["attemptId"], record["operationId"]))
        elif kind == "toolStarted":
            owners["toolStartedId"].append((fact["id"], record["operationId"]))
        if kind == "runStarted":
            records = [other["id"] for other in facts[:position] if other["kind"] == "record"]
            if records:
                sites.append((fact, ("record", "inputEntryId"), records[-1]))
        elif kind == "operationFinished" and "finalEntryId" in record and record["operationKind"] == "run":
            sites.append((fact, ("record", "finalEntryId"), inputs[record["operationId"]]))
        elif kind == "toolStarted":
            sites.append((fact, ("record", "assistantEntryId"), inputs[record["operationId"]]))
        elif kind == "usage":
            owner = "attemptId" if "attemptId" in fact else "toolStartedId"
            if owner == "attemptId":
                sites.append((fact, ("attemptId",), fact["operationId"]))
            # an attempt or intent that exists, of another operation
            sites += [
                (fact, (owner,), other)
                for other, operation in owners[owner]
                if operation != fact["operationId"]
            ][:3]
        elif kind == "started-result":
            sites.append((fact, ("entry", "toolStartedId"), fact["entry"]["stepId"]))
        elif kind == "assistant":
            sites.append((fact, ("entry", "attemptId"), fact["entry"]["stepId"]))
    if not sites:
        return None
    fact, path, value = _one(sites, site)
    _set(fact, path, value)
    return fact


def _corrupt_tool_call(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A tool intent or pre-execution result names another toolIndex (or the right one counted from the
    end, as Python would index), toolCallId or toolName than its call (SA207, SA204)."""
    sites = [(fact, "record") for fact in _of_type(decoded, "toolStarted")]
    sites += [(fact, "entry") for fact in _of_type(decoded, "pre-execution")]
    if not sites:
        return None
    fact, where = _one(sites, site)
    holder = fact[where]
    count = len(_assistants(decoded)[holder["assistantEntryId"]]["entry"]["message"]["tool_calls"])
    variant = choice % 4
    if variant == 0:
        holder["toolIndex"] = (holder["toolIndex"] + 1) % count if count > 1 else count
    elif variant == 1 and where == "record":
        holder["toolCallId"] += "x"
    elif variant == 1:
        holder["message"]["tool_call_id"] += "x"
    elif variant == 2:
        holder["toolName"] += "x"
    else:
        holder["toolIndex"] -= count
    return fact


def _corrupt_undeclared_tool(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A started call of a tool the attempt's configuration does not declare (SA208)."""
    fact = _pick(_of_type(decoded, "toolStarted"), site)
    if fact is None:
        return None
    record = fact["record"]
    new = "undeclared_" + record["toolName"]
    answer = _assistants(decoded)[record["assistantEntryId"]]
    answer["entry"]["message"]["tool_calls"][record["toolIndex"]]["function"]["name"] = new
    record["toolName"] = new
    for result in _of_type(decoded, "started-result"):
        if result["entry"]["toolStartedId"] == fact["id"]:
            result["entry"]["toolName"] = new
    return fact  # the first fact the new name is wrong in: the assistant's calls name any tool


def _corrupt_configuration(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A configurationDigest that is not the snapshot's (SA210): a digit changed, or the snapshot."""
    fact = _pick(_of_type(decoded, "stepAttempt"), site)
    if fact is None:
        return None
    record = fact["record"]
    if choice % 2:
        record["configurationSnapshot"]["model"] += "x"
    else:
        digest = record["configurationDigest"]
        record["configurationDigest"] = digest[:-1] + ("1" if digest[-1] == "0" else "0")
    return fact


def _containers(value: Any) -> Iterator[tuple[Any, Any]]:
    """Every (object or array, key or index) of a value, but none inside a tool intent's free-form
    `arguments` object."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield value, key
            if not (key == "arguments" and isinstance(child, dict)):
                yield from _containers(child)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield value, index
            yield from _containers(child)


def _roots(decoded: Decoded) -> list[Fact]:
    return [decoded.header, *decoded.facts()]


def _optional(container: Any, key: Any, root: Fact) -> bool:
    """Whether removing the key may leave the fact valid: the calls of a `length` answer."""
    entry = root.get("entry")
    return (
        key == "tool_calls"
        and isinstance(entry, dict)
        and entry.get("stopReason") == "length"
        and container is entry.get("message")
    )


def _corrupt_missing_key(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A required key removed at any level: fact, entry or record, message, call, result, usage, snapshot,
    error, retained item, header (SA204, SA201, or the rule the absence breaks)."""
    sites = [
        (root, container, key)
        for root in _roots(decoded)
        for container, key in _containers(root)
        if isinstance(container, dict) and not _optional(container, key, root)
    ]
    root, container, key = _one(sites, site)
    del container[key]
    return root


EXTRA_KEYS = (
    "extra",
    "stepId",
    "toolIndex",
    "reason",
    "attemptId",
    "toolStartedId",
    "completion",
    "error",
    "finalEntryId",
    "toolCallId",
    "tool_calls",
    "kind",
    "type",
    "id",
)


def _corrupt_extra_key(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A key no shape allows there, at any level (every object but a tool intent's arguments is closed)."""
    arguments = {id(fact["record"]["arguments"]) for fact in _of_type(decoded, "toolStarted")}
    sites = [
        (root, child)
        for root in _roots(decoded)
        for child in [root] + [container[key] for container, key in _containers(root)]
        if isinstance(child, dict) and id(child) not in arguments
    ]
    root, target = _one(sites, site)
    key = EXTRA_KEYS[choice % len(EXTRA_KEYS)]
    target[key if key not in target else "extra"] = "extra"
    return root


def _wrong_value(value: Any, choice: int, assistant_content: bool) -> Any:
    """A value of another JSON type than `value` that no field of that type accepts."""
    if isinstance(value, str):
        options: list[Any] = [1, True, {}, []] if assistant_content else [1, None, True, {}, []]
    elif isinstance(value, int):
        options = ["1", None, True, 1.5, -1, [], {}]
    elif value is None:
        options = [1, True, [], {}]
    elif isinstance(value, list):
        options = ["x", {}, 1, None]
    else:
        options = ["x", [], 1, None]
    return options[choice % len(options)]


def _corrupt_wrong_type(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A field of another type, at any level (SA204, SA201, SA214 …)."""
    sites = [(root, container, key) for root in _roots(decoded) for container, key in _containers(root)]
    root, container, key = _one(sites, site)
    assistant_content = (
        key == "content" and isinstance(container, dict) and container.get("role") == "assistant"
    )
    container[key] = _wrong_value(container[key], choice, assistant_content)
    return root


def _corrupt_stop_reason(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """stopReason stop with tool calls, or toolUse without (SA209)."""
    sites = [
        fact
        for fact in _of_type(decoded, "assistant")
        if fact["entry"]["stopReason"] in ("stop", "toolUse")
        and bool(fact["entry"]["message"].get("tool_calls")) == (fact["entry"]["stopReason"] == "toolUse")
    ]
    fact = _pick(sites, site)
    if fact is None:
        return None
    fact["entry"]["stopReason"] = "stop" if fact["entry"]["stopReason"] == "toolUse" else "toolUse"
    return fact


def _corrupt_blank_answer(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """The final answer of a run completed normally without non-blank content: empty, null, or only
    what JavaScript's trim() removes (SA209, at the terminal record)."""
    finals = {
        fact["record"]["finalEntryId"]: fact
        for fact in _of_type(decoded, "operationFinished")
        if fact["record"].get("completion") == "normal"
    }
    answers = [fact for fact in _of_type(decoded, "assistant") if fact["id"] in finals]
    fact = _pick(answers, site)
    if fact is None:
        return None
    fact["entry"]["message"]["content"] = ("", None, " \t\u2028\u3000\ufeff\u00a0")[choice % 3]
    return finals[fact["id"]]  # the record that needs the text


def _corrupt_closed_attempt(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """An answer that settles an attempt already closed: an earlier step's, or attempt 1 after its retry
    (SA207)."""
    attempts: dict[str, list[Fact]] = {}
    sites: list[tuple[Fact, Fact]] = []
    for fact in decoded.facts():
        kind = fact_type(fact)
        if kind == "stepAttempt":
            attempts.setdefault(fact["record"]["operationId"], []).append(fact)
        elif kind == "assistant":
            operation = [
                attempt
                for attempts_of in attempts.values()
                if any(
                    attempt["record"]["attemptId"] == fact["entry"]["attemptId"] for attempt in attempts_of
                )
                for attempt in attempts_of
            ]
            sites += [
                (fact, attempt)
                for attempt in operation
                if attempt["record"]["attemptId"] != fact["entry"]["attemptId"]
            ]
    if not sites:
        return None
    fact, attempt = _one(sites, site)
    fact["entry"]["attemptId"] = attempt["record"]["attemptId"]
    fact["entry"]["stepId"] = attempt["record"]["stepId"]
    return fact


def _corrupt_wrong_call(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A tool result for another call: another tool_call_id, or (a started result) another intent (SA207)."""
    fact = _pick(_of_type(decoded, "started-result", "pre-execution"), site)
    if fact is None:
        return None
    entry = fact["entry"]
    others = [
        other["id"] for other in _of_type(decoded, "toolStarted") if other["id"] != entry.get("toolStartedId")
    ]
    if choice % 2 and "toolStartedId" in entry and others:
        entry["toolStartedId"] = _one(others, choice // 2)
    else:
        entry["message"]["tool_call_id"] += "x"
    return fact


def _corrupt_usage_overflow(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A usage counter of 2^53 (not a safe integer: SA204), or one that takes the session total past
    2^53−1 (SA213)."""
    facts = _of_type(decoded, "usage")
    if not facts:
        return None
    index = site % len(facts)
    counter = USAGE_COUNTERS[choice // 2 % 4]
    before = sum(fact["usage"][counter] for fact in facts[:index])
    facts[index]["usage"][counter] = 2**53 if choice % 2 == 0 or not before else MAX_SAFE - before + 1
    return facts[index]


def _corrupt_negative_usage(decoded: Decoded, site: int, choice: int) -> Fact | None:
    fact = _pick(_of_type(decoded, "usage"), site)
    if fact is None:
        return None
    fact["usage"][USAGE_COUNTERS[choice % 4]] = -1 - choice % 3
    return fact


def _corrupt_user_while_pending(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A user message right after an answer with tool calls, before their results (SA209)."""
    positions = [
        index
        for index, line in enumerate(decoded.lines)
        if any(
            fact_type(fact) == "assistant" and fact["entry"]["message"].get("tool_calls")
            for fact in line.facts
        )
    ]
    if not positions:
        return None
    position = _one(positions, site)
    last = decoded.lines[position].facts[-1]
    message = {"role": "user", "content": "wait, one more thing"}
    fact = {
        "kind": "entry",
        "entry": {"type": "message", "message": message},
        "id": fresh_id(choice),
        "seq": last["seq"] + 1,
        "timestamp": last["timestamp"],
    }
    for line in decoded.lines[position + 1 :]:
        for later in line.facts:
            later["seq"] += 1
    decoded.lines.insert(position + 1, Transaction([fact], False))
    return fact


def _corrupt_empty(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """An empty string where a non-empty one is required: user content, call id, tool name, replayKey,
    environmentIdentity, error code, header strings (SA204, SA201)."""
    sites: list[tuple[Fact, tuple[Any, ...]]] = [
        (decoded.header, (name,)) for name in ("cwd", "provider", "model", "environmentIdentity")
    ]
    for fact in decoded.facts():
        kind = fact_type(fact)
        if kind == "user":
            sites.append((fact, ("entry", "message", "content")))
        elif kind == "assistant":
            for index in range(len(fact["entry"]["message"].get("tool_calls") or ())):
                sites.append((fact, ("entry", "message", "tool_calls", index, "id")))
                sites.append((fact, ("entry", "message", "tool_calls", index, "function", "name")))
        elif kind == "toolStarted":
            sites += [
                (fact, ("record", name))
                for name in ("toolCallId", "toolName", "replayKey", "environmentIdentity")
            ]
        elif kind in ("started-result", "pre-execution"):
            sites += [(fact, ("entry", "toolName")), (fact, ("entry", "message", "tool_call_id"))]
        elif kind in ("stepFailed", "operationFinished") and "error" in fact["record"]:
            sites.append((fact, ("record", "error", ("code", "message")[choice % 2])))
    root, path = _one(sites, site)
    _set(root, path, "")
    return root


def _insert_after(decoded: Decoded, holder: Fact, fact: Fact) -> None:
    """A new one-fact line after the line holding `holder`, the seq of every later fact moved up."""
    position = next(
        index for index, line in enumerate(decoded.lines) if any(item is holder for item in line.facts)
    )
    fact["seq"] = decoded.lines[position].facts[-1]["seq"] + 1
    fact["timestamp"] = decoded.lines[position].facts[-1]["timestamp"]
    for line in decoded.lines[position + 1 :]:
        for later in line.facts:
            later["seq"] += 1
    decoded.lines.insert(position + 1, Transaction([fact], False))


def _corrupt_repeated_intent(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A second toolStarted for a call that has one (fresh ids): a replay never writes one (SA208)."""
    original = _pick(_of_type(decoded, "toolStarted"), site)
    if original is None:
        return None
    again: Fact = json.loads(json.dumps(original))  # its arguments may nest deeper than deepcopy recurses
    again["id"] = fresh_id(2 * choice)
    again["record"]["resultEntryId"] = fresh_id(2 * choice + 1)
    _insert_after(decoded, original, again)
    return again


def _corrupt_duplicate_call_id(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """Two calls of one answer with the same provider id (SA209)."""
    answers = [
        fact
        for fact in _of_type(decoded, "assistant")
        if len(fact["entry"]["message"].get("tool_calls") or ()) > 1
    ]
    fact = _pick(answers, site)
    if fact is None:
        return None
    calls = fact["entry"]["message"]["tool_calls"]
    index = 1 + choice % (len(calls) - 1)
    calls[index]["id"] = calls[choice % index]["id"]
    return fact


def _corrupt_stale_context(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A new step whose contextThroughEntryId is an earlier entry, not the active boundary (SA208)."""
    entries: list[str] = []
    sites: list[tuple[Fact, str]] = []
    for fact in decoded.facts():
        kind = fact_type(fact)
        if fact.get("kind") == "entry":
            entries.append(fact["id"])
        elif kind == "stepAttempt" and fact["record"]["attempt"] == 1:
            context = fact["record"]["contextThroughEntryId"]
            sites += [(fact, entry_id) for entry_id in entries[-3:] if entry_id != context]
    if not sites:
        return None
    fact, entry_id = _one(sites, site)
    fact["record"]["contextThroughEntryId"] = entry_id
    return fact


# the enumerated fields by fact type, and what no enumeration of tiny-agent's holds
ENUMS: dict[str, tuple[tuple[Any, ...], ...]] = {
    "assistant": (("entry", "stopReason"), ("entry", "type"), ("entry", "message", "role"), ("kind",)),
    "user": (("entry", "message", "role"), ("entry", "type")),
    "started-result": (("entry", "result", "type"),),
    "toolStarted": (("record", "replay"), ("record", "type")),
    "runStarted": (("record", "operationKind"),),
    "stepAttempt": (("record", "stepKind"),),
    "abortRequested": (("record", "phase"), ("record", "reason"), ("record", "operationKind")),
    "operationFinished": (("record", "outcome"), ("record", "operationKind"), ("record", "completion")),
    "usage": (("kind",),),
}


def _corrupt_bad_enum(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """An enumerated field (stopReason, role, replay, operationKind, outcome, phase, kind …) with a value
    none of its cases has (SA204, SA208)."""
    sites = [
        (fact, path)
        for fact in decoded.facts()
        for path in ENUMS.get(fact_type(fact), ())
        if _has(fact, path)
    ]
    if not sites:
        return None
    fact, path = _one(sites, site)
    _set(fact, path, ("sometimes", "system", "Stop", "")[choice % 4])
    return fact


def _malformed_id(value: str, choice: int) -> str:
    """Not a lowercase UUIDv7: upper case, version 4, variant c, a line feed, a 'g', one short or long."""
    forms = (
        value.upper(),
        value[:14] + "4" + value[15:],
        value[:19] + "c" + value[20:],
        value[:8] + "\n" + value[9:],
        value[:-1] + "\n",
        value + "\n",
        value[:-1] + "g",
        value[:-1],
        value + "0",
    )
    form = forms[choice % len(forms)]
    return form if form != value else value + "0"


def _corrupt_invalid_fresh_id(decoded: Decoded, site: int, choice: int) -> Fact | None:
    """A new id (the header's, a fact's own, or one a fact reserves) that is not a lowercase UUIDv7 (SA214,
    SA201; SA207 where an entry must use a reserved id)."""
    sites: list[tuple[Fact, tuple[Any, ...]]] = [(decoded.header, ("id",))]
    for fact in decoded.facts():
        sites.append((fact, ("id",)))
        record = fact.get("record", {})
        reserved = _reservations(fact)
        sites += [(fact, ("record", name)) for name, value in record.items() if value in reserved]
    fact, path = _one(sites, site)
    _set(fact, path, _malformed_id(_get(fact, path), choice))
    return fact


def _truncate_line(data: bytes, site: int, choice: int) -> bytes:
    """A committed line cut short but still ended by LF (SA106 or SA102; a torn tail is not this): the rest
    of the file kept, or gone."""
    end = data.rfind(b"\n")
    lines = data[: end + 1].split(b"\n")[:-1]
    index = site % len(lines)
    content = lines[index].rstrip(b" \t\r")
    if len(content) < 2:
        return data
    cut = 1 + choice % (len(content) - 1)
    kept = lines[:index] + [content[:cut]] + (lines[index + 1 :] if choice % 2 else [])
    return b"\n".join(kept) + b"\n"


# kind → the change on the decoded session: the header or the fact it made wrong (None: no site for it)
CORRUPTION_KINDS: dict[str, Callable[[Decoded, int, int], Fact | None]] = {
    "seq-skip": _corrupt_seq_skip,
    "seq-repeat": _corrupt_seq_repeat,
    "duplicate-id": _corrupt_duplicate_id,
    "reserved-id": _corrupt_reserved_id,
    "unknown-reference": _corrupt_unknown_reference,
    "other-kind-reference": _corrupt_other_kind,
    "tool-call-mismatch": _corrupt_tool_call,
    "undeclared-tool": _corrupt_undeclared_tool,
    "configuration-digest": _corrupt_configuration,
    "missing-key": _corrupt_missing_key,
    "extra-key": _corrupt_extra_key,
    "wrong-type": _corrupt_wrong_type,
    "stop-reason": _corrupt_stop_reason,
    "blank-final-answer": _corrupt_blank_answer,
    "closed-attempt": _corrupt_closed_attempt,
    "wrong-call": _corrupt_wrong_call,
    "usage-overflow": _corrupt_usage_overflow,
    "negative-usage": _corrupt_negative_usage,
    "user-while-pending": _corrupt_user_while_pending,
    "empty-string": _corrupt_empty,
    "repeated-intent": _corrupt_repeated_intent,
    "duplicate-call-id": _corrupt_duplicate_call_id,
    "stale-context": _corrupt_stale_context,
    "bad-enum": _corrupt_bad_enum,
    "invalid-fresh-id": _corrupt_invalid_fresh_id,
}
BYTE_CORRUPTIONS: dict[str, Callable[[bytes, int, int], bytes]] = {"truncate-line": _truncate_line}


@dataclass(frozen=True, slots=True)
class Corruption:
    """One targeted corruption (CORRUPTION_KINDS on the values, BYTE_CORRUPTIONS on the bytes); `site`
    picks where, `choice` how. With `end` the file ends after the corrupted line, so that no later fact
    can be what rejects it: a rule the fast path forgets then shows as an accepted corrupt file. The file
    it makes is never accepted."""

    kind: str
    site: int
    choice: int
    end: bool = False


def _end_after(decoded: Decoded, fact: Fact) -> None:
    """Drop every line after the one holding `fact` (all of them for the header), and the torn tail."""
    position = next(
        (index for index, line in enumerate(decoded.lines) if any(item is fact for item in line.facts)), -1
    )
    del decoded.lines[position + 1 :]
    decoded.tail = b""


def fast_path_input(
    seed: str, variations: Sequence[Variation] = (), corruption: Corruption | None = None
) -> tuple[bytes, bool]:
    """The bytes of a seed after the variations and the corruption, and whether they are to be accepted.
    A corruption with no site in the seed is made on LONG_SEED, which has one of each."""
    ordered = sorted(variations, key=lambda variation: variation.phase)
    if corruption is not None:
        ordered = [variation for variation in ordered if variation.phase < 4]  # a cut could drop it
    decoded = decode_session(fast_path_seeds()[seed])
    for variation in ordered:
        if variation.phase < 2:
            variation.apply(decoded)
    fix_compactions(decoded)
    if corruption is not None and corruption.kind in CORRUPTION_KINDS:
        corrupted = CORRUPTION_KINDS[corruption.kind](decoded, corruption.site, corruption.choice)
        if corrupted is None:
            return fast_path_input(LONG_SEED, variations, corruption)
        if corruption.end:
            _end_after(decoded, corrupted)
    for variation in ordered:
        if variation.phase >= 2:
            variation.apply(decoded)
    data = encode_session(decoded)
    if corruption is not None and corruption.kind in BYTE_CORRUPTIONS:
        data = BYTE_CORRUPTIONS[corruption.kind](data, corruption.site, corruption.choice)
    return data, corruption is None and all(variation.accepted for variation in ordered)


@dataclass(frozen=True, slots=True)
class FastCase:
    """One input of the fast-path target: a seed, valid-preserving variations, then a targeted corruption
    or generic edits (JSONL_EDITS) or neither."""

    seed: str
    variations: tuple[Variation, ...]
    corruption: Corruption | None = None
    edits: tuple[Any, ...] = ()


def run_fast_path(case: FastCase) -> FastCheck:
    """Build the case's input and check the fast path's property on it (`check_fast_path`); generic edits
    carry no expectation (they may keep the file valid, or not)."""
    data, accepted = fast_path_input(case.seed, case.variations, case.corruption)
    if case.edits:
        return check_fast_path(mutate(data, list(case.edits)))
    return check_fast_path(data, accepted=accepted)


FAST_TEXTS = st.one_of(st.sampled_from(SPECIAL_TEXTS), st.text(max_size=24))
VARIATION_NUMBERS = st.one_of(st.integers(-5000, 5000), st.integers(-(2**44), 2**44))


def variations(*, cut: bool = True, most: int = 6) -> st.SearchStrategy[tuple[Variation, ...]]:
    """Up to `most` valid-preserving variations (without the final cut when `cut` is false)."""
    kinds = sorted(kind for kind, (phase, _, _) in VARIATION_KINDS.items() if cut or phase < 4)
    one = st.builds(
        Variation,
        kind=st.sampled_from(kinds),
        site=st.integers(0, 10_000),
        choice=st.integers(0, 10_000),
        number=VARIATION_NUMBERS,
        text=FAST_TEXTS,
    )
    return st.lists(one, max_size=most).map(tuple)


def number_variations() -> st.SearchStrategy[tuple[Variation, ...]]:
    """One "numbers" variation over the small space of ARGUMENT_VALUES × their spellings, which
    hypothesis covers quickly, plus other valid-preserving variations."""
    one = st.builds(
        Variation,
        kind=st.just("numbers"),
        site=st.integers(0, 3),
        choice=st.sampled_from(range(len(ARGUMENT_VALUES))),
        number=st.sampled_from(range(16)),
        text=st.just(""),
    )
    return st.tuples(one, variations(cut=False, most=2)).map(lambda pair: (pair[0], *pair[1]))


CORRUPTIONS = st.builds(
    Corruption,
    kind=st.sampled_from(sorted([*CORRUPTION_KINDS, *BYTE_CORRUPTIONS])),
    site=st.integers(0, 100_000),
    choice=st.integers(0, 100_000),
    end=st.booleans(),
)


@cache
def fast_path_cases() -> st.SearchStrategy[FastCase]:
    """Valid variations (one kind of them focused on the numbers of tool arguments), corruptions on varied
    files and generic edits of varied files, a quarter each."""
    seeds = st.sampled_from(sorted(fast_path_seeds()))
    valid = st.builds(FastCase, seeds, variations())
    numbers = st.builds(FastCase, st.sampled_from(TOOL_SEEDS), number_variations())
    corrupt = st.builds(FastCase, seeds, variations(cut=False), CORRUPTIONS)
    edited = st.builds(FastCase, seeds, variations(), st.none(), JSONL_EDITS.map(tuple))
    return st.one_of(valid, numbers, corrupt, edited)
