"""A built session: messages (optimistic appends, spec §4.3), runtime counters (§4.4), compaction (§7.4)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sessaudit.formats.half_pi.build.parts import (
    SourceMessage,
    ToolCall,
    go_json,
    go_struct,
    tool_calls_json,
)
from sessaudit.formats.half_pi.build.store_core import StoreCore
from sessaudit.formats.half_pi.spec.schema_generations import Feature

NAME_RUNES = 48


@dataclass(frozen=True, slots=True)
class Message:
    """One messages row to append (seq, session and created_at are the builder's)."""

    role: str
    content: str = ""
    tool_id: str = ""
    tool_calls: str = "null"
    compact_projection: str = ""
    request_id: str | None = None  # None: the session's current request


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's output; `reason_category` ('' on success) goes into the compact projection (§6.5)."""

    content: str
    reason_category: str = ""


def compact_projection(tool: str, result: ToolResult) -> str:
    """The canonical compact projection of a tool row (spec §6.5), with empty facts."""
    data = result.content.encode("utf-8")
    return go_json(
        {
            "facts": {},
            "output_bytes": len(data),
            "output_digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "reason_category": result.reason_category,
            "success": result.reason_category == "",
            "tool": tool,
            "version": "compact-tool-v1",
        }
    )


def auto_name(text: str) -> str:
    """The name Half-Pi gives a session from its first user message: whitespace collapsed, 48 runes + ..."""
    collapsed = re.sub(r"\s+", " ", text).strip()
    return collapsed if len(collapsed) <= NAME_RUNES else collapsed[:NAME_RUNES] + "..."


class Session:
    """Fluent writer for one session; every method returns the session, except `compact`."""

    def __init__(self, store: StoreCore, session_id: str, group_id: str, *, named: bool) -> None:
        self.store = store
        self.id = session_id
        self.group_id = group_id
        self.seq = 0
        self.request_id = ""
        self.named = named
        self.active_summary_id = ""
        self.pending_compact_id = ""
        self._tools: dict[str, str] = {}

    # --- messages ------------------------------------------------------------------------------------
    def user(self, text: str, *, request_id: str | None = None) -> Session:
        """A new request: its user message is saved alone, as soon as it is admitted."""
        self.request_id = request_id if request_id is not None else self.store.ids.uuid7()
        return self.append([Message("user", text)])

    def system(self, text: str) -> Session:
        return self.append([Message("system", text)])

    def assistant(
        self,
        text: str = "",
        *,
        calls: Sequence[ToolCall] = (),
        results: Sequence[ToolResult | str] | None = None,
        projections: bool = True,
    ) -> Session:
        """An assistant message, saved together with all its tool results (`results=None`: all of them,
        each `ok`); pass fewer results to model an assistant row persisted without its results."""
        outputs = [ToolResult("ok") for _ in calls] if results is None else list(results)
        if len(outputs) > len(calls):
            raise ValueError("more results than tool calls")
        batch = [Message("assistant", text, tool_calls=tool_calls_json(calls))]
        for call, output in zip(calls, outputs, strict=False):
            result = output if isinstance(output, ToolResult) else ToolResult(output)
            projection = compact_projection(call.name, result) if projections else ""
            batch.append(Message("tool", result.content, tool_id=call.id, compact_projection=projection))
        return self.append(batch)

    def append(self, messages: Sequence[Message]) -> Session:
        """One optimistic append: rows, sessions.updated_at and the runtime counters in one transaction."""
        store = self.store
        has_runtime = store.has(Feature.COMPACTION)
        with store.transaction():
            if has_runtime:
                expected = int(store.row("session_runtime", {"session_id": self.id})["history_generation"])
                if expected != self.seq:
                    raise RuntimeError(f"history_generation {expected} != expected last seq {self.seq}")
            stamp = store.ids.text_time(store.ids.tick())
            for message in messages:
                self.seq += 1
                store.insert(
                    "messages",
                    {
                        "session_id": self.id,
                        "role": message.role,
                        "content": message.content,
                        "request_id": self.request_id if message.request_id is None else message.request_id,
                        "tool_id": message.tool_id,
                        "tool_calls": message.tool_calls,
                        "compact_projection": message.compact_projection,
                        "seq": self.seq,
                        "created_at": stamp,
                    },
                )
            store.update("sessions", {"id": self.id}, {"updated_at": stamp})
            first_user = next((message for message in messages if message.role == "user"), None)
            if first_user is not None and not self.named:
                store.update("sessions", {"id": self.id}, {"name": auto_name(first_user.content)})
                self.named = True
            if has_runtime:
                self._bump(history=len(messages), view=len(messages), snapshot=len(messages))
        return self

    def set_mode(self, mode: str) -> Session:
        """A mode change: sessions.mode and updated_at, one more history view and snapshot version."""
        with self.store.transaction():
            stamp = self.store.ids.text_time(self.store.ids.tick())
            self.store.update("sessions", {"id": self.id}, {"mode": mode, "updated_at": stamp})
            if self.store.has(Feature.COMPACTION):
                self._bump(view=1, snapshot=1)
        return self

    def _bump(
        self, *, history: int = 0, view: int = 0, snapshot: int = 0, also: Mapping[str, object] | None = None
    ) -> None:
        runtime = self.store.row("session_runtime", {"session_id": self.id})
        values = dict(also or {})
        values.update(
            history_generation=int(runtime["history_generation"]) + history,
            history_view_generation=int(runtime["history_view_generation"]) + view,
            snapshot_version=int(runtime["snapshot_version"]) + snapshot,
            updated_at=self.store.ids.now_ms,
        )
        self.store.update("session_runtime", {"session_id": self.id}, values)

    # --- compaction ----------------------------------------------------------------------------------
    def outbox(self, event_type: str, trace_id: str, payload: str, *, span_id: str | None = None) -> str:
        """A compaction outbox row (ids UUIDv7, subject = the session); returns its id."""
        store = self.store
        now = store.ids.tick()
        event_id = store.ids.uuid7()
        store.insert(
            "lifecycle_outbox",
            {
                "id": event_id,
                "event_type": event_type,
                "schema_version": 1,
                "trace_id": trace_id,
                "span_id": span_id if span_id is not None else store.ids.uuid7(),
                "subject_id": self.id,
                "payload_redacted": payload,
                "available_at": now,
                "created_at": now,
            },
        )
        return event_id

    def request_compaction(self, *, trigger: str = "automatic") -> Session:
        """A pending compaction and its `compact.requested` outbox row (trace id = the pending id)."""
        with self.store.transaction():
            self.pending_compact_id = self.store.ids.uuid7(self.store.ids.tick())
            self._bump(snapshot=1, also={"pending_compact": 1, "pending_compact_id": self.pending_compact_id})
            self.outbox("compact.requested", self.pending_compact_id, go_struct([("trigger", trigger)]))
        return self

    def compact(
        self,
        summary: str = "The conversation so far, summarised.",
        *,
        to_seq: int | None = None,
        mode: str = "full",
        trigger: str = "manual",
        provider_id: str = "scripted",
        model_id: str = "scripted",
        generation_key: str = "",
        tokens: tuple[int, int] = (0, 0),
    ) -> str:
        """Compact messages 1..to_seq into a new summary node and make it active; returns its id."""
        store, ids = self.store, self.store.ids
        end = self.seq if to_seq is None else to_seq
        rows = store.connection.execute(
            "SELECT seq, role, content, request_id, tool_id, tool_calls, compact_projection FROM messages"
            " WHERE session_id = ? AND seq <= ? ORDER BY seq",
            (self.id, end),
        ).fetchall()
        source = store.digests.source(self.id, end, [SourceMessage(*row) for row in rows])
        parent = self.active_summary_id if mode == "incremental" else ""
        versions = ("compact-source-v1", "compact-v1", "default")  # projection, policy, profile
        contract = store.digests.contract(source, *versions, mode, parent, generation_key)
        trace = self.pending_compact_id if trigger == "automatic" and self.pending_compact_id else ids.uuid7()
        span = ids.uuid7()
        started = [("trigger", trigger), ("from_seq", 1), ("to_seq", end), ("generation_mode", mode)]
        started += [("source_digest", source), ("attempt", 0)]
        with store.transaction():
            self.outbox("compact.started", trace, go_struct(started), span_id=span)
        summary_id = ids.uuid7(ids.tick())
        estimated = sum(len(str(row[2])) for row in rows) // 4
        with store.transaction():
            store.insert(
                "context_summaries",
                {
                    "id": summary_id,
                    "session_id": self.id,
                    "parent_summary_id": parent,
                    "supersedes_summary_id": self.active_summary_id,
                    "from_seq": 1,
                    "to_seq": end,
                    "summary": summary,
                    "summary_digest": store.digests.summary(summary),
                    "source_digest": source,
                    "contract_digest": contract,
                    "provider_id": provider_id,
                    "model_id": model_id,
                    "profile": versions[2],
                    "policy_version": versions[1],
                    "projection_version": versions[0],
                    "generation_mode": mode,
                    "generation_key": generation_key,
                    "source_estimated_tokens": estimated,
                    "summary_estimated_tokens": len(summary) // 4,
                    "input_tokens": tokens[0],
                    "output_tokens": tokens[1],
                    "created_at": ids.now_ms,
                },
            )
            runtime = store.row("session_runtime", {"session_id": self.id})
            switched: dict[str, object] = {"active_summary_id": summary_id}
            switched["compact_generation"] = int(runtime["compact_generation"]) + 1
            if self.pending_compact_id:
                switched.update(
                    pending_compact=0, pending_compact_id="", pending_attempt=0, pending_not_before=0
                )
            self._bump(view=1, snapshot=1, also=switched)
            completed = [("trigger", trigger), ("summary_id", summary_id), ("from_seq", 1), ("to_seq", end)]
            completed += [
                ("before_estimated_tokens", estimated),
                ("after_estimated_tokens", len(summary) // 4),
            ]
            completed += [("summary_bytes", len(summary.encode("utf-8"))), ("source_digest", source)]
            completed += [
                ("duration_ms", 0),
                ("context_version", int(runtime["history_view_generation"]) + 1),
            ]
            completed += [("reused", False)]
            self.outbox("compact.completed", trace, go_struct(completed), span_id=span)
        self.active_summary_id, self.pending_compact_id = summary_id, ""
        return summary_id
