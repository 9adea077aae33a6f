"""Named legal tiny-agent v2 sessions from the project's builder, with what tiny-agent's reducer answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sessaudit.formats.tiny_agent.build.session import Call, Configuration, SessionBuilder, TokenUsage


@dataclass(frozen=True, slots=True)
class Expected:
    """tiny-agent's reducer verdict: accepted with this open operation kind, or an error code at a line."""

    ok: bool
    operation: str | None = None
    code: str | None = None
    line: int | None = None
    seq: int | None = None
    torn: bool = False


Scenario = Callable[[], tuple[bytes, Expected]]

IDLE = Expected(ok=True, operation="idle")
RUN = Expected(ok=True, operation="run")
COMPACTION = Expected(ok=True, operation="compaction")

READ_AND_TEST = (Call("read", {"path": "src/cart.js"}), Call("bash", {"command": "npm test"}))


def header_only() -> tuple[bytes, Expected]:
    return SessionBuilder(seed=1).data(), IDLE


def user_without_run() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=2)
    builder.user("hello?")
    return builder.data(), IDLE


def run_accepted() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=3)
    builder.start_run("Fix the failing cart test.")
    return builder.data(), RUN


def run_from_existing_entry() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=4)
    entry = builder.user("Fix the failing cart test.")
    run = builder.start_run(input_entry_id=entry)
    builder.assistant(builder.step(run), "Done.")
    builder.finish(run)
    return builder.data(), IDLE


def open_attempt() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=5)
    builder.step(builder.start_run("Explain the cart module."))
    return builder.data(), RUN


def open_retry() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=6)
    builder.retry(builder.step(builder.start_run("Explain the cart module.")))
    return builder.data(), RUN


def retry_settled() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=7)
    run = builder.start_run("Explain the cart module.")
    second = builder.retry(builder.step(run))
    builder.assistant(second, "The cart module sums line items.")
    builder.finish(run)
    return builder.data(), IDLE


def plain_exchange() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=8)
    builder.exchange("What does total() do?", "It sums item prices.")
    builder.exchange("And with quantities?", "It ignores them; that is the bug.")
    return builder.data(), IDLE


def write_tools_run(builder: SessionBuilder) -> None:
    """A run that reads a file, runs the failing test (an error result with tool usage) and answers."""
    run = builder.start_run("Why does the cart test fail?")
    answer = builder.assistant(builder.step(run), None, calls=READ_AND_TEST)
    builder.tool_result(builder.start_tool(answer, 0), "export function total(items) { ... }")
    tested = builder.start_tool(answer, 1)
    builder.tool_result(tested, "1 failing", outcome="error", usage=TokenUsage())
    builder.assistant(builder.step(run), "total() ignores qty.")
    builder.finish(run)


def tools_completed(builder: SessionBuilder | None = None) -> tuple[bytes, Expected]:
    builder = builder or SessionBuilder(seed=9)
    write_tools_run(builder)
    return builder.data(), IDLE


def tools_completed_sorted_keys() -> tuple[bytes, Expected]:
    from sessaudit.formats.tiny_agent.build.session import KeyOrder

    return tools_completed(SessionBuilder(seed=10, key_order=KeyOrder.SORTED))


def pending_tool(replay: str) -> Scenario:
    def build() -> tuple[bytes, Expected]:
        builder = SessionBuilder(seed=11)
        run = builder.start_run("Deploy it.")
        answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
        builder.start_tool(answer, 0, replay="safe" if replay == "safe" else "never")
        return builder.data(), RUN

    return build


def interrupted_then_finished() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=12)
    run = builder.start_run("Deploy it.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    builder.interrupted(builder.start_tool(answer, 0))
    builder.assistant(builder.step(run), "The deploy was interrupted; check the server before retrying.")
    builder.finish(run)
    return builder.data(), IDLE


def pre_execution_synthetics() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=13)
    run = builder.start_run("Lint and read.")
    calls = [Call("lint", {}), Call("read", raw_arguments='{"path": "src/ca'), Call("read", {"path": "a"})]
    answer = builder.assistant(builder.step(run), "Checking.", calls=calls)
    with builder.transaction():
        builder.pre_execution(answer, 0, "unknownTool")
        builder.pre_execution(answer, 1, "invalidArguments")
    builder.tool_result(builder.start_tool(answer, 2), "a")
    builder.assistant(builder.step(run), "Nothing to lint here.")
    builder.finish(run)
    return builder.data(), IDLE


def length_truncated() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=14)
    run = builder.start_run("Write the whole module.")
    calls = [
        Call("write", raw_arguments='{"path":"src/cart.js","content":"export'),
        Call("bash", {"command": "ls"}),
    ]
    answer = builder.assistant(builder.step(run), None, calls=calls, stop_reason="length")
    with builder.transaction():
        builder.pre_execution(answer, 0, "truncated")
        builder.pre_execution(answer, 1, "truncated")
    builder.finish(run)
    return builder.data(), IDLE


def step_failed_run() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=15)
    run = builder.start_run("Explain.")
    builder.step_failed(builder.step(run))
    builder.finish(run, "failed")
    return builder.data(), IDLE


def settled_without_terminal() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=16)
    run = builder.start_run("Explain.")
    builder.assistant(builder.step(run), "It sums prices.")
    return builder.data(), RUN


def add_model_abort(builder: SessionBuilder) -> None:
    """A run aborted while its model request was open."""
    run = builder.start_run("Refactor everything.")
    step = builder.step(run)
    builder.abort(run, "model")
    builder.step_failed(step, "aborted", "Operation aborted")
    builder.finish(run, "aborted")


def add_tool_abort(builder: SessionBuilder) -> None:
    """A run aborted while its first tool ran: that tool interrupted, the second never started."""
    run = builder.start_run("Run the slow tests, then read the log.")
    calls = [Call("bash", {"command": "npm run test:slow"}), Call("read", {"path": "test.log"})]
    answer = builder.assistant(builder.step(run), None, calls=calls)
    running = builder.start_tool(answer, 0)
    builder.abort(run, "tool", running.call.call_id)
    with builder.transaction():
        builder.interrupted(running)
        builder.pre_execution(answer, 1, "aborted")
    builder.finish(run, "aborted")


def abort_model() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=17)
    add_model_abort(builder)
    return builder.data(), IDLE


def abort_tools() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=18)
    add_tool_abort(builder)
    return builder.data(), IDLE


def abort_pending() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=19)
    run = builder.start_run("Refactor everything.")
    builder.step(run)
    builder.abort(run, "model")
    return builder.data(), RUN


def failed_with_pending_tool_and_late_result() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=20)
    run = builder.start_run("Deploy it.")
    answer = builder.assistant(builder.step(run), None, calls=[Call("bash", {"command": "./deploy.sh"})])
    intent = builder.start_tool(answer, 0)
    builder.finish(run, "failed", error=("tool_error", "deploy runner crashed"))
    builder.tool_result(intent, "deployed", duration_ms=60000)
    return builder.data(), IDLE


def compaction_cycle() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=21)
    write_tools_run(builder)
    builder.compact("The cart total ignores quantities.")
    builder.exchange("Now fix it.", "Fixed: total() multiplies by qty.")
    builder.compact("Cart total fixed.", keep_last=2)
    builder.compact("Cart total fixed, twice summarised.", keep_last=0)
    builder.exchange("Anything else?", "No.")
    return builder.data(), IDLE


def compaction_open(stage: str) -> Scenario:
    def build() -> tuple[bytes, Expected]:
        builder = SessionBuilder(seed=22)
        builder.exchange("What does total() do?", "It sums item prices.")
        operation = builder.start_compaction()
        if stage in ("step", "entry"):
            step = builder.step(operation)
            if stage == "entry":
                builder.compaction_entry(step, "total() sums prices.")
        return builder.data(), COMPACTION

    return build


def compaction_aborted() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=23)
    builder.exchange("What does total() do?", "It sums item prices.")
    operation = builder.start_compaction()
    step = builder.step(operation)
    builder.abort(operation, "compact")
    builder.step_failed(step, "aborted", "Operation aborted")
    builder.finish(operation, "aborted")
    builder.exchange("Continue.", "Continuing without compaction.")
    return builder.data(), IDLE


def configuration_change() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=24)
    builder.exchange("Hi.", "Hello.")
    builder.configure(Configuration(model="deepseek/deepseek-v4-pro", tools=("read", "bash")))
    builder.exchange("Hi again.", "Hello again.")
    return builder.data(), IDLE


def single_fact_array_and_bom() -> tuple[bytes, Expected]:
    builder = SessionBuilder(seed=25, byte_order_mark=True)
    builder.array_next()
    builder.user("hello")
    return builder.data(), IDLE


def torn(keep: int) -> Scenario:
    def build() -> tuple[bytes, Expected]:
        builder = SessionBuilder(seed=26)
        run = builder.start_run("Explain.")
        builder.tear_next(keep)
        builder.step(run)
        return builder.data(), Expected(ok=True, operation="run", torn=True)

    return build


LEGAL: dict[str, Scenario] = {
    "header-only": header_only,
    "user-without-run": user_without_run,
    "run-accepted": run_accepted,
    "run-from-existing-entry": run_from_existing_entry,
    "open-attempt": open_attempt,
    "open-retry": open_retry,
    "retry-settled": retry_settled,
    "plain-exchange": plain_exchange,
    "tools-completed": tools_completed,
    "tools-completed-sorted-keys": tools_completed_sorted_keys,
    "pending-safe-tool": pending_tool("safe"),
    "pending-never-tool": pending_tool("never"),
    "interrupted-then-finished": interrupted_then_finished,
    "pre-execution-synthetics": pre_execution_synthetics,
    "length-truncated": length_truncated,
    "step-failed-run": step_failed_run,
    "settled-without-terminal": settled_without_terminal,
    "abort-model": abort_model,
    "abort-tools": abort_tools,
    "abort-pending": abort_pending,
    "failed-with-pending-tool-and-late-result": failed_with_pending_tool_and_late_result,
    "compaction-cycle": compaction_cycle,
    "compaction-started": compaction_open("started"),
    "compaction-step-open": compaction_open("step"),
    "compaction-settled": compaction_open("entry"),
    "compaction-aborted": compaction_aborted,
    "configuration-change": configuration_change,
    "single-fact-array-and-bom": single_fact_array_and_bom,
    "torn-mid-line": torn(40),
    "torn-before-lf": torn(-1),
}
