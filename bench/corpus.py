"""Benchmark corpora: large, valid session logs of each format, deterministic from a seed.

    python bench/corpus.py --format tiny-agent --size 100MB --seed 1 --out DIR [--sessions N]
                           [--crash-every K]

Every source is written by the project's own builders (`formats/*/builder*.py`), so ids, seq, digests and
UUIDv7s are valid by construction; the generator only chooses what happens and streams it to disk (memory
stays bounded: the tiny-agent builder writes each line as it is made and remembers a few messages only).

- `tiny-agent`: v2 sessions in `DIR/.tiny-agent/sessions/`: runs of 1-6 tool steps (read, grep, edit,
  bash) with results from a few bytes to 300 KB, model and tool usage, an occasional retried step,
  invalid-arguments synthetic result and user abort, and compactions on a geometric cadence (each after
  the session grew by half, from 256 KiB: a compaction lists every message id so far, so a fixed cadence
  would make a 1 GB session quadratic).
- `tiny-agent-dense`: the same sessions with the most facts per byte (`DenseTinyAgentWriter`): short
  contents, 2-7 calls an answer, most tool results with their usage in the same line, ≈ 2,000 facts/MB in
  ≈ 700 B lines, a third of them arrays; corpus.json gives each source's facts, lines and array lines as
  written, and bench/run.py reads the files back to check them (`dense_shape`).
- `rivumi`: a run root `DIR/runs/` of run directories (~64 KB each unless `--sessions` says how many).
- `half-pi`: `--sessions` stores (default 1) `DIR/store-<i>/db/half-pi.db`, sized by the messages written.
- `claude-code`: a Claude Code config root `DIR/projects/<project-dir>/` (20 families of sessions per
  project directory) written by the project's `TranscriptBuilder`: `--sessions` families (default one per
  ~500 KB; sizes spread log-normally), each a session of turns with streamed multi-block responses (one line
  per thinking, text and tool_use block, usage growing line by line), tool calls and results, now and then
  a Task call whose sub-agent works in its own file (`<session>/subagents/agent-*.jsonl` with its
  `.meta.json` for 2.1.79 sessions, `agent-<8hex>.jsonl` beside it for 2.0.55 ones, a fifth of the
  families), an interrupted tool call, an API error line, a `/compact` past 1 MB; about one family in seven
  is resumed (`--resume`: a second session file replaying the first). A source is a session file (its
  sub-agent files with it, as `sessaudit verify` reports them); corpus.json lists each one's files.
- `codex`: a Codex home `DIR/` written by the project's `build_corpus` (formats/codex/build/corpus.py):
  `DIR/sessions/YYYY/MM/DD/rollout-*.jsonl` families of long sessions, doubled token counts (0.46.0),
  compactions, forks and spawned sub-agents (each a second rollout copying its parent's lines), killed
  and torn sessions, in the builder's own mixture (no `--sessions`, no `--crash-every`), with the
  builder's `DIR/manifest.json` (files, bytes, families, kinds, usage totals). A source is a rollout;
  corpus.json lists each with its session id, role, parent, family kind and ending, read back from its
  bytes, and `manifest_errors` checks them, and the builder's counts, against the files on disk.

Every `--crash-every`-th source (default 50; 0: none) ends in a crash, cycling through the format's
endings (tiny-agent: torn tail, open tool call, open model request; Rivumi: tool started, manifest one
ahead, model requested; Half-Pi: an unanswered request; Claude Code, in the family's last session: a
dangling Bash call, a torn tool result line, a torn prompt line). `DIR/corpus.json` lists each source with its
bytes and its ending, so a check can expect verdict `clean` exactly where no crash was put. The same
arguments give byte-identical files, whatever `--workers`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final

from sessaudit.formats.claude_code.build.ids import DEFAULT_START as CLAUDE_CODE_START
from sessaudit.formats.claude_code.build.lines import dump_line
from sessaudit.formats.claude_code.build.parts import Call as ClaudeCall
from sessaudit.formats.claude_code.build.parts import Streaming, Text, Thinking, ToolUse, Usage
from sessaudit.formats.claude_code.build.transcript import TranscriptBuilder
from sessaudit.formats.codex.build.corpus import build_corpus as build_codex_corpus
from sessaudit.formats.codex.build.manifest import MANIFEST_NAME as CODEX_MANIFEST_NAME
from sessaudit.formats.half_pi.build.parts import ToolCall as HalfPiCall
from sessaudit.formats.half_pi.build.store_builder import StoreBuilder
from sessaudit.formats.rivumi.build.parts import Crash, CrashMode, Killed
from sessaudit.formats.rivumi.build.parts import ToolCall as RivumiCall
from sessaudit.formats.rivumi.build.run_builder import RunBuilder
from sessaudit.formats.rivumi.build.writer import DEFAULT_START
from sessaudit.formats.tiny_agent.build.machinery import session_file_name
from sessaudit.formats.tiny_agent.build.session import (
    DEFAULT_CREATED_AT,
    Call,
    Configuration,
    SessionBuilder,
    TokenUsage,
)

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

# "tiny-agent-dense": tiny-agent sessions with short contents (the most state per byte)
FORMATS: Final = ("tiny-agent", "tiny-agent-dense", "rivumi", "half-pi", "claude-code", "codex")
ENDINGS: Final = {
    "tiny-agent": ("torn-tail", "open-tool", "open-model"),
    "tiny-agent-dense": ("torn-tail", "open-tool", "open-model"),
    "rivumi": ("tool-started", "manifest-ahead", "model-requested"),
    "half-pi": ("unanswered-request",),
    "claude-code": ("dangling-tool", "torn-result", "torn-prompt"),
    "codex": ("killed", "torn-turn"),  # the builder's own mixture: --crash-every does not choose them
}
# the verdict `sessaudit verify` must give a source with each ending (corpus.json says it per source)
EXPECTED_VERDICT: Final = {
    "clean": "clean",
    "torn-tail": "repairable",  # nothing open; tiny-agent truncates the tail itself
    "open-tool": "needs-recovery",
    "open-model": "needs-recovery",
    "tool-started": "needs-recovery",
    "manifest-ahead": "needs-recovery",
    "model-requested": "needs-recovery",
    "unanswered-request": "needs-recovery",
    "dangling-tool": "needs-recovery",  # a Bash tool_use with no result: its effect is unknown
    "torn-result": "needs-recovery",  # the result line is cut: its call has no result either
    "torn-prompt": "repairable",  # only a typed prompt is cut, after a finished turn: nothing open
    "killed": "needs-recovery",  # Codex: killed while a shell call ran (no output): its turn is open
    "torn-turn": "needs-recovery",  # Codex: the last line of an unfinished turn is cut: the turn is open
}
MANIFEST: Final = "corpus.json"
KIB: Final = 1024
RIVUMI_RUN_BYTES: Final = 64 * KIB
CLAUDE_CODE_FAMILY_BYTES: Final = 500 * 10**3  # a family's average size: its default number
CLAUDE_CODE_FAMILIES_PER_PROJECT: Final = 20
FIRST_COMPACTION: Final = 256 * KIB
POOL_CHARS: Final = 1 << 20
_UNITS: Final = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KIB": KIB,
    "MIB": KIB**2,
    "GIB": KIB**3,
}

_WORD_TEXT: Final = (
    "return self value items total price qty cart order user session id list dict None True False def "
    "class import from if else for while try except raise with as async await yield lambda assert "
    "const let function export default module require test expect describe it should error warning "
    "info debug trace request response status code message path file line column config build run "
    "deploy pipeline cache index query select where insert update delete table row count sum avg "
    "épreuve naïve café résumé größe ✓ → λ 日本 数据 ok failed passed skipped"
)
WORDS: Final = tuple(_WORD_TEXT.split())
PUNCTUATION: Final = (
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    ";",
    ",",
    ".",
    "=",
    "==",
    '"',
    "'",
    "\\",
    "/",
    "->",
    "#",
)
QUESTIONS: Final = (
    "The cart test fails since items became {price, qty}; can you fix total()?",
    "Why does the build break on CI but not locally?",
    "Add a retry with backoff to the HTTP client and cover it with a test.",
    "Rename the `order` module to `orders` everywhere and keep the tests green.",
    "Find where the session id is logged and redact it.",
    "The deploy script hangs after the migration step; investigate.",
)
TOOLS: Final = ("read", "grep", "edit", "bash")
DENSE_TOOLS: Final = ("read", "edit", "bash")  # as tiny-agent's example sessions configure
SHORT_QUESTIONS: Final = (
    "Fix total() for {price, qty} items.",
    "Why does CI fail?",
    "Add a retry to the client.",
    "Rename order to orders.",
    "Redact the logged session id.",
    "Why does deploy hang?",
)


def parse_size(text: str) -> int:
    """`100MB`, `1GB`, `512KiB`, `2000000` → bytes (decimal units; KiB/MiB/GiB binary)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).upper() if match else ""
    if match is None or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 10MB, 1GB, 512KiB)")
    return int(float(match.group(1)) * _UNITS[unit])


def format_size(count: float) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if count >= scale:
            return f"{count / scale:g}{unit}" if count % scale == 0 else f"{count / scale:.1f}{unit}"
    return f"{int(count)}B"


class TextPool:
    """~1 MB of code- and log-like text (quotes, backslashes, tabs, non-ASCII) from the seed; slices of it
    are message and tool contents, so making content costs a slice, not a random draw per character."""

    def __init__(self, seed: int) -> None:
        generator = random.Random(seed)
        lines: list[str] = []
        for _ in range(4096):
            indent = "    " * generator.randrange(4) if generator.random() < 0.8 else "\t"
            tokens = generator.choices(WORDS, k=generator.randrange(2, 14))
            for _ in range(generator.randrange(0, 4)):
                tokens.insert(generator.randrange(len(tokens) + 1), generator.choice(PUNCTUATION))
            lines.append(indent + " ".join(tokens))
        average = sum(len(line) + 1 for line in lines) / len(lines)
        self.text = "\n".join(generator.choices(lines, k=int(POOL_CHARS / average) + 1))

    def take(self, generator: random.Random, length: int) -> str:
        length = max(1, min(length, len(self.text)))
        start = generator.randrange(len(self.text) - length + 1)
        return self.text[start : start + length]


class ShortTextPool(TextPool):
    """The same text in slices of at most 60 characters: with short messages and tool results, a session
    holds the most ids and entries per byte, the worst case for state per MB."""

    def take(self, generator: random.Random, length: int) -> str:
        return super().take(generator, min(length, 60))


@dataclass
class Source:
    path: str  # relative to the corpus folder
    bytes: int
    ending: str  # "clean" or one of ENDINGS[format]
    files: list[tuple[str, int]] = field(default_factory=list)  # Claude Code: every file, its bytes
    # Claude Code: resumed_from, subagents; Codex: session_id, role, parent, family, cli_version, compacted
    extra: dict[str, object] = field(default_factory=dict)


@dataclass
class Corpus:
    format: str
    seed: int
    size: int
    root: Path
    sources: list[Source] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)  # Codex: files, families, the builder's totals

    @property
    def total_bytes(self) -> int:
        return sum(source.bytes for source in self.sources)

    def manifest(self) -> dict[str, object]:
        counts: dict[str, object] = {}
        if any(source.files for source in self.sources):  # Claude Code: sessions and files counted
            counts = {
                "sessions": len(self.sources),
                "files": sum(len(source.files) for source in self.sources),
            }
        return {
            "format": self.format,
            "seed": self.seed,
            "size": self.size,
            "total_bytes": self.total_bytes,
            **counts,
            **self.extra,
            "sources": [
                {
                    "path": source.path,
                    "bytes": source.bytes,
                    "ending": source.ending,
                    "verdict": EXPECTED_VERDICT[source.ending],
                    **({"files": [{"path": p, "bytes": b} for p, b in source.files]} if source.files else {}),
                    **source.extra,
                }
                for source in self.sources
            ],
        }


# --- tiny-agent -------------------------------------------------------------------------------------------
def _short_result_length(generator: random.Random, cap: int) -> int:
    """A short tool result: 20 to 120 characters (60 at most from a ShortTextPool). The dense sessions of
    tests/formats/tiny_agent/test_memory.py (the plain writer with short contents) use it."""
    return generator.randrange(20, 120)


def _dense_result_length(generator: random.Random, cap: int) -> int:
    """A dense session's tool result: 4 to 40 characters (`ok`, a line number, a short match)."""
    return generator.randrange(4, 40)


def _result_length(generator: random.Random, cap: int) -> int:
    """A tool result's size: mostly short or a few KB, some tens of KB, a few 100 KB+."""
    roll = generator.random()
    if roll < 0.35:
        length = generator.randrange(20, 600)
    elif roll < 0.80:
        length = generator.randrange(600, 8 * KIB)
    elif roll < 0.97:
        length = generator.randrange(8 * KIB, 48 * KIB)
    else:
        length = generator.randrange(100 * KIB, 300 * KIB)
    return max(20, min(length, cap))


def _call(
    generator: random.Random,
    pool: TextPool,
    index: int,
    tools: Sequence[str] = TOOLS,
    edit: tuple[int, int] = (80, 120),
) -> Call:
    """A tool call among `tools`; an edit replaces `edit[0]` characters by `edit[1]`."""
    name = generator.choice(tools)
    path = f"src/{generator.choice(WORDS[:40])}/{generator.choice(WORDS[:40])}_{index}.py"
    arguments: dict[str, object]
    if name == "read":
        arguments = {"path": path}
    elif name == "grep":
        arguments = {"pattern": generator.choice(WORDS[:60]), "path": "src"}
    elif name == "edit":
        arguments = {"path": path, "old": pool.take(generator, edit[0]), "new": pool.take(generator, edit[1])}
    else:
        arguments = {"command": f"pytest -q tests/test_{generator.choice(WORDS[:40])}.py"}
    return Call(name, arguments)


class TinyAgentWriter:
    """Drives a streaming `SessionBuilder` until its file holds about `target` bytes, then the ending."""

    configuration: ClassVar[Configuration | None] = None  # the builder's own: four tools
    # a compaction once the session grew by this factor (numerator, denominator) since the last one
    compaction_growth: ClassVar[tuple[int, int]] = (3, 2)

    def __init__(
        self,
        builder: SessionBuilder,
        generator: random.Random,
        pool: TextPool,
        target: int,
        result_length: Callable[[random.Random, int], int] = _result_length,
    ) -> None:
        self.builder, self.random, self.pool, self.target = builder, generator, pool, target
        self.result_length = result_length
        self.cap = max(256, target // 8)  # a small session is not one giant tool result
        self.next_compaction = FIRST_COMPACTION

    def run(self) -> None:
        builder, generator, pool = self.builder, self.random, self.pool
        operation = builder.start_run(
            generator.choice(QUESTIONS) + "\n" + pool.take(generator, generator.randrange(20, 600))
        )
        for _ in range(generator.choice((1, 2, 2, 3, 3, 4, 5, 6))):
            if builder.bytes_written >= self.target:
                break
            step = builder.step(operation)
            if generator.random() < 0.03:
                step = builder.retry(step)  # attempt 1 timed out; attempt 2 answers
            if generator.random() < 0.02:  # the user pressed escape while the model was thinking
                builder.abort(operation)
                builder.step_failed(step, "aborted", "Operation aborted")
                builder.finish(operation, "aborted")
                return
            calls = [_call(generator, pool, index) for index in range(generator.choice((1, 1, 1, 2, 2, 3)))]
            broken = generator.random() < 0.02
            if broken:
                calls[0] = Call(calls[0].name, raw_arguments='{"path": "src/')
            thought = pool.take(generator, generator.randrange(10, 300)) if generator.random() < 0.6 else None
            answer = builder.assistant(step, thought, calls=calls)
            for index in range(len(calls)):
                if broken and index == 0:
                    builder.pre_execution(answer, 0, "invalidArguments")
                    continue
                intent = builder.start_tool(answer, index)
                content = pool.take(generator, self.result_length(generator, self.cap))
                usage = TokenUsage(input=generator.randrange(100, 4000), output=generator.randrange(10, 500))
                builder.tool_result(
                    intent,
                    content,
                    outcome="error" if generator.random() < 0.1 else "success",
                    usage=usage if generator.random() < 0.05 else None,
                )
        reply = pool.take(generator, generator.randrange(40, 2000)).strip() or "Done."
        builder.assistant(builder.step(operation), reply)
        builder.finish(operation)
        builder.wait(generator.randrange(1_000, 600_000))

    def write(self, ending: str) -> None:
        builder = self.builder
        while builder.bytes_written < self.target:
            written = builder.bytes_written
            if written >= self.next_compaction and len(builder.message_entry_ids) >= 2:
                summary = self.pool.take(self.random, self.random.randrange(500, 4000))
                # retain the last message, unless it is a tool result (after an aborted run): a retained
                # tail must be a legal transcript on its own (spec §8.6), not begin with an answer
                builder.compact(summary, keep_last=builder.retainable(1))
                numerator, denominator = self.compaction_growth
                self.next_compaction = max(written + FIRST_COMPACTION, written * numerator // denominator)
            self.run()
        if ending != "clean":
            self.crash(ending)

    def crash(self, ending: str) -> None:
        builder, generator = self.builder, self.random
        if ending == "torn-tail":  # killed while writing the next user input + runStarted line
            builder.tear_next(generator.randrange(1, 40))
            builder.start_run(generator.choice(QUESTIONS))
            return
        operation = builder.start_run(generator.choice(QUESTIONS))
        step = builder.step(operation)
        if ending == "open-model":  # killed while the model request was in flight
            return
        answer = builder.assistant(step, None, calls=[Call("bash", {"command": "./deploy.sh --prod"})])
        builder.start_tool(answer, 0)  # bash: replay "never"; killed while the tool ran


class DenseTinyAgentWriter(TinyAgentWriter):
    """A session with the most facts per byte: ≈ 2,000 facts/MB in ≈ 700 B lines, a third of them arrays
    (the shape of tiny-agent's own short sessions). Short contents (a ShortTextPool, 4-40 character tool
    results, short prompts and answers); the three tools tiny-agent's example sessions configure (each
    `stepAttempt` snapshots three tool digests, not four); a third of the runs answered without tools, the
    others 1-3 steps of 2-7 calls; most tool results with their tool usage in the same line; a user
    message mostly written on its own before its run starts (typed while the agent was busy), and now and
    then the final answer and its `operationFinished` in one transaction; a compaction each time the
    session tripled (its `compactionStarted` lists every message id so far: many bytes, one fact)."""

    configuration = Configuration(tools=DENSE_TOOLS)
    compaction_growth = (3, 1)
    TOOL_USAGE: ClassVar[float] = 0.7  # the share of tool results with their usage in the same line
    USER_ALONE: ClassVar[float] = 0.8  # the share of runs whose user message is a line of its own
    FINISH_WITH_ANSWER: ClassVar[float] = 0.3  # the share of runs ending [answer, usage, finished]
    STEPS: ClassVar[tuple[int, ...]] = (0, 0, 1, 1, 2, 3)  # tool steps of a run (0: answered directly)
    CALLS: ClassVar[tuple[int, ...]] = (2, 3, 4, 5, 6, 7)  # calls of an answer, one drawn

    def run(self) -> None:
        builder, generator, pool = self.builder, self.random, self.pool
        question = generator.choice(SHORT_QUESTIONS)
        if generator.random() < self.USER_ALONE:
            operation = builder.start_run(input_entry_id=builder.user(question))
        else:
            operation = builder.start_run(question)
        for _ in range(generator.choice(self.STEPS)):
            if builder.bytes_written >= self.target:
                break
            step = builder.step(operation)
            if generator.random() < 0.03:
                step = builder.retry(step)  # attempt 1 timed out; attempt 2 answers
            if generator.random() < 0.02:  # the user pressed escape while the model was thinking
                builder.abort(operation)
                builder.step_failed(step, "aborted", "Operation aborted")
                builder.finish(operation, "aborted")
                return
            count = generator.choice(self.CALLS)
            calls = [_call(generator, pool, index, DENSE_TOOLS, (10, 24)) for index in range(count)]
            broken = generator.random() < 0.02
            if broken:
                calls[0] = Call(calls[0].name, raw_arguments='{"path": "src/')
            thought = pool.take(generator, generator.randrange(10, 40)) if generator.random() < 0.5 else None
            answer = builder.assistant(step, thought, calls=calls)
            for index in range(count):
                if broken and index == 0:
                    builder.pre_execution(answer, 0, "invalidArguments")
                    continue
                intent = builder.start_tool(answer, index)
                content = pool.take(generator, self.result_length(generator, self.cap))
                usage = TokenUsage(input=generator.randrange(100, 4000), output=generator.randrange(10, 500))
                builder.tool_result(
                    intent,
                    content,
                    outcome="error" if generator.random() < 0.1 else "success",
                    usage=usage if generator.random() < self.TOOL_USAGE else None,
                )
        final = builder.step(operation)
        reply = pool.take(generator, generator.randrange(10, 60)).strip() or "Done."
        together = generator.random() < self.FINISH_WITH_ANSWER
        with builder.transaction():
            builder.assistant(final, reply)
            if together:
                builder.finish(operation)
        if not together:
            builder.finish(operation)
        builder.wait(generator.randrange(1_000, 600_000))


class ShapeCounter(io.BufferedWriter):
    """A session file's buffered writer that counts what the builder writes into it: complete lines (the
    builder writes each in one call: the header, then one transaction a call; a torn tail has no LF and is
    no line), the lines that are arrays, and their facts (each has one `,"seq":` key; inside a JSON string
    that quote would be escaped)."""

    lines = 0
    array_lines = 0
    facts = 0

    def write(self, buffer: ReadableBuffer, /) -> int:
        data = bytes(buffer)
        if data.endswith(b"\n"):
            self.lines += 1
            self.array_lines += data.startswith(b"[")
            self.facts += data.count(b',"seq":')
        return super().write(data)

    def shape(self) -> dict[str, object]:
        """The counts corpus.json records for the source (`bytes` is the source's own field)."""
        return {"facts": self.facts, "lines": self.lines, "array_lines": self.array_lines}


def tiny_agent_source(folder: Path, seed: int, index: int, target: int, pool: TextPool, ending: str) -> Path:
    created_at = DEFAULT_CREATED_AT + index * 3_600_000
    session_seed = seed * 1_000_003 + index
    return write_tiny_agent(folder, session_seed, created_at, target, pool, ending)


def dense_tiny_agent_source(
    folder: Path, seed: int, index: int, target: int, pool: TextPool, ending: str
) -> tuple[Path, dict[str, object]]:
    """A dense tiny-agent session (DenseTinyAgentWriter, short contents from a ShortTextPool) and its
    facts, lines and array lines as written."""
    created_at = DEFAULT_CREATED_AT + index * 3_600_000
    session_seed = seed * 1_000_003 + index
    dense = ShortTextPool(seed) if type(pool) is TextPool else pool
    return _write_session(
        folder, session_seed, created_at, target, dense, ending, _dense_result_length, DenseTinyAgentWriter
    )


def write_tiny_agent(
    folder: Path,
    session_seed: int,
    created_at: int,
    target: int,
    pool: TextPool,
    ending: str,
    result_length: Callable[[random.Random, int], int] = _result_length,
    writer: type[TinyAgentWriter] = TinyAgentWriter,
) -> Path:
    """One session of about `target` bytes, its name tiny-agent's own, its content from (seed, pool)."""
    return _write_session(folder, session_seed, created_at, target, pool, ending, result_length, writer)[0]


def _write_session(
    folder: Path,
    session_seed: int,
    created_at: int,
    target: int,
    pool: TextPool,
    ending: str,
    result_length: Callable[[random.Random, int], int],
    writer: type[TinyAgentWriter],
) -> tuple[Path, dict[str, object]]:
    path = folder / session_file_name(created_at, SessionBuilder.session_id_for(session_seed, created_at))
    with ShapeCounter(io.FileIO(path, "xb"), buffer_size=1 << 20) as stream:
        builder = SessionBuilder(
            seed=session_seed,
            created_at=created_at,
            cwd="/home/dev/shop",
            sink=stream,
            message_memory=16,
            configuration=writer.configuration,
        )
        writer(builder, random.Random(session_seed ^ 0x5EED), pool, target, result_length).write(ending)
    return path, stream.shape()


# --- Rivumi ----------------------------------------------------------------------------------------------
_RIVUMI_TOOLS: Final = (
    ("read_file", "read"),
    ("search", "read"),
    ("replace_text", "modify"),
    ("run", "execute"),
)


def _run_size(run_dir: Path) -> int:
    return sum(entry.stat().st_size for entry in run_dir.iterdir() if entry.is_file())


def rivumi_source(root: Path, seed: int, index: int, target: int, pool: TextPool, ending: str) -> Path:
    generator = random.Random(seed * 1_000_003 + index)
    builder = RunBuilder(
        root,
        seed=seed * 1_000_003 + index,
        start=DEFAULT_START + timedelta(minutes=17 * index),
        instruction=generator.choice(QUESTIONS),
    )
    builder.start()
    cap = max(200, min(32 * KIB, target // 6))

    def turn(calls: list[RivumiCall]) -> None:
        for call in builder.model_turn(tool_calls=calls, content=pool.take(generator, 120)):
            output = pool.take(generator, generator.randrange(20, cap))
            builder.tool_call(call, decision="allow_session", ok=generator.random() > 0.1, output=output)

    def calls() -> list[RivumiCall]:
        chosen = [generator.choice(_RIVUMI_TOOLS) for _ in range(generator.choice((1, 1, 2, 3)))]
        return [
            RivumiCall(name, {"path": f"src/{generator.choice(WORDS[:40])}.py"}, effect)
            for name, effect in chosen
        ]

    try:
        while _run_size(builder.run_dir) < target and builder.step < 10:
            planned = calls()
            if ending != "clean" and _run_size(builder.run_dir) * 2 >= target:
                _arm_crash(builder, ending, planned)
            turn(planned)
        if ending in ("tool-started", "manifest-ahead"):  # the run was too short to reach its crash point
            planned = calls()
            _arm_crash(builder, ending, planned)
            turn(planned)
        if ending == "model-requested":
            builder.crash = Crash(event_type="model.requested", occurrence=1)
        builder.model_turn(content=pool.take(generator, generator.randrange(40, 800)).strip() or "Done.")
        builder.verify(decision="allow_session")
        builder.finish()
    except Killed:
        pass
    return builder.run_dir


def _arm_crash(builder: RunBuilder, ending: str, calls: list[RivumiCall]) -> None:
    """Kill the writer during this turn: after its first non-read `tool.started`, or in the middle of its
    `model.completed` (manifest saved, event never appended: the manifest is one ahead); `model-requested`
    waits for the final turn."""
    if builder.crash is not None or ending == "model-requested":
        return  # armed already (it fires in the turn it was armed for), or waits for the final turn
    if ending == "tool-started":
        calls[0] = RivumiCall("run", {"argv": ["./deploy.sh", "--prod"]}, "execute")
        builder.crash = Crash(event_type="tool.started", occurrence=1)
    else:
        builder.crash = Crash(event_type="model.completed", occurrence=1, mode=CrashMode.BEFORE_APPEND)


# --- Half-Pi ---------------------------------------------------------------------------------------------
def _store_bytes(store: StoreBuilder) -> int:
    """The store's logical size (its pages, the -wal's included), as its file will be once checkpointed."""
    pages = store.connection.execute("PRAGMA page_count").fetchone()[0]
    page_size = store.connection.execute("PRAGMA page_size").fetchone()[0]
    return int(pages) * int(page_size)


# --- Half-Pi (writer) ----------------------------------------------------------------------------------
def half_pi_source(folder: Path, seed: int, index: int, target: int, pool: TextPool, ending: str) -> Path:
    path = folder / f"store-{index:04d}" / "db" / "half-pi.db"
    generator = random.Random(seed * 1_000_003 + index)
    store = StoreBuilder(path, seed=seed * 1_000_003 + index)
    written = 0
    cap = max(200, min(48 * KIB, target // 20))
    try:
        chat = store.session(f"/home/dev/project-{index}")
        while written < target:
            if generator.random() < 0.05:
                chat = store.session(f"/home/dev/project-{index}")
            question = generator.choice(QUESTIONS)
            chat.user(question)
            store.admitted(chat, question)
            for turn in range(generator.choice((1, 2, 3))):
                calls = []
                results = []
                for number in range(generator.choice((1, 1, 2))):
                    arguments = {"path": f"src/{generator.choice(WORDS[:40])}.go"}
                    calls.append(HalfPiCall(f"call_{turn}_{number}", "read_file", json.dumps(arguments)))
                    results.append(pool.take(generator, generator.randrange(20, cap)))
                    store.local_tool(chat, "read_file", arguments, outcome="succeeded")
                chat.assistant(
                    pool.take(generator, 100) if generator.random() < 0.5 else "",
                    calls=calls,
                    results=results,
                )
            answer = pool.take(generator, generator.randrange(40, 1500)).strip() or "Done."
            chat.assistant(answer)
            written = _store_bytes(store)
        if ending != "clean":  # the Mind died while the model answered the last request
            question = generator.choice(QUESTIONS)
            chat.user(question)
            store.admitted(chat, question)
        store.finish()
    except BaseException:
        store.discard()
        raise
    return path


# --- Claude Code -----------------------------------------------------------------------------------------
_CLAUDE_CODE_OLD: Final = ("2.0.55", "claude-sonnet-4-5-20250929")  # sub-agents beside the session
_CLAUDE_CODE_AGENT_MODEL: Final = "claude-haiku-4-5-20251001"
_CLAUDE_CODE_TOOLS: Final = ("Read", "Read", "Grep", "Glob", "Edit", "Bash", "Bash", "Write")


class ClaudeCodeWriter:
    """Drives one family's `TranscriptBuilder`s (a session, its sub-agents, the session resumed from it)
    until the family holds about `target` bytes, then its ending. The builder keeps the family in memory
    until `finish()`; the bytes are counted as they are made (each new line serialised once)."""

    def __init__(
        self, builder: TranscriptBuilder, generator: random.Random, pool: TextPool, target: int, old: bool
    ) -> None:
        self.builder, self.random, self.pool, self.target, self.old = builder, generator, pool, target, old
        self.cap = max(256, target // 8)  # a small family is not one giant tool result
        self.counted: dict[str, int] = {}
        self.bytes = 0
        self.context = generator.randrange(8_000, 20_000)  # cached prompt tokens (system, tools)
        self.next_compaction = 10**6

    def written(self) -> int:
        for key, state in self.builder.family.files.items():
            done = self.counted.get(key, 0)
            self.bytes += sum(len(dump_line(line.data)) for line in state.lines[done:])
            self.counted[key] = len(state.lines)
        return self.bytes

    def usage(self, output: tuple[int, int] = (20, 1_500)) -> Usage:
        generator = self.random
        written = generator.randrange(40, 4_000)
        usage = Usage(
            generator.randrange(1, 9),
            generator.randrange(*output),
            cache_5m=written if generator.random() < 0.9 else 0,
            cache_1h=0 if generator.random() < 0.9 else written,
            cache_read=self.context,
        )
        self.context += written
        return usage

    def tool(self, cwd: str, index: int) -> ToolUse:
        generator, pool = self.random, self.pool
        name = generator.choice(_CLAUDE_CODE_TOOLS)
        path = f"{cwd}/src/{generator.choice(WORDS[:40])}/{generator.choice(WORDS[:40])}_{index}.py"
        if name == "Read":
            return ToolUse(name, {"file_path": path})
        if name == "Grep":
            return ToolUse(name, {"pattern": generator.choice(WORDS[:60]), "output_mode": "content"})
        if name == "Glob":
            return ToolUse(name, {"pattern": f"src/**/*{generator.choice(WORDS[:40])}*.py"})
        if name == "Edit":
            old, new = pool.take(generator, 80), pool.take(generator, 120)
            return ToolUse(name, {"file_path": path, "old_string": old, "new_string": new})
        if name == "Write":
            return ToolUse(name, {"file_path": path, "content": pool.take(generator, 1_500)})
        command = f"python -m pytest -q tests/test_{generator.choice(WORDS[:40])}.py"
        return ToolUse(name, {"command": command, "description": "Run the tests"})

    def answer(self, builder: TranscriptBuilder, call: ClaudeCall) -> None:
        generator = self.random
        # near the target the results shrink, so that the last turn lands close to it
        cap = max(256, min(self.cap, (self.target - self.written()) // 10))
        content = self.pool.take(generator, _result_length(generator, cap))
        builder.tool_result(call, content, is_error=generator.random() < 0.08)

    def respond(
        self, builder: TranscriptBuilder, calls: list[ToolUse], final: bool = False
    ) -> tuple[ClaudeCall, ...]:
        """One streamed response: maybe thinking, maybe text, then the calls; the calls as written."""
        generator, pool = self.random, self.pool
        blocks: list[Thinking | Text | ToolUse] = []
        if generator.random() < 0.5:
            blocks.append(Thinking(pool.take(generator, generator.randrange(40, 1_500))))
        if final or not calls or generator.random() < 0.7:
            length = generator.randrange(40, 2_000) if final else generator.randrange(20, 400)
            blocks.append(Text(pool.take(generator, length).strip() or "Done."))
        blocks.extend(calls)
        streaming: Streaming = "identical" if generator.random() < 0.1 else "growing"
        return builder.assistant(blocks, usage=self.usage(), streaming=streaming).calls

    def agent(self, builder: TranscriptBuilder, task: ClaudeCall) -> None:
        """The sub-agent `task` spawns: its own file, a few tool steps, an answer; then the Task result."""
        generator = self.random
        agent = builder.subagent(
            task, layout="beside" if self.old else "folder", model=_CLAUDE_CODE_AGENT_MODEL
        )
        agent.user(str(task.input["prompt"]))
        for _ in range(generator.randrange(1, 5)):
            response = agent.assistant(
                [
                    self.tool(builder.cwd, generator.randrange(100))
                    for _ in range(generator.choice((1, 1, 2)))
                ],
                usage=self.usage((20, 300)),
            )
            for call in response.calls:
                self.answer(agent, call)
        text = self.pool.take(generator, generator.randrange(100, 1_500)).strip() or "Nothing found."
        agent.assistant([Text(text)], usage=self.usage())
        builder.agent_result(task, agent, text)

    def turn(self, builder: TranscriptBuilder) -> None:
        """A prompt and the model's work on it: 1-6 responses with calls, then the answer."""
        generator, pool = self.random, self.pool
        builder.user(generator.choice(QUESTIONS) + "\n" + pool.take(generator, generator.randrange(20, 600)))
        if generator.random() < 0.01:  # an overloaded API: Claude Code's own error line, then a retry
            error = 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}'
            builder.synthetic(error, error="server_error")
            builder.user("Try again.")
        for _ in range(generator.choice((1, 2, 2, 3, 3, 4, 5, 6))):
            count = generator.choice((1, 1, 1, 2, 2, 3))
            calls = [self.tool(builder.cwd, index) for index in range(count)]
            if builder.agent_id is None and generator.random() < 0.05:
                prompt = generator.choice(QUESTIONS) + " Survey the code and report."
                description = "Survey the code"
                calls = [ToolUse("Task", {"description": description, "prompt": prompt,
                                          "subagent_type": "general-purpose"})]  # fmt: skip
            made = self.respond(builder, calls)
            if len(made) == 1 and made[0].name == "Bash" and generator.random() < 0.02:
                builder.interrupt(made[0])  # Esc while it ran: the turn ends there
                return
            for call in made:
                if call.name == "Task":
                    self.agent(builder, call)
                else:
                    self.answer(builder, call)
        self.respond(builder, [], final=True)

    def write(self, ending: str, resumed: bool) -> TranscriptBuilder:
        """The family: turns until about `target` bytes, one resume at a third of the way when `resumed`,
        then the ending. The family's last session builder. Tool results shrink near the target, so each
        turn is smaller than the one before; it stops a quarter of the last turn short of the target (found
        by measuring: a half fell 3% short over a 100 MB corpus, none passed it by 4%)."""
        builder = self.builder
        while True:
            before = self.written()
            self.turn(builder)
            written = self.written()
            if written + (written - before) / 4 >= self.target:
                break
            if resumed and builder.file.kind == "session" and written >= self.target / 3:
                builder, resumed = builder.resume(), False
                written = self.written()  # the copy of the first session
            if written >= self.next_compaction:
                summary = self.pool.take(self.random, self.random.randrange(500, 4_000))
                builder.compact(summary, trigger="auto", pre_tokens=self.context)
                self.context = self.random.randrange(8_000, 20_000)
                self.next_compaction = written * 3 // 2
        self.crash(builder, ending)
        return builder

    def crash(self, builder: TranscriptBuilder, ending: str) -> None:
        generator = self.random
        if ending == "clean":
            return
        if ending == "torn-prompt":  # killed while writing the next prompt's line
            builder.user(generator.choice(QUESTIONS) + "\n" + self.pool.take(generator, 400))
            builder.crash(torn=True)
            return
        builder.user(generator.choice(QUESTIONS))
        deploy = ToolUse("Bash", {"command": "./deploy.sh --prod", "description": "Deploy"})
        (call,) = self.respond(builder, [deploy])
        if ending == "dangling-tool":  # killed while the Bash call ran
            builder.crash()
            return
        builder.tool_result(call, self.pool.take(generator, generator.randrange(200, 2_000)))
        builder.crash(torn=True)  # killed while writing its result


def claude_code_family(
    out: Path, seed: int, index: int, target: int, pool: TextPool, ending: str, projects: int
) -> list[Source]:
    """One family of sessions in project directory `index % projects`; its sources (session files)."""
    family_seed = seed * 1_000_003 + index
    generator = random.Random(family_seed ^ 0xC1A0DE)
    old = generator.random() < 0.2
    version, model = _CLAUDE_CODE_OLD if old else ("2.1.79", "claude-opus-4-6")
    project = index % projects
    builder = TranscriptBuilder(
        out,
        f"/home/dev/shop-{project:03d}",
        seed=family_seed,
        version=version,
        model=model,
        start=CLAUDE_CODE_START + timedelta(hours=5 * index),
    )
    resumed = generator.random() < 0.15
    last = ClaudeCodeWriter(builder, generator, pool, target, old).write(ending, resumed)
    built = builder.finish()
    sources: list[Source] = []
    states = builder.family.files
    sessions = [state for state in states.values() if state.kind == "session"]
    for number, session in enumerate(sessions):
        own = [session.key] + [
            key
            for state in states.values()
            if state.kind == "subagent" and state.session_id == session.session_id
            for key in (state.key, *(() if state.sidecar is None else (state.sidecar[0],)))
        ]
        files = [(f"projects/{key}", (out / "projects" / key).stat().st_size) for key in own]
        extra: dict[str, object] = {"subagents": sum(key.endswith(".jsonl") for key in own[1:])}
        if number > 0:
            extra["resumed_from"] = f"projects/{sessions[number - 1].key}"
        sources.append(
            Source(
                files[0][0],
                sum(size for _, size in files),
                ending if session is last.file else "clean",
                files,
                extra,
            )
        )
    assert sum(len(source.files) for source in sources) == len(built.files)
    return sources


# --- Codex ----------------------------------------------------------------------------------------------
# The builder's own manifest beside the rollouts (its totals: what the corpus holds, tallied while it wrote)
CODEX_MANIFEST: Final = CODEX_MANIFEST_NAME
_ROLLOUT_PATH: Final = re.compile(
    r"sessions/(\d{4})/(\d{2})/(\d{2})/rollout-(\d{4})-(\d{2})-(\d{2})T\d{2}-\d{2}-\d{2}-"
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl"
)
_CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
DOUBLED_CLI_VERSION: Final = "0.46.0"  # the builder's doubled-token-count sessions (and only they) say it


def codex_rollout(out: Path, path: Path) -> dict[str, object]:
    """What one rollout is, read from its bytes alone: its session id (its first line's session_meta; the
    file's name must carry it), its role (`fork`: `forked_from_id`; `subagent`: a `thread_spawn` source;
    else `root`) and the session it copies, its `cli_version`, whether it holds a compaction, and its
    ending: `torn-turn` (the last line cut: no final newline), `killed` (a tool call with no output on
    disk), else `clean`."""
    relative = path.relative_to(out).as_posix()
    data = path.read_bytes()
    complete = data.split(b"\n")[:-1]  # a torn last line (no newline) is left out
    fact: dict[str, object] = {"path": relative, "bytes": len(data), "errors": []}
    errors: list[str] = []
    named = _ROLLOUT_PATH.fullmatch(relative)
    if named is None or named.group(1, 2, 3) != named.group(4, 5, 6):
        errors.append("not named sessions/YYYY/MM/DD/rollout-<that day>T<time>-<uuid>.jsonl")
    try:
        first = json.loads(complete[0]) if complete else None
    except ValueError:
        first = None
    meta = first.get("payload") if isinstance(first, dict) and first.get("type") == "session_meta" else None
    if not isinstance(meta, dict):
        fact["errors"] = [*errors, "its first line is not a session_meta"]
        return fact
    source = meta.get("source")
    spawn = source.get("subagent") if isinstance(source, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    if meta.get("forked_from_id"):
        fact.update(role="fork", parent=meta["forked_from_id"])
    elif isinstance(spawn, dict):
        fact.update(role="subagent", parent=spawn.get("parent_thread_id"))
    else:
        fact.update(role="root", parent=None)
    fact["session_id"] = meta.get("id")
    if named is not None and named.group(7) != meta.get("id"):
        errors.append(f"named {named.group(7)}, its session_meta says {meta.get('id')}")
    fact["cli_version"] = meta.get("cli_version")
    calls: set[str] = set()
    answered: set[str] = set()
    compacted = False
    for raw in complete[1:]:
        record = json.loads(raw)
        compacted = compacted or record.get("type") == "compacted"
        payload = record.get("payload")
        if record.get("type") == "response_item" and isinstance(payload, dict):
            kind = payload.get("type")
            if kind in _CALLS:
                calls.add(str(payload.get("call_id")))
            elif kind in _OUTPUTS:
                answered.add(str(payload.get("call_id")))
    fact["compacted"] = compacted
    torn = not data.endswith(b"\n")
    fact["ending"] = "torn-turn" if torn else ("killed" if calls - answered else "clean")
    fact["errors"] = errors
    return fact


def _codex_family(fact: dict[str, object], children: dict[str, str]) -> str:
    """The builder's kind of the family a root rollout heads (bench: the `kinds` of its manifest)."""
    session_id = str(fact["session_id"])
    if session_id in children:
        return children[session_id]  # "fork" or "subagent": the parent of one
    if fact["cli_version"] == DOUBLED_CLI_VERSION:
        return "doubled"
    if fact["compacted"]:
        return "compaction"
    return {"torn-turn": "torn", "killed": "killed"}.get(str(fact["ending"]), "long")


def codex_facts(out: Path) -> list[dict[str, object]]:
    """Every rollout below `out/sessions`, read (codex_rollout), with the kind of its family."""
    facts = [codex_rollout(out, path) for path in sorted((out / "sessions").rglob("*.jsonl"))]
    children = {str(fact["parent"]): str(fact["role"]) for fact in facts if fact.get("role") != "root"}
    by_id = {str(fact.get("session_id")): fact for fact in facts}
    for fact in facts:
        if "role" not in fact:
            continue
        head = by_id.get(str(fact["parent"])) if fact["role"] != "root" else fact
        fact["family"] = None if head is None else _codex_family(head, children)
    return facts


def codex_corpus(out: Path, size: int, seed: int) -> Corpus:
    """A Codex home in `out` written by the project's `build_corpus` (sessions/YYYY/MM/DD/rollout-*.jsonl,
    its manifest.json beside them): one source per rollout, each with its session id, role, the session
    it copies, its family's kind and its ending, read back from the files (codex_rollout)."""
    built = build_codex_corpus(out, size, seed=seed)
    truth = built["corpus"]
    assert isinstance(truth, dict)
    corpus = Corpus("codex", seed, size, out)
    facts = codex_facts(out)
    for fact in facts:
        errors = fact.pop("errors")
        assert isinstance(errors, list)
        if errors or "family" not in fact:
            raise RuntimeError(f"{fact['path']}: {'; '.join(map(str, errors))}")
        path, size_, ending = str(fact.pop("path")), int(str(fact.pop("bytes"))), str(fact.pop("ending"))
        corpus.sources.append(Source(path, size_, ending, extra=fact))
    corpus.extra = {"files": len(facts), "families": truth["families"], "builder": truth}
    return corpus


def codex_manifest_errors(out: Path, manifest: dict[str, object]) -> list[str]:
    """Where a Codex corpus contradicts corpus.json or the builder's manifest.json: every rollout on disk
    listed with its bytes and nothing else beside them; each one's name, session id, role, parent, family
    and ending (read again from its bytes) as listed; the files, bytes, families and each kind of family
    the builder tallied; every fork and sub-agent copying a session of the corpus; and a total that
    passed the size asked by less than one family (the builder stops at the first family to reach it)."""
    found: list[str] = []
    sources = manifest["sources"]
    builder = manifest.get("builder")
    assert isinstance(sources, list) and isinstance(builder, dict)
    listed = {str(source["path"]): source for source in sources}
    facts = codex_facts(out)
    on_disk = {str(fact["path"]): fact for fact in facts}
    others = sorted(
        path.relative_to(out).as_posix()
        for path in out.rglob("*")
        if path.is_file() and path.relative_to(out).as_posix() not in {MANIFEST, CODEX_MANIFEST, *on_disk}
    )
    found += [f"{path}: on disk, not in the manifest" for path in others]
    keys = ("bytes", "session_id", "role", "parent", "family", "ending", "cli_version", "compacted")
    for path, fact in on_disk.items():
        errors = fact["errors"]
        assert isinstance(errors, list)
        found += [f"{path}: {error}" for error in errors]
        source = listed.get(path)
        if source is None:
            found.append(f"{path}: on disk, not in the manifest")
            continue
        for key in keys:
            if fact.get(key) != source.get(key):
                found.append(f"{path}: {key} {fact.get(key)!r} on disk, manifest: {source.get(key)!r}")
    found += [f"{path}: listed, not on disk" for path in sorted(set(listed) - set(on_disk))]
    ids = {fact.get("session_id") for fact in facts}
    found += [
        f"{fact['path']}: copies {fact['parent']}, not a session of the corpus"
        for fact in facts
        if fact.get("role") not in (None, "root") and fact["parent"] not in ids
    ]
    total = sum(int(str(fact["bytes"])) for fact in facts)
    roots = [fact for fact in facts if fact.get("role") == "root"]
    kinds: dict[str, int] = {}
    for fact in roots:
        kinds[str(fact.get("family"))] = kinds.get(str(fact.get("family")), 0) + 1
    measured = {
        "files": len(facts),
        "bytes": total,
        "families": len(roots),
        "kinds": dict(sorted(kinds.items())),
    }
    for key, value in measured.items():
        if builder.get(key) != value:
            found.append(f"{key}: {value} on disk, the builder's manifest.json: {builder.get(key)}")
    if manifest.get("total_bytes") != total or manifest.get("files") != len(facts):
        found.append(f"corpus.json: {manifest.get('files')} files, {manifest.get('total_bytes')} bytes")
    family_bytes: dict[str, int] = {}
    for fact in facts:
        head = str(fact["session_id"] if fact.get("role") == "root" else fact.get("parent"))
        family_bytes[head] = family_bytes.get(head, 0) + int(str(fact["bytes"]))
    asked = manifest["size"]
    assert isinstance(asked, int)
    if not asked <= total < asked + max(family_bytes.values(), default=1):
        found.append(f"total_bytes {total}: not past the size asked, {asked}, by less than one family")
    return found


def codex_report_errors(manifest: dict[str, object], out: Path, report: dict[str, object]) -> list[str]:
    """Where a `sessaudit verify --format json` report on a Codex corpus contradicts its manifest beyond
    the verdicts: each rollout reported as one session with the session id listed, one open run in each
    crashed rollout (killed, torn-turn) and none elsewhere, a torn tail exactly in the torn ones, nothing
    skipped, and the usage summed over every session exactly the builder's totals (its own responses'
    usage, each counted once: copies in forks and sub-agents are not usage)."""
    sources = manifest["sources"]
    builder = manifest.get("builder")
    reported = report.get("sources")
    assert isinstance(sources, list) and isinstance(builder, dict) and isinstance(reported, list)
    by_path = {Path(item["path"]).resolve(): item for item in reported}
    found: list[str] = []
    for source in sources:
        item = by_path.get((out / source["path"]).resolve())
        if item is None:
            continue  # disagreements says so
        sessions = item.get("sessions", [])
        ids = [session.get("session_id") for session in sessions]
        if item.get("format") != "codex" or ids != [source["session_id"]]:
            found.append(
                f"{source['path']}: {item.get('format')} session(s) {ids}, manifest: {source['session_id']}"
            )
        runs = sum(run.get("state") == "open" for session in sessions for run in session.get("runs", []))
        if runs != (source["ending"] != "clean"):
            found.append(f"{source['path']}: {runs} open run(s), manifest: ending {source['ending']}")
        torn = any(session.get("torn_tail_bytes") for session in sessions)
        if torn != (source["ending"] == "torn-turn"):
            found.append(
                f"{source['path']}: torn tail {'reported' if torn else 'not reported'}, "
                f"manifest: ending {source['ending']}"
            )
    if report.get("skipped"):
        found.append(f"skipped: {report.get('skipped')}")
    usage = {"input_total": 0, "cache_read": 0, "output": 0, "reasoning": 0, "responses": 0}
    for item in reported:
        for session in item.get("sessions", []):
            for key in ("input_total", "cache_read", "output"):
                usage[key] += int(session.get("usage", {}).get(key) or 0)
            ledger = session.get("native", {}).get("ledger", {})
            usage["reasoning"] += int(ledger.get("reasoning_output_tokens") or 0)
            usage["responses"] += int(ledger.get("calls") or 0)
    totals = builder["totals"]
    assert isinstance(totals, dict)
    expected = {
        "input_total": totals["input_tokens"],
        "cache_read": totals["cached_input_tokens"],
        "output": totals["output_tokens"],
        "reasoning": totals["reasoning_output_tokens"],
        "responses": totals["responses"],
    }
    found += [
        f"usage {key}: {usage[key]} reported, the builder's totals: {value}"
        for key, value in expected.items()
        if usage[key] != value
    ]
    if usage["input_total"] + usage["output"] != totals["total_tokens"]:
        found.append(
            f"usage total: {usage['input_total'] + usage['output']} reported, "
            f"the builder's totals: {totals['total_tokens']}"
        )
    return found


WRITERS: Final[dict[str, Callable[[Path, int, int, int, TextPool, str], Path]]] = {
    "tiny-agent": tiny_agent_source,
    "rivumi": rivumi_source,
    "half-pi": half_pi_source,
}


def source_folder(out: Path, format_name: str) -> Path:
    folders = {
        "tiny-agent": ".tiny-agent/sessions",
        "rivumi": "runs",
        "half-pi": ".",
        "claude-code": "projects",
        "codex": "sessions",
    }
    return out / folders[format_name.removesuffix("-dense")]


def _bytes(path: Path) -> int:
    if path.is_dir():
        return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())
    return sum(
        candidate.stat().st_size
        for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
        if candidate.exists()
    )


_POOLS: dict[int, TextPool] = {}


# format, corpus folder, seed, index, target bytes, ending, project directories (Claude Code)
Job = tuple[str, Path, int, int, int, str, int]


def _write_source(job: Job) -> list[Source]:
    format_name, out, seed, index, target, ending, projects = job
    pool = _POOLS.get(seed)
    if pool is None:
        pool = _POOLS[seed] = TextPool(seed)
    if format_name == "claude-code":
        return claude_code_family(out, seed, index, target, pool, ending, projects)
    if format_name == "tiny-agent-dense":  # with its facts, lines and array lines (run.py: dense_shape)
        path, shape = dense_tiny_agent_source(
            source_folder(out, format_name), seed, index, target, pool, ending
        )
        return [Source(path.relative_to(out).as_posix(), _bytes(path), ending, extra=shape)]
    path = WRITERS[format_name](source_folder(out, format_name), seed, index, target, pool, ending)
    return [Source(path.relative_to(out).as_posix(), _bytes(path), ending)]


def claude_code_targets(size: int, count: int, seed: int) -> list[int]:
    """Each family's bytes: log-normally spread (a few sessions many times the median, as real ones are),
    summing to `size`."""
    generator = random.Random(seed ^ 0xC1A0DE)
    weights = [generator.lognormvariate(0.0, 0.9) for _ in range(count)]
    scale = size / sum(weights)
    targets = [max(1, int(weight * scale)) for weight in weights]
    targets[0] += size - sum(targets)
    return targets


def generate(
    format_name: str,
    size: int,
    out: Path,
    *,
    seed: int = 1,
    sessions: int | None = None,
    crash_every: int | None = None,
    workers: int = 1,
    progress: Callable[[str], None] | None = None,
) -> Corpus:
    """Write a corpus of about `size` bytes into the empty or new folder `out`; returns its manifest.
    `crash_every` defaults to 50; a Codex corpus is the builder's own mixture (`build_corpus`, one process:
    ~10 MB/s), so `sessions` and `crash_every` are refused for it."""
    if format_name not in FORMATS:
        raise ValueError(f"unknown format {format_name!r}; choose one of {', '.join(FORMATS)}")
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; the corpus goes into a new or empty folder")
    if format_name == "codex":
        if sessions is not None or crash_every is not None:
            raise ValueError("a codex corpus is the builder's own mixture: no --sessions or --crash-every")
        (out / "sessions").mkdir(parents=True, exist_ok=True)
        corpus = codex_corpus(out, size, seed)
        (out / MANIFEST).write_text(json.dumps(corpus.manifest(), indent=1) + "\n", encoding="utf-8")
        return corpus
    crash_every = 50 if crash_every is None else crash_every
    per_default = {"rivumi": RIVUMI_RUN_BYTES, "claude-code": CLAUDE_CODE_FAMILY_BYTES}
    count = (
        sessions
        if sessions is not None
        else (max(1, size // per_default[format_name]) if format_name in per_default else 1)
    )
    if count < 1 or size < count:
        raise ValueError(f"--sessions must be between 1 and the size in bytes, not {count}")
    folder = source_folder(out, format_name)
    folder.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(format_name, seed, size, out)
    endings = ENDINGS[format_name]
    per_source, remainder = divmod(size, count)
    targets = [per_source + (1 if index < remainder else 0) for index in range(count)]
    if format_name == "claude-code":
        targets = claude_code_targets(size, count, seed)
    projects = max(1, count // CLAUDE_CODE_FAMILIES_PER_PROJECT)
    jobs: list[Job] = []
    for index in range(count):
        ending = "clean"
        if crash_every and (index + 1) % crash_every == 0:
            ending = endings[((index + 1) // crash_every - 1) % len(endings)]
        jobs.append((format_name, out, seed, index, targets[index], ending, projects))
    # every source depends only on (seed, index): the same files whatever the number of workers
    workers = max(1, min(workers, count))
    with ExitStack() as stack:
        results: Iterator[list[Source]] = map(_write_source, jobs)
        if workers > 1:
            executor = stack.enter_context(ProcessPoolExecutor(workers))
            results = executor.map(_write_source, jobs, chunksize=4)
        for index, sources in enumerate(results):
            corpus.sources.extend(sources)
            if progress is not None and (index + 1) % max(1, count // 20) == 0:
                progress(f"{index + 1}/{count} sources, {format_size(corpus.total_bytes)}")
    (out / MANIFEST).write_text(json.dumps(corpus.manifest(), indent=1) + "\n", encoding="utf-8")
    return corpus


def load_manifest(out: Path) -> dict[str, object]:
    data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{out / MANIFEST}: not a corpus manifest")
    return data


def disagreements(out: Path, report: dict[str, object]) -> list[str]:
    """Where a `sessaudit verify --format json` report on the corpus in `out` contradicts its manifest:
    every source must be reported once, with the verdict its manifest entry says, and, where the entry
    lists its files (Claude Code), with those transcript files (the session's and its sub-agents') and no
    other (none: the corpus is what corpus.json claims, so a benchmark on it measured the work it claims);
    for a Codex corpus also its sessions, open runs, torn tails and usage totals (codex_report_errors)."""
    manifest = load_manifest(out)
    sources = manifest["sources"]
    reported = report.get("sources")
    assert isinstance(sources, list) and isinstance(reported, list)
    verdicts: dict[Path, list[str]] = {}
    files: dict[Path, list[Path]] = {}
    for item in reported:
        path = Path(item["path"]).resolve()
        verdicts.setdefault(path, []).append(str(item["verdict"]))
        files[path] = sorted(  # transcripts only: a nested agent's .meta.json sidecar is evidence too
            Path(entry["path"]).resolve()
            for entry in item.get("files", [])
            if entry["path"].endswith(".jsonl")
        )
    found = []
    for source in sources:
        expected = source.get("verdict", EXPECTED_VERDICT[source["ending"]])
        path = (out / source["path"]).resolve()
        got = verdicts.pop(path, [])
        if got != [expected]:
            said = ", ".join(got) or "not reported"
            found.append(f"{source['path']}: verdict {said}, manifest: {expected}")
        if "files" in source and got:
            listed = sorted(
                (out / entry["path"]).resolve()
                for entry in source["files"]
                if entry["path"].endswith(".jsonl")
            )
            if files.get(path) != listed:
                found.append(
                    f"{source['path']}: reported with {len(files.get(path, []))} transcript file(s), "
                    f"manifest: {len(listed)}"
                )
    found += [f"{path}: reported, not in the manifest" for path in sorted(verdicts)]
    if manifest.get("format") == "codex":
        found += codex_report_errors(manifest, out, report)
    return found


def manifest_errors(out: Path, tolerance: float = 0.05) -> list[str]:
    """Where the files on disk contradict a manifest that lists each source's files (Claude Code): a
    listed file missing or of another size, a file in the corpus that no source lists, the counts and
    totals, and a total more than `tolerance` away from the size asked for; for a Codex corpus,
    codex_manifest_errors (its own size rule: `tolerance` is not used). Empty for other manifests."""
    manifest = load_manifest(out)
    if manifest.get("format") == "codex":
        return codex_manifest_errors(out, manifest)
    sources = manifest["sources"]
    assert isinstance(sources, list)
    if not any("files" in source for source in sources):
        return []
    found: list[str] = []
    listed: dict[str, int] = {}
    for source in sources:
        entries = source.get("files", [])
        if sum(entry["bytes"] for entry in entries) != source["bytes"]:
            found.append(f"{source['path']}: its files do not add up to its {source['bytes']} bytes")
        listed.update((entry["path"], entry["bytes"]) for entry in entries)
    on_disk = {
        path.relative_to(out).as_posix(): path.stat().st_size
        for path in out.rglob("*")
        if path.is_file() and path.name != MANIFEST
    }
    for path, size in sorted(listed.items()):
        if path not in on_disk:
            found.append(f"{path}: listed, not on disk")
        elif on_disk[path] != size:
            found.append(f"{path}: {on_disk[path]} bytes on disk, manifest: {size}")
    found += [f"{path}: on disk, not in the manifest" for path in sorted(set(on_disk) - set(listed))]
    total = manifest["total_bytes"]
    assert isinstance(total, int)
    if total != sum(on_disk.values()):
        found.append(f"total_bytes {total}, on disk: {sum(on_disk.values())}")
    if manifest.get("files") != len(listed) or manifest.get("sessions") != len(sources):
        found.append(f"counts: {manifest.get('sessions')} sessions, {manifest.get('files')} files")
    asked = manifest["size"]
    assert isinstance(asked, int)
    if abs(total - asked) > tolerance * asked:
        found.append(f"total_bytes {total} is more than {tolerance:.0%} away from the size asked, {asked}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--format", required=True, choices=FORMATS)
    parser.add_argument("--size", required=True, type=parse_size, help="total bytes, e.g. 10MB, 1GB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, type=Path, help="a new or empty folder")
    parser.add_argument(
        "--sessions",
        type=int,
        default=None,
        help="sources to split the size over (default: 1; Rivumi: ~64 KB runs)",
    )
    parser.add_argument(
        "--crash-every",
        type=int,
        default=None,
        help="every K-th source ends in a crash (default 50; 0: none; not for codex)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="processes writing sources (default 2)",
    )
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    arguments = parser.parse_args(argv)
    if arguments.force and arguments.out.exists():
        shutil.rmtree(arguments.out)
    started = time.perf_counter()
    try:
        corpus = generate(
            arguments.format,
            arguments.size,
            arguments.out,
            seed=arguments.seed,
            sessions=arguments.sessions,
            crash_every=arguments.crash_every,
            workers=arguments.workers,
            progress=lambda text: print(text, file=sys.stderr, flush=True),
        )
    except (ValueError, FileExistsError) as error:
        print(f"corpus: {error}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started
    crashed = sum(source.ending != "clean" for source in corpus.sources)
    print(
        f"{corpus.format}: {len(corpus.sources)} sources ({crashed} crash endings), "
        f"{format_size(corpus.total_bytes)} in {elapsed:.1f} s "
        f"({corpus.total_bytes / 1e6 / max(elapsed, 1e-9):.1f} MB/s) -> {arguments.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
