"""The rule catalogue: every finding's stable code, name, default level, verdict effect and documentation."""

from __future__ import annotations

from typing import Any

from sessaudit.model import Finding, Location
from sessaudit.rulebase import (
    CORRUPT,
    NEEDS_RECOVERY,
    REPAIRABLE,
    UNREADABLE,
    UNSUPPORTED,
    E,
    N,
    Rule,
    W,
    _rule,
)
from sessaudit.rules_half_pi import HALF_PI_RULES
from sessaudit.rules_rivumi import RIVUMI_RULES
from sessaudit.verdicts import Verdict

_CORE_RULES: tuple[Rule, ...] = (
    # --- inputs and evidence --------------------------------------------------------------
    _rule(
        "SA001",
        "input-unreadable",
        E,
        UNREADABLE,
        "A named input could not be opened or read.",
        """The path named on the command line does not exist, is not a regular file or directory,
          or could not be read. Nothing about its contents is known; the audit is incomplete
          (exit 3).""",
        formats=(),
    ),
    _rule(
        "SA002",
        "input-unrecognised",
        E,
        UNSUPPORTED,
        "A named input matches no supported format.",
        """A file named on the command line is not a tiny-agent session, a Rivumi run directory or a
          Half-Pi store, as judged by content (CONTRACT §1). Files met during a directory walk are
          listed under `skipped` instead and do not affect the exit code.""",
        formats=(),
    ),
    _rule(
        "SA003",
        "version-unsupported",
        E,
        UNSUPPORTED,
        "The input is of a version this release cannot verify.",
        """The input was recognised, but its format or version (a tiny-agent header with `version`
          above 2; a Rivumi `session.json` with `schema_version` above 1, whose event log is still
          verified; a Half-Pi store before its verifier exists) is not verified by this release. For
          tiny-agent, `native.reducer` still shows what tiny-agent's own reducer answers.""",
        formats=(),
    ),
    _rule(
        "SA004",
        "evidence-changed",
        E,
        None,
        "The evidence changed inside the verified range while it was read.",
        """The bytes that were verified hash differently when read again after verification: the file
          was rewritten, truncated or replaced during the audit. The verdict describes the bytes as
          first read; the audit is incomplete (exit 3).""",
        formats=(),
    ),
    _rule(
        "SA005",
        "evidence-grew",
        N,
        None,
        "The file grew while it was verified; the snapshot at open was verified.",
        """An append-only log was appended to while sessaudit read it. Only the bytes present when the
          file was opened were verified (never half a line); the appended bytes are not part of the
          verdict.""",
        formats=(),
    ),
    # --- tiny-agent framing and JSON ------------------------------------------------------
    _rule(
        "SA101",
        "missing-header",
        E,
        CORRUPT,
        "The file has no complete header line.",
        """tiny-agent requires the header line to end in LF. An empty file, or a file without any LF,
          has no committed header and is not repairable (tiny-agent: MISSING_HEADER).""",
        native_code="MISSING_HEADER",
    ),
    _rule(
        "SA102",
        "invalid-utf8",
        E,
        CORRUPT,
        "Committed bytes are not valid UTF-8.",
        """The committed part of the file (up to its last LF) must decode as strict UTF-8. tiny-agent's
          TypeScript reducer reports this at line 1 whatever the line; the finding's location is the
          physical line and byte offset of the first bad byte (tiny-agent: INVALID_UTF8).""",
        native_code="INVALID_UTF8",
    ),
    _rule(
        "SA103",
        "utf8-encoded-surrogate",
        E,
        CORRUPT,
        "A line contains a UTF-8-encoded UTF-16 surrogate.",
        """Bytes ED A0..BF encode a UTF-16 surrogate, which is not a Unicode scalar value. tiny-agent
          scans for them before decoding and reports MALFORMED_JSON at that physical line.""",
        native_code="MALFORMED_JSON",
    ),
    _rule(
        "SA104",
        "blank-line",
        E,
        CORRUPT,
        "A committed line is empty.",
        """Every committed line must hold a JSON value; an empty line (two LFs in a row) is corruption
          (tiny-agent: BLANK_LINE).""",
        native_code="BLANK_LINE",
    ),
    _rule(
        "SA105",
        "crlf-line-ending",
        E,
        CORRUPT,
        "A line ends with CR LF.",
        """tiny-agent lines end with a bare LF; a CR before it is corruption
          (tiny-agent: CRLF_NOT_ALLOWED).""",
        native_code="CRLF_NOT_ALLOWED",
    ),
    _rule(
        "SA106",
        "malformed-json",
        E,
        CORRUPT,
        "A committed line is not one strict JSON value.",
        """The line does not parse as exactly one JSON value under the strict grammar: invalid
          syntax, a raw control character inside a string, an invalid escape, a non-JSON literal
          such as NaN, or trailing garbage (tiny-agent: MALFORMED_JSON). A malformed line that ends
          in LF is corruption, never a torn tail.""",
        native_code="MALFORMED_JSON",
    ),
    _rule(
        "SA107",
        "duplicate-key",
        E,
        CORRUPT,
        "An object has the same key twice.",
        """Keys are compared after unescaping, at any depth (`"kind"` and `"k\\u0069nd"` are the
          same key). Readers disagree on which value wins, so tiny-agent rejects the line
          (MALFORMED_JSON).""",
        native_code="MALFORMED_JSON",
    ),
    _rule(
        "SA108",
        "lone-surrogate-escape",
        E,
        CORRUPT,
        "A string escapes a lone UTF-16 surrogate.",
        """A `\\ud800`-style escape without its pair (or a lone low surrogate) does not denote a
          Unicode character; tiny-agent rejects the line (MALFORMED_JSON).""",
        native_code="MALFORMED_JSON",
    ),
    _rule(
        "SA109",
        "torn-tail",
        W,
        REPAIRABLE,
        "Bytes after the last LF: an uncommitted torn write.",
        """A crash during an append left bytes after the last LF. They were never committed; tiny-agent
          truncates them on the next open (`repaired_length`). sessaudit reports their count and
          verifies the committed prefix; it never truncates the evidence.""",
        native_code=None,
    ),
    _rule(
        "SA110",
        "utf8-bom",
        W,
        None,
        "The file starts with a UTF-8 byte order mark.",
        """tiny-agent's writers (v1 and v2) never emit a BOM. Its TypeScript reducer strips it silently
          (and counts
          it in repairedLength) while its Python reducer rejects the file as MALFORMED_JSON at line 1:
          the two implementations disagree about this file.""",
        native_code=None,
    ),
    _rule(
        "SA111",
        "non-integer-number-token",
        W,
        None,
        "An integer field is written as `1.0` or `1e0`.",
        """tiny-agent's TypeScript reducer reads `1.0` as the integer 1 and accepts it; its Python
          reducer rejects the fact as INVALID_FACT. Writers never emit such tokens: the two
          implementations disagree about this file.""",
        native_code=None,
    ),
    # --- tiny-agent structure and semantics -------------------------------------------------
    _rule(
        "SA201",
        "invalid-header",
        E,
        CORRUPT,
        "Line 1 is not a valid tiny-agent v2 header.",
        """The header must be an object with exactly `kind`, `version`, `id`, `createdAt`, `cwd`,
          `provider`, `model` and `environmentIdentity`, with `kind` = "header", a lowercase UUIDv7
          id, a non-negative safe-integer `createdAt` and non-empty strings (tiny-agent:
          INVALID_HEADER).""",
        native_code="INVALID_HEADER",
    ),
    _rule(
        "SA202",
        "invalid-header-version",
        E,
        CORRUPT,
        "A v2-shaped header carries a version below 2.",
        """A header with the v2 key set and `kind` "header" but `version` other than 2 (and not a
          later version) is corruption (tiny-agent: UNSUPPORTED_VERSION).""",
        native_code="UNSUPPORTED_VERSION",
    ),
    _rule(
        "SA203",
        "empty-transaction",
        E,
        CORRUPT,
        "A line holds an empty array `[]`.",
        """Each line after the header is one transaction; an empty array commits nothing and is
          rejected (tiny-agent: EMPTY_TRANSACTION).""",
        native_code="EMPTY_TRANSACTION",
    ),
    _rule(
        "SA204",
        "invalid-fact",
        E,
        CORRUPT,
        "A fact's shape or a field's type is invalid.",
        """The fact is not an object of a known kind with exactly the allowed keys, or a field has the
          wrong type or value (tiny-agent: INVALID_FACT). The message names the field.""",
        native_code="INVALID_FACT",
    ),
    _rule(
        "SA205",
        "seq-mismatch",
        E,
        CORRUPT,
        "A fact's `seq` is not exactly one more than the previous.",
        """`seq` starts at 1 after the header and increases by exactly 1 per fact, across lines and
          inside arrays; gaps, repeats and resets are corruption (tiny-agent: SEQ_MISMATCH).
          Checking continues from the found value so every discontinuity is reported once.""",
        native_code="SEQ_MISMATCH",
    ),
    _rule(
        "SA206",
        "duplicate-id",
        E,
        CORRUPT,
        "An id is used twice in the session's one global namespace.",
        """Fact ids and reserved ids (operation, step, attempt and result-slot ids) share one
          namespace; a collision is corruption (tiny-agent: DUPLICATE_ID).""",
        native_code="DUPLICATE_ID",
    ),
    _rule(
        "SA207",
        "invalid-reference",
        E,
        CORRUPT,
        "A reference names no suitable fact, attempt or reservation.",
        """An id field refers to something that does not exist or is not of the required kind
          (tiny-agent: INVALID_REFERENCE). The message names the field and what was expected.""",
        native_code="INVALID_REFERENCE",
    ),
    _rule(
        "SA208",
        "invalid-transition",
        E,
        CORRUPT,
        "A record is not allowed in the current state.",
        """The operation, step, attempt or tool-call state machine does not allow this record here
          (tiny-agent: INVALID_TRANSITION).""",
        native_code="INVALID_TRANSITION",
    ),
    _rule(
        "SA209",
        "invalid-transcript",
        E,
        CORRUPT,
        "The message transcript is not legal.",
        """A message arrives while tool calls are unanswered, a tool result answers no pending call,
          call ids repeat in one message, or a terminal record's content rules fail
          (tiny-agent: INVALID_TRANSCRIPT).""",
        native_code="INVALID_TRANSCRIPT",
    ),
    _rule(
        "SA210",
        "configuration-digest-mismatch",
        E,
        CORRUPT,
        "`configurationDigest` is not the digest of its `configurationSnapshot`.",
        """The digest must equal sha256 of the canonical JSON of the snapshot; the message gives both
          values (tiny-agent: INVALID_FACT).""",
        native_code="INVALID_FACT",
    ),
    _rule(
        "SA211",
        "source-digest-mismatch",
        E,
        CORRUPT,
        "`sourceDigest` does not match the messages it covers.",
        """`compactionStarted.sourceDigest` must be the sha256 of the canonical JSON array of every
          message entry through `inputThroughEntryId`; the message gives both values
          (tiny-agent: INVALID_REFERENCE).""",
        native_code="INVALID_REFERENCE",
    ),
    _rule(
        "SA212",
        "synthetic-text-mismatch",
        E,
        CORRUPT,
        "A synthetic tool result does not carry its fixed text.",
        """Synthetic results carry exact, non-localised texts (spec §8.5); any other content is
          corruption (tiny-agent: INVALID_TRANSCRIPT).""",
        native_code="INVALID_TRANSCRIPT",
    ),
    _rule(
        "SA213",
        "usage-overflow",
        E,
        CORRUPT,
        "A running usage total exceeds 2^53−1.",
        """Every usage counter and running session total must stay a safe integer
          (tiny-agent: INVALID_FACT).""",
        native_code="INVALID_FACT",
    ),
    _rule(
        "SA214",
        "invalid-id",
        E,
        CORRUPT,
        "An id is not a lowercase UUIDv7.",
        """Every local id (fact ids, operation/step/attempt ids, entry references) must match the
          lowercase UUIDv7 pattern with the RFC variant (tiny-agent: INVALID_FACT).""",
        native_code="INVALID_FACT",
    ),
    _rule(
        "SA215",
        "reduction-stopped",
        N,
        None,
        "Semantic reduction stopped at the first semantic error.",
        """After the first error, the state machines are no longer trustworthy, so later lines are
          checked only for framing, JSON, seq continuity and ids (CONTRACT §4).""",
        native_code=None,
    ),
    # --- tiny-agent legacy v1 -----------------------------------------------------------------
    _rule(
        "SA150",
        "v1-invalid-header",
        E,
        CORRUPT,
        "Line 1 is not a valid tiny-agent v1 header.",
        """A v1 header is `{type:"session", version:1, id, createdAt, cwd, provider, model, timestamp}` with a
          lowercase UUIDv7 id and ISO-8601 `createdAt`/`timestamp` strings (spec §15.1).""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA151",
        "v1-invalid-line",
        E,
        CORRUPT,
        "A v1 line is not an object with a known `type` and a timestamp.",
        """Every v1 line is one JSON object written by the tiny-agent CLI with a `type` of `message`,
          `compaction` or `interruption` and an ISO-8601 UTC `timestamp` (spec §15.1).""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA152",
        "v1-invalid-message",
        E,
        CORRUPT,
        "A v1 message does not have the shape its role requires.",
        """User messages carry string content; assistant messages the provider's chat shape with optional
          `tool_calls` and usage; tool results `tool_call_id`, string content and `toolName` (spec §15.1).""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA153",
        "v1-tool-result-out-of-order",
        E,
        CORRUPT,
        "A v1 tool result does not answer the next unanswered call of the latest assistant message.",
        """The v1 CLI runs the calls of one assistant message strictly in order and writes each result after
          its tool ran, so results appear in call order and only while calls are unanswered.""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA154",
        "v1-message-out-of-turn",
        E,
        CORRUPT,
        "A v1 message or compaction arrives where the turn's state does not allow it.",
        """Without an interruption, every call of an assistant message gets a result before the next model
          step, user turn or compaction, and an assistant message answers an open model request (not one
          before any user message, after a final answer or after an abort); anything else means lost or
          reordered lines.""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA155",
        "v1-synthetic-text-mismatch",
        W,
        None,
        "A v1 abort or truncation result has an unexpected text.",
        """The v1 CLI writes fixed texts: `Operation aborted`, `Operation aborted before execution` (no final
          period) and the truncation text; a near miss suggests another writer or an edit.""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA156",
        "v1-invalid-usage",
        E,
        CORRUPT,
        "A v1 usage object is not four non-negative safe integers.",
        """Usage on assistant messages and compactions is `{input, output, cacheRead, cacheWrite}`, each a
          non-negative safe integer, and running totals stay ≤ 2^53−1.""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA157",
        "v1-invalid-compaction",
        E,
        CORRUPT,
        "A v1 compaction line is malformed.",
        """`{type:"compaction", summary, compactedMessages, keptMessages, usage}` with a string summary and
          non-negative integer counts that fit the messages recorded so far.""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA158",
        "v1-invalid-interruption",
        E,
        CORRUPT,
        "A v1 interruption line is malformed.",
        """`{type:"interruption", phase:"model"|"tool"|"compact", toolCallId?, reason:"escape"}`, with
          `toolCallId` exactly for phase `tool`.""",
        formats=("tiny-agent",),
    ),
    _rule(
        "SA159",
        "v1-blank-line",
        N,
        None,
        "A v1 file holds an empty line.",
        """The v1 reader drops empty lines, so tiny-agent itself tolerates them; its writer never
          produces one.""",
        formats=("tiny-agent",),
    ),
    # --- open work ------------------------------------------------------------------------
    _rule(
        "SA301",
        "run-left-open",
        W,
        NEEDS_RECOVERY,
        "An operation was left open.",
        """The log ends while a run or compaction is open: the agent stopped (crash, kill, power loss)
          before the terminal record. The finding names the recovery condition; `runs[].recovery`
          says what is known, what is not and what comes next. Rivumi: the run's last event is not
          terminal. Half-Pi: a pending approval, a non-terminal task, or a session's last request
          without its answer.""",
        native_code=None,
        formats=("tiny-agent", "rivumi", "half-pi"),
    ),
    _rule(
        "SA302",
        "effect-outcome-unknown",
        W,
        NEEDS_RECOVERY,
        "A tool's intent was recorded but not its result: it may or may not have run.",
        """A `toolStarted` intent with replay policy `never` has no result. The effect may have
          happened or not; nobody can tell from the log, and the tool must not be re-run blindly.
          Reported also inside a finished (failed) run. Rivumi: the log ends in `tool.started` (not a
          read) or `verification.started`. Half-Pi: a non-terminal remote run (only the Hand knows
          what it did), or an unfinished request whose local tools were authorised or ran.""",
        native_code=None,
        formats=("tiny-agent", "rivumi", "half-pi"),
    ),
    _rule(
        "SA303",
        "replayable-effect-pending",
        N,
        NEEDS_RECOVERY,
        "A safe-to-replay tool's intent has no result.",
        """A `toolStarted` intent with replay policy `safe` has no result; recovery may re-run it into
          its provisioned result slot when the declaration and environment still match. Rivumi: the log
          ends in `tool.started` of a `read` effect.""",
        native_code=None,
        formats=("tiny-agent", "rivumi"),
    ),
    _rule(
        "SA304",
        "replay-configuration-changed",
        W,
        None,
        "A safe tool would be replayed although the current configuration digest differs.",
        """tiny-agent's planner replays a pending `safe` tool when its declaration and environment still
          match, without comparing the configuration digest (spec §13.2); the design says the
          configuration must match. `--current` shows a different `configurationDigest` than the step
          that produced the call: check that the replay is still what you want.""",
        native_code=None,
    ),
    # --- beyond tiny-agent's own reducer ---------------------------------------------------
    _rule(
        "SA401",
        "uuid7-time-skew",
        N,
        None,
        "Ids whose UUIDv7 time is later than their fact's timestamp.",
        """tiny-agent allocates fact ids no later than it stamps the fact, so an id whose embedded
          time is after the fact's `timestamp` suggests a clock jump or a hand-made file. The reducer
          does not check this (spec §6, §18.5). One note per session with the count and the
          first occurrence.""",
        native_code=None,
    ),
    _rule(
        "SA402",
        "header-id-time-mismatch",
        N,
        None,
        "The header id's UUIDv7 time differs from `createdAt`.",
        """Every tiny-agent writer derives the session id from `createdAt`, so the two agree in real
          files (spec §6).""",
        native_code=None,
    ),
    _rule(
        "SA403",
        "timestamp-backwards",
        W,
        None,
        "A fact's timestamp is earlier than the previous fact's.",
        """tiny-agent does not order timestamps, but its writers stamp facts from one clock as they
          append; a step backwards suggests a clock change or an edited file.""",
        native_code=None,
    ),
    _rule(
        "SA404",
        "timestamp-before-creation",
        N,
        None,
        "A fact is stamped before the session's `createdAt`.",
        """Allowed by the reducer, impossible for a live writer with a steady clock.""",
        native_code=None,
    ),
    _rule(
        "SA410",
        "failed-run-unsettled",
        W,
        None,
        "A run was finished as failed with a tool pending or an attempt open.",
        """`operationFinished(failed)` has no structural preconditions in tiny-agent (spec §14): it is
          accepted with a pending `toolStarted` or an open attempt. The design expects open work to
          be closed first; a pending tool's outcome stays unknown.""",
        native_code=None,
    ),
    _rule(
        "SA411",
        "result-after-finish",
        W,
        None,
        "A tool result was appended after its run had finished.",
        """tiny-agent accepts a late result for a still-pending tool after `operationFinished`
          (spec §14); the run's recorded outcome did not know it.""",
        native_code=None,
    ),
    _rule(
        "SA412",
        "truncated-without-synthetics",
        W,
        None,
        "A run completed as truncated while calls of its `length` answer were unanswered.",
        """The design appends a `truncated` synthetic result for every call before finishing; without
          them the next user message would be an illegal transcript (spec §14).""",
        native_code=None,
    ),
    _rule(
        "SA413",
        "input-entry-reused",
        W,
        None,
        "A run's input entry is not the newest, unused user entry.",
        """`runStarted.inputEntryId` may name an older user entry, even one an earlier run consumed;
          the reducer accepts it (spec §14), the design does not.""",
        native_code=None,
    ),
    _rule(
        "SA414",
        "abort-record-mismatch",
        W,
        None,
        "An abort request does not fit the operation.",
        """`abortRequested` with phase `compact` on a run (or `model`/`tool` on a compaction), an empty
          `toolCallId`, or a `toolCallId` naming no call is accepted by the reducer (spec §14).""",
        native_code=None,
    ),
    _rule(
        "SA415",
        "arguments-differ-from-call",
        N,
        None,
        "A tool intent's arguments differ from the provider's call arguments.",
        """`toolStarted.arguments` are the effective arguments and are not compared with the
          assistant's `arguments` text by the reducer (spec §14); a difference is worth a look.""",
        native_code=None,
    ),
    _rule(
        "SA416",
        "environment-differs-from-header",
        N,
        None,
        "A tool intent names another environment than the session header.",
        """`toolStarted.environmentIdentity` is not compared with the header (spec §14).""",
        native_code=None,
    ),
    _rule(
        "SA417",
        "compaction-partition-mismatch",
        W,
        None,
        "A compaction entry disagrees with the partition its `compactionStarted` declared.",
        """The reducer does not cross-check `compactedThroughEntryId`/`retainedTail` with
          `compactedEntryIds`/`retainedEntryIds` (spec §14).""",
        native_code=None,
    ),
    _rule(
        "SA418",
        "usage-on-closed-attempt",
        N,
        None,
        "Usage refers to a superseded or failed attempt, or repeats for one attempt.",
        """Allowed by the reducer (spec §10, §14); it may double count or record spend the transcript
          does not show.""",
        native_code=None,
    ),
    _rule(
        "SA419",
        "synthetic-reason-unexpected",
        W,
        None,
        "A synthetic result's reason does not fit the situation.",
        """For example `aborted` without an abort request, `truncated` for a call of a `toolUse`
          answer, or `unknownTool` for a tool the attempt's configuration declared; the reducer does
          not check this (spec §8.4).""",
        native_code=None,
    ),
    _rule(
        "SA420",
        "tool-start-order",
        N,
        None,
        "Tool calls were started out of `toolIndex` order.",
        """The design starts calls in index order; the reducer does not enforce it (spec §9.5).""",
        native_code=None,
    ),
    _rule(
        "SA421",
        "intent-after-abort",
        W,
        None,
        "A tool intent was written after the abort request.",
        """After `abortRequested` the design reconciles instead of starting tools; the reducer accepts
          the intent (spec §9.5).""",
        native_code=None,
    ),
    _rule(
        "SA422",
        "step-started-with-untouched-call",
        W,
        None,
        "A model step started while a call of the previous answer had no intent and no result.",
        """`stepAttempt` checks only pending intents, so a step may start while a call is untouched;
          the next assistant message can then never be legal (spec §12.3).""",
        native_code=None,
    ),
    _rule(
        "SA423",
        "string-coerced-field",
        W,
        None,
        "A field the reducer reads through String() is not a string.",
        """tiny-agent's TypeScript reducer converts the digest fields (`configurationDigest`,
          `sourceDigest`, `systemPromptDigest`, `outputOptionsDigest`, `definitionDigest`), a
          pre-execution result's `reason` and a started result's `type` with `String()` before checking
          them, so `["sha256:…"]` passes for the digest it spells. Writers never emit such values, and
          readers that compare types reject them: the implementations disagree about this file.""",
        native_code=None,
    ),
)

RULES: tuple[Rule, ...] = _CORE_RULES + RIVUMI_RULES + HALF_PI_RULES

_BY_CODE = {rule.code: rule for rule in RULES}
_BY_NAME = {rule.name: rule for rule in RULES}


def rule(code: str) -> Rule:
    return _BY_CODE[code]


def find_rule(code_or_name: str) -> Rule | None:
    """A rule by its code (`SA205`) or its name (`seq-mismatch`), case-insensitively for codes."""
    return _BY_CODE.get(code_or_name.upper()) or _BY_NAME.get(code_or_name)


def finding(
    code: str,
    message: str,
    *,
    path: str | None = None,
    session_id: str | None = None,
    line: int | None = None,
    byte_offset: int | None = None,
    seq: int | None = None,
    pointer: str | None = None,
    table: str | None = None,
    rowid: int | None = None,
    evidence: dict[str, Any] | None = None,
    native_code: str | None = None,
) -> Finding:
    """Build a finding for catalogue rule `code`; severity, name and native code come from the catalogue."""
    entry = _BY_CODE[code]
    return Finding(
        rule=entry.code,
        name=entry.name,
        severity=entry.severity,
        message=message,
        location=Location(
            path=path,
            session_id=session_id,
            line=line,
            byte_offset=byte_offset,
            seq=seq,
            pointer=pointer,
            table=table,
            rowid=rowid,
        ),
        native_code=native_code if native_code is not None else entry.native_code,
        evidence=evidence or {},
    )


def verdict_of(findings: list[Finding], *, open_work: bool = False) -> Verdict:
    """The worst verdict effect of these findings (catalogue data, never severity overrides).

    `open_work` adds `needs-recovery` (an open run, or an effect of unknown outcome)."""
    result = Verdict.NEEDS_RECOVERY if open_work else Verdict.CLEAN
    for item in findings:
        effect = _BY_CODE[item.rule].verdict
        if effect is not None and effect.rank > result.rank:
            result = effect
    return result
