"""The Codex rules (SA8xx) of the catalogue: rollout files, spec docs/formats/codex.md.

The spec labels each statement seen, inferred or unknown; a rule resting on an inferred statement is a
warning, one resting on seen facts that cost a record or a result when Codex resumes is an error."""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, REPAIRABLE, E, N, Rule, W, _rule

_r = partial(_rule, formats=("codex",))

CODEX_RULES: tuple[Rule, ...] = (
    _r(
        "SA801",
        "rollout-line-invalid",
        E,
        CORRUPT,
        "A complete rollout line is not strict UTF-8 JSON.",
        """Codex writes one JSON object per LF-terminated UTF-8 line and flushes each (spec §2, seen). A
          complete line that does not decode (invalid UTF-8, a lone surrogate, duplicate keys, trailing
          bytes, a CR before the LF, an empty line) was not written whole by it; when the session is
          resumed Codex skips the line with a warning, so the item it held is gone from the history.""",
        fix="""Keep the original as evidence and restore the rollout from a backup. Without one, remove the
          line from a copy and put the copy in the file's place: if it held a call's output, the call is
          then open (SA302/SA303) and `sessaudit seed PATH --native --output FILE` answers it explicitly.""",
    ),
    _r(
        "SA802",
        "rollout-torn-tail",
        W,
        REPAIRABLE,
        "The rollout ends in an unterminated line that is not a JSON object.",
        """The process died while appending (spec §2: one write per line, no fsync). Codex skips the
          fragment when it resumes; what it held (often a call's output or a token_count) is lost, so its
          call counts as open and the ledger ends at the last whole token_count.""",
        fix="""Keep the original as evidence. `sessaudit seed PATH --native --output FILE` writes a copy
          without the fragment whose open calls are answered; or cut a copy at the byte offset the finding
          gives (`head -c OFFSET ROLLOUT.jsonl > cut.jsonl`) and put it in the file's place.""",
    ),
    _r(
        "SA803",
        "rollout-final-newline-missing",
        W,
        None,
        "The last rollout line is a whole record but lacks its LF.",
        """The record is verified like any other, but the line Codex appends next (on `codex resume`)
          would join it into one invalid line (spec §2).""",
        fix="""Once no Codex process has the session open, keep a copy as evidence and add the LF
          (`printf '\\n' >> ROLLOUT.jsonl`) before resuming it.""",
    ),
    _r(
        "SA804",
        "rollout-line-not-object",
        E,
        CORRUPT,
        "A rollout line holds JSON that is not an object.",
        """Every rollout line is a `{timestamp, type, payload}` object (spec §3.1). An array, string or
          number was not written by Codex, which skips it on resume.""",
        fix="""Find the tool or script that wrote into the rollout and stop it; keep the original as
          evidence and restore the file from a backup, or remove the line from a copy.""",
    ),
    _r(
        "SA805",
        "rollout-line-shape",
        E,
        CORRUPT,
        "A rollout line does not have the shape Codex reads.",
        """Each line type and payload type has the fields Codex's reader needs
          (schemas/codex-line.v1.schema.json, spec §3). A line that does not fit is skipped when Codex
          resumes (spec §2, seen): e.g. a `function_call_output` whose `output` is an object makes the call
          an orphan, which Codex then answers with "aborted", silently losing the real result.""",
        fix="""Keep the original as evidence. If a tool of yours wrote the line, fix it to write Codex's
          shape (an output is a string or an array of content items); restore the file from a backup, or
          rewrite the line's payload in a copy and put the copy in the file's place.""",
    ),
    _r(
        "SA806",
        "session-meta-not-first",
        E,
        CORRUPT,
        "The rollout does not open with its session_meta line.",
        """Codex writes the session's `session_meta` as the first line and takes the thread id from the
          first `session_meta` it finds (spec §3.2, §7, seen): without one the rollout cannot be resumed
          ("failed to parse thread ID"), and lines before it belong to no session.""",
        fix="""Keep the original as evidence and restore the rollout from a backup; the session's id is
          the uuid in the file name, and the lines before the first session_meta were not written by
          Codex.""",
    ),
    _r(
        "SA807",
        "session-meta-repeated",
        E,
        CORRUPT,
        "A later session_meta line carries the rollout's own id, or comes after the session's own lines.",
        """A session_meta after the first opens history copied from a parent (a fork or a spawned
          sub-agent, spec §6, seen): it follows the file's own session_meta directly and carries the
          parent's id (nested copies of a fork of a fork follow inside the copy). A second line with the
          file's own id, or a session_meta after the session's own turns began, was not written by one
          Codex session (two processes appended to one file, or files were joined).""",
        fix="""Keep the original as evidence; split the file at the line the finding names or restore it
          from a backup. Do not resume it as it is: Codex would send both histories to the model.""",
    ),
    _r(
        "SA808",
        "call-id-repeated",
        E,
        CORRUPT,
        "Two calls, or two outputs, in one rollout share a call_id.",
        """Outputs are paired with their calls by `call_id` (spec §3.3, §7, seen); a second call with the
          same id makes the pairing ambiguous (which call did the output answer?), and a second output for
          one call is one the Responses API refuses.""",
        fix="""Keep the original as evidence and restore the rollout from a backup; if one of the two lines
          is a stray copy, remove it from a copy of the file.""",
    ),
    _r(
        "SA809",
        "output-without-call",
        W,
        None,
        "A call output names a call_id no call in the rollout has.",
        """Codex removes an output whose call it cannot find before every request (spec §7, seen), so the
          result the line holds never reaches the model. It happens when the call's line was lost (SA801,
          SA805) or the file was edited.""",
        fix="""Look for the lost call line (the findings before this one); restore the file from a backup
          if the call mattered. Otherwise nothing needs doing: Codex drops the output.""",
    ),
    _r(
        "SA810",
        "token-totals-decreased",
        E,
        CORRUPT,
        "A token_count's cumulative total_token_usage is less than an earlier one.",
        """`total_token_usage` is the running sum of every call's usage and never decreases within a
          session (spec §5, seen), across resumes and forks too; the one exception, Codex filling the
          total to the context window ({total_tokens = model_context_window, others 0}), is recognised and
          not reported. A decrease means lines from another session or an edited file; the ledger takes the
          lower total as a new baseline and counts nothing negative.""",
        fix="""Keep the original as evidence and compare the rollout with a backup; the usage of this
          session may be under-counted by the decrease the finding gives.""",
    ),
    _r(
        "SA811",
        "token-last-usage-disagrees",
        W,
        None,
        "A token_count's last_token_usage is not the growth of total_token_usage it reports.",
        """Each new call's `last_token_usage` is what `total_token_usage` grew by (spec §5: the total is the
          running sum of the last usages, seen). When they disagree, the ledger counts the growth of the
          cumulative total (the figure that cannot double-count) and says so; `last_token_usage` alone is
          never summed.""",
        fix="""Nothing to repair in the rollout; compare the ledger with the provider's usage records if
          the difference matters.""",
    ),
    _r(
        "SA812",
        "token-usage-inconsistent",
        W,
        None,
        "A usage object's parts exceed its whole (cached > input, reasoning > output, or total is not "
        "input + output).",
        """`cached_input_tokens` is part of `input_tokens`, `reasoning_output_tokens` part of
          `output_tokens`, and `total_tokens` is their sum (spec §5; 100% of 22,744 real records of 0.93.0
          to 0.144.6). A usage object that breaks this was not computed by Codex.""",
        fix="""Nothing to repair in the rollout; the ledger uses the parts as written (input − cached
          floored at zero).""",
    ),
    _r(
        "SA813",
        "rollout-timestamp-backwards",
        W,
        None,
        "A line's timestamp is earlier than the line before it.",
        """Codex stamps each line with the time it writes it (UTC, spec §1.2, §3.1), so times never go
          back within a file. An earlier time means a clock step on the writer, or lines from elsewhere.""",
        fix="""Nothing to repair; read the timeline around the line with care.""",
    ),
    _r(
        "SA814",
        "rollout-name-mismatch",
        W,
        None,
        "The file name's session id or local time disagrees with its session_meta.",
        """Codex names a rollout `rollout-<local time>-<id>.jsonl` after its session_meta's id and start
          time (spec §1.2, seen), and finds a session to resume by that name. A different id means the
          file was renamed or is another session's; a local time more than 14 hours (the widest UTC
          offset) from the session_meta timestamp means the name is not its own.""",
        fix="""Rename a copy after its session_meta (`rollout-<local start time>-<id>.jsonl`) if Codex must
          find it; keep the original as evidence.""",
    ),
    _r(
        "SA815",
        "rollout-type-unknown",
        N,
        None,
        "A line type, response item type or event type the spec does not list.",
        """Codex ignores line types and response items it does not know when it resumes (spec §3.3,
          `Other`), and its events grow with every release; the line is kept, not verified beyond its
          envelope, and its CLI version recorded.""",
        fix="""Nothing to repair. If the type is from a newer Codex, the spec (docs/formats/codex.md) should
          learn it.""",
    ),
    _r(
        "SA816",
        "fork-parent-unverified",
        N,
        None,
        "A fork's or sub-agent's copied history could not be checked against its parent's rollout.",
        """A forked or spawned rollout copies its parent's lines after its own session_meta (spec §6,
          seen). When the parent's rollout lies in the same Codex home, the copy is matched line by line
          and its end is exact; when it does not, the copy's end is taken as the end of the burst of lines
          written within two seconds of the copied session_meta (spec §6, inferred), and the ledger's
          baseline rests on that.""",
        fix="""Verify the rollout together with its parent's (its id is in the finding): name the Codex
          home (`sessaudit verify ~/.codex`) rather than one file.""",
    ),
    _r(
        "SA817",
        "fork-copy-differs",
        W,
        None,
        "A fork's copied history differs from its parent's rollout.",
        """The copied lines are the parent's items as they were at the fork (spec §6, seen; only their
          timestamps are new). A copied line that differs from the parent's line at the same place means
          one of the two files was changed after the fork.""",
        fix="""Keep both files as evidence and compare them at the lines the finding names.""",
    ),
)

CORE_RULE_PHRASES: dict[str, str] = {
    "findings-sources": "a Codex rollout",
    "held-whole": (
        "A Codex rollout is read whole, its lines decoded and kept together (the call pairing, the fork "
        "copy and the usage ledger need all of them)"
    ),
    "held-whole-memory": "about the size of the rollout file, more for many small lines",
    "held-whole-notes": (
        "A fork's parent rollout over the limit is not read; the end of the fork's copy is then inferred."
    ),
    "input-kinds": "Codex rollout",
    "inputs": "a Codex rollout file",
    "inputs-named": "a Codex `rollout-<local time>-<uuid>.jsonl` file",
    "jsonl-lines": "a Codex rollout line",
    "open-run-notes": (
        "Codex: a turn (a user message to its task_complete) with a call that has no output, or one with "
        "neither a task_complete nor a turn_aborted: waiting for the model (model-request-open) or "
        "answered but never closed (awaiting-terminal)."
    ),
    "own-recovery": "answer the open calls, then `codex resume`",
    "unknown-outcome-notes": (
        "Codex: a call of a tool that changes the world (shell, exec_command, apply_patch, write_stdin, "
        "spawn_agent, MCP tools, …; the table of docs/formats/codex.md §8) with no output in the rollout."
    ),
    "safe-replay-notes": (
        "Codex: a call of a read-only tool (read_file, list_dir, grep_files, view_image, update_plan, …) "
        "with no output."
    ),
    "safe-replay-fix": (
        'Codex: nothing is lost by re-running the read; Codex answers the call with "aborted" on `codex '
        "resume` and the model may ask again (`sessaudit seed PATH --native --output FILE` writes a rollout "
        "whose open calls are answered explicitly)."
    ),
}
