"""Random legal tiny-agent v2 sessions: a seeded walk over the builder's paths, ending in any state."""

from __future__ import annotations

import random

from sessaudit.formats.tiny_agent.build.session import (
    Answer,
    Call,
    Operation,
    SessionBuilder,
    Step,
    TokenUsage,
)
from tests.formats.tiny_agent.scenarios import Expected

QUESTIONS = ("Why does the cart test fail?", "Add a discount field.", "Rename total to sum.", "Explain.")
CALLS = (
    Call("read", {"path": "src/cart.js"}),
    Call("grep", {"pattern": "total("}),
    Call("bash", {"command": "npm test"}),
    Call("edit", {"path": "src/cart.js", "old": "price", "new": "price * qty"}),
)


class Walker:
    """Appends legal transactions chosen by a seeded generator; `stopped` says why the walk ended early."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.builder = SessionBuilder(seed=seed, created_at=1787410800000 + seed * 1000)
        self.roles: list[str] = []
        self.open_kind = "idle"

    def pick(self, *weighted: tuple[str, int]) -> str:
        names = [name for name, _ in weighted]
        return self.random.choices(names, weights=[weight for _, weight in weighted])[0]

    def run(self, actions: int) -> tuple[bytes, Expected]:
        for _ in range(actions):
            if not self.step_once():
                break
        return self.builder.data(), Expected(ok=True, operation=self.open_kind)

    def step_once(self) -> bool:
        choice = self.pick(("run", 6), ("compact", 2 if len(self.roles) > 1 else 0), ("user", 1), ("end", 1))
        if choice == "end":
            return False
        if choice == "user":
            self.builder.user("one more thing")
            self.roles.append("user")
        elif choice == "compact":
            self.compaction()
        else:
            self.open_kind = "run"
            operation = self.builder.start_run(self.random.choice(QUESTIONS))
            self.roles.append("user")
            finished = self.run_steps(operation)
            if not finished:
                return False
            self.open_kind = "idle"
        return True

    def run_steps(self, operation: Operation) -> bool:
        """One run to its terminal record (True), or to an open state where the walk stops (False)."""
        while True:
            if self.pick(("go", 12), ("stop-open", 1)) == "stop-open":
                return False
            step = self.builder.step(operation)
            if self.random.random() < 0.15:
                step = self.builder.retry(step)
            outcome = self.pick(
                ("stop", 4), ("tools", 5), ("length", 1), ("fail", 1), ("abort", 1), ("open", 1)
            )
            if outcome == "open":
                return False
            if outcome == "fail":
                self.builder.step_failed(step)
                self.builder.finish(operation, "failed")
                return True
            if outcome == "abort":
                self.builder.abort(operation, "model")
                self.builder.step_failed(step, "aborted", "Operation aborted")
                self.builder.finish(operation, "aborted")
                return True
            if outcome == "stop":
                self.builder.assistant(step, "Done: the fix is in src/cart.js.")
                self.roles.append("assistant")
                self.builder.finish(operation)
                return True
            calls = self.random.sample(CALLS, self.random.randint(1, 3))
            if outcome == "length":
                answer = self.builder.assistant(step, None, calls=calls, stop_reason="length")
                self.roles.append("assistant")
                with self.builder.transaction():
                    for call in answer.calls:
                        self.builder.pre_execution(answer, call.index, "truncated")
                        self.roles.append("tool")
                self.builder.finish(operation)
                return True
            answer = self.builder.assistant(step, None, calls=calls)
            self.roles.append("assistant")
            status = self.tools(operation, step, answer)
            if status != "continue":
                return status == "finished"

    def tools(self, operation: Operation, step: Step, answer: Answer) -> str:
        """Run an answer's calls: results, synthetics, an abort, or a stop with a pending intent."""
        for call in answer.calls:
            action = self.pick(("result", 8), ("synthetic", 1), ("abort", 1), ("pending", 1))
            if action == "synthetic":
                self.builder.pre_execution(
                    answer, call.index, self.random.choice(("unknownTool", "invalidArguments"))
                )
                self.roles.append("tool")
                continue
            intent = self.builder.start_tool(answer, call.index)
            if action == "pending":
                return "open"
            if action == "abort":
                self.builder.abort(operation, "tool", call.call_id)
                with self.builder.transaction():
                    self.builder.interrupted(intent)
                    for later in answer.calls[call.index + 1 :]:
                        self.builder.pre_execution(answer, later.index, "aborted")
                self.roles.extend("tool" for _ in answer.calls[call.index :])
                self.builder.finish(operation, "aborted")
                return "finished"
            usage = TokenUsage(input=self.random.randint(0, 50)) if self.random.random() < 0.3 else None
            failed = self.random.random() < 0.2
            content = f"output of {call.name}"
            self.builder.tool_result(intent, content, outcome="error" if failed else "success", usage=usage)
            self.roles.append("tool")
        return "continue"

    def compaction(self) -> None:
        # The retained tail must be a legal transcript on its own: it may not start with a tool result.
        choices = [keep for keep in range(len(self.roles)) if keep == 0 or self.roles[-keep] != "tool"]
        keep = self.random.choice(choices)
        operation = self.builder.start_compaction(keep_last=keep)
        step = self.builder.step(operation)
        if self.random.random() < 0.1:
            self.builder.abort(operation, "compact")
            self.builder.step_failed(step, "aborted", "Operation aborted")
            self.builder.finish(operation, "aborted")
            return
        self.builder.compaction_entry(step, "Summary of the work so far.")
        self.builder.finish(operation)


def random_session(seed: int, actions: int = 12) -> tuple[bytes, Expected]:
    """A legal session of up to `actions` top-level actions and what tiny-agent's reducer answers."""
    return Walker(seed).run(actions)
