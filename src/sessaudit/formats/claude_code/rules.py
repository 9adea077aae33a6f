"""The Claude Code rules (SA7xx) of the catalogue: session transcripts, spec docs/formats/claude-code.md.

The spec labels each statement seen, inferred or unknown; a rule resting on an inferred statement is a
warning (its §0), one resting on seen facts that break Claude Code's own resume is an error."""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, REPAIRABLE, E, N, Rule, W, _rule

_r = partial(_rule, formats=("claude-code",))

CLAUDE_CODE_RULES: tuple[Rule, ...] = (
    _r(
        "SA701",
        "transcript-line-invalid",
        E,
        CORRUPT,
        "A complete transcript line is not strict UTF-8 JSON.",
        """Claude Code writes one JSON object per LF-terminated UTF-8 line (spec §2, seen in every
          version). A complete line that does not decode (invalid UTF-8, a lone surrogate, duplicate keys,
          trailing bytes, a CR before the LF, an empty line) was not written whole by it: before 2.1.121
          `--resume` failed on such a line, since then it skips it and loses the record.""",
        fix="""Keep the original as evidence and restore the session file from a backup. Without one, remove
          the line the finding names from a copy and put the copy in the file's place: the records whose
          parentUuid names the lost record then lose their parent (SA710). If the line only gained a CR
          before its LF, delete the CR instead and the record is kept. Claude Code 2.1.121 and later skip
          the line on `--resume` by themselves, losing its record; earlier versions refuse to resume.""",
    ),
    _r(
        "SA702",
        "transcript-torn-tail",
        W,
        REPAIRABLE,
        "The transcript ends in an unterminated line that is not a JSON object.",
        """The process died while appending (spec §2: a crash or unclean shutdown can leave the last line
          cut off). Claude Code's own resume skips the fragment; the spec's recommended strict policy makes
          it a warning. What the fragment held (often a tool result) is lost, so its call counts as open.""",
        fix="""Claude Code 2.1.121 and later skip the fragment on `--resume`. For older versions, or to tidy
          the file, keep the original as evidence and cut a copy at the byte offset the finding gives
          (`head -c OFFSET SESSION.jsonl > cut.jsonl`), then put the copy in the file's place. Either way
          the fragment is lost: the call whose result it held is open, and `runs[].recovery` (SA301–SA303)
          says whether it can be re-run safely.""",
    ),
    _r(
        "SA703",
        "transcript-final-newline-missing",
        W,
        None,
        "The last transcript line is a whole record but lacks its LF.",
        """The record is verified like any other, but the next append would join two records into one
          invalid line (spec §2: one object per newline-terminated line).""",
        fix="""Once no Claude Code process has the session open (a write may be under way), keep a copy of
          the file as evidence and add the LF (`printf '\\n' >> SESSION.jsonl`) before resuming it;
          otherwise the record Claude Code appends next joins this line and both are lost (SA701).""",
    ),
    _r(
        "SA704",
        "transcript-record-not-object",
        E,
        CORRUPT,
        "A transcript line holds JSON that is not an object.",
        """Every line is a JSON object (spec §2). An array, string or number was not written by Claude
          Code.""",
        fix="""Find the tool or script that wrote into the transcript and stop it. Keep the original as
          evidence and restore the file from a backup; without one, remove the line from a copy and put the
          copy in the file's place (a non-object line holds no record, so nothing else is lost unless it
          overwrote one: SA710 then names the records that lost their parent).""",
    ),
    _r(
        "SA705",
        "transcript-record-type-missing",
        E,
        CORRUPT,
        "A transcript record has no string `type`.",
        """Every record Claude Code writes names its kind in `type` (spec §3, seen). Without it the
          record cannot be placed, and readers drop it.""",
        fix="""Keep the original as evidence and restore the file from a backup. Without one, look at the
          line: if it is otherwise a whole conversation record (a `message` whose `role` is `user` or
          `assistant`), a copy with `"type"` set to that role keeps it; otherwise remove the line from the
          copy. Then find which tool edited the transcript: Claude Code always writes `type`.""",
    ),
    _r(
        "SA706",
        "transcript-record-type-unknown",
        N,
        None,
        "A transcript record has a `type` the spec does not list.",
        """New record types arrive every few releases (spec §3.10). The record is accepted and indexed
          (its uuid counts as a parent); the note names the type and the version that wrote it, so the
          spec can learn it.""",
        fix="""Nothing to fix in the file: the record is kept and its uuid still links the chain. A newer
          Claude Code release than the spec knows is the usual cause; report the type and version (the note
          names both) to the sessaudit maintainers so the spec (docs/formats/claude-code.md §3.10) learns
          it, and `--ignore SA706` meanwhile if the notes are noise.""",
    ),
    _r(
        "SA707",
        "transcript-record-shape-invalid",
        E,
        CORRUPT,
        "A record of a known type breaks a shape the spec marks seen.",
        """The record violates schemas/claude-code-record-seen.v1.schema.json: a field every source shows
          has the wrong type or is missing (a user or assistant line without `message.content`, a
          `tool_use` block without `id`, `name` or an object `input`, a `tool_result` without
          `tool_use_id`, a summary without `leafUuid`). Claude Code's resume rebuilds the API messages
          from these fields.""",
        fix="""Look at the line's `version` first: a Claude Code release newer than the spec may have
          changed the shape (report the line's shape, not its content, to the sessaudit maintainers). If
          not, the line was edited: keep the original as evidence and restore the file from a backup;
          without one, remove the line from a copy (the finding's pointer names the field), knowing that
          the records chained to it lose their parent (SA710) and `claude --resume` may fail on it.""",
    ),
    _r(
        "SA708",
        "transcript-record-shape-unusual",
        W,
        None,
        "A record of a known type misses an envelope field the spec infers as required.",
        """The record violates schemas/claude-code-record-inferred.v1.schema.json: spec §3.1's required
          envelope (uuid, parentUuid, sessionId, timestamp, isSidechain and, on user, assistant and system
          lines, userType, cwd and version) and its value shapes. The spec infers these from one parser's
          models, so this is a warning until checked against real files.""",
        fix="""Nothing to repair: the record is still verified and used. Look at the line's `version` and
          its neighbours: if a Claude Code release wrote it, the spec's inferred envelope (§3.1) is wrong
          (report the field and version to the sessaudit maintainers, and `--ignore SA708` meanwhile); if
          another tool wrote or edited the line, check the file's other lines from there on.""",
    ),
    _r(
        "SA709",
        "transcript-uuid-duplicate",
        E,
        CORRUPT,
        "Two records in one transcript file carry the same uuid.",
        """Inside one file a uuid is unique (spec §7, the DAG invariants of claude-code-log; copies made
          by resume are in another file, §1.6). Two records with one uuid make the parent chain ambiguous,
          and duplicate assistant messages sent back to the API fail with HTTP 400 (CL 2.1.51).""",
        fix="""Keep the original as evidence and restore the file from a backup. Without one, compare the two
          lines the finding names: if they are the same record, a copy without the later line loses
          nothing; if they differ, decide which one the conversation continues from (read the lines
          whose parentUuid names the uuid) and remove the other from the copy. Put the copy in the file's
          place before `claude --resume`.""",
    ),
    _r(
        "SA710",
        "transcript-parent-unresolved",
        W,
        None,
        "A record's parentUuid names no record in the session's files or its project directory.",
        """A conversation is rebuilt by walking parentUuid back from the leaf (spec §7). A parent may lie
          in another file of the project (resume, continue): those are looked up there. One found nowhere
          may be in a file the cleanup deleted (§1.7), so this is a warning; the chain breaks there.""",
        fix="""Look for the transcript that held the parent (a backup, another machine, an older copy of
          `~/.claude/projects/`) and put it back in the project directory; the audit then resolves the
          link. If it is gone, the file needs no repair, but `claude --resume` sees the conversation only
          from this record on. Claude Code deletes transcripts not modified for `cleanupPeriodDays` days
          (default 30); raise it in settings.json to keep them longer.""",
    ),
    _r(
        "SA711",
        "transcript-tool-result-orphan",
        E,
        CORRUPT,
        "A tool_result answers a tool_use id that no earlier record issued.",
        """Each `tool_result.tool_use_id` answers a `tool_use` earlier in the chain (spec §4.1). The
          Messages API refuses a history with an orphaned result ("unexpected tool_use_id found in
          tool_result blocks", HTTP 400, seen: CL 2.1.0, 2.1.7, 2.1.9, 2.1.69), and every later prompt of
          the session fails the same way. The call is looked up in the file, the session's other files and
          its project directory first.""",
        fix="""Do not edit the original. First look for a transcript that issued the call (a backup, another
          machine) and put it back in the project directory; the audit then finds the call there. If none
          exists, the session's next prompt fails with HTTP 400: continue from a point before the result on
          a new branch that leaves it out of the chain (spec §8 repair step 4: in Claude Code, `/rewind` to
          a prompt before the result), or start a new session.""",
    ),
    _r(
        "SA712",
        "transcript-session-id-inconsistent",
        W,
        None,
        "A record carries a sessionId other than its file's, and is not a copy from another file.",
        """The lines of a file carry the session that wrote them (spec §1.3); a different sessionId is
          expected only on resume copies, whose uuid is found in another file of the project (§1.6).
          Another writer, or files merged by hand, give other ids. Inferred: a warning.""",
        fix="""Nothing to repair for resuming. Look for `<that sessionId>.jsonl` in the project directory
          and on other machines: if a sync tool or a hand merge copied its lines here, their usage is counted
          in both files. Until you know which session wrote the line, do not bill or compare by this file's
          usage.""",
    ),
    _r(
        "SA713",
        "transcript-timestamp-decreasing",
        W,
        None,
        "A record's timestamp is earlier than the record before it in the file.",
        """Claude Code appends records as they happen (spec §2), so file order and time agree. The parent
          graph, not time, orders a conversation (§7); a step back in time points at a clock change or
          lines written out of order, so this is a warning.""",
        fix="""Nothing to fix in the file; read the conversation by its parent links, not by time. A large
          step back points at the machine's clock (check NTP and time zone settings), or at two processes
          appending to the same session file at once.""",
    ),
    _r(
        "SA714",
        "transcript-field-unknown",
        N,
        None,
        "A record of a known type has a top-level field the spec does not list.",
        """Claude Code adds fields often (spec §3). The note names the field and the version that wrote
          it; the record is verified as usual.""",
        fix="""Nothing to fix in the file: the field is kept and the record verified as usual. A newer Claude
          Code release than the spec knows is the usual cause; report the field and version (the note names
          both) to the sessaudit maintainers so the spec learns it, and `--ignore SA714` meanwhile if the
          notes are noise.""",
    ),
    _r(
        "SA715",
        "transcript-summary-leaf-unresolved",
        N,
        None,
        "A summary record's leafUuid names no record in the session's files or its project directory.",
        """A `summary` line titles a conversation by the uuid of its last message, `leafUuid` (spec §1.5);
          Claude Code often writes it into a later session's file, so the record is looked up in the
          whole project directory. One found nowhere belongs to a session whose file is gone (deleted
          after `cleanupPeriodDays`, §1.7, or not copied with the evidence). A summary is a title, not
          part of the conversation, so this is a note: nothing the model sees is missing.""",
        fix="""Nothing to fix in the file. To see the conversation the summary names, find its session
          file (backups, another machine) and verify it beside this one.""",
    ),
    _r(
        "SA716",
        "transcript-subagent-untied",
        N,
        None,
        "A sub-agent file is tied to no Task or Agent call of its session.",
        """A sub-agent's transcript (`agent-<id>.jsonl`, spec §1.4) belongs to the Task (or, in 2.1.x,
          Agent) call that spawned it: its meta sidecar's `toolUseId` names that call (2.1.2+), and the
          call's result names the agent (`toolUseResult.agentId`, or an `agentId: <id>` line in its text).
          When neither ties the file to a call of the session, it is a `/btw` side question (which also
          writes a sidechain file) or a spawn whose call lies in a file that is gone. A note: the file is
          verified and counted as the session's all the same.""",
        fix="""Nothing to fix in the file. If the session should hold the spawning call, look for the
          session's missing or older files (a resume may have continued elsewhere).""",
    ),
    _r(
        "SA717",
        "transcript-sidechain-line-foreign",
        W,
        None,
        "A line in a sub-agent's file says it is not that agent's sidechain line.",
        """Every line of `agent-<id>.jsonl` is a line of that agent's conversation: `isSidechain` true and
          `agentId` the file's `<id>` (spec §1.4). A line with `isSidechain: false` or another `agentId`
          was written into the wrong file (a copy, a concatenation by hand) and may be counted twice or
          attributed to the wrong agent.""",
        fix="""Compare the file with a copy from the machine that wrote it; a line from another file is
          not part of this agent's conversation.""",
    ),
)


# this format's passages in the core rules' texts, by place (sessaudit.rules.PLACES)
CORE_RULE_PHRASES: dict[str, str] = {
    "findings-sources": "a Claude Code transcript",
    "held-whole": (
        "A Claude Code transcript and its sub-agent files are read whole, their records decoded and kept "
        "together (the uuid chain, the tool pairing and the usage ledger need all of them)"
    ),
    "held-whole-memory": (
        "about the size of a Claude Code session's files (0.75 times on a 49 MB transcript of large tool "
        "results; more for many small records)"
    ),
    "held-whole-notes": (
        "A Claude Code sub-agent file over the limit is reported and its session verified without it."
    ),
    "input-kinds": "Claude Code session",
    "inputs": "a Claude Code session transcript",
    "inputs-named": "a Claude Code `<session-uuid>.jsonl` transcript",
    "jsonl-lines": "a Claude Code record",
    "open-run-notes": (
        "Claude Code: a turn (a prompt to its final answer) with a `tool_use` that has no `tool_result`, "
        "or the session's last turn waiting for the model (a prompt or a tool result with no response "
        "after it, or a response cut off mid-stream)."
    ),
    "own-recovery": "answer the open calls, then `claude --resume`",
    "unknown-outcome-notes": (
        "Claude Code: a `tool_use` of a tool that changes the world (Bash, Write, Edit, MultiEdit, "
        "NotebookEdit, MCP tools, …; the table of docs/formats/claude-code.md §10) with no "
        "`tool_result` in the session's files."
    ),
    "safe-replay-notes": (
        "Claude Code: a `tool_use` of a read-only tool (Read, Glob, Grep, LS, WebFetch, …) with no "
        "`tool_result`."
    ),
    "safe-replay-fix": (
        "Claude Code: nothing is lost by re-running the read; answer the dangling call (`sessaudit seed "
        "PATH --native --output FILE` writes a transcript that does) before `claude --resume`, which "
        "otherwise fails with an API 400 error."
    ),
}
