"""The rollout builder: one Codex session (or fork, or sub-agent) file, written line by line as Codex would.

A `RolloutBuilder` writes `<root>/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl` (or, archived,
`<root>/archived_sessions/rollout-….jsonl`): `session_meta`, `turn_context` and the environment message, then
per turn the prompt (response item and `user_message` event, `task_started` before it in newer versions),
the model's items, one `token_count` per model response (cumulative totals from the true per-response
usage), tool outputs, `task_complete`. `fork()` starts a child file in the same `Family`: its own
`session_meta`, then the parent's first lines copied and re-stamped with the fork's time, then its own
turns (docs/formats/codex.md §6). Nothing reaches the disk before `finish()`, which writes the whole family
and returns its truth.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from sessaudit.formats.codex.build import lines as make
from sessaudit.formats.codex.build.copies import copy_history, last_total
from sessaudit.formats.codex.build.family import (
    CallRecord,
    Family,
    FileState,
    LineRecord,
    ResponseRecord,
    complete_count,
)
from sessaudit.formats.codex.build.ids import DEFAULT_START, Ids, format_time, rollout_key, version_tuple
from sessaudit.formats.codex.build.manifest import truth
from sessaudit.formats.codex.build.parts import (
    SHELL_TOOLS,
    ZERO,
    Built,
    CallKind,
    FileKind,
    Git,
    JsonObject,
    Usage,
)
from sessaudit.formats.codex.build.writer import write_family

DEFAULT_VERSION: Final = "0.98.0"
DEFAULT_MODEL: Final = "gpt-5-codex"
CONTEXT_WINDOW: Final = 272_000
ORIGINATOR: Final = "codex_cli_rs"
# Older persistence (through late 2025) wrote no task_started/task_complete (spec §3.4).
TASK_EVENTS_FROM: Final = (0, 60, 0)
_MCP: Final = re.compile(r"^(?:mcp__)?([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*?)__(.+)$")


class Stopped(RuntimeError):
    """Raised when a builder is asked to write after it was killed, or after its family finished."""


class RolloutBuilder:
    """Writes one Codex rollout of a session in `cwd`, below `root` (a `CODEX_HOME`).

    `offset` is the writer's UTC offset (file name and date folders). `doubled_token_counts` writes every
    token_count twice, identical (the rate-limit re-emit). `rate_limit_counts` writes a rate-limit-only
    token_count after each prompt, carrying the current `info` unchanged (null before the first
    response); `info_null_first` writes only the first of them. `end_events` writes what newer or
    extended persistence adds after a tool run (exec_command_end, patch_apply_end, mcp_tool_call_end).
    `task_events` (default: by version) writes task_started/task_complete. `family` is for `fork()`.
    """

    def __init__(
        self,
        root: Path,
        cwd: str,
        *,
        seed: int = 0,
        start: datetime = DEFAULT_START,
        cli_version: str = DEFAULT_VERSION,
        model: str = DEFAULT_MODEL,
        source: str | JsonObject = "cli",
        instructions: str | None = None,
        git: Git | None = None,
        offset: timedelta = timedelta(0),
        archived: bool = False,
        doubled_token_counts: bool = False,
        rate_limit_counts: bool = False,
        info_null_first: bool = False,
        end_events: bool = False,
        task_events: bool | None = None,
        environment: bool = True,
        approval_policy: str = "on-request",
        sandbox_mode: str = "workspace-write",
        effort: str = "medium",
        family: Family | None = None,
        kind: FileKind = "session",
        forked_from: str | None = None,
    ) -> None:
        self.family = family or Family(root=root, ids=Ids(seed, start))
        self.ids = self.family.ids
        self.cwd, self.model, self.cli_version, self.source = cwd, model, cli_version, source
        self.release = version_tuple(cli_version)
        self.instructions, self.git = instructions, git
        self.doubled_token_counts, self.rate_limit_counts = doubled_token_counts, rate_limit_counts
        self.info_null_first, self.end_events = info_null_first, end_events
        self.task_events = self.release >= TASK_EVENTS_FROM if task_events is None else task_events
        self.approval_policy, self.sandbox_mode, self.effort = approval_policy, sandbox_mode, effort
        self.total = self.last_usage = ZERO
        self.responses = 0
        self.need_context = True
        self.awaiting_model = False
        self.pending_items: list[int] = []
        self.last_agent_message: str | None = None
        self.turn_id: str | None = None
        self.arguments: dict[str, JsonObject | str] = {}
        self.started = self.ids.now
        self.session_id = self.ids.uuid7(self.started)
        key = rollout_key(self.session_id, self.started, offset, archived=archived)
        state = FileState(key, self.session_id, kind, archived, offset, cli_version, forked_from=forked_from)
        state.task_events = self.task_events
        self.file = self.family.add_file(state)
        self._meta()
        if kind == "session":
            self._turn_context()
            if environment:
                text = make.environment_context(cwd, approval_policy, sandbox_mode, "bash")
                self._write("response_item", make.message("user", text))

    # --- the lines ------------------------------------------------------------------------------
    @property
    def lines(self) -> int:
        """How many lines the file holds so far (a fork's `through_line` is such a count)."""
        return len(self.file.lines)

    def last_line_size(self) -> int:
        """The byte length of the last line, newline included (to choose a torn cut)."""
        return len(make.dump_line(self.file.lines[-1].data))

    def _write(self, kind: str, payload: JsonObject, moment: datetime | None = None) -> int:
        if self.file.killed or self.family.finished:
            raise Stopped(f"{self.file.key} was killed or its family finished")
        stamp = moment or self.ids.tick(0.001, 0.04)
        self.file.lines.append(LineRecord(make.envelope(stamp, kind, payload)))
        return len(self.file.lines) - 1

    def _event(self, payload: JsonObject, moment: datetime | None = None) -> int:
        return self._write("event_msg", payload, moment)

    def _meta(self) -> None:
        payload: JsonObject = {"id": self.session_id}
        if self.file.forked_from is not None:
            payload["forked_from_id"] = self.file.forked_from
        payload.update(
            timestamp=format_time(self.started),
            cwd=self.cwd,
            originator=ORIGINATOR,
            cli_version=self.cli_version,
            instructions=self.instructions,
            source=self.source,
            model_provider="openai",
        )
        if self.git is not None:
            payload["git"] = self.git.as_json()
        self._write("session_meta", payload, self.ids.tick(0.004, 0.03))

    def _turn_context(self, moment: datetime | None = None) -> None:
        payload: JsonObject = {}
        if self.turn_id is not None:
            payload["turn_id"] = self.turn_id
        payload.update(
            cwd=self.cwd,
            approval_policy=self.approval_policy,
            sandbox_policy=make.sandbox_policy(self.sandbox_mode),
            model=self.model,
            effort=self.effort,
            summary="auto",
        )
        self._write("turn_context", payload, moment)
        self.need_context = False

    def _with_turn(self, payload: JsonObject) -> JsonObject:
        """`payload` with this turn's `turn_id` after its `type` (newer versions)."""
        if self.turn_id is None:
            return payload
        kind, *rest = payload.items()
        return dict([kind, ("turn_id", self.turn_id), *rest])

    def _model_moment(self) -> datetime:
        """The instant of the model's next item: after a prompt or a tool output the model takes a while."""
        if self.awaiting_model:
            self.awaiting_model = False
            return self.ids.tick(1.5, 9.0)
        return self.ids.tick(0.05, 1.2)

    def _item(self, payload: JsonObject, event: JsonObject | None = None) -> int:
        """A model item (then its event, as Codex persists them), part of the pending response."""
        index = self._write("response_item", payload, self._model_moment())
        self.pending_items.append(index)
        if event is not None:
            self.pending_items.append(self._event(event))
        return index

    # --- turns ------------------------------------------------------------------------------------
    def user(self, text: str) -> int:
        """A typed prompt opens a turn: task_started (newer), turn_context (every turn but the session's
        first, written at start), the message and its user_message event. The message's line."""
        moment = self.ids.tick(6.0, 75.0)
        first = len(self.file.lines)
        if self.task_events:
            self.turn_id = self.ids.uuid7(moment)
            payload = {
                "type": "task_started",
                "turn_id": self.turn_id,
                "model_context_window": CONTEXT_WINDOW,
            }
            self._event(payload, moment)
            moment = self.ids.tick(0.001, 0.01)
        if self.need_context:
            self._turn_context(moment)
            moment = self.ids.tick(0.001, 0.01)
        line = self._write("response_item", make.message("user", text), moment)
        self._event({"type": "user_message", "message": text, "images": []})
        self.file.turn_starts.append(first)
        self.need_context = True
        first_turn = len(self.file.turn_starts) == 1 or self.responses == 0
        if self.rate_limit_counts or (self.info_null_first and first_turn and not self.file.repeats):
            self._repeat_count(self.ids.tick(0.3, 1.6))
        self.awaiting_model = True
        return line

    def _repeat_count(self, moment: datetime) -> int:
        """A rate-limit-only token_count: the current info unchanged (null before any response)."""
        info = None
        if self.responses:
            info = make.token_info(self.total, self.last_usage, CONTEXT_WINDOW)
        index = self._event(make.token_count(info, self._limits()), moment)
        self.file.repeats.append(index)
        return index

    def reasoning(self, *summaries: str, encrypted: int | None = 320) -> int:
        """A `reasoning` item, then each summary as an agent_reasoning event; `encrypted` blob size."""
        blob = None if encrypted is None else self.ids.encrypted(encrypted)
        index = self._item(make.reasoning(list(summaries), blob))
        for text in summaries:
            self.pending_items.append(self._event({"type": "agent_reasoning", "text": text}))
        return index

    def assistant(self, text: str) -> int:
        """The model's reply text: the assistant message item and its agent_message event."""
        self.last_agent_message = text
        return self._item(make.message("assistant", text), {"type": "agent_message", "message": text})

    def _call(self, kind: CallKind, name: str, payload: JsonObject, call_id: str, world: bool) -> str:
        index = self._item(payload)
        self.family.calls.append(CallRecord(call_id, name, kind, world, self.file.key, index))
        return call_id

    def call(self, name: str, arguments: JsonObject | str, *, world: bool) -> str:
        """A `function_call` (`arguments` written as a JSON string); its call id."""
        call_id = self.ids.call_id()
        self.arguments[call_id] = arguments
        return self._call("function", name, make.function_call(name, arguments, call_id), call_id, world)

    def custom_call(self, name: str, text: str, *, world: bool = True) -> str:
        """A freeform `custom_tool_call` (apply_patch's patch text); its call id."""
        call_id = self.ids.call_id()
        self.arguments[call_id] = text
        return self._call("custom", name, make.custom_tool_call(name, text, call_id), call_id, world)

    def local_shell(self, command: list[str], *, world: bool) -> str:
        """A `local_shell_call` with an exec action (answered by a function_call_output); its call id."""
        call_id = self.ids.call_id()
        self.arguments[call_id] = {"command": command}
        payload = make.local_shell_call(command, call_id)
        return self._call("local_shell", "local_shell", payload, call_id, world)

    def response(self, usage: Usage, *, doubled: bool | None = None) -> int:
        """The model response ends: its token_count event (twice, identical, when doubled); its index."""
        twice = self.doubled_token_counts if doubled is None else doubled
        self.total = self.total + usage
        self.last_usage = usage
        self.responses += 1
        payload = make.token_count(make.token_info(self.total, usage, CONTEXT_WINDOW), self._limits())
        lines = [self._event(payload, self.ids.tick(0.05, 0.6))]
        if twice:
            lines.append(self._event(payload, self.ids.tick(0.0, 0.003)))
        record = ResponseRecord(
            len(self.family.responses), self.file.key, usage, lines, self.pending_items, twice
        )
        self.family.responses.append(record)
        self.pending_items = []
        return record.index

    def _limits(self) -> JsonObject | None:
        if self.release < (0, 30, 0):
            return None  # older CLIs wrote no rate-limit snapshot
        used = round(4.0 + 0.5 * self.responses + self.ids.random.randint(0, 9) / 10, 1)
        resets_at = int(self.started.timestamp()) // 60 * 60 + 4 * 3600 + 1620
        return make.rate_limits(used, round(used / 7, 1), resets_at)

    # --- tool outputs ---------------------------------------------------------------------------
    def _command(self, call_id: str) -> list[str]:
        arguments = self.arguments.get(call_id, {})
        if not isinstance(arguments, dict):
            return []
        value: Any = arguments.get("command", arguments.get("cmd", []))
        return ["bash", "-lc", value] if isinstance(value, str) else list(value)

    def output(self, call_id: str, text: str, *, exit_code: int = 0, seconds: float = 0.1) -> int:
        """The tool's answer, after its end event when `end_events`; the output line.

        `shell` and local-shell answers are the JSON string of output and metadata, `exec_command`'s a
        text with a header, apply_patch's and the others' the text itself."""
        call = self.family.call(self.file.key, call_id)
        if call.answer is not None:
            raise ValueError(f"{call_id} is already answered")
        moment: datetime | None = self.ids.tick(seconds, seconds + 0.08)
        end = self._end_event(call, text, exit_code, seconds) if self.end_events else None
        if end is not None:
            call.exec_end = self._event(end, moment)
            moment = None
        if call.name in ("shell", "local_shell"):
            answer = make.shell_output(text, exit_code, round(seconds, 1))
        elif call.name == "exec_command":
            answer = make.unified_output(text, exit_code, seconds, self.ids.alphanumeric(6).lower())
        else:
            answer = text
        call.answer = self._write("response_item", make.call_output(call.kind, call_id, answer), moment)
        self.awaiting_model = True
        return call.answer

    def _end_event(self, call: CallRecord, text: str, code: int, seconds: float) -> JsonObject | None:
        if call.name in SHELL_TOOLS:
            command = self._command(call.call_id)
            return make.exec_end(call.call_id, self.turn_id, command, self.cwd, text, code, seconds)
        if call.name == "apply_patch":
            patch = str(self.arguments.get(call.call_id, ""))
            return make.patch_end(call.call_id, self.turn_id, self.cwd, patch, text, code == 0)
        match = _MCP.match(call.name)
        if match is not None:
            arguments = self.arguments.get(call.call_id)
            return make.mcp_end(call.call_id, match.group(1), match.group(2), arguments, text, seconds)
        return None

    # --- the end of a turn ------------------------------------------------------------------------
    def task_complete(self) -> int | None:
        """The turn ends: task_complete (newer versions; older ones write nothing). Its line."""
        message, self.last_agent_message = self.last_agent_message, None
        if not self.task_events:
            return None
        payload = self._with_turn({"type": "task_complete", "last_agent_message": message})
        return self._event(payload, self.ids.tick(0.01, 0.2))

    def turn_aborted(self, reason: str = "interrupted") -> int:
        """Esc, or a new prompt replacing the running turn."""
        payload = self._with_turn({"type": "turn_aborted", "reason": reason})
        return self._event(payload, self.ids.tick(0.5, 20.0))

    def compact(
        self, summary: str, *, usage: Usage | None = None, replacement: list[str] | None = None
    ) -> int:
        """Compaction: the summarising model call's token_count (when `usage`), the `compacted` line (with
        `replacement_history`: those user messages, then the summary), a context_compacted event."""
        if usage is not None:
            self.ids.tick(4.0, 15.0)
            self.response(usage)
        payload: JsonObject = {"message": summary}
        if replacement is not None:
            history = [make.message("user", text) for text in [*replacement, summary]]
            payload["replacement_history"] = history
        line = self._write("compacted", payload)
        self._event({"type": "context_compacted"})
        self.need_context = True
        return line

    def resume(self, after: timedelta) -> None:
        """`codex resume` later: the same file goes on (no new session_meta); totals continue."""
        self.ids.skip(after)
        self.need_context = True

    def kill(self) -> None:
        """The process dies (kill -9): nothing more is written to this file."""
        self.file.killed = True

    def torn(self, bytes_kept: int) -> None:
        """Killed mid-write: only the first `bytes_kept` bytes of the last line reach the disk (no LF)."""
        if not self.file.lines:
            raise ValueError("nothing to tear")
        length = len(make.dump_line(self.file.lines[-1].data))
        if not 0 < bytes_kept < length:
            raise ValueError(f"a torn line keeps 1..{length - 1} of its {length} bytes, not {bytes_kept}")
        self.file.torn_at = bytes_kept
        self.kill()

    # --- forks and sub-agents ---------------------------------------------------------------------
    def fork(
        self,
        through_line: int,
        *,
        source: str | JsonObject | None = None,
        forked_from: bool = True,
        carry_totals: bool = True,
        offset: timedelta | None = None,
        cli_version: str | None = None,
    ) -> RolloutBuilder:
        """A child rollout: its `session_meta` (`forked_from_id` unless `forked_from` is False), then this
        file's lines 1..`through_line` copied as they are, re-stamped with the fork's time, then what the
        child writes. A sub-agent is a fork with `source` like `{"subagent": {"thread_spawn": …}}`. With
        `carry_totals` the child's totals go on from the last copied token_count (spec §5)."""
        whole = complete_count(self.file)
        if not 0 < through_line <= whole:
            raise ValueError(f"{self.file.key} has {whole} whole lines, not {through_line}")
        self.ids.tick(3.0, 40.0)
        child = RolloutBuilder(
            self.family.root,
            self.cwd,
            cli_version=cli_version or self.cli_version,
            model=self.model,
            source=self.source if source is None else source,
            instructions=self.instructions,
            git=self.git,
            offset=self.file.offset if offset is None else offset,
            doubled_token_counts=self.doubled_token_counts,
            rate_limit_counts=self.rate_limit_counts,
            end_events=self.end_events,
            task_events=self.task_events,
            approval_policy=self.approval_policy,
            sandbox_mode=self.sandbox_mode,
            effort=self.effort,
            family=self.family,
            kind="fork" if source is None else "subagent",
            forked_from=self.session_id if forked_from else None,
        )
        child._copy(self, through_line, carry_totals=carry_totals)
        return child

    def _copy(self, parent: RolloutBuilder, through_line: int, *, carry_totals: bool) -> None:
        copied = copy_history(self.family, parent.file, self.file, through_line)
        total = last_total(self.family, copied)
        if carry_totals and total is not None:
            self.total, self.last_usage, self.responses = total, copied[-1].usage, len(copied)
        self.arguments.update(parent.arguments)

    # --- the end ------------------------------------------------------------------------------------
    def finish(self) -> Built:
        """Write every file of the family (once) and return the paths and the manifest entry."""
        if self.family.finished:
            raise Stopped("the family is already finished")
        files = tuple(write_family(self.family))
        self.family.finished = True
        return Built(files, truth(self.family))


def fork(parent: RolloutBuilder, through_line: int, **options: Any) -> RolloutBuilder:
    """`parent.fork(through_line, …)`: a fork (or, with `source`, a sub-agent) of `parent`."""
    return parent.fork(through_line, **options)
