"""The session builder's foundation: header, seq counter, transactions, message memory and damage."""

from __future__ import annotations

import hashlib
import random
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Final

from sessaudit.formats.tiny_agent.build.machinery import (
    IdFactory,
    JsonObject,
    KeyOrder,
    LineOptions,
    LineSink,
    SimulatedClock,
    Tamper,
    apply_tampers,
    choose_delay,
    dump_json,
    frame_line,
    merge_overrides,
    session_file_name,
)
from sessaudit.formats.tiny_agent.build.parts import (
    AUTO,
    Answer,
    Configuration,
    Operation,
    TokenUsage,
    UsageChoice,
    estimate_tokens,
)
from sessaudit.formats.tiny_agent.read.digests import sha256_digest

DEFAULT_CREATED_AT: Final = 1787410800000  # 2026-08-22T15:00:00.000Z, the spec's §17 example
BYTE_ORDER_MARK: Final = b"\xef\xbb\xbf"


class SessionWriter:
    """The builder's state and framing: header, seq counter, transactions, message memory, damage.

    Facts of a transaction share one timestamp; ids come from the simulated clock when allocated, so no
    id is later than its fact. Subclasses add the record-writing methods."""

    def __init__(
        self,
        *,
        seed: int = 0,
        created_at: int = DEFAULT_CREATED_AT,
        cwd: str = "/home/dev/shop",
        environment_identity: str | None = None,
        configuration: Configuration | None = None,
        sink: BinaryIO | None = None,
        key_order: KeyOrder = KeyOrder.STORE,
        header_overrides: Mapping[str, Any] | None = None,
        byte_order_mark: bool = False,
        header_line_ending: bytes = b"\n",
        message_memory: int | None = None,
    ) -> None:
        self._generator = random.Random(seed)
        self._clock = SimulatedClock(created_at)
        self._ids = IdFactory(self._generator, self._clock)
        self.configuration = configuration or Configuration()
        self.session_id = self._ids.uuid7(created_at)
        self.created_at = created_at
        self.environment_identity = environment_identity or cwd
        self._sink = LineSink(sink)
        self._key_order = key_order
        self._next_seq = 1
        self._emitted = 0
        self._pending: list[JsonObject] | None = None
        self._tampers: list[Tamper] = []
        self._line = LineOptions()
        self._boundary: str | None = None
        self._message_ids: list[str] = []
        self._messages: OrderedDict[str, JsonObject] = OrderedDict()
        self._message_memory = message_memory
        self._source_hash = hashlib.sha256(b"[")
        self._context_tokens = 0
        self._requests = 0
        self._answers: dict[str, Answer] = {}
        self._partitions: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._snapshots: dict[int, tuple[Configuration, JsonObject, str]] = {}
        header: JsonObject = {
            "kind": "header",
            "version": 2,
            "id": self.session_id,
            "createdAt": created_at,
            "cwd": cwd,
            "provider": "openrouter",
            "model": self.configuration.model,
            "environmentIdentity": self.environment_identity,
        }
        text = dump_json(merge_overrides(header, header_overrides), key_order=key_order)
        self._sink.write(
            (BYTE_ORDER_MARK if byte_order_mark else b"") + text.encode("utf-8") + header_line_ending
        )

    @staticmethod
    def session_id_for(seed: int = 0, created_at: int = DEFAULT_CREATED_AT) -> str:
        """The session id a builder with this seed and creation time will have (to name a file first)."""
        return IdFactory(random.Random(seed), SimulatedClock(created_at)).uuid7(created_at)

    # --- state --------------------------------------------------------------------------------
    @property
    def file_name(self) -> str:
        return session_file_name(self.created_at, self.session_id)

    @property
    def now(self) -> int:
        return self._clock.now()

    @property
    def last_seq(self) -> int:
        return self._next_seq - 1

    @property
    def bytes_written(self) -> int:
        return self._sink.written

    @property
    def next_line(self) -> int:
        """The physical line number the next transaction will have (the header is line 1)."""
        return self._sink.line_feeds + 1

    @property
    def context_boundary(self) -> str | None:
        """The active-context boundary a new attempt-1 step must name (spec §9.3)."""
        return self._boundary

    @property
    def message_entry_ids(self) -> tuple[str, ...]:
        return tuple(self._message_ids)

    def data(self) -> bytes:
        """Everything written so far (only for a builder that writes to memory)."""
        return self._sink.data()

    def save(self, directory: Path) -> Path:
        """Write the in-memory bytes as `<directory>/<stamp>_<id>.jsonl`, never replacing a file."""
        path = directory / self.file_name
        with path.open("xb") as handle:
            handle.write(self.data())
        return path

    def wait(self, milliseconds: int) -> None:
        """Let simulated time pass (a user thinking, a slow tool)."""
        self._clock.advance(milliseconds)

    def configure(self, configuration: Configuration) -> None:
        """Use another configuration for steps started from now on (e.g. a model or tool change)."""
        self.configuration = configuration

    # --- transactions -----------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group every fact emitted inside into one line (an array when more than one); nesting joins."""
        if self._pending is not None:
            yield
            return
        self._pending = []
        try:
            yield
            facts = self._pending
        finally:
            self._pending = None
        if facts:
            self._commit(facts)

    def _snapshot(self, configuration: Configuration) -> tuple[JsonObject, str]:
        """The configuration's snapshot and digest, computed once per configuration object."""
        cached = self._snapshots.get(id(configuration))
        if cached is None or cached[0] is not configuration:
            snapshot = configuration.snapshot()
            cached = (configuration, snapshot, sha256_digest(snapshot))
            self._snapshots[id(configuration)] = cached
        return cached[1], cached[2]

    def _tick(self) -> None:
        self._clock.advance(choose_delay(self._generator, 1, 4))

    def _emit(self, kind: str, payload: JsonObject, fact_id: str) -> None:
        if self._sink.torn:
            raise RuntimeError("the session already ends in a torn tail; only raw bytes can follow")
        fact: JsonObject = {"kind": kind, **payload, "id": fact_id, "seq": self._next_seq}
        self._next_seq += 1
        if self._pending is None:
            self._commit([fact])
        else:
            self._pending.append(fact)

    def _commit(self, facts: list[JsonObject]) -> None:
        timestamp = self._clock.now()
        rendered: list[JsonObject] = []
        for offset, fact in enumerate(facts):
            fact["timestamp"] = timestamp
            index = self._emitted + offset
            tampers = [tamper for tamper in self._tampers if tamper.fact_index == index]
            rendered.append(apply_tampers(fact, tampers) if tampers else fact)
        self._emitted += len(facts)
        self._tampers = [tamper for tamper in self._tampers if tamper.fact_index >= self._emitted]
        value: Any = rendered[0] if len(rendered) == 1 and not self._line.force_array else rendered
        data, torn = frame_line(dump_json(value, key_order=self._key_order), self._line)
        self._line.reset()
        self._sink.write(data)
        self._sink.torn = self._sink.torn or torn

    def _remember_message(self, entry_id: str, message: JsonObject) -> None:
        if self._message_ids:
            self._source_hash.update(b",")
        # The builder's messages have only ASCII keys, strings and null, where sorted compact JSON is
        # exactly the canonical form (spec §11); the C encoder keeps long sessions cheap to build.
        item = {"sourceEntryId": entry_id, "message": message}
        self._source_hash.update(dump_json(item, key_order=KeyOrder.SORTED).encode("utf-8"))
        self._message_ids.append(entry_id)
        self._messages[entry_id] = message
        if self._message_memory is not None and len(self._messages) > self._message_memory:
            self._messages.popitem(last=False)
        self._boundary = entry_id
        self._context_tokens += estimate_tokens(dump_json(message))

    def _usage(self, operation: Operation, owner_key: str, owner_id: str, usage: TokenUsage) -> None:
        payload = {"operationId": operation.operation_id, owner_key: owner_id, "usage": usage.as_json()}
        self._emit("usage", payload, self._ids.uuid7())

    def _model_usage(self, choice: UsageChoice, output_text: str) -> TokenUsage | None:
        if choice != AUTO:
            return choice if isinstance(choice, TokenUsage) else None
        prompt = 900 + self._context_tokens
        cached = (prompt * 3 // 4) // 128 * 128 if self._requests else 0
        self._requests += 1
        return TokenUsage(
            input=prompt - cached, output=max(1, estimate_tokens(output_text)), cache_read=cached
        )

    # --- deliberate damage ------------------------------------------------------------------
    def tamper_next(self, path: str, value: Any, *, fact: int = 0) -> None:
        """Damage the `fact`-th fact emitted from now on: set a dotted path (`seq`, `record.attempt`,
        `entry.message.content`), remove it (DELETE) or transform it (a callable)."""
        queued = len(self._pending) if self._pending is not None else 0
        self._tampers.append(Tamper(self._emitted + queued + fact, path, value))

    def skip_seq(self, count: int = 1) -> None:
        """Leave a gap: the next fact's seq is `count` higher, as if facts had been lost."""
        self._next_seq += count

    def crlf_next(self) -> None:
        """End the next committed line with CR LF."""
        self._line.line_ending = b"\r\n"

    def array_next(self) -> None:
        """Write the next transaction as an array even when it holds a single fact (legal, unusual)."""
        self._line.force_array = True

    def tear_next(self, keep: int) -> None:
        """Write only the first `keep` bytes of the next line (negative: all but the last `-keep`, so -1
        drops just the LF): a torn tail, as after a crash."""
        self._line.tear_after = keep

    def raw(self, data: bytes) -> None:
        """Append bytes exactly as given (no LF added)."""
        self._sink.write(data)

    def raw_line(self, text: str | bytes) -> None:
        """Append one line exactly as given, plus LF (e.g. `not json`, `[]`, a blank line with b"")."""
        self._sink.write((text.encode("utf-8") if isinstance(text, str) else text) + b"\n")

    def torn_tail(self, data: bytes) -> None:
        """Append unterminated bytes after the last LF; only raw bytes may follow."""
        if b"\n" in data:
            raise ValueError("a torn tail has no LF")
        self._sink.write(data)
        self._sink.torn = True
