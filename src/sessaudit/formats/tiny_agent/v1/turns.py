"""Turns of a legacy v1 session (spec §15.1): call pairing, fixed texts, interruptions and compactions."""

from __future__ import annotations

from typing import Any

from sessaudit.formats.tiny_agent.v1.lines import (
    ABORTED,
    ABORTED_BEFORE_EXECUTION,
    TRUNCATED,
    V2_ONLY_TEXTS,
    AssistantMessage,
    Call,
    Compaction,
    Event,
    Interruption,
    ToolResult,
    UserMessage,
    json_text,
)
from sessaudit.formats.tiny_agent.v1.recovery import Note, Settler, Turn, calls_text
from sessaudit.framing import Line
from sessaudit.model import Run

RESULT_OUT_OF_ORDER, OUT_OF_TURN, TEXT, COMPACTION, INTERRUPTION = "SA153", "SA154", "SA155", "SA157", "SA158"
CALL_ID, CONTENT = "/message/tool_call_id", "/message/content"


class Turns:
    """Follows the turns line by line; every problem becomes a Note, every turn a Run at `finish()`."""

    def __init__(self, notes: list[Note]) -> None:
        self.notes = notes
        self.turns: list[Turn] = []
        self.current: Turn | None = None
        self.untrusted: int | None = None  # the first line after which the reconstructed state is a guess
        self.context: int | None = 0  # messages in the model context after the system prompt; None: unknown

    def unusable(self, line: Line, *, counts_as_message: bool | None = None) -> None:
        """A line that records nothing usable; `counts_as_message` is None when not even its type is known."""
        if counts_as_message is None:
            self.context = None
        elif counts_as_message and self.context is not None:
            self.context += 1
        if self.untrusted is None:
            self.untrusted = line.number
        self._touch(line)

    def written(self, moment: int) -> None:
        """The time of a line the current turn wrote, while the state is still verified (not a guess)."""
        if self.current is not None and self.untrusted is None:
            self.current.last_written = moment

    def apply(self, event: Event, line: Line) -> None:
        if isinstance(event, UserMessage | AssistantMessage | ToolResult) and self.context is not None:
            self.context += 1  # v1's resume pushes every message line into the context
        if isinstance(event, UserMessage):
            self._user(line)
        elif isinstance(event, AssistantMessage):
            self._assistant(event, line)
        elif isinstance(event, ToolResult):
            self._result(event, line)
        elif isinstance(event, Compaction):
            self._compaction(event, line)
        else:
            self._interruption(event, line)
        self._touch(line)

    def finish(self) -> list[Run]:
        if self.current is not None and self.current.phase != "done":
            self._close(self.current, at_eof=True)
        return [turn.run() for turn in self.turns]

    # --- events --------------------------------------------------------------------------------------------
    def _user(self, line: Line) -> None:
        turn = self.current
        if turn is not None and turn.phase != "done":
            if turn.pending:
                self._broken(OUT_OF_TURN, f"a user message while {turn.unanswered()}", line)
            self._close(turn, at_eof=False, by_line=line.number)
        self.current = Turn(line.number, line.offset, line.number, line.offset)
        self.turns.append(self.current)

    def _assistant(self, event: AssistantMessage, line: Line) -> None:
        turn = self.current
        if turn is None:
            self._broken(
                OUT_OF_TURN, "an assistant message before any user message: no model request was open", line
            )
            turn = self.current = Turn(line.number, line.offset, line.number, line.offset, registered=False)
        elif turn.pending:
            self._broken(OUT_OF_TURN, f"an assistant message while {turn.unanswered()}", line)
        elif turn.aborted is not None and turn.phase == "calls":
            aborted = f"{calls_text((turn.aborted,))} at line {turn.aborted_line}"
            self._broken(
                OUT_OF_TURN,
                f"an assistant message after the user aborted {aborted}; the CLI ends the "
                "turn after an abort",
                line,
            )
        elif turn.phase == "done":
            ended = f"{turn.run_id} had ended ({turn.state})"
            self._broken(OUT_OF_TURN, f"an assistant message, but no model request was open: {ended}", line)
        turn.answer_line, turn.answer_offset, turn.recovery = line.number, line.offset, None
        turn.calls, turn.answered, turn.aborted, turn.truncated = event.calls, 0, None, False
        if event.calls:
            turn.phase, turn.state = "calls", "open"
        else:
            # Without calls the CLI returns the text as the answer, or throws on a blank one: the turn failed.
            turn.phase, turn.state = "done", "completed" if event.has_text else "failed"

    def _result(self, event: ToolResult, line: Line) -> None:
        turn = self.current
        pending = turn.pending if turn is not None else ()
        named = f"a tool result for {json_text(event.call_id)}"
        if turn is None or not pending:
            why = "no assistant message has asked for tools"
            if turn is not None and turn.calls:
                why = f"every call of the assistant message at line {turn.answer_line} already has its result"
            self._broken(RESULT_OUT_OF_ORDER, f"{named} answers no open call: {why}", line, CALL_ID)
            return
        position = next((index for index, call in enumerate(pending) if call.call_id == event.call_id), None)
        if position is None:
            why = f"the assistant message at line {turn.answer_line} has no such call"
            if any(call.call_id == event.call_id for call in turn.calls):
                why = "that call already has its result"
            self._broken(
                RESULT_OUT_OF_ORDER, f"{named} where {calls_text(pending[:1])} was next: {why}", line, CALL_ID
            )
            return
        if position:
            self._broken(
                RESULT_OUT_OF_ORDER,
                f"{named} before {calls_text(pending[:position])}: the CLI runs the calls "
                "of an answer in order and writes each result after its tool ran",
                line,
                CALL_ID,
            )
        call = pending[position]
        turn.answered += position + 1
        if event.tool_name is not None and event.tool_name != call.name:
            called = f"the call at line {turn.answer_line} is to {json_text(call.name)}"
            self._note(
                RESULT_OUT_OF_ORDER,
                f"{named} is named {json_text(event.tool_name)}, but {called}",
                line,
                "/toolName",
            )
        if event.content is not None:
            self._text(turn, call, event.content, line)

    def _text(self, turn: Turn, call: Call, content: str, line: Line) -> None:
        """The fixed texts of §15.1: truncation for every call of a cut answer, abort texts in their order."""
        place, found = f"call {call.index} ({call.call_id})", json_text(content)
        if turn.answered == 1:
            turn.truncated = content == TRUNCATED
        if turn.truncated:
            if content != TRUNCATED:
                self._note(
                    TEXT,
                    f"{place} of an answer cut by the token limit got {found}; the CLI gives every "
                    "call of such an answer the truncation text",
                    line,
                    CONTENT,
                )
        elif turn.aborted is not None:
            if content != ABORTED_BEFORE_EXECUTION:
                expected = json_text(ABORTED_BEFORE_EXECUTION)
                self._note(
                    TEXT,
                    f"{place} comes after the call aborted at line {turn.aborted_line} and should "
                    f"read {expected}, found {found}",
                    line,
                    CONTENT,
                )
        elif content == ABORTED:
            turn.aborted, turn.aborted_line = call, line.number
        elif content == TRUNCATED:
            self._note(
                TEXT,
                f"{place} got the truncation text, but call 0 of the same answer did not; the CLI "
                "gives it to every call of an answer cut by the token limit or to none",
                line,
                CONTENT,
            )
        elif content == ABORTED_BEFORE_EXECUTION:
            self._note(
                TEXT,
                f"{place} reads {found}, but no earlier call of this answer was aborted "
                f"({json_text(ABORTED)})",
                line,
                CONTENT,
            )
        elif content in V2_ONLY_TEXTS:
            self._note(
                TEXT,
                f"{place} carries tiny-agent v2's fixed text {found}; the v1 CLI never writes it",
                line,
                CONTENT,
            )
        else:
            folded = content.strip().rstrip(".").casefold()
            for fixed in (ABORTED, ABORTED_BEFORE_EXECUTION, TRUNCATED):
                if folded == fixed.rstrip(".").casefold():
                    near = f"a near miss of the v1 fixed text {json_text(fixed)}"
                    self._note(TEXT, f"{place} reads {found}, {near}", line, CONTENT)

    def _compaction(self, event: Compaction, line: Line) -> None:
        turn = self.current
        if turn is not None and turn.phase != "done":
            if turn.pending:
                self._broken(
                    OUT_OF_TURN,
                    f"a compaction while {turn.unanswered()}; the CLI compacts only between turns",
                    line,
                )
            self._close(turn, at_eof=False, by_line=line.number)
        compacted, kept, context = event.compacted, event.kept, self.context
        if context is None or compacted is None or kept is None:
            self.context = None  # unknown from here on: no more count checks
            return
        if compacted + kept != context:
            held = f"the model context held {context} messages here"
            self._note(
                COMPACTION,
                f"compactedMessages {compacted} + keptMessages {kept} = {compacted + kept}, but "
                f"{held} (the message lines since the start, or since the last compaction, which counts as "
                f"one){self._since()}",
                line,
                "/compactedMessages",
                {"compacted": compacted, "kept": kept, "context": context},
            )
        self.context = 1 + min(kept, context)

    def _interruption(self, event: Interruption, line: Line) -> None:
        turn, phase = self.current, event.phase
        if turn is None or turn.phase == "done":
            if phase in ("model", "tool"):
                ended = "no turn had started" if turn is None else f"{turn.run_id} had ended ({turn.state})"
                self._broken(INTERRUPTION, f"a {phase}-phase interruption, but {ended}", line)
            return
        if phase == "compact":
            if turn.pending:
                self._broken(
                    INTERRUPTION,
                    f"a compaction was interrupted while {turn.unanswered()}; the CLI "
                    "compacts only between turns",
                    line,
                )
            self._close(turn, at_eof=False, by_line=line.number)
            return
        problem = self._abort_problem(turn, event)
        if problem is not None:
            self._broken(INTERRUPTION, problem, line, "/toolCallId" if phase == "tool" else None)
        turn.phase, turn.state, turn.recovery = "done", "aborted", None

    @staticmethod
    def _abort_problem(turn: Turn, event: Interruption) -> str | None:
        """Why a model- or tool-phase interruption does not fit the turn (None when it does)."""
        if event.phase == "model":
            if turn.pending:
                return f"a model-phase interruption while {turn.unanswered()}"
            if turn.aborted is not None:
                return f"a model-phase interruption after a tool was aborted at line {turn.aborted_line}"
            return None
        if event.phase != "tool":
            return None
        if turn.phase != "calls":
            return f"a tool-phase interruption while the model request of {turn.run_id} was open"
        if turn.aborted is None:
            return (
                f"a tool-phase interruption, but no call of the answer at line {turn.answer_line} was aborted"
            )
        if event.tool_call_id is not None and event.tool_call_id != turn.aborted.call_id:
            aborted = f"the call aborted at line {turn.aborted_line} is {json_text(turn.aborted.call_id)}"
            return f"the interruption names {json_text(event.tool_call_id)}, but {aborted}"
        if turn.pending:
            return (
                f"a tool-phase interruption while {turn.unanswered()}; the CLI first writes "
                f"{json_text(ABORTED_BEFORE_EXECUTION)} for every later call"
            )
        return None

    # --- helpers -------------------------------------------------------------------------------------------
    def _close(self, turn: Turn, *, at_eof: bool, by_line: int = 0) -> None:
        self.notes.extend(Settler(self.untrusted).settle(turn, at_eof=at_eof, by_line=by_line))

    def _touch(self, line: Line) -> None:
        if self.current is not None:
            self.current.last_line, self.current.last_offset = line.number, line.offset

    def _since(self) -> str:
        return (
            ""
            if self.untrusted is None
            else f" (the turn state is not trustworthy since line {self.untrusted})"
        )

    def _note(
        self,
        code: str,
        message: str,
        line: Line,
        pointer: str | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> None:
        self.notes.append(Note(code, message, line.number, line.offset, pointer, evidence))

    def _broken(self, code: str, message: str, line: Line, pointer: str | None = None) -> None:
        """A line that does not fit the turn's state: from here on the reconstructed state is a guess."""
        if self.untrusted is None:
            self.untrusted = line.number
            message += "; the turn state is not trustworthy from this line on"
        else:
            message += self._since()
        self._note(code, message, line, pointer)
