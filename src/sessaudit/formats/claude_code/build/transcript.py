"""The transcript builder: one session (or sub-agent) file written line by line as Claude Code would.

A `TranscriptBuilder` writes into `<root>/projects/<project-dir>/` (spec §1): the session file, its
sub-agent files in either layout (§1.4), and the sessions resumed from it (§1.6), which share its `Family`
(ids, clock, manifest records). Responses are one line per content block with a shared `message.id` and
growing or identical usage (§5); tool results parent on the assistant line holding the call (§7, 2.x).
Nothing reaches the disk before `finish()`, which writes the whole family and returns its truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from sessaudit.formats.claude_code.build.family import (
    CallRecord,
    Family,
    FileState,
    LineRecord,
    ResponseRecord,
    complete_lines,
)
from sessaudit.formats.claude_code.build.ids import DEFAULT_START, Ids, project_dir_name, version_tuple
from sessaudit.formats.claude_code.build.lines import (
    assistant_message,
    default_tool_use_result,
    dump_line,
    tool_result_block,
    usage_object,
)
from sessaudit.formats.claude_code.build.manifest import truth
from sessaudit.formats.claude_code.build.parts import (
    INTERRUPT_MARKER,
    Block,
    Call,
    JsonObject,
    Layout,
    Outcome,
    Response,
    Streaming,
    Text,
    Thinking,
    ToolUse,
    Usage,
)
from sessaudit.formats.claude_code.build.writer import write_family

DEFAULT_VERSION: Final = "2.1.79"
DEFAULT_MODEL: Final = "claude-opus-4-6"
COMPACT_SUMMARY: Final = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
)
_UNSET: Final[Any] = object()


class Crashed(RuntimeError):
    """Raised when a builder is asked to write after its family crashed or finished."""


@dataclass(frozen=True, slots=True)
class Built:
    """A finished family: the paths written (transcripts and sidecars) and its manifest entry."""

    files: tuple[Path, ...]
    truth: JsonObject


class TranscriptBuilder:
    """Writes one Claude Code transcript of the project at `project_cwd`, below `root` (a config dir).

    `family` is for the builders `subagent()` and `resume()` return; leave it None for a new session.
    """

    def __init__(
        self,
        root: Path,
        project_cwd: str,
        *,
        seed: int = 0,
        version: str = DEFAULT_VERSION,
        model: str = DEFAULT_MODEL,
        git_branch: str = "main",
        bedrock: bool = False,
        start: datetime = DEFAULT_START,
        family: Family | None = None,
        agent: tuple[str, str, Layout] | None = None,
    ) -> None:
        self.family = family or Family(root=root, ids=Ids(seed, start))
        self.ids = self.family.ids
        self.cwd, self.version, self.model, self.git_branch = project_cwd, version, model, git_branch
        self.release = version_tuple(version)
        self.bedrock = bedrock
        self.project_dir = project_dir_name(project_cwd)
        self.slug = self.ids.slug() if self.release >= (2, 1, 30) else None
        self.leaf: str | None = None
        if agent is None:
            session_id = self.ids.uuid4()
            key = f"{self.project_dir}/{session_id}.jsonl"
            self.file = self.family.add_file(FileState(key, session_id, None, "session", None))
        else:
            session_id, agent_id, layout = agent
            folder = f"{self.project_dir}/{session_id}/subagents" if layout == "folder" else self.project_dir
            key = f"{folder}/agent-{agent_id}.jsonl"
            self.file = self.family.add_file(FileState(key, session_id, agent_id, "subagent", layout))

    # --- identity -----------------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self.file.session_id

    @property
    def agent_id(self) -> str | None:
        return self.file.agent_id

    # --- the lines ------------------------------------------------------------------------------
    def _envelope(self, parent: str | None) -> JsonObject:
        envelope: JsonObject = {
            "parentUuid": parent,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.git_branch,
        }
        if self.agent_id is not None:
            envelope["agentId"] = self.agent_id
        if self.slug is not None:
            envelope["slug"] = self.slug
        return envelope

    def _append(self, data: JsonObject, uuid: str | None, copy_of: tuple[str, int] | None = None) -> int:
        if self.family.crashed or self.family.finished:
            raise Crashed("the family already crashed or finished")
        self.file.lines.append(LineRecord(data, uuid, copy_of))
        return len(self.file.lines) - 1

    def _line(self, parent: str | None, kind: str, message: JsonObject, **extra: Any) -> tuple[str, int]:
        uuid = self.ids.uuid4()
        data = {**self._envelope(parent), "type": kind, "message": message}
        request_id = extra.pop("requestId", None)
        if request_id is not None:
            data["requestId"] = request_id
        data.update(uuid=uuid, timestamp=extra.pop("timestamp", None) or self.ids.tick(0.05, 0.4), **extra)
        index = self._append(data, uuid)
        self.leaf = uuid
        return uuid, index

    def user(self, text: str) -> str:
        """A typed prompt (string content); from 2.0 preceded by its `file-history-snapshot` line."""
        timestamp = self.ids.tick(8.0, 90.0)
        uuid = self.ids.uuid4()
        if self.release >= (2, 0, 0) and self.agent_id is None:
            snapshot = {"messageId": uuid, "trackedFileBackups": {}, "timestamp": timestamp}
            self._append(
                {
                    "type": "file-history-snapshot",
                    "messageId": uuid,
                    "snapshot": snapshot,
                    "isSnapshotUpdate": False,
                },
                None,
            )
        data = {**self._envelope(self.leaf), "type": "user", "message": {"role": "user", "content": text}}
        data.update(uuid=uuid, timestamp=timestamp)
        self._append(data, uuid)
        self.leaf = uuid
        return uuid

    def assistant(
        self,
        blocks: Sequence[Block],
        *,
        usage: Usage,
        streaming: Streaming = "growing",
        request_id: bool = True,
        model: str | None = None,
        placeholder: bool = False,
        stop_reason: str | None = None,
    ) -> Response:
        """One API response, one line per block (spec §5).

        growing: non-final lines log a placeholder `output_tokens` (1-9) and `stop_reason` null, the last
        line the true usage and the stop reason. identical: every line logs the true usage and the stop
        reason. placeholder: the last line too keeps a placeholder count and `stop_reason` null, so the
        log understates output. Bedrock builders never write `requestId`.
        """
        if not blocks:
            raise ValueError("a response has at least one block")
        if placeholder and streaming == "identical":
            raise ValueError("identical copies all log the final usage: no placeholder")
        model = model or self.model
        message_id = self.ids.message_id(bedrock=self.bedrock)
        request = self.ids.request_id() if request_id and not self.bedrock else None
        stop = stop_reason or ("tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn")
        record = ResponseRecord(
            message_id, request, self.session_id, self.agent_id, model, usage, streaming, self.file.key, []
        )
        uuids: list[str] = []
        calls: list[Call] = []
        logged = 0
        for number, block in enumerate(blocks, 1):
            last = number == len(blocks)
            if streaming == "identical" or (last and not placeholder):
                output, line_stop = usage.output_tokens, stop
            else:
                output, line_stop = min(self.ids.placeholder(logged), usage.output_tokens), None
            logged = output
            content = self._block(block)
            message = assistant_message(
                model=model,
                message_id=message_id,
                block=content,
                stop_reason=line_stop,
                usage=usage_object(usage, output, self.release),
            )
            timestamp = self.ids.tick(2.0, 9.0) if number == 1 else self.ids.tick(0.2, 3.0)
            uuid, index = self._line(self.leaf, "assistant", message, requestId=request, timestamp=timestamp)
            uuids.append(uuid)
            record.lines.append(index)
            if isinstance(block, ToolUse):
                call = Call(content["id"], block.name, block.input, self.file.key, index, uuid)
                self.family.calls[call.id] = CallRecord(call, self.session_id, self.agent_id)
                calls.append(call)
        self.family.responses.append(record)
        return Response(message_id, request, tuple(uuids), tuple(calls))

    def _block(self, block: Block) -> JsonObject:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            return {"type": "thinking", "thinking": block.thinking, "signature": self.ids.signature()}
        tool_id = self.ids.tool_use_id(bedrock=self.bedrock)
        return {"type": "tool_use", "id": tool_id, "name": block.name, "input": block.input}

    def tool_result(
        self,
        call: Call,
        content: str | list[JsonObject],
        *,
        is_error: bool = False,
        tool_use_result: Any = _UNSET,
        outcome: Outcome | None = None,
    ) -> str:
        """The user line answering `call`; 2.x parents it on the assistant line holding the call."""
        if call.file != self.file.key:
            raise ValueError(f"{call.id} was made in {call.file}, not in {self.file.key}")
        interrupted = outcome == "interrupted"
        if tool_use_result is _UNSET:
            text = content if isinstance(content, str) else "\n".join(str(b.get("text", "")) for b in content)
            tool_use_result = default_tool_use_result(
                call.name, text, is_error=is_error, interrupted=interrupted
            )
        second_era = self.release >= (2, 0, 0)
        parent = call.assistant_uuid if second_era else self.leaf
        message = {"role": "user", "content": [tool_result_block(call.id, content, is_error=is_error)]}
        extra: JsonObject = {"timestamp": self.ids.tick(0.1, 6.0), "toolUseResult": tool_use_result}
        if second_era:
            extra["sourceToolAssistantUUID"] = call.assistant_uuid
        uuid, index = self._line(parent, "user", message, **extra)
        self.family.calls[call.id].result = (self.file.key, index, outcome or ("error" if is_error else "ok"))
        return uuid

    def interrupt(self, call: Call) -> str:
        """Esc during a tool run (spec §4.3): an error result, then the user marker line; its uuid."""
        self.tool_result(call, INTERRUPT_MARKER, is_error=True, outcome="interrupted")
        message = {"role": "user", "content": [{"type": "text", "text": INTERRUPT_MARKER}]}
        return self._line(self.leaf, "user", message)[0]

    def synthetic(self, text: str, *, error: str = "rate_limit") -> str:
        """An assistant line Claude Code made up (`model: "<synthetic>"`, zero usage, no `requestId`)."""
        message = assistant_message(
            model="<synthetic>",
            message_id=self.ids.uuid4(),
            block={"type": "text", "text": text},
            stop_reason="stop_sequence",
            usage=usage_object(Usage(0, 0), 0, self.release),
        )
        uuid, index = self._line(self.leaf, "assistant", message, isApiErrorMessage=True, error=error)
        self.family.synthetic.append((self.file.key, index, uuid))
        return uuid

    # --- sub-agents --------------------------------------------------------------------------------
    def subagent(
        self,
        task_call: Call,
        *,
        layout: Layout = "folder",
        model: str | None = None,
        agent_type: str = "general-purpose",
    ) -> TranscriptBuilder:
        """The sidechain file of the agent `task_call` spawns: nested under `<session>/subagents/` with
        an `agent-<id>.meta.json` naming the call (2.1.2+), or `agent-<8hex>.jsonl` beside the session."""
        agent_id = self.ids.agent_id(17 if layout == "folder" else 8)
        child = TranscriptBuilder(
            self.family.root,
            self.cwd,
            version=self.version,
            model=model or self.model,
            git_branch=self.git_branch,
            bedrock=self.bedrock,
            family=self.family,
            agent=(self.session_id, agent_id, layout),
        )
        child.slug = self.slug
        if layout == "folder":
            meta_key = child.file.key.removesuffix(".jsonl") + ".meta.json"
            child.file.sidecar = (meta_key, {"agentType": agent_type, "toolUseId": task_call.id})
        return child

    def agent_result(self, task_call: Call, agent: TranscriptBuilder, text: str) -> str:
        """The spawning call's result: the agent's answer, its `agentId:` line and `<usage>` block, and a
        structured `toolUseResult` whose totals summarise (never add to) the agent's own responses."""
        own = [r for r in self.family.responses if r.file == agent.file.key]
        total = sum(
            r.usage.input_tokens + r.usage.output_tokens + r.usage.cache_creation + r.usage.cache_read
            for r in own
        )
        tool_uses = sum(1 for c in self.family.calls.values() if c.call.file == agent.file.key)
        duration = 1000 * len(agent.file.lines) + 417
        tail = f"agentId: {agent.agent_id}\n<usage>total_tokens: {total}\ntool_uses: {tool_uses}\n"
        tail += f"duration_ms: {duration}</usage>"
        content = [{"type": "text", "text": text}, {"type": "text", "text": tail}]
        last = own[-1].usage if own else Usage(0, 0)
        result = {
            "status": "completed",
            "prompt": task_call.input.get("prompt", ""),
            "agentId": agent.agent_id,
            "agentType": task_call.input.get("subagent_type", "general-purpose"),
            "content": [{"type": "text", "text": text}],
            "totalDurationMs": duration,
            "totalTokens": total,
            "totalToolUseCount": tool_uses,
            "usage": usage_object(last, last.output_tokens, self.release),
        }
        return self.tool_result(task_call, content, tool_use_result=result)

    # --- summaries, compaction, resume ------------------------------------------------------------
    def summary(self, leaf_uuid: str, text: str) -> None:
        """A `summary` line (no uuid, no sessionId) naming the leaf of a conversation, maybe elsewhere."""
        index = self._append({"type": "summary", "summary": text, "leafUuid": leaf_uuid}, None)
        self.family.summaries.append((self.file.key, index, leaf_uuid))

    def compact(self, summary_text: str, *, trigger: str = "manual", pre_tokens: int = 0) -> str:
        """`/compact`: a `compact_boundary` root whose `logicalParentUuid` is the leaf, then the summary
        user line (`isCompactSummary`) under it. The boundary's uuid."""
        boundary = self.ids.uuid4()
        data = {
            **self._envelope(None),
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": self.ids.tick(20.0, 60.0),
            "uuid": boundary,
            "level": "info",
            "logicalParentUuid": self.leaf,
            "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
        }
        self._append(data, boundary)
        self.leaf = boundary
        message = {"role": "user", "content": COMPACT_SUMMARY + summary_text}
        self._line(boundary, "user", message, isCompactSummary=True)
        return boundary

    def new_session(self) -> TranscriptBuilder:
        """A later, unrelated session of the same project (same family, so one manifest entry)."""
        return TranscriptBuilder(
            self.family.root,
            self.cwd,
            version=self.version,
            model=self.model,
            git_branch=self.git_branch,
            bedrock=self.bedrock,
            family=self.family,
        )

    def resume(self, *, copy: bool = True) -> TranscriptBuilder:
        """`claude --resume`: a new session file; with `copy`, the earlier conversation lines (those with a
        uuid) replayed into it under the new `sessionId`; without, its first line points across files."""
        if self.agent_id is not None:
            raise ValueError("only a session is resumed, not a sub-agent")
        child = self.new_session()
        if copy:
            for index, line in enumerate(complete_lines(self.file)):
                if line.uuid is not None:
                    data = {**line.data, "sessionId": child.session_id}
                    child._append(data, line.uuid, (self.file.key, index))
        child.leaf = self.leaf
        return child

    # --- the end ------------------------------------------------------------------------------------
    def crash(self, *, torn: bool = False) -> None:
        """The process dies: nothing more is written by any builder of the family. `torn` cuts this file's
        last line part-way (on a UTF-8 character boundary, before its closing brace)."""
        if torn:
            if not self.file.lines:
                raise ValueError("nothing to tear")
            encoded = dump_line(self.file.lines[-1].data)
            cut = self.ids.random.randint(len(encoded) // 3, 2 * len(encoded) // 3)
            while encoded[cut] & 0xC0 == 0x80:
                cut -= 1
            self.file.torn_at = cut
        self.family.crashed = True

    def finish(self) -> Built:
        """Write every file of the family (once) and return the paths and the manifest entry."""
        if self.family.finished:
            raise Crashed("the family is already finished")
        files = tuple(write_family(self.family))
        self.family.finished = True
        return Built(files, truth(self.family))
