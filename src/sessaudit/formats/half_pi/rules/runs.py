"""The Half-Pi rules of remote runs, tasks, approvals, security decisions and digests (SA630–SA667).

Spec `formats/half-pi.md` §10 invariants 7–21, each with its level: H (guaranteed by DDL or a store
transaction) and P (holds for production writers at HEAD) are errors that make the store `corrupt`; S
(soft) are warnings with no effect on the verdict.
"""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, E, Rule, W, _rule

_r = partial(_rule, formats=("half-pi",))

RUNS_RULES: tuple[Rule, ...] = (
    # --- remote runs and their events (§4.8, §4.9, §7.1) ----------------------------------------------
    _r(
        "SA630",
        "run-event-seq-broken",
        E,
        CORRUPT,
        "A remote run's event seq is not exactly 1..N.",
        """Spec §4.9, §10 invariant 7 (H). Every event of a run is inserted at `MAX(seq)+1` inside the
          transaction that changes the run, under UNIQUE(run_id, seq), so its events are numbered 1..N
          without gaps or repeats. A gap means an event was deleted; a repeat or a non-integer seq means
          rows were written outside Half-Pi. For an incident responder: the run's history — who sent it,
          when the Hand accepted it, how it ended — is missing a step, so the story it tells is not the
          whole story.""",
        fix="""Compare the run's events with a backup to find the deleted or inserted ones. Until then
          take the run's course from the Hand's records, the approval and the security decisions rather
          than from `remote_run_events`.""",
    ),
    _r(
        "SA631",
        "run-creation-event-wrong",
        E,
        CORRUPT,
        "A remote run has no creation event, or event 1 is not ('', created, created) at its creation time.",
        """Spec §7.1, §10 invariant 7 (H). A run and its first event ('' -> created, type `created`, at
          remote_runs.created_at) are inserted in one transaction. Without it the run's record does not
          start where Half-Pi starts every run, so the events cannot be trusted to describe this run from
          its beginning.""",
        fix="""Restore the run's events from a backup. Until then corroborate when and how the run began
          with its approval (`approval_audits.run_id`) and its security decisions.""",
    ),
    _r(
        "SA632",
        "run-event-from-status-wrong",
        E,
        CORRUPT,
        "A run event's from_status is not the status the previous events left the run in.",
        """Spec §7.1, §10 invariant 8 (H). Each status change is `UPDATE remote_runs ... WHERE status =
          <from>` that must change one row, plus its event; so walking the non-progress events in seq
          order, each event starts where the previous one ended. A mismatch means an event was removed,
          reordered or edited: the recorded path of the remote command (approved, sent, accepted, ...) is
          not the path it took.""",
        fix="""Compare the run's events with a backup to find the removed, reordered or edited step, and
          ask the Hand (its logs) what happened to this run before relying on the recorded path.""",
    ),
    _r(
        "SA633",
        "run-transition-illegal",
        E,
        CORRUPT,
        "A run event is neither a state-machine edge, a same-status audit, nor startup recovery.",
        """Spec §7.1, §10 invariant 8 (H), §11. Half-Pi only writes a step that `CanTransitionRun`
          allows (created -> approved|rejected, approved -> sent|rejected, ...), with the new status as
          its type or one of `local_rejection` (-> rejected), `hand_disconnect` / `service_shutdown` (->
          lost), `cancel_request_recovered` (-> cancel_requested); a same-status event of type
          `accepted_after_cancel` or `cancel_failed`; or `startup_recovery` from any non-terminal status
          to lost, which bypasses the edge table. Anything else — a run that jumps from created to
          succeeded, an unknown status — was not written by Half-Pi: the responder cannot rely on this
          run's record of whether the command ran.""",
        fix="""Half-Pi never writes this step, so the run's events were edited or written by another
          program: confirm on the Hand whether and how the command ran, and compare the events with a
          backup.""",
    ),
    _r(
        "SA634",
        "run-event-after-terminal",
        E,
        CORRUPT,
        "A run has events after it reached a terminal status.",
        """Spec §7.1, §10 invariant 8 (H). succeeded, failed, rejected, cancelled, timed_out and lost are
          final: the store's conditional update cannot leave them and progress is dropped once a run is
          terminal. An event after the terminal step means the history was edited or spliced, and the
          outcome the run shows may not be the outcome it had.""",
        fix="""Compare the run's events with a backup to find the spliced ones; the outcome the run shows
          may not be the one it had, so confirm it on the Hand.""",
    ),
    _r(
        "SA635",
        "run-status-not-last-event",
        E,
        CORRUPT,
        "A run's status is not the to_status of its last non-progress event.",
        """Spec §10 invariant 9 (H). The status column and the event that set it are written in one
          transaction, so remote_runs.status always equals the to_status of the last transition or audit
          event. When they disagree the responder has two answers to "did this command finish, and how?",
          and one of them was edited.""",
        fix="""Confirm on the Hand how the command ended, and compare the run row and its events with a
          backup to learn which of the two was edited.""",
    ),
    _r(
        "SA636",
        "run-finish-fields-wrong",
        E,
        CORRUPT,
        "A run's finished_at or duration_ms disagrees with its status or its terminal event.",
        """Spec §4.8, §10 invariant 10 (H). A run is terminal exactly when finished_at > 0; the terminal
          update sets finished_at to the terminal event's time and duration_ms = max(0, finished_at -
          created_at) (startup recovery does the same with its own time). A mismatch means the timing a
          responder would quote — when the remote command ended, how long it ran — was altered or
          belongs to another run.""",
        fix="""Compare the run row with a backup, and until then take the run's end and duration from its
          terminal event (and the Hand), not from `finished_at` and `duration_ms`.""",
    ),
    _r(
        "SA637",
        "run-sent-at-wrong",
        E,
        CORRUPT,
        "A run's sent_at is not the time of its `sent` event (or is set without one).",
        """Spec §4.8, §10 invariant 10 (H). The `sent` transition sets sent_at to the event's time in the
          same UPDATE (at every schema generation), and nothing else writes it. So sent_at is 0 exactly
          when no `sent` event exists, and otherwise equals that event's created_at. A mismatch says the
          moment the command left the Mind for the Hand was altered.""",
        fix="""Take the send time from the `sent` event (and the Hand's receipt), and compare the run row
          with a backup to learn which was altered.""",
    ),
    _r(
        "SA638",
        "run-progress-malformed",
        E,
        CORRUPT,
        "A progress event is malformed (statuses, progress_seq order, kind, gap flag or size).",
        """Spec §4.9, §7.1, §10 invariant 11 (H). Progress rows are inserted with from = to = '', a
          progress_seq > 0 that only grows (the registry drops a repeat or an older one), kind stdout or
          stderr, a 0/1 gap flag and at most 4096 bytes of data. Anything else did not come from Half-Pi's
          progress path: the command output the responder reads here may not be what the Hand
          streamed.""",
        fix="""Treat the recorded output as unverified: if it matters, get the command's output from the
          Hand or its target, and compare the run's events with a backup to find the forged rows.""",
    ),
    _r(
        "SA639",
        "run-progress-out-of-phase",
        E,
        CORRUPT,
        "A progress event appears while the run could not stream output (before acceptance).",
        """Spec §7.1, §10 invariant 11 (H). The registry admits progress only while a run is accepted or
          running, or cancel_requested after the Hand accepted it; earlier progress is refused. Output
          recorded before the Hand accepted the run contradicts the run's own history (progress after a
          terminal step is SA634).""",
        fix="""Compare the run's events with a backup: either progress rows were inserted or transitions
          edited. Confirm with the Hand when the command started and what it printed.""",
    ),
    # --- remote tasks (§4.10, §7.2) -------------------------------------------------------------------
    _r(
        "SA640",
        "task-run-mismatch",
        E,
        CORRUPT,
        "A remote task has no run with its id, or differs from it in session, hand, tool or args_digest.",
        """Spec §4.10, §7.2, §10 invariant 12 (H). A background task row is inserted in the same
          transaction as its start run, copying the run's id, session, Hand, tool and digest, and those
          columns are never updated. A task without its run, or with another digest, cannot be tied to
          the approval that authorised it: "who approved this background job?" has no answer.""",
        fix="""Look for the task's run, and its approval, in a backup. Until then no approval covers this
          background task: check on the Hand what it runs, and stop it there if it is unwanted.""",
    ),
    _r(
        "SA641",
        "task-field-invalid",
        E,
        CORRUPT,
        "A remote task has an unknown status, a non-0/1 flag, or updated_at before created_at.",
        """Spec §4.10, §7.2, §10 invariant 12 (H). Task statuses are pending, running, succeeded, failed,
          cancelled, timed_out and lost; stale and truncated are 0/1 flags; an update is refused when it
          is older than the stored updated_at, which starts at created_at. A value outside these was not
          written by Half-Pi, so the Mind's snapshot of what the Hand reported is unreliable.""",
        fix="""Keep a copy of the store as evidence and compare the task row with a backup. The Hand is
          authoritative for the task: ask it (a task read through the Mind copies the Hand's status, times
          and flags) rather than trusting this row.""",
    ),
    _r(
        "SA642",
        "task-created-at-differs",
        E,
        CORRUPT,
        "A remote task's created_at is not its run's created_at.",
        """Spec §7.2, §10 invariant 12 (P). Production code inserts the task with created_at =
          updated_at = the run's creation time and never changes created_at. A different time means the
          row was written by another path (store tests do) or edited.""",
        fix="""Stores written by Half-Pi's own tests do this; for a production store compare the task row
          with a backup and find out what wrote it, since its tie to the run (and so to the approval) is
          in doubt.""",
    ),
    # --- approvals (§4.11, §7.3) ----------------------------------------------------------------------
    _r(
        "SA643",
        "approval-shape-invalid",
        E,
        CORRUPT,
        "An approval's decision, actor, source, resolution reason or resolved_at do not fit its status.",
        """Spec §4.11, §7.3, §10 invariant 13 (H). A pending approval has no decision, actor or
          resolved_at; a resolved one has one of allow_once, deny_once, allow_session, deny_session, an
          actor_id, a source and a resolved_at; expired and cancelled ones have resolved_at but no
          decision, actor or reason. The store refuses other combinations. This is the row that answers
          "who approved this command?" — if its shape is wrong, so may be its answer.""",
        fix="""The store refuses such a row, so it was written or edited outside Half-Pi: compare it with
          a backup, and corroborate the decision with the security decision carrying its `approval_id`
          and, for a remote approval, its run.""",
    ),
    _r(
        "SA644",
        "approval-expiry-not-after-creation",
        E,
        CORRUPT,
        "An approval expires at or before its creation time.",
        """Spec §4.11, §10 invariant 13 (H). expires_at is created_at plus the approval TTL (120 s by
          default), so it is always later. An earlier expiry means the approval's times were edited, and
          whether a human decided in time cannot be judged from this row.""",
        fix="""Compare the approval's times with a backup. Whether a human decided before the deadline
          (120 s by default) cannot be judged from this row: corroborate with the times of its security
          decision and its run.""",
    ),
    _r(
        "SA645",
        "approval-resolved-after-expiry",
        E,
        CORRUPT,
        "A resolved approval was decided at or after its expiry time.",
        """Spec §7.3, §10 invariant 13 (P). The broker expires a request when its deadline passes and
          refuses a later decision, so a resolved row has resolved_at < expires_at. A decision recorded
          after expiry is a decision Half-Pi would not have accepted: the approval may have been
          back-dated or forged.""",
        fix="""Half-Pi would not have accepted this decision: treat the approval as not given, compare the
          row with a backup, and ask the actor it names (Face token label or REPL user) whether they
          decided.""",
    ),
    _r(
        "SA646",
        "approval-expired-early",
        W,
        None,
        "An expired approval was marked expired before its expiry time.",
        """Spec §7.3, §10 invariant 13 (S). The expiry timer fires at or after expires_at, so an expired
          row normally has resolved_at >= expires_at. An earlier time is suspicious (clock change, edited
          row) but not proof of tampering.""",
        fix="""Usually a clock step on the Mind's host: check its time synchronisation. If the clock was
          steady, compare the approval with a backup.""",
    ),
    _r(
        "SA647",
        "approval-digest-malformed",
        E,
        CORRUPT,
        "An approval's args_digest is not `sha256:` + 64 hex (local) or bare 64 hex (remote).",
        """Spec §6.2, §6.3, §10 invariants 14 and 21 (P). Approvals store a digest of the arguments,
          never the arguments: `sha256:` + 64 lowercase hex for a local tool (run_id ''), 64 lowercase
          hex without prefix for a use_hand approval. Any other value cannot be checked against the
          command the responder believes was approved, and may even be the raw parameters (the value is
          not echoed in the finding).""",
        fix="""Compare the row with a backup and find out what wrote it; the approval cannot be matched to
          any call. If the column holds the arguments themselves, treat them as exposed and rotate any
          secret in them.""",
    ),
    _r(
        "SA648",
        "run-digest-malformed",
        E,
        CORRUPT,
        "A remote run's args_digest is not bare 64 lowercase hex.",
        """Spec §4.8, §6.3, §10 invariants 14 and 21 (P). A run carries the remote approval digest, 64
          lowercase hex without the `sha256:` prefix; its task copies it. Another value cannot be matched
          to an approval, and may be raw parameters stored where only a digest belongs (not echoed).""",
        fix="""Compare the run with a backup and find out what wrote it; until then tie the run to its
          approval by `approval_audits.run_id` and confirm the command on the Hand. If the column holds
          raw arguments, treat them as exposed and rotate any secret in them.""",
    ),
    _r(
        "SA649",
        "decision-digest-malformed",
        E,
        CORRUPT,
        "A security decision's input_digest is not empty, `sha256:` + 64 hex, or bare 64 hex.",
        """Spec §4.14, §6.3, §6.4, §10 invariant 21 (P). Security decisions record what they judged as a
          digest: `sha256:` + hex of the text or arguments, or the bare remote approval digest for inner
          remote-tool rows. Any other value breaks the audit trail and may leak raw input (not
          echoed).""",
        fix="""Compare the decision, and its outbox copy which carries the same `input_digest`, with a
          backup. If the column holds raw input, treat it as exposed wherever the audit trail is exported.""",
    ),
    _r(
        "SA650",
        "display-digest-malformed",
        E,
        CORRUPT,
        "A tool display card's args_digest is not `sha256:` + 64 lowercase hex.",
        """Spec §4.12, §6.3, §10 invariant 21 (P). Face tool cards carry the agent's argument digest in
          the local form (the outer use_hand call included). Another value cannot be matched to the call
          it displays, and may be raw arguments (not echoed).""",
        fix="""Compare the card with a backup and find out what wrote it; the card cannot be matched to
          the call it shows. If the column holds raw arguments, treat them as exposed and rotate any
          secret in them.""",
    ),
    # --- cross-table digests and linkage (§6, §7.3) ---------------------------------------------------
    _r(
        "SA651",
        "approval-run-digest-differs",
        E,
        CORRUPT,
        "A remote approval's args_digest differs from its run's args_digest.",
        """Spec §6.3, §7.3, §10 invariant 15 (P). The run a use_hand approval is followed by is created
          with the very digest that was approved (and the Hand re-checks it). A different digest means
          the command sent to the Hand is not the command a human approved — or one of the rows was
          edited. Approvals written before the lifecycle columns existed (trace_id '') are skipped
          (§11).""",
        fix="""Do not take the run as the approved command: learn from the Hand which arguments it
          received (it rejects a digest that does not match them), and compare both rows with a backup to
          find out which was edited.""",
    ),
    _r(
        "SA652",
        "approval-decision-digest-differs",
        E,
        CORRUPT,
        "A security decision tied to an approval records another input digest than the approval.",
        """Spec §6.2, §6.3, §7.3, §10 invariant 15 (P). The tool decision that follows an allowed
          approval (same approval_id) and the inner remote-tool decisions of its run (same run_id and
          tool) carry the approved digest as input_digest. A mismatch means the decision trail describes
          another call than the approval: which one ran is uncertain. Pre-lifecycle approvals are
          skipped (§11).""",
        fix="""Compare the approval and its decisions with a backup. Which call ran is uncertain: pass the
          arguments you believe ran to `--claims` to see which digest they match, or check the tool's
          effect at its target.""",
    ),
    _r(
        "SA653",
        "approval-allow-without-decision",
        E,
        CORRUPT,
        "An approval resolved with allow has no tool security decision carrying its approval_id.",
        """Spec §7.3, §10 invariant 16 (P). After a human allows a call, the agent records a
          `require_approval` tool decision (user_allow_once / user_allow_session) with the approval_id.
          Its absence means the security audit never recorded acting on the approval (deleted rows, or
          a crash between the two writes). Pre-lifecycle approvals are skipped (§11).""",
        fix="""Check whether the Mind died right after the approval (the request ends unfinished, or
          `startup_recovery` events follow soon after `resolved_at`); if not, security decision rows were
          deleted, so compare with a backup. Whether the approved tool ran must then be judged from the
          messages and the tool's target.""",
    ),
    _r(
        "SA654",
        "approval-without-run",
        E,
        CORRUPT,
        "A resolved or expired remote approval has no remote run with its run_id.",
        """Spec §7.1, §7.3, §10 invariant 16 (P). Half-Pi creates the run after every resolved or expired
          use_hand approval — even a denied one, which goes created -> rejected. A missing run means the
          remote execution record was deleted (or the Mind died in between): the responder cannot see
          whether the approved command reached a Hand. Cancelled approvals (also those cancelled by
          startup recovery) legitimately have none. Pre-lifecycle approvals are skipped (§11).""",
        fix="""If the Mind died between the approval and creating the run, nothing was sent and restart
          recovery writes no run. Otherwise the run was deleted with its events: restore them from a
          backup and ask the Hand whether a command with this run id arrived.""",
    ),
    _r(
        "SA655",
        "run-created-before-approval",
        E,
        CORRUPT,
        "A remote run was created before its approval was resolved.",
        """Spec §7.1, §10 invariant 16 (P). A run is created only after its approval is resolved, so
          remote_runs.created_at >= approval.resolved_at. An earlier run means the command may have been
          sent before anyone approved it, or the times were edited. Pre-lifecycle approvals are skipped
          (§11).""",
        fix="""Check the Mind's clock, then compare the run and approval times with a backup and ask the
          Hand when the command arrived: a run created before its approval may have been sent unapproved.""",
    ),
    _r(
        "SA656",
        "approval-run-trace-differs",
        W,
        None,
        "A remote approval and its run are not in the same trace.",
        """Spec §4.8, §4.11, §10 invariant 16 (S). The run carries the frozen invocation's trace and span:
          approval.trace_id = run.trace_id and approval.parent_span_id = run.span_id. A difference weakens
          the link between approval and execution but is not proof of tampering. Rows with an empty
          trace_id are skipped (§11).""",
        fix="""Nothing to fix on its own: the link between approval and run rests on
          `approval_audits.run_id` and the matching digest (SA651). Compare the rows with a backup if
          other findings concern them.""",
    ),
    # --- security decisions and the outbox (§4.14, §4.15, §6.7) ---------------------------------------
    _r(
        "SA657",
        "decision-outbox-missing",
        E,
        CORRUPT,
        "A security decision has no outbox row with its id.",
        """Spec §4.14, §4.15, §10 invariant 17 (H). Each decision and its `security.decision` outbox row
          are inserted in one transaction, and nothing at HEAD prunes the outbox. A missing row means
          one of the two audit copies was deleted.""",
        fix="""Either the outbox row was deleted or the decision row was inserted outside Half-Pi: compare
          with a backup, and check whether other rows of the same trace were removed too.""",
    ),
    _r(
        "SA658",
        "decision-outbox-fields-differ",
        E,
        CORRUPT,
        "A security decision's outbox row differs in type, schema version, trace, span, subject or time.",
        """Spec §4.15, §6.7, §10 invariant 17 (H). The outbox row has event_type `security.decision`,
          schema_version 1, the decision's trace_id and span_id, subject_id = conversation_id and the same
          created_at. A difference means one of the two copies of the security audit was edited.""",
        fix="""Compare both rows with a backup to learn which copy was edited; until then trust neither
          value of the fields that differ.""",
    ),
    _r(
        "SA659",
        "decision-payload-differs",
        E,
        CORRUPT,
        "A security decision's outbox payload is not byte-equal to its rebuild from the decision row.",
        """Spec §6.7, §10 invariant 17 (H). payload_redacted is Go's JSON of a map built from the same
          values as the decision row (sorted keys, Go escaping, event_id = id, details and risk_labels as
          stored), written in the same transaction; sessaudit rebuilds it byte for byte. A mismatch means
          the decision (allow/deny, approval, digest, ...) and its outbox copy disagree: one was
          edited.""",
        fix="""Compare the decision row and its outbox payload with a backup: the field where they differ
          (decision, approval, digest, …) was edited in one of the two copies.""",
    ),
    _r(
        "SA660",
        "outbox-decision-missing",
        E,
        CORRUPT,
        "A `security.decision` outbox row has no security decision with its id.",
        """Spec §4.15, §10 invariant 17 (H). Outbox rows of type security.decision exist only beside their
          decision row. An orphan means the decision itself — what was allowed or denied — was
          deleted.""",
        fix="""Restore the decision row from a backup; meanwhile the outbox payload is the surviving copy
          of what was allowed or denied.""",
    ),
    _r(
        "SA661",
        "outbox-payload-invalid",
        E,
        CORRUPT,
        "An outbox payload is not a JSON object of at most 64 KiB.",
        """Spec §4.15, §10 invariant 18 (H). The store refuses a payload that is empty, larger than 64
          KiB, not valid JSON or not starting with `{`. Such a payload was not written by Half-Pi.""",
        fix="""Compare the row with a backup and find out what wrote it; the store refuses such a payload,
          so it did not come from Half-Pi.""",
    ),
    _r(
        "SA662",
        "outbox-delivered-and-dead-lettered",
        E,
        CORRUPT,
        "An outbox row is both delivered and dead-lettered.",
        """Spec §4.15, §10 invariant 18 (H). Delivery and dead-lettering each update only rows where both
          are still 0, so a row cannot have both.""",
        fix="""Find out what processed the outbox (the Mind at HEAD never dispatches it) and compare the
          row with a backup.""",
    ),
    _r(
        "SA663",
        "outbox-dispatched",
        E,
        CORRUPT,
        "An outbox row shows a dispatch (attempts, delivery, dead letter, last error, available_at).",
        """Spec §4.15, §10 invariant 18 (P). Mind at HEAD never starts the outbox dispatcher, so every row
          stays attempts = 0, delivered_at = dead_letter_at = 0, last_error '' and available_at =
          created_at. A dispatched row means another program processed (or edited) the security event
          stream.""",
        fix="""Find the program that dispatched or edited the outbox: it has read the security event
          stream and may have sent it on. If it is a dispatcher you run on purpose, nothing in the store
          is wrong.""",
    ),
    _r(
        "SA664",
        "decision-details-invalid",
        E,
        CORRUPT,
        "A security decision's details_redacted is not an object of the seven keys with scalar values.",
        """Spec §4.14, §10 invariant 19 (H). The store keeps only provider_id, model_id, profile,
          duration_ms, failure_code, execution_outcome and delivery_outcome, each a string, integer or
          boolean, and writes the result as a JSON object. Other keys or values were not written by
          Half-Pi — and may carry data the redaction was meant to keep out.""",
        fix="""Compare the decision with a backup and find out what wrote it; check the extra keys or
          values for data the redaction should have kept out, and treat such data as exposed in the store
          and its exports.""",
    ),
    _r(
        "SA665",
        "decision-risk-labels-invalid",
        E,
        CORRUPT,
        "A security decision's risk_labels is not a JSON array of at most 64 strings of 1..128 bytes.",
        """Spec §4.14, §10 invariant 19 (H). The store sanitises risk labels to at most 64 non-empty UTF-8
          strings of at most 128 bytes and writes them as a JSON array. Anything else was written
          outside Half-Pi.""",
        fix="""Compare the decision with a backup and find out what wrote the labels; the store sanitises
          them, so they were written outside Half-Pi.""",
    ),
    # --- raw arguments (§6.2, §6.3, §10 invariants 20, 21) --------------------------------------------
    _r(
        "SA666",
        "approval-args-differ-from-messages",
        E,
        CORRUPT,
        "No tool call of the approval's request hashes to the approval's args_digest.",
        """Spec §6.2, §6.3, §10 invariant 20 (P). The raw arguments of a call are kept in
          `messages.tool_calls[*].Args` of the assistant row of the same request; recomputed as Half-Pi
          does (Go JSON, float64 numbers, `confirm` handling; for use_hand the remote digest over run id,
          Hand and background fields), one of that request's calls of the approved tool must hash to the
          stored digest. When none does, the command in the conversation is not the command that was
          approved — the core question "is the command I see the one that was approved?" answers no.
          A batch is saved after its last tool, so only assistant rows saved at or after the
          approval's second are candidates; an approval with none (a crash before the batch was saved)
          is not judged.""",
        fix="""A Mind configured with lifecycle transformers (none by default) legitimately approves other
          bytes; otherwise the call in the conversation is not the one approved. Pass the arguments you
          believe were approved to `--claims` to check them, and treat the call in the conversation as
          unapproved: check its effect at its target.""",
    ),
    _r(
        "SA667",
        "raw-argument-in-audit-table",
        E,
        CORRUPT,
        "A raw tool-call argument value appears in an audit table, which should hold digests only.",
        """Spec §4.11, §10 invariant 21 (P). Approvals, runs, tasks, security decisions, the outbox and
          management audits keep digests, never raw parameters. A string value of at least 8 characters
          from a model's tool-call arguments (messages.tool_calls) found inside a text column of those
          tables is a leak — possibly of a secret — into tables exported as audit records. Values that
          the audit tables hold by design as whole names (tool, Hand label, ids, statuses) are not
          counted; a value is also looked for as Go's JSON writes it inside a JSON column. A security
          reviewer's summary that quotes the command counts too: it is a real copy in the audit trail.
          The value itself is never echoed: the finding names where it came from and where it was
          found.""",
        fix="""Find out how the value got there (the finding names the column): a free-text reason or
          reviewer summary quoting the command, or a row written outside Half-Pi. If the value is a
          secret, rotate it, and restrict the store and every audit export made from it.""",
    ),
)

RUNS_RULE_CODES: frozenset[str] = frozenset(rule.code for rule in RUNS_RULES)
