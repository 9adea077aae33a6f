"""The tiny-agent rules of the catalogue (SA1xx log framing and structure, SA150–SA159 legacy v1, SA304,
SA4xx beyond tiny-agent's own reducer), spec `formats/tiny-agent.md`; shown in three blocks."""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, REPAIRABLE, E, N, Rule, W, _rule

_r = partial(_rule, formats=("tiny-agent",))

LOG_RULES: tuple[Rule, ...] = (
    # --- tiny-agent framing and JSON ------------------------------------------------------
    _r(
        "SA101",
        "missing-header",
        E,
        CORRUPT,
        "The file has no complete header line.",
        """tiny-agent requires the header line to end in LF. An empty file, or a file without any LF,
          has no committed header and is not repairable (tiny-agent: MISSING_HEADER).""",
        native_code="MISSING_HEADER",
        fix="""The session never got a committed header, so there is nothing to recover in it: start a new
          session. If the file should hold a conversation, restore it from a backup; a tail without its
          header cannot be trusted.""",
    ),
    _r(
        "SA102",
        "invalid-utf8",
        E,
        CORRUPT,
        "Committed bytes are not valid UTF-8.",
        """The committed part of the file (up to its last LF) must decode as strict UTF-8. tiny-agent's
          TypeScript reducer reports this at line 1 whatever the line; the finding's location is the
          physical line and byte offset of the first bad byte (tiny-agent: INVALID_UTF8).""",
        native_code="INVALID_UTF8",
        fix="""The file was damaged or edited outside tiny-agent: restore it from a backup or copy taken
          before the damage, and trust nothing from the reported line on. Do not re-encode it in place.""",
    ),
    _r(
        "SA103",
        "utf8-encoded-surrogate",
        E,
        CORRUPT,
        "A line contains a UTF-8-encoded UTF-16 surrogate.",
        """Bytes ED A0..BF encode a UTF-16 surrogate, which is not a Unicode scalar value. tiny-agent
          scans for them before decoding and reports MALFORMED_JSON at that physical line.""",
        native_code="MALFORMED_JSON",
        fix="""Something other than tiny-agent's writer produced this line (it encodes text as UTF-8 of
          Unicode scalars only): restore the file from a copy and trust nothing after the reported line.""",
    ),
    _r(
        "SA104",
        "blank-line",
        E,
        CORRUPT,
        "A committed line is empty.",
        """Every committed line must hold a JSON value; an empty line (two LFs in a row) is corruption
          (tiny-agent: BLANK_LINE).""",
        native_code="BLANK_LINE",
        fix="""A blank line is never written by tiny-agent: the file was edited or concatenated. Restore it
          from a copy; deleting the empty line by hand only hides what else the edit changed.""",
    ),
    _r(
        "SA105",
        "crlf-line-ending",
        E,
        CORRUPT,
        "A line ends with CR LF.",
        """tiny-agent lines end with a bare LF; a CR before it is corruption
          (tiny-agent: CRLF_NOT_ALLOWED).""",
        native_code="CRLF_NOT_ALLOWED",
        fix="""The file went through a tool that rewrote line endings (a Windows editor, a `core.autocrlf`
          git checkout). Restore the original bytes, e.g. from a copy or with `git config core.autocrlf
          false` and a fresh checkout; do not convert it back by hand unless you can prove nothing else
          changed.""",
    ),
    _r(
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
        fix="""The line was not written by tiny-agent's store (it only writes lines it has reduced): restore
          the file from a copy and do not trust facts from the reported line on.""",
    ),
    _r(
        "SA107",
        "duplicate-key",
        E,
        CORRUPT,
        "An object has the same key twice.",
        """Keys are compared after unescaping, at any depth (`"kind"` and `"k\\u0069nd"` are the
          same key). Readers disagree on which value wins, so tiny-agent rejects the line
          (MALFORMED_JSON).""",
        native_code="MALFORMED_JSON",
        fix="""Readers disagree on which value wins, so the line's meaning is ambiguous: restore the file
          from a copy and find which tool wrote the duplicate key; tiny-agent itself never does.""",
    ),
    _r(
        "SA108",
        "lone-surrogate-escape",
        E,
        CORRUPT,
        "A string escapes a lone UTF-16 surrogate.",
        """A `\\ud800`-style escape without its pair (or a lone low surrogate) does not denote a
          Unicode character; tiny-agent rejects the line (MALFORMED_JSON).""",
        native_code="MALFORMED_JSON",
        fix="""The string was written by something other than tiny-agent's serializer: restore the file from
          a copy and trust nothing from the reported line on.""",
    ),
    _r(
        "SA109",
        "torn-tail",
        W,
        REPAIRABLE,
        "Bytes after the last LF: an uncommitted torn write.",
        """A crash during an append left bytes after the last LF. They were never committed; tiny-agent
          truncates them on the next open (`repaired_length`). sessaudit reports their count and
          verifies the committed prefix; it never truncates the evidence.""",
        native_code=None,
        fix="""Usually nothing: tiny-agent truncates the torn bytes the next time it opens the session
          (`repaired_length` says where). Keep a copy first if you want the fragment as evidence; never
          append to the file before that repair.""",
    ),
    _r(
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
        fix="""Remove the BOM only on a copy you audit again (`tail -c +4`), or keep using the TypeScript
          reducer; find the editor or tool that added it, since tiny-agent's writers never do.""",
    ),
    _r(
        "SA111",
        "non-integer-number-token",
        W,
        None,
        "An integer field is written as `1.0` or `1e0`.",
        """tiny-agent's TypeScript reducer reads `1.0` as the integer 1 and accepts it; its Python
          reducer rejects the fact as INVALID_FACT. Writers never emit such tokens: the two
          implementations disagree about this file.""",
        native_code=None,
        fix="""Rewrite the number as a plain integer token (`1`, not `1.0`) in a copy and verify it again,
          and find the tool that wrote it: tiny-agent's Python reducer refuses this file.""",
        example=(
            "Input `s.jsonl`, line 1 (excerpt):\n"
            "\n"
            "```text\n"
            '{"kind":"header","version":2.0,"id":"01a029fc-5d80-71a2-8001-00005eed0001","c'
            'reatedAt":178…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA111 non-integer-number-token [line 1, byte 0, /version]: version is "
            "written as 2.0\n"
            "```"
        ),
    ),
    # --- tiny-agent structure and semantics -------------------------------------------------
    _r(
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
        fix="""The header was written or edited by another tool: restore line 1 from a copy. The message
          names the offending key or value; a session whose header is wrong cannot be opened by
          tiny-agent.""",
    ),
    _r(
        "SA202",
        "invalid-header-version",
        E,
        CORRUPT,
        "A v2-shaped header carries a version below 2.",
        """A header with the v2 key set and `kind` "header" but `version` other than 2 (and not a
          later version) is corruption (tiny-agent: UNSUPPORTED_VERSION).""",
        native_code="UNSUPPORTED_VERSION",
        fix="""Restore the header from a copy; if the file really is a legacy v1 session its header is
          `{"type":"session","version":1,…}`, not a v2-shaped one with version 1.""",
    ),
    _r(
        "SA203",
        "empty-transaction",
        E,
        CORRUPT,
        "A line holds an empty array `[]`.",
        """Each line after the header is one transaction; an empty array commits nothing and is
          rejected (tiny-agent: EMPTY_TRANSACTION).""",
        native_code="EMPTY_TRANSACTION",
        fix="""tiny-agent's store throws on an empty transaction and never writes `[]`: the file was edited.
          Restore it from a copy and trust nothing from the reported line on.""",
    ),
    _r(
        "SA204",
        "invalid-fact",
        E,
        CORRUPT,
        "A fact's shape or a field's type is invalid.",
        """The fact is not an object of a known kind with exactly the allowed keys, or a field has the
          wrong type or value (tiny-agent: INVALID_FACT). The message names the field.""",
        native_code="INVALID_FACT",
        fix="""The message names the field: compare the line with the spec's shape for that fact kind and
          restore the file from a copy; facts from the reported line on cannot be trusted.""",
    ),
    _r(
        "SA205",
        "seq-mismatch",
        E,
        CORRUPT,
        "A fact's `seq` is not exactly one more than the previous.",
        """`seq` starts at 1 after the header and increases by exactly 1 per fact, across lines and
          inside arrays; gaps, repeats and resets are corruption (tiny-agent: SEQ_MISMATCH).
          Checking continues from the found value so every discontinuity is reported once.""",
        native_code="SEQ_MISMATCH",
        fix="""Facts were lost, repeated or spliced in: restore the file from a copy, or treat it as
          trustworthy only up to the last fact before the reported line.""",
    ),
    _r(
        "SA206",
        "duplicate-id",
        E,
        CORRUPT,
        "An id is used twice in the session's one global namespace.",
        """Fact ids and reserved ids (operation, step, attempt and result-slot ids) share one
          namespace; a collision is corruption (tiny-agent: DUPLICATE_ID).""",
        native_code="DUPLICATE_ID",
        fix="""Two facts or reservations share an id, so references are ambiguous: the file was spliced or
          edited. Restore it from a copy; do not renumber ids by hand.""",
    ),
    _r(
        "SA207",
        "invalid-reference",
        E,
        CORRUPT,
        "A reference names no suitable fact, attempt or reservation.",
        """An id field refers to something that does not exist or is not of the required kind
          (tiny-agent: INVALID_REFERENCE). The message names the field and what was expected.""",
        native_code="INVALID_REFERENCE",
        fix="""A referenced fact is missing or of the wrong kind, so lines were lost, reordered or edited:
          restore the file from a copy and trust the session only before the reported line.""",
        example=(
            "Input `s.jsonl`, line 2 (excerpt):\n"
            "\n"
            "```text\n"
            '…2","operationKind":"run","inputEntryId":"01a029fc-5d8a-7101-8002-00005eed0099"'
            '},"id":"01a0…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA207 invalid-reference [line 2, byte 228, seq 2, /1/record/inputEntryId]: "
            "inputEntryId 01a029fc…0099: expected an existing user message entry, found no entry\n"
            "```"
        ),
    ),
    _r(
        "SA208",
        "invalid-transition",
        E,
        CORRUPT,
        "A record is not allowed in the current state.",
        """The operation, step, attempt or tool-call state machine does not allow this record here
          (tiny-agent: INVALID_TRANSITION).""",
        native_code="INVALID_TRANSITION",
        fix="""The record does not follow the state machine, so records were lost, duplicated or reordered:
          restore the file from a copy; the session is reliable only before the reported line.""",
    ),
    _r(
        "SA209",
        "invalid-transcript",
        E,
        CORRUPT,
        "The message transcript is not legal.",
        """A message arrives while tool calls are unanswered, a tool result answers no pending call,
          call ids repeat in one message, or a terminal record's content rules fail
          (tiny-agent: INVALID_TRANSCRIPT).""",
        native_code="INVALID_TRANSCRIPT",
        fix="""The transcript would be rejected by the model provider and by tiny-agent: restore the file
          from a copy. The message says which rule failed (an unanswered call, a result without a call).""",
    ),
    _r(
        "SA210",
        "configuration-digest-mismatch",
        E,
        CORRUPT,
        "`configurationDigest` is not the digest of its `configurationSnapshot`.",
        """The digest must equal sha256 of the canonical JSON of the snapshot; the message gives both
          values (tiny-agent: INVALID_FACT).""",
        native_code="INVALID_FACT",
        fix="""The configuration snapshot or its digest was edited after it was written: restore the line
          from a copy. Do not recompute the digest to silence the error; the snapshot is then
          unverifiable.""",
    ),
    _r(
        "SA211",
        "source-digest-mismatch",
        E,
        CORRUPT,
        "`sourceDigest` does not match the messages it covers.",
        """`compactionStarted.sourceDigest` must be the sha256 of the canonical JSON array of every
          message entry through `inputThroughEntryId`; the message gives both values
          (tiny-agent: INVALID_REFERENCE).""",
        native_code="INVALID_REFERENCE",
        fix="""The compacted messages or the digest were changed after the compaction started: restore the
          file from a copy; the compaction summary may describe other messages than the log holds.""",
    ),
    _r(
        "SA212",
        "synthetic-text-mismatch",
        E,
        CORRUPT,
        "A synthetic tool result does not carry its fixed text.",
        """Synthetic results carry exact, non-localised texts (spec §8.5); any other content is
          corruption (tiny-agent: INVALID_TRANSCRIPT).""",
        native_code="INVALID_TRANSCRIPT",
        fix="""A synthetic result's text was edited or written by another tool: restore it from a copy (the
          exact texts are in spec §8.5).""",
    ),
    _r(
        "SA213",
        "usage-overflow",
        E,
        CORRUPT,
        "A running usage total exceeds 2^53−1.",
        """Every usage counter and running session total must stay a safe integer
          (tiny-agent: INVALID_FACT).""",
        native_code="INVALID_FACT",
        fix="""A usage count is implausibly large (an edit or a writer bug): restore the file from a copy;
          token accounting for this session cannot be trusted.""",
        example=(
            "Input `s.jsonl`, line 8 (excerpt):\n"
            "\n"
            "```text\n"
            '…6-a25e206f5c66","usage":{"input":927,"output":9,"cacheRead":0,"cacheWrite":0'
            '},"id":"01a029…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA213 usage-overflow [line 8, byte 4537, seq 11, /1/usage/input]: "
            "usage.input: the session total 9007199254740991 + 927 exceeds 2^53−1\n"
            "```"
        ),
    ),
    _r(
        "SA214",
        "invalid-id",
        E,
        CORRUPT,
        "An id is not a lowercase UUIDv7.",
        """Every local id (fact ids, operation/step/attempt ids, entry references) must match the
          lowercase UUIDv7 pattern with the RFC variant (tiny-agent: INVALID_FACT).""",
        native_code="INVALID_FACT",
        fix="""tiny-agent only writes lowercase UUIDv7 ids: the id was edited or produced by another tool.
          Restore the file from a copy.""",
    ),
    _r(
        "SA215",
        "reduction-stopped",
        N,
        None,
        "Semantic reduction stopped at the first semantic error.",
        """After the first error, the state machines are no longer trustworthy, so later lines are
          checked only for framing, JSON, seq continuity and ids (CONTRACT §4).""",
        native_code=None,
        fix="""Nothing to fix by itself: fix the earlier error it points to. Until then, later lines were
          only checked for framing, JSON, seq and ids.""",
    ),
    # --- tiny-agent legacy v1 -----------------------------------------------------------------
    _r(
        "SA150",
        "v1-invalid-header",
        E,
        CORRUPT,
        "Line 1 is not a valid tiny-agent v1 header.",
        """A v1 header is `{type:"session", version:1, id, createdAt, cwd, provider, model, timestamp}` with a
          lowercase UUIDv7 id and ISO-8601 `createdAt`/`timestamp` strings (spec §15.1).""",
        formats=("tiny-agent",),
        fix="""Restore line 1 from a copy; the message names the bad field. A v1 session is only valid with
          the header the v1 CLI writes.""",
        example=(
            'A v1 header (`{"type":"session","version":1,…}`) whose `createdAt` is not an '
            "instant:\n"
            "\n"
            "```text\n"
            '…-7b5e-b9ab-bf0ffa6bb9c4","createdAt":"yesterday","cwd":"/home/dev/shop","prov'
            'ider":"openro…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  v1.jsonl\n"
            "    error   SA150 v1-invalid-header [line 1, byte 0, /createdAt]: the header's "
            'createdAt "yesterday" is not an ISO-8601 UTC instant with milliseconds '
            "(Date.toISOString)\n"
            "```"
        ),
    ),
    _r(
        "SA151",
        "v1-invalid-line",
        E,
        CORRUPT,
        "A v1 line is not an object with a known `type` and a timestamp.",
        """Every v1 line is one JSON object written by the tiny-agent CLI with a `type` of `message`,
          `compaction` or `interruption` and an ISO-8601 UTC `timestamp` (spec §15.1).""",
        formats=("tiny-agent",),
        fix="""The line was not written by the v1 CLI: restore the file from a copy and trust the session
          only before the reported line.""",
        example=(
            "Input `s.jsonl`, line 3:\n"
            "\n"
            "```text\n"
            "[]\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA151 v1-invalid-line [line 3, byte 367]: the line is an array, not a JSON "
            "object\n"
            "```"
        ),
    ),
    _r(
        "SA152",
        "v1-invalid-message",
        E,
        CORRUPT,
        "A v1 message does not have the shape its role requires.",
        """User messages carry string content; assistant messages the provider's chat shape with optional
          `tool_calls` and usage; tool results `tool_call_id`, string content and `toolName` (spec §15.1).""",
        formats=("tiny-agent",),
        fix="""The message was edited or written by another tool; restore the file from a copy. The finding's
          message names the field that does not fit the role.""",
        example=(
            "Input `s.jsonl`, line 3 (excerpt):\n"
            "\n"
            "```text\n"
            '…"message":{"role":"user","content":3},"timestamp":"2026-11-29T21:41:07.273Z'
            '"}\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA152 v1-invalid-message [line 3, byte 367, /message/content]: a user "
            "message's content is the number 3, not a string\n"
            "```"
        ),
    ),
    _r(
        "SA153",
        "v1-tool-result-out-of-order",
        E,
        CORRUPT,
        "A v1 tool result does not answer the next unanswered call of the latest assistant message.",
        """The v1 CLI runs the calls of one assistant message strictly in order and writes each result after
          its tool ran, so results appear in call order and only while calls are unanswered.""",
        formats=("tiny-agent",),
        fix="""Results were lost, duplicated or reordered: restore the file from a copy; the transcript
          before the reported line is trustworthy.""",
        example=(
            "Input `s.jsonl`, line 4 (excerpt):\n"
            "\n"
            "```text\n"
            '…"message":{"role":"tool","tool_call_id":"call_1_deploy","content":"ok"},'
            '"toolName":"bash",…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA153 v1-tool-result-out-of-order [line 4, byte 878, "
            '/message/tool_call_id]: a tool result for "call_1_deploy" before call read '
            "(call_0_read): the CLI runs the calls of an answer in order and writes each result "
            "after its tool ran; the turn state is not trustworthy from this line on\n"
            "```"
        ),
    ),
    _r(
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
        fix="""Lines were lost or reordered between turns: restore the file from a copy; do not continue the
          v1 session, since the model would see an illegal transcript.""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '{"type":"message","message":{"role":"assistant","content":"Done."},"usage'
            '":{"input":176,"…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA154 v1-message-out-of-turn [line 5, byte 820]: an assistant message after "
            "the user aborted call read (call_0_read) at line 4; the CLI ends the turn after an "
            "abort; the turn state is not trustworthy from this line on\n"
            "```"
        ),
    ),
    _r(
        "SA155",
        "v1-synthetic-text-mismatch",
        W,
        None,
        "A v1 abort or truncation result has an unexpected text.",
        """The v1 CLI writes fixed texts: `Operation aborted`, `Operation aborted before execution` (no final
          period) and the truncation text; a near miss suggests another writer or an edit.""",
        formats=("tiny-agent",),
        fix="""Check whether another tool or a person wrote the result; if the file is otherwise intact
          nothing needs repairing, but keep its provenance in mind.""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…call_id":"call_1_deploy","content":"deployed"},"toolName":"bash","timestamp'
            '":"2026-11-29T2…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA155 v1-synthetic-text-mismatch [line 5, byte 1039, /message/content]: "
            "call 1 (call_1_deploy) comes after the call aborted at line 4 and should read "
            '"Operation aborted before execution", found "deployed"\n'
            "```"
        ),
    ),
    _r(
        "SA156",
        "v1-invalid-usage",
        E,
        CORRUPT,
        "A v1 usage object is not four non-negative safe integers.",
        """Usage on assistant messages and compactions is `{input, output, cacheRead, cacheWrite}`, each a
          non-negative safe integer, and running totals stay ≤ 2^53−1.""",
        formats=("tiny-agent",),
        fix="""The usage numbers were edited or written by another tool: restore the file from a copy; token
          totals for this session cannot be trusted.""",
        example=(
            "Input `s.jsonl`, line 3 (excerpt):\n"
            "\n"
            "```text\n"
            '…ne."},"usage":{"input":1,"output":-1,"cacheRead":0.5,"cacheWrite":0,"x":0}'
            ',"timestamp":"20…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA156 v1-invalid-usage [line 3, byte 367, /usage/output]: usage.output is "
            "the number -1, not a non-negative safe integer\n"
            "```"
        ),
    ),
    _r(
        "SA157",
        "v1-invalid-compaction",
        E,
        CORRUPT,
        "A v1 compaction line is malformed.",
        """`{type:"compaction", summary, compactedMessages, keptMessages, usage}` with a string summary and
          non-negative integer counts that fit the messages recorded so far.""",
        formats=("tiny-agent",),
        fix="""Restore the compaction line from a copy; without a valid compaction the messages the model saw
          afterwards cannot be reconstructed.""",
        example=(
            "Input `s.jsonl`, line 9 (excerpt):\n"
            "\n"
            "```text\n"
            '…summary":"So far: cart.","compactedMessages":2,"keptMessages":2,"usage":{"inp'
            'ut":176,"outp…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA157 v1-invalid-compaction [line 9, byte 1468, /compactedMessages]: "
            "compactedMessages 2 + keptMessages 2 = 4, but the model context held 5 messages here "
            "(the message lines since the start, or since the last compaction, which counts as one)\n"
            "```"
        ),
    ),
    _r(
        "SA158",
        "v1-invalid-interruption",
        E,
        CORRUPT,
        "A v1 interruption line is malformed.",
        """`{type:"interruption", phase:"model"|"tool"|"compact", toolCallId?, reason:"escape"}`, with
          `toolCallId` exactly for phase `tool`.""",
        formats=("tiny-agent",),
        fix="""Restore the line from a copy; an interruption must name its phase, and `toolCallId` exactly
          when the phase is `tool`.""",
        example=(
            "Input `s.jsonl`, line 2 (excerpt):\n"
            "\n"
            "```text\n"
            '{"type":"interruption","phase":"model","reason":"escape","timestamp":"202'
            "6-11-29T21:41:07…\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    error   SA158 v1-invalid-interruption [line 2, byte 242]: a model-phase "
            "interruption, but no turn had started; the turn state is not trustworthy from this line "
            "on\n"
            "```"
        ),
    ),
    _r(
        "SA159",
        "v1-blank-line",
        N,
        None,
        "A v1 file holds an empty line.",
        """The v1 reader drops empty lines, so tiny-agent itself tolerates them; its writer never
          produces one.""",
        formats=("tiny-agent",),
        fix="""Nothing to fix: tiny-agent reads the file. Find out what added the empty line, since its
          writer never does.""",
        example=(
            "Input `s.jsonl`, line 3:\n"
            "\n"
            "```text\n"
            "(an empty line)\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA159 v1-blank-line [line 3, byte 367]: an empty line; tiny-agent v1's "
            "reader skips it, but its writer never writes one\n"
            "```"
        ),
    ),
)

REPLAY_RULES: tuple[Rule, ...] = (
    _r(
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
        fix="""Compare the current configuration with the step's `configurationSnapshot`; if the difference
          matters for this tool, start a new session from `sessaudit seed` instead of letting tiny-agent
          replay it.""",
        example=(
            "A run with a pending `safe` tool intent, verified with `--current current.json` whose "
            "`configurationDigest` differs from the step's:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  safe.jsonl\n"
            "    warning SA304 replay-configuration-changed: run "
            "01a029fc-5d84-7965-8bd1-799e309d6b79: tool bash (call_0_y5UBIHEYeD7p4Zdl) is replayed "
            "although the current configurationDigest sha256:0000000000000000000000000000000000000000"
            "000000000000000000000000 differs from sha256:2ea7e7fff2daf8f879fc5ee8e969c48c1fec5120402"
            "5ad1b689929bb7c5e67d2, the digest of the step that called it (tiny-agent compares only "
            "the environment and the replay declaration)\n"
            "```"
        ),
    ),
)

BEYOND_RULES: tuple[Rule, ...] = (
    # --- beyond tiny-agent's own reducer ---------------------------------------------------
    _r(
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
        fix="""Check the machine's clock (NTP, a suspended VM) around the session's time; if the clock was
          fine, the file may be hand-made or edited and deserves a closer look.""",
        example=(
            "Input `s.jsonl`, line 2 (excerpt):\n"
            "\n"
            "```text\n"
            '…,"content":"message 0"}},"id":"01a029fc-5d82-75eb-a6a6-a03fea7b5bf5","seq":1,'
            '"timestamp":1…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA401 uuid7-time-skew [line 2, byte 228, seq 1, /id]: 3 fact(s) like this; "
            "the first: fact id 01a029fc…5bf5 carries time 1787410800002, after its timestamp "
            "1787410800001\n"
            "```"
        ),
    ),
    _r(
        "SA402",
        "header-id-time-mismatch",
        N,
        None,
        "The header id's UUIDv7 time differs from `createdAt`.",
        """Every tiny-agent writer derives the session id from `createdAt`, so the two agree in real
          files (spec §6).""",
        native_code=None,
        fix="""Nothing to fix for test fixtures (they choose ids freely); for a real session, find out
          whether the header was edited or the id reused.""",
        example=(
            "Input `s.jsonl`, line 1 (excerpt):\n"
            "\n"
            "```text\n"
            '…nd":"header","version":2,"id":"01a029fc-5d80-73c6-869a-45b14da4f9fc","created'
            'At":178741080…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA402 header-id-time-mismatch [line 1, byte 0, /id]: the header id carries "
            "time 1787410800000, createdAt is 1787410800005\n"
            "```"
        ),
    ),
    _r(
        "SA403",
        "timestamp-backwards",
        W,
        None,
        "A fact's timestamp is earlier than the previous fact's.",
        """tiny-agent does not order timestamps, but its writers stamp facts from one clock as they
          append; a step backwards suggests a clock change or an edited file.""",
        native_code=None,
        fix="""Check for a clock change (NTP step, a restored VM snapshot); if none happened, compare the
          file with a backup, since lines may have been moved.""",
        example=(
            "Input `s.jsonl`, line 3 (excerpt):\n"
            "\n"
            "```text\n"
            '…ad":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.255Z"}\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA403 timestamp-backwards [line 3, byte 367, /timestamp]: the timestamp is "
            "8 ms earlier than the previous line's; the v1 CLI stamps lines from one clock as it "
            "appends them\n"
            "```"
        ),
    ),
    _r(
        "SA404",
        "timestamp-before-creation",
        N,
        None,
        "A fact is stamped before the session's `createdAt`.",
        """Allowed by the reducer, impossible for a live writer with a steady clock.""",
        native_code=None,
        fix="""Check the clock of the machine that wrote the session; a fact older than its session suggests
          a copied header or an edited timestamp.""",
        example=(
            "Input `s.jsonl`, line 3 (excerpt):\n"
            "\n"
            "```text\n"
            '…ad":1024,"cacheWrite":0},"timestamp":"2026-11-29T21:41:07.255Z"}\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA404 timestamp-before-creation [line 3, byte 367, /timestamp]: 1 line(s) "
            "are stamped before the header's createdAt, first line 3\n"
            "```"
        ),
    ),
    _r(
        "SA410",
        "failed-run-unsettled",
        W,
        None,
        "A run was finished as failed with a tool pending or an attempt open.",
        """`operationFinished(failed)` has no structural preconditions in tiny-agent (spec §14): it is
          accepted with a pending `toolStarted` or an open attempt. The design expects open work to
          be closed first; a pending tool's outcome stays unknown.""",
        native_code=None,
        fix="""Treat the pending tool's outcome as unknown: check what it did before trusting the run's
          result, and fix the writer that finished the run without closing its work first.""",
    ),
    _r(
        "SA411",
        "result-after-finish",
        W,
        None,
        "A tool result was appended after its run had finished.",
        """tiny-agent accepts a late result for a still-pending tool after `operationFinished`
          (spec §14); the run's recorded outcome did not know it.""",
        native_code=None,
        fix="""Read the late result: the run's recorded outcome was decided without it. If it changes the
          picture, re-run the task in a new session with the result in context.""",
    ),
    _r(
        "SA412",
        "truncated-without-synthetics",
        W,
        None,
        "A run completed as truncated while calls of its `length` answer were unanswered.",
        """The design appends a `truncated` synthetic result for every call before finishing; without
          them the next user message would be an illegal transcript (spec §14).""",
        native_code=None,
        fix="""The run is finished, so no recovery will answer those calls: before another user turn the
          session needs a `truncated` synthetic result (the fixed text of spec §8.5) for each of them,
          otherwise the next turn is illegal. Start the next task in a new session, and report the writer
          that finished the run without them.""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…n","outcome":"completed","completion":"truncated","finalEntryId":"01a029fc-'
            "664f-7e95-9960-…\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA412 truncated-without-synthetics [line 5, byte 2640, seq 6, "
            "/record/completion]: run completed as truncated while call(s) 0 of its length answer "
            "have no truncated result\n"
            "```"
        ),
    ),
    _r(
        "SA413",
        "input-entry-reused",
        W,
        None,
        "A run's input entry is not the newest, unused user entry.",
        """`runStarted.inputEntryId` may name an older user entry, even one an earlier run consumed;
          the reducer accepts it (spec §14), the design does not.""",
        native_code=None,
        fix="""Check which user message the run really answered; the writer should start each run from the
          newest unused user entry.""",
        example=(
            "Input `s.jsonl`, line 7 (excerpt):\n"
            "\n"
            "```text\n"
            '…c","operationKind":"run","inputEntryId":"01a029fc-5d84-793f-8d30-b6a003cc0f27"'
            '},"id":"01a0…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA413 input-entry-reused [line 7, byte 2808, seq 7, /record/inputEntryId]: "
            "run input 01a029fc…0f27 is not the newest unused user entry: an earlier run already "
            "used it\n"
            "```"
        ),
    ),
    _r(
        "SA414",
        "abort-record-mismatch",
        W,
        None,
        "An abort request does not fit the operation.",
        """`abortRequested` with phase `compact` on a run (or `model`/`tool` on a compaction), an empty
          `toolCallId`, or a `toolCallId` naming no call is accepted by the reducer (spec §14).""",
        native_code=None,
        fix="""Check the writer that recorded the abort: its phase or `toolCallId` does not match the open
          work, so reconciliation may close the wrong call.""",
        example=(
            "Input `s.jsonl`, line 3 (excerpt):\n"
            "\n"
            "```text\n"
            '…9","operationKind":"run","phase":"compact","reason":"escape"},"id":"01a'
            "029fc-5d86-7181-936…\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA414 abort-record-mismatch [line 3, byte 655, seq 3, /record]: abort "
            "request: phase compact on a run\n"
            "```"
        ),
    ),
    _r(
        "SA415",
        "arguments-differ-from-call",
        N,
        None,
        "A tool intent's arguments differ from the provider's call arguments.",
        """`toolStarted.arguments` are the effective arguments and are not compared with the
          assistant's `arguments` text by the reducer (spec §14); a difference is worth a look.""",
        native_code=None,
        fix="""Compare the two argument sets: the tool ran with `toolStarted.arguments`, not what the model
          asked for. Make sure the difference was intended (e.g. a normalised path).""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…HcL24","toolName":"read","arguments":{"path":"other.js"},"replay":"safe"'
            ',"replayKey":"buil…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA415 arguments-differ-from-call [line 5, byte 2775, seq 6, "
            '/record/arguments]: tool "read" ("call_0_vUraHZJrzLCHcL24") started with arguments '
            "that differ from the call's arguments\n"
            "```"
        ),
    ),
    _r(
        "SA416",
        "environment-differs-from-header",
        N,
        None,
        "A tool intent names another environment than the session header.",
        """`toolStarted.environmentIdentity` is not compared with the header (spec §14).""",
        native_code=None,
        fix="""Check that the tool ran in the intended environment (container, machine); a replay may be
          blocked or run elsewhere.""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…ayKey":"builtin:read:v1","environmentIdentity":"/elsewhere","resultEntryId":"'
            "01a029fc-6624…\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA416 environment-differs-from-header [line 5, byte 2775, seq 6, "
            '/record/environmentIdentity]: tool intent environment "/elsewhere" differs from the '
            'header\'s "/home/dev/shop"\n'
            "```"
        ),
    ),
    _r(
        "SA417",
        "compaction-partition-mismatch",
        W,
        None,
        "A compaction entry disagrees with the partition its `compactionStarted` declared.",
        """The reducer does not cross-check `compactedThroughEntryId`/`retainedTail` with
          `compactedEntryIds`/`retainedEntryIds` (spec §14).""",
        native_code=None,
        fix="""The compaction summary may cover other messages than declared: restore the file from a copy or
          re-run the compaction in a new session before relying on its summary.""",
        example=(
            "Input `s.jsonl`, line 12 (excerpt):\n"
            "\n"
            "```text\n"
            '…e81","summary":"summary","compactedThroughEntryId":"01a029fc-5f4f-7fe3-b566-818'
            '9469d3e78",…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA417 compaction-partition-mismatch [line 12, byte 7304, seq 15, "
            "/0/entry/compactedThroughEntryId]: compactedThroughEntryId 01a029fc…3e78 and 2 retained "
            "message(s) differ from the declared partition (last compacted 01a029fc…bd8f, 1 retained)\n"
            "```"
        ),
    ),
    _r(
        "SA418",
        "usage-on-closed-attempt",
        N,
        None,
        "Usage refers to a superseded or failed attempt, or repeats for one attempt.",
        """Allowed by the reducer (spec §10, §14); it may double count or record spend the transcript
          does not show.""",
        native_code=None,
        fix="""Nothing to fix in the log; when reporting costs, count this attempt's usage once and remember
          it paid for an answer the transcript does not show.""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…mestamp":1787410801022},{"kind":"usage","operationId":"01a029fc-5d82-74a8-84a5-'
            "e6ffbbeb508…\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    note    SA418 usage-on-closed-attempt [line 5, byte 3241, seq 6, /1/attemptId]: "
            "usage recorded for a superseded attempt 1\n"
            "```"
        ),
    ),
    _r(
        "SA419",
        "synthetic-reason-unexpected",
        W,
        None,
        "A synthetic result's reason does not fit the situation.",
        """For example `aborted` without an abort request, `truncated` for a call of a `toolUse`
          answer, or `unknownTool` for a tool the attempt's configuration declared; the reducer does
          not check this (spec §8.4).""",
        native_code=None,
        fix="""Check the writer that produced the synthetic result: its reason misdescribes why the tool did
          not run, which can mislead a person reading the transcript.""",
        example=(
            "Input `s.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…ult":{"type":"synthetic","reason":"aborted"}},"id":"01a029fc-64c7-7ee2-a951'
            '-0a10b1abac56",…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA419 synthetic-reason-unexpected [line 5, byte 2656, seq 6, "
            '/entry/result/reason]: synthetic result for call 0 ("call_0_jyhsdatocn1d61-K"): '
            "aborted without an abort request\n"
            "```"
        ),
    ),
    _r(
        "SA420",
        "tool-start-order",
        N,
        None,
        "Tool calls were started out of `toolIndex` order.",
        """The design starts calls in index order; the reducer does not enforce it (spec §9.5).""",
        native_code=None,
        fix="""Nothing to fix in the log; if the order of effects matters (tools that depend on each other),
          check the outcome of each call.""",
    ),
    _r(
        "SA421",
        "intent-after-abort",
        W,
        None,
        "A tool intent was written after the abort request.",
        """After `abortRequested` the design reconciles instead of starting tools; the reducer accepts
          the intent (spec §9.5).""",
        native_code=None,
        fix="""Check whether the tool ran after the user asked to stop; treat its effect as one the user did
          not want, and fix the writer so it reconciles instead.""",
        example=(
            "Input `s.jsonl`, line 6 (excerpt):\n"
            "\n"
            "```text\n"
            '…-7741-8a83-2be310d3cf3f","toolIndex":1,"toolCallId":"call_1__2WlFkKAve-Tnmo6","'
            'toolName":"…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            '    warning SA421 intent-after-abort [line 6, byte 3036, seq 7, /record]: tool "bash" '
            '("call_1__2WlFkKAve-Tnmo6") was started after the abort request\n'
            "```"
        ),
    ),
    _r(
        "SA422",
        "step-started-with-untouched-call",
        W,
        None,
        "A model step started while a call of the previous answer had no intent and no result.",
        """`stepAttempt` checks only pending intents, so a step may start while a call is untouched;
          the next assistant message can then never be legal (spec §12.3).""",
        native_code=None,
        fix="""The untouched call can no longer get a legal result in this session: continue in a new
          session from `sessaudit seed`, and report the writer that started the step without answering
          every call first.""",
        example=(
            "Input `s.jsonl`, line 7 (excerpt):\n"
            "\n"
            "```text\n"
            '…-7eaa-9468-8370590ad570","stepKind":"assistant","attempt":1,"contextThroughEntr'
            'yId":"01a02…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA422 step-started-with-untouched-call [line 7, byte 3661, seq 8, /record]: "
            "a new step started while call(s) 1 of the previous answer have no intent and no result; "
            "the next answer cannot be legal\n"
            "```"
        ),
    ),
    _r(
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
        fix="""Rewrite the value as a plain string on a copy and verify it again, and find the tool that
          wrote it; readers that compare types (tiny-agent's Python reducer) refuse the file.""",
        example=(
            "Input `s.jsonl`, line 3 (excerpt):\n"
            "\n"
            "```text\n"
            '…0da788a5f36a95ee2f6e18"},"configurationDigest":["sha256:2ea7e7fff2daf8f879fc5ee8e96'
            "9c48c1f…\n"
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  s.jsonl\n"
            "    warning SA423 string-coerced-field [line 3, byte 655, seq 3, "
            "/record/configurationDigest]: configurationDigest is an array of 1, accepted as the "
            'string "sha256:2ea7e7fff2daf8f879fc5ee8e969c48c1fec51204025ad1b68…"\n'
            "```"
        ),
    ),
)

TINY_AGENT_RULES: tuple[tuple[Rule, ...], ...] = (LOG_RULES, REPLAY_RULES, BEYOND_RULES)

# this format's passages in the core rules' texts, by place (sessaudit.rules.PLACES)
CORE_RULE_PHRASES: dict[str, str] = {
    "findings-sources": "a tiny-agent file",
    "held-whole-after": "Streamed tiny-agent logs are not bound by this limit.",
    "input-kinds": "tiny-agent session",
    "inputs": "a tiny-agent session",
    "inputs-named": "a tiny-agent `.jsonl` session",
    "jsonl-lines": "a tiny-agent transaction or header",
    "narrower": " (e.g. one `.tiny-agent/sessions/` folder at a time)",
    "nesting-example": (
        "A tiny-agent session whose line 2 is `[` × 10,000 followed by `]` × 10,000 (exit 3; "
        "the console shortens the pointer, 512 levels of `/0`; the JSON report has it whole):\n"
        "\n"
        "Finding (console report):\n"
        "\n"
        "```text\n"
        "  session.jsonl\n"
        "    error   SA011 nesting-too-deep [line 2, byte 740, /0/0/…/0 (512 levels)]: line 2: "
        "arrays and objects are nested 10000 deep; sessaudit's limit is 512 (fixed), so the "
        "line is not verified\n"
        "```"
    ),
    "own-recovery": "tiny-agent reopens and plans it",
    "safe-replay-fix": (
        "tiny-agent: usually nothing, its recovery re-runs the tool into its result slot; "
        "check with `--current` that the tool's declaration and environment still match, "
        "otherwise the planner blocks the replay."
    ),
    "unsupported": "a tiny-agent header with `version` above 2",
    "unsupported-notes": (
        "For tiny-agent, `native.reducer` still shows what tiny-agent's own reducer answers."
    ),
}
