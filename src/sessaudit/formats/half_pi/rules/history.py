"""Half-Pi history rules (SA601–SA629): messages, runtime, summaries, projections, ids, credentials, times.

Spec `formats/half-pi.md` §10 invariants 1–6, 22 and 23. Levels: H (guaranteed by the DDL or the store's
transactions: corruption or tampering) and P (true for every production writer) are errors that make the
store `corrupt`; S (soft, e.g. wall clocks) are warnings.
"""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, E, Rule, W, _rule

_r = partial(_rule, formats=("half-pi",))

HISTORY_RULES: tuple[Rule, ...] = (
    # --- invariant 1: the file ------------------------------------------------------------------
    _r(
        "SA601",
        "store-integrity-failed",
        E,
        CORRUPT,
        "SQLite's integrity_check does not answer ok on the store.",
        """Level H, spec §10 invariant 1. `PRAGMA integrity_check`, run on the private copy (database
          and -wal together), reports damaged pages or an index that disagrees with its table. The
          file itself is broken or was edited below SQLite (a disk fault, a bad copy, a hand-patched
          page): no row of it can be trusted without checking, and Half-Pi may refuse or misread it.""",
        fix="""Keep the original db, `-wal` and `-shm` untouched and copy them again from where they came,
          comparing sha256, to rule out a bad copy. If the original is damaged, restore the store from a
          backup; repair attempts (`REINDEX`, `VACUUM`, the sqlite3 shell's `.recover`) belong on a
          separate copy, never on the evidence.""",
    ),
    _r(
        "SA602",
        "foreign-key-violated",
        E,
        CORRUPT,
        "A row points to a parent row that does not exist.",
        """Level H, spec §10 invariant 1. `PRAGMA foreign_key_check` found a message, session
          runtime, context summary or tool display row without its session, a session without its
          group, or a run event without its run. Half-Pi always enables foreign keys, so the parent
          was deleted or the child inserted by something else (a shell with foreign keys off).
          The finding names the child row and the missing key.""",
        fix="""Restore the store from a backup made before the change, or compare with one to learn which
          parent rows were deleted: with foreign keys on, as Half-Pi runs, children go with their parent.
          Treat the orphaned rows as unattributed, and find out who wrote to the store with foreign keys
          off (the sqlite3 shell's default).""",
    ),
    # --- invariant 2: message sequence and runtime ---------------------------------------------------
    _r(
        "SA603",
        "message-seq-broken",
        E,
        CORRUPT,
        "A session's message seqs are not exactly 1..N.",
        """Level H, spec §4.3 and §10 invariant 2. Half-Pi appends messages with an optimistic
          compare-and-swap, so a session's seqs are 1..N with no gap and no repeat. A gap means
          history rows were deleted; a repeat or a seq below 1 means rows were inserted outside the
          store. What the model saw, and what was approved on its basis, is no longer the record.""",
        fix="""The session's history was edited outside Half-Pi: restore it from a backup, comparing the
          two to learn which messages were removed or added. Until then the messages from the broken seq
          on are not the record of what the model saw, and the session should not be continued on this
          store.""",
    ),
    _r(
        "SA604",
        "session-runtime-mismatch",
        E,
        CORRUPT,
        "A session has no runtime row, or its history_generation is not its last seq.",
        """Level H, spec §4.4 and §10 invariant 2. Every session gets a `session_runtime` row in
          the transaction that creates it, and every append sets `history_generation` to the new last
          seq in the same transaction as the rows. A mismatch means messages were added or removed
          behind the store's back (or the counter edited). A runtime row without a session is
          reported as a foreign-key violation (SA602).""",
        fix="""Compare the session with a backup to find the messages added or removed outside Half-Pi (or
          the edited counter), and restore from it. Half-Pi appends only when `history_generation` equals
          the last seq it knows, so do not continue the session on this store before that.""",
    ),
    # --- invariant 3: runtime counters ------------------------------------------------------------
    _r(
        "SA605",
        "runtime-pending-invalid",
        E,
        CORRUPT,
        "A session runtime's pending-compaction fields break the store's invariant.",
        """Level H, spec §4.4, §7.4 and §10 invariant 3. `pending_compact` is 0 or 1, it is 1
          exactly when `pending_compact_id` is set, and `pending_attempt` and `pending_not_before` are
          not negative. Half-Pi refuses to read such a runtime row ("pending invariant is invalid"),
          so the session cannot be opened; the row was written by something other than the store.""",
        fix="""Half-Pi refuses this runtime row, so the session cannot be opened: restore the row from a
          backup. The store never writes such a row, so find out what did before trusting the session's
          other rows.""",
    ),
    _r(
        "SA606",
        "runtime-counters-inconsistent",
        E,
        CORRUPT,
        "Runtime counters are out of order, or an active summary has compact_generation 0.",
        """Level P, spec §4.4, §7.4 and §10 invariant 3. Every runtime mutation raises
          `snapshot_version` at least as much as `history_view_generation`, which rises at least as
          much as `history_generation`; switching to a summary raises `compact_generation`. Counters
          out of this order were rewritten or rolled back by hand, so the session's view history
          cannot be reconstructed from them.""",
        fix="""Restore the session's `session_runtime` row from a backup rather than adjusting counters by
          hand, and find out who rewrote it. Check the session's messages and summaries against the backup
          as well: a rolled-back counter often hides removed rows.""",
    ),
    # --- invariant 4: context summaries -----------------------------------------------------------
    _r(
        "SA607",
        "active-summary-invalid",
        E,
        CORRUPT,
        "A session's active_summary_id names no summary of that session.",
        """Level H, spec §4.4 and §10 invariant 4. The active summary is what the model sees in
          place of the compacted history. Pointing to a missing summary, or to one of another
          session, means the pointer or the summaries were edited; Half-Pi cannot build the session's
          context, and what the model was shown cannot be established.""",
        fix="""Restore the session's runtime row and its summaries from a backup; until then Half-Pi
          cannot build the session's context. What the model was shown since the last compaction cannot be
          established from this store; the full history is still in `messages`.""",
    ),
    _r(
        "SA608",
        "summary-range-invalid",
        E,
        CORRUPT,
        "A context summary does not cover seq 1..to_seq within the session's history.",
        """Level H, spec §4.5 and §10 invariant 4. A summary always covers messages from seq 1 to
          `to_seq`, and `to_seq` never exceeds the session's `history_generation`. Any other range
          was not written by Half-Pi: the summary claims to stand for messages that do not exist or
          skips the start of the conversation.""",
        fix="""Restore the summary from a backup, and until then read the covered messages themselves, not
          the summary, as what the model saw. A `to_seq` beyond the history also suggests deleted messages
          (see SA603 and SA604).""",
    ),
    _r(
        "SA609",
        "summary-digest-mismatch",
        E,
        CORRUPT,
        "A context summary's summary, source or contract digest does not recompute.",
        """Level H, spec §6.6 and §10 invariant 4. Each summary binds its text (`summary_digest`),
          the exact messages 1..to_seq it replaced (`source_digest`) and its generation contract
          (`contract_digest`) with framed SHA-256 digests. A mismatch means the summary text was
          edited, or a message it covers was changed, inserted or deleted after compaction: the
          history the model was given no longer matches the stored record. The finding names each
          digest that differs, with the expected and stored values.""",
        fix="""The finding names the digest that differs: `summary_digest` means the summary text was
          edited, `source_digest` that a message 1..`to_seq` changed after compaction (compare them with a
          backup to find which), `contract_digest` that the generation fields were edited. Restore from
          the backup; Half-Pi itself re-checks the active summary's `source_digest` when it reads it.""",
    ),
    _r(
        "SA610",
        "summary-node-invalid",
        E,
        CORRUPT,
        "A context summary node has fields the store refuses to write.",
        """Level H, spec §4.5 and §10 invariant 4. The store validates every node before insert:
          non-empty summary, provider and model; version names matching `^[a-z0-9][a-z0-9_.-]{0,63}$`;
          generation mode full, incremental or rebase; a parent exactly for incremental nodes; a
          generation key only for rebase (empty or `sha256:` + 64 hex); no negative token count. A
          node breaking these was inserted or edited outside Half-Pi.""",
        fix="""Restore the node from a backup and find out what inserted or edited it; Half-Pi would have
          refused to write it, so do not treat its text as a summary the model was shown.""",
    ),
    _r(
        "SA611",
        "summary-link-invalid",
        E,
        CORRUPT,
        "A context summary's parent or superseded node is missing or incompatible.",
        """Level H, spec §4.5, §7.4 and §10 invariant 4. A parent and a superseded node exist and
          belong to the same session; a parent ends below its child (`to_seq`) and was made under the
          same profile, policy and projection versions. Summaries are immutable and only deleted with
          their session, so a broken link means summary rows were deleted or forged, and the chain
          of compactions that produced the model's context is cut.""",
        fix="""Restore the missing or forged summary rows from a backup; Half-Pi deletes summaries only
          with their session. Until then rely on the messages, not on the chain of summaries, for what the
          model saw.""",
    ),
    # --- invariant 5: compact projections -----------------------------------------------------------
    _r(
        "SA612",
        "compact-projection-invalid",
        E,
        CORRUPT,
        "A compact_projection is on a non-tool row, over 4096 bytes, or not canonical JSON.",
        """Level H, spec §4.3, §6.5 and §10 invariant 5. Only tool rows carry a compact projection,
          and the store accepts it only as a single JSON object of at most 4096 bytes that is
          byte-identical to Go's re-serialization. Anything else was written outside the store; the
          compacted view of that tool result (what later summaries are built from) is not Half-Pi's.""",
        fix="""Restore the message from a backup and find out what wrote the projection; Half-Pi's store
          refuses such a value. Summaries covering this row carry the projection in their `source_digest`,
          so check them too (SA609).""",
    ),
    _r(
        "SA613",
        "compact-projection-output-mismatch",
        E,
        CORRUPT,
        "A tool row's projection output_bytes or output_digest does not match its content.",
        """Level P, spec §6.5 and §10 invariant 5. The projection records the byte length and the
          `sha256:` digest of the tool output it was made from. A mismatch means the tool output
          (`content`) or the projection was changed afterwards: the output the model saw and the
          output recorded now differ.""",
        fix="""Compare the tool row's `content` and `compact_projection` with a backup to learn which was
          changed. Until then the output the model saw is unknown; if the tool's effect matters, check it
          at its target.""",
    ),
    # --- invariant 6: message order and tool calls --------------------------------------------------
    _r(
        "SA614",
        "message-id-order",
        E,
        CORRUPT,
        "Within a session, a message's id is lower than that of the message before it.",
        """Level H, spec §4.3 and §10 invariant 6. Appends are serialized and ids come from
          AUTOINCREMENT, so within a session ids grow with seq. A later seq with a lower id means rows
          were renumbered or re-inserted to rewrite the order of the conversation.""",
        fix="""Restore the session from a backup: rows were re-inserted or renumbered, so the order of
          requests, answers and tool results around the named seq cannot be trusted.""",
    ),
    _r(
        "SA615",
        "tool-result-uncalled",
        E,
        CORRUPT,
        "A tool row answers a tool call id that no earlier assistant row made.",
        """Level P, spec §4.3 and §10 invariant 6. Half-Pi saves tool results together with the
          assistant message that called them, so every tool row's `tool_id` was called by an earlier
          assistant row of the session. A result without its call was inserted by hand, or the call
          was removed: an output appears in the history that no model request asked for.""",
        fix="""Look for the calling assistant row in a backup: either the call was removed (hiding what
          the model asked for) or the tool row was inserted by hand. Until resolved, do not read this
          output as the result of any model call.""",
    ),
    _r(
        "SA616",
        "message-time-decreasing",
        W,
        None,
        "A message was created earlier than the message before it.",
        """Level S, spec §2 and §10 invariant 6. `messages.created_at` is SQLite's wall clock at
          append time, so it normally does not decrease with seq. A decrease can be a clock step on
          the Mind's host, or an edited row; use it to corroborate other findings, not alone.""",
        fix="""Usually nothing to fix: check the Mind host's clock (time synchronisation steps) at that
          time. If other findings concern the same session, compare its messages with a backup.""",
    ),
    _r(
        "SA617",
        "tool-call-unanswered",
        W,
        None,
        "An assistant row's tool call is never answered by a later tool row.",
        """Level S, spec §4.3 and §10 invariant 6. A tool batch is saved all-or-nothing after its last
          tool, so calls are normally answered. One legitimate exception exists: when the Face stream
          callback fails right after the model responds, the assistant message is persisted later
          without results. Otherwise results were deleted, and whether the tool ran is unknown from
          this store alone.""",
        fix="""If the assistant row was persisted with the next request after a Face stream failure,
          nothing is wrong. Otherwise learn whether the tool ran from the request's `security_decisions`
          (and, for `use_hand`, its remote run) or at the tool's target, and compare the session with a
          backup to find the deleted results.""",
    ),
    _r(
        "SA618",
        "message-shape-invalid",
        E,
        CORRUPT,
        "A message has an unknown role, malformed tool_calls, or tool fields on the wrong role.",
        """Level P, spec §4.3. Roles are system, user, assistant and tool; `tool_calls` is `null` (or
          empty) or, on assistant rows only, Go's JSON array of `{"ID","Name","Args"}` string objects in
          that order; `tool_id` is set on tool rows only. Other shapes are not written by Half-Pi's
          agent: the row was forged or edited, and its tool calls cannot be trusted as the model's.""",
        fix="""Restore the message from a backup and find out what wrote it; Half-Pi's agent writes no
          such row. Do not take its tool calls as the model's, nor approvals matched to them (SA666) as
          proof.""",
    ),
    # --- invariant 22: id formats and credential shapes -------------------------------------------
    _r(
        "SA619",
        "group-id-mismatch",
        E,
        CORRUPT,
        "A session group's id is not the first 8 bytes of SHA-256 of its work_dir.",
        """Level P, spec §4.1, §5 and §10 invariant 22. A group id is derived from its workspace
          path. A mismatch means the group's `work_dir` was rewritten (sessions now appear to belong
          to another workspace) or the id was forged.""",
        fix="""Compare the group with a backup and with the workspace its sessions really used: either
          `work_dir` was rewritten or the id forged. Attribute the group's sessions by their content, not
          by this row, until resolved.""",
    ),
    _r(
        "SA620",
        "uuid7-id-invalid",
        E,
        CORRUPT,
        "A session, summary, pending-compaction or compaction event id is not a canonical UUIDv7.",
        """Level P, spec §5 and §10 invariant 22. Session ids, context summary ids (and their parent
          and supersedes references), `pending_compact_id` and the ids, trace ids and span ids of
          `compact.*` outbox events are canonical lowercase UUIDv7. Another shape was not minted by a
          production Half-Pi (store tests use such ids), so the row was inserted by other means.""",
        fix="""A session id of another shape can come from Half-Pi's own tests, which use arbitrary
          strings; for a production store, or for a summary or compaction id (the store itself validates
          those), find out what inserted the row and restore it from a backup. Until then treat the row as
          not written by a Mind.""",
    ),
    _r(
        "SA621",
        "run-id-invalid",
        E,
        CORRUPT,
        "A remote run id is not 16 lowercase hex characters.",
        """Level P, spec §4.8, §5 and §10 invariant 22. Run ids are 8 random bytes in lowercase hex.
          Another shape means the run row did not come from a production Mind; any approval or Hand
          action tied to it deserves scrutiny.""",
        fix="""Find out what created the run row: a production Mind mints 8 random bytes. Check the
          approval, the security decisions and the Hand's logs for this run before trusting that its
          command was approved or ran as recorded.""",
    ),
    _r(
        "SA622",
        "approval-id-invalid",
        E,
        CORRUPT,
        "An approval id, or its run id, is not 16 lowercase hex characters.",
        """Level P, spec §4.11, §5 and §10 invariant 22. Approval ids and the run ids of remote
          approvals are 8 random bytes in lowercase hex. Another shape means the approval record was
          not written by a production Mind: the question "who approved this?" cannot be answered from
          it with confidence.""",
        fix="""Compare the approval with a backup and find out what wrote it. Until then corroborate who
          approved the call with the security decision carrying its `approval_id`, the run, and the Face
          or REPL user named as actor.""",
    ),
    _r(
        "SA623",
        "lifecycle-id-invalid",
        E,
        CORRUPT,
        "A trace, span or security event id is not 32 lowercase hex.",
        """Level P, spec §4.14, §4.15, §5 and §10 invariant 22. Trace ids, span ids and security
          decision (outbox event) ids are 16 random bytes in lowercase hex; a decision's approval and
          run ids are 16 hex. Rows written before the lifecycle columns existed keep '' and are not
          judged. Another shape breaks the audit trail's linkage and was not written by Half-Pi.""",
        fix="""Compare the row with a backup and find out what wrote it. A malformed id cannot be linked
          to its trace, approval or run, so corroborate the decision or event with its other copies (the
          outbox row, the run, the approval).""",
    ),
    _r(
        "SA624",
        "credential-shape-invalid",
        E,
        CORRUPT,
        "A Hand credential or Face token has an invalid label, secret, scopes or creation time.",
        """Level P, spec §4.7 and §10 invariant 22. Labels match `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`;
          token and application key are each 32 lowercase hex and differ; Face scopes are Go's JSON
          array of known `face:*` scopes, non-empty, deduplicated and sorted; `created_at` is
          `YYYY-MM-DD HH:MM:SS`. Half-Pi refuses to read such a credential, so it was written by
          other means (a planted or hand-edited credential). The secrets themselves are never shown:
          only the row, its label when valid, and what is wrong.""",
        fix="""Treat the credential as planted or tampered: look for its addition in `management_audits`,
          keep a copy of the store as evidence, then remove the credential and rotate the secrets of the
          Hand or Face concerned. Whoever wrote it could write to the store: review that access.""",
    ),
    _r(
        "SA625",
        "management-source-invalid",
        E,
        CORRUPT,
        "A management audit's source is not repl, ipc or offline_cli.",
        """Level P, spec §4.13 and §10 invariant 22. Credential additions and removals are audited
          with the channel they came through. An unknown source means the audit row was not written by
          Half-Pi, so it cannot vouch for who changed the credentials.""",
        fix="""Compare with a backup and find out what wrote the row; until then `management_audits`
          cannot tell who added or removed credentials, so check the credentials themselves and the Mind
          host's own records of REPL, IPC and offline CLI use.""",
    ),
    # --- invariant 23: timestamps -----------------------------------------------------------------
    _r(
        "SA626",
        "session-time-inverted",
        W,
        None,
        "A session's updated_at is before its created_at.",
        """Level S, spec §2, §4.2 and §10 invariant 23. Both are SQLite wall-clock times, and every
          change to a session bumps `updated_at`. An earlier `updated_at` points to a clock step or an
          edited row.""",
        fix="""Usually a clock step on the Mind's host: check its time synchronisation. If other findings
          concern the session, compare it with a backup.""",
    ),
    _r(
        "SA627",
        "run-event-time-decreasing",
        W,
        None,
        "A remote run event was created earlier than the event before it.",
        """Level S, spec §4.9 and §10 invariant 23. Run events are appended in order, but accepted and
          running events carry the Hand's clock, so a small step back is possible between hosts. A
          large one, or one between Mind-clock events, suggests edited events.""",
        fix="""If an `accepted` or `running` event is involved, compare the Hand's clock with the Mind's;
          a small step back is then expected. A step back between Mind-clock events suggests edited
          events: compare the run's events with a backup.""",
    ),
    _r(
        "SA628",
        "approval-time-inverted",
        W,
        None,
        "An approval was resolved before it was created.",
        """Level S, spec §4.11 and §10 invariant 23. `resolved_at` is set once, when a pending approval
          is decided, expires or is cancelled, so it is not before `created_at`. Otherwise the Mind's
          clock stepped back, or the approval record was edited.""",
        fix="""Check the Mind host's clock at that time; if it did not step, compare the approval with a
          backup, since a resolution before creation suggests a back-dated decision.""",
    ),
    _r(
        "SA629",
        "task-time-inverted",
        W,
        None,
        "A remote task finished before it started.",
        """Level S, spec §4.10 and §10 invariant 23. `started_at` and `finished_at` come from the
          Hand's clock; a task finishing before it started points to a Hand clock step or an edited
          task snapshot.""",
        fix="""Check the Hand's clock, and compare the snapshot with the Hand's own record of the task (a
          task read through the Mind copies the Hand's times into the row, so keep a copy of the store
          first); if the Hand disagrees, the row was edited.""",
    ),
)
