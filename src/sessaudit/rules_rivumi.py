"""The Rivumi rules (SA5xx) of the catalogue: run directories, spec `formats/rivumi.md`."""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, NEEDS_RECOVERY, REPAIRABLE, UNREADABLE, E, N, Rule, W, _rule

_r = partial(_rule, formats=("rivumi",))

RIVUMI_RULES: tuple[Rule, ...] = (
    # --- events.jsonl: framing and JSON ---------------------------------------------------------
    _r(
        "SA501",
        "event-line-invalid",
        E,
        CORRUPT,
        "An events.jsonl line is not strict UTF-8 JSON.",
        """A complete (LF-terminated) line of the event log does not decode as UTF-8 or is not strict
          JSON (duplicate keys, NaN, a lone surrogate, trailing garbage). Rivumi's writer appends one
          `json.dumps` object per line, so such a line was never written by it; Rivumi's resume
          refuses the log ("events.jsonl contains an invalid event").""",
    ),
    _r(
        "SA502",
        "event-not-object",
        E,
        CORRUPT,
        "An events.jsonl line holds JSON that is not an object.",
        """Every event is a JSON object (spec §2.2). An array, string or number on a line is refused by
          both Rivumi readers.""",
    ),
    _r(
        "SA503",
        "event-torn-tail",
        E,
        CORRUPT,
        "events.jsonl ends in an unterminated, unparseable line.",
        """The writer died in the middle of an append. Unlike tiny-agent, Rivumi never repairs a torn
          line: its resume refuses the log and its replay reports a partial final line. The run is
          corrupt until a person decides what to do with the fragment (sessaudit never truncates
          evidence).""",
    ),
    _r(
        "SA504",
        "event-final-newline-missing",
        W,
        None,
        "The last event is complete but lacks its LF.",
        """The last line parses as a whole event but has no trailing LF. Rivumi's resume accepts it, its
          replay refuses it ("event JSONL has a partial final line"), and the next append would glue
          two events into one invalid line (spec §4.1).""",
    ),
    _r(
        "SA505",
        "event-blank-line",
        W,
        None,
        "events.jsonl holds a blank line (both Rivumi readers skip it).",
        """Rivumi never writes an empty or whitespace-only line; both of its readers skip one, so the
          log still loads, but something other than the writer touched the file.""",
    ),
    _r(
        "SA506",
        "event-line-crlf",
        W,
        None,
        "An events.jsonl line ends in CR LF; Rivumi writes a bare LF.",
        """Lines are split on LF only; a CR before it is whitespace to Rivumi's JSON parser, so the event
          still loads, but the file was rewritten by another tool (a text editor, a CRLF checkout).""",
    ),
    # --- the envelope ------------------------------------------------------------------------------
    _r(
        "SA507",
        "envelope-key-unknown",
        E,
        CORRUPT,
        "An event has a top-level key outside the envelope.",
        """The envelope is exactly `event_id`, `run_id`, `task_id`, `sequence`, `event_type`,
          `created_at`, `data` (spec §2.2). Rivumi's resume parses events strictly and rejects an extra
          key; its replay ignores it (a divergence the report names).""",
    ),
    _r(
        "SA508",
        "envelope-key-missing",
        E,
        CORRUPT,
        "An event lacks event_type, run_id or sequence.",
        """These three keys have no default: without them Rivumi's resume cannot parse the event and its
          replay cannot order it.""",
    ),
    _r(
        "SA509",
        "envelope-key-defaulted",
        W,
        None,
        "An event lacks task_id, data, event_id or created_at.",
        """Rivumi's model gives these keys defaults, so the event loads, but its writer always writes
          them: the line was produced by something else or an older version.""",
    ),
    _r(
        "SA510",
        "envelope-type-invalid",
        E,
        CORRUPT,
        "An envelope field has the wrong JSON type or value.",
        """`sequence` must be a non-negative JSON integer, `event_type` and `run_id` non-empty strings,
          `task_id` a string or null, `data` an object, `created_at` a datetime string. Rivumi's resume
          coerces some of these laxly (`"sequence": "3"`); its replay does not (spec §4.1).""",
    ),
    _r(
        "SA511",
        "sequence-not-contiguous",
        E,
        CORRUPT,
        "Sequences are not 0, 1, 2, … in file order.",
        """The i-th event in file order must carry sequence i: a gap, a duplicate, a log starting above
          0 or lines out of order all fail Rivumi's resume ("event sequence is not contiguous"). Its
          replay sorts by sequence and accepts out-of-order lines.""",
    ),
    _r(
        "SA512",
        "run-id-mismatch",
        E,
        CORRUPT,
        "An event's run_id differs from the run's.",
        """Every event of a run carries the manifest's `run_id` (or the first event's, without a
          manifest). Rivumi refuses a log with another run's events ("event run_id does not match
          session").""",
    ),
    _r(
        "SA513",
        "task-id-mismatch",
        E,
        CORRUPT,
        "An event's non-null task_id differs from the run's.",
        """A non-null `task_id` must equal the manifest's. Rivumi's resume refuses drift; its replay does
          not read `task_id` at all.""",
    ),
    _r(
        "SA514",
        "event-type-unknown",
        N,
        None,
        "An event type the native loop is not known to write.",
        """The event type is not among those of spec §2.3. Versions differ, so an unknown type is only
          noted; its data is not checked.""",
    ),
    _r(
        "SA515",
        "event-data-key-missing",
        W,
        None,
        "A known event lacks a data key its type carries.",
        """Spec §2.3 lists the data keys each event type carries. A missing key may be a version
          difference, so it is a warning; what depends on the key (usage, open state) is judged
          without it.""",
    ),
    _r(
        "SA516",
        "event-data-key-unknown",
        N,
        None,
        "A known event carries a data key not in the spec.",
        """A newer version may add keys; they are noted, never an error.""",
    ),
    _r(
        "SA517",
        "event-order-unexpected",
        W,
        None,
        "Events are not in the order Rivumi's loop writes.",
        """The loop of spec §2.4 writes `model.requested` before `model.completed`, a tool's
          `tool.requested` and (when needed) an approval before `tool.started`, `tool.started` before
          `tool.completed`, and nothing after a terminal event. An event out of that order is a
          warning: the log is still well-formed, but the run did not follow the loop.""",
    ),
    _r(
        "SA518",
        "created-at-noncanonical",
        N,
        None,
        "created_at is a datetime, but not Rivumi's UTC `Z` form.",
        """Rivumi writes `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`. Another offset or form parses, and resume
          accepts it, but it was not written by Rivumi's writer.""",
    ),
    _r(
        "SA519",
        "event-resume-line-split",
        W,
        None,
        "A raw U+0085/U+2028/U+2029 makes Rivumi's resume reject the log.",
        """JSON allows these characters raw, and Rivumi writes them raw, but its resume reader splits
          lines with Python's `splitlines`, which breaks at them: a valid log is refused ("invalid
          event") while the replay reader accepts it (spec §4.1).""",
    ),
    _r(
        "SA520",
        "event-usage-invalid",
        W,
        None,
        "A usage object in an event is malformed.",
        """A `model.completed` or `role_lane.completed` usage value is not an object, holds counts that
          are not non-negative integers, or claims more cached input than input. The event is not
          counted in the usage ledger.""",
    ),
    _r(
        "SA521",
        "event-data-value-invalid",
        W,
        None,
        "A data value has a type or value the loop never writes.",
        """A data key of a known event holds a value of a type or range the native loop never writes
          (a flag that is not a boolean, a negative count, a value outside its enumeration such as an
          unknown approval decision).""",
    ),
    # --- session.json, request.json, .writer.lock ---------------------------------------------------
    _r(
        "SA530",
        "manifest-missing",
        E,
        CORRUPT,
        "The run directory has no session.json.",
        """Without its manifest a run cannot be resumed ("missing session artifact: session.json"). The
          event log is still verified as far as it goes.""",
    ),
    _r(
        "SA531",
        "manifest-not-json",
        E,
        CORRUPT,
        "session.json is not a strict UTF-8 JSON object.",
        """The manifest is replaced atomically, so a torn or non-JSON manifest was not produced by a
          crash of Rivumi's writer.""",
    ),
    _r(
        "SA532",
        "manifest-schema",
        E,
        CORRUPT,
        "session.json violates the SessionManifest v1 schema.",
        """The manifest fails `schemas/rivumi-session.v1.schema.json` (strict: unknown keys rejected, as
          Rivumi's reader does). Rivumi refuses it ("session.json does not match the supported
          schema"). Rivumi coerces some types laxly (`"step": "3"`); sessaudit reports them.""",
    ),
    _r(
        "SA533",
        "manifest-cross-field",
        E,
        CORRUPT,
        "session.json breaks a cross-field rule of §3.2.",
        """`terminal` is true exactly when the phase is completed, failed or cancelled; phase
          `waiting_approval` needs a `pending_action`; `pending_action.run_id` equals `run_id`; the
          directory is named after the run.""",
    ),
    _r(
        "SA534",
        "manifest-fork-total-tokens",
        E,
        CORRUPT,
        "session.json stores usage.total_tokens, as Rivumi's fork command writes it; Rivumi rejects it.",
        """Rivumi's own fork command serialises the computed `total_tokens` into the new run's
          manifest, and Rivumi's own reader then rejects the key: the fork run cannot be resumed. The
          finding says who wrote it.""",
    ),
    _r(
        "SA535",
        "artifact-too-large",
        W,
        None,
        "A run file is over Rivumi's 16 MiB resume limit.",
        """Rivumi's resume refuses session.json, request.json or events.jsonl above 16 MiB; sessaudit
          verifies them anyway.""",
    ),
    _r(
        "SA536",
        "request-invalid",
        E,
        CORRUPT,
        "request.json is missing or not a valid TaskContract.",
        """Resume needs the task contract ("request.json is not a valid task contract"); it is checked
          against `schemas/rivumi-request.v1.schema.json`.""",
    ),
    _r(
        "SA537",
        "request-mismatch",
        E,
        CORRUPT,
        "request.json's task_id or base_sha differs from the manifest.",
        """Rivumi refuses a run whose contract belongs to another task or base commit ("request task_id
          does not match session", "request base_sha does not match session").""",
    ),
    _r(
        "SA538",
        "lock-malformed",
        W,
        None,
        ".writer.lock is not `pid=<n> token=<32 hex>` + LF.",
        """The lock file names the last writer's pid and lease token (spec §6). Its content is advisory;
          the kernel lock is what counts.""",
    ),
    _r(
        "SA539",
        "lock-token-mismatch",
        W,
        None,
        ".writer.lock's token is not the manifest's writer token.",
        """The lease token in the lock file should equal the manifest's `active_writer_token`: a
          different token means another writer claimed the run after the manifest was last saved, or
          the files come from different moments.""",
    ),
    _r(
        "SA540",
        "lock-missing",
        N,
        None,
        "A run with a writer token has no .writer.lock.",
        """The manifest names a writer token but the lock file is gone (copied evidence often lacks it).
          Rivumi recreates it on the next claim.""",
    ),
    _r(
        "SA541",
        "manifest-usage-mismatch",
        W,
        None,
        "The manifest's primary-lane model_usage disagrees with the log.",
        """The usage ledger comes from the log's `model.completed` events; the manifest's running
          `model_usage` totals are a cross-check only (skipped when the manifest is ahead of the log).
          A difference means one of them lost or gained a model call.""",
    ),
    _r(
        "SA542",
        "temp-file-left",
        N,
        None,
        "A temp file of an atomic write survived (a killed writer).",
        """Atomic replacement writes `.session.json.<random>` and renames it; a writer killed in between
          leaves the temp file. It is ignored, as Rivumi ignores it.""",
    ),
    _r(
        "SA543",
        "run-file-unreadable",
        E,
        UNREADABLE,
        "A run file is not a regular file or unreadable.",
        """A run file exists but is a symlink, a directory, a FIFO or cannot be read: sessaudit never
          follows links inside evidence and cannot verify what it cannot read.""",
    ),
    # --- reconciliation and open state (spec §4) -----------------------------------------------------
    _r(
        "SA550",
        "manifest-ahead-repaired",
        W,
        REPAIRABLE,
        "session.json is one event ahead of events.jsonl; Rivumi's resume sets it back to the log.",
        """The writer saves the manifest for event N and then appends event N; a crash in between
          leaves the manifest one ahead. Rivumi's resume repairs this by setting `last_event_sequence`
          back (nothing else of the ahead snapshot changes). The verdict is `repairable` for a terminal
          run; an open run is `needs-recovery` and the repair is still reported.""",
    ),
    _r(
        "SA551",
        "manifest-ahead-over-side-effect",
        W,
        NEEDS_RECOVERY,
        "The manifest is one ahead over a last side-effect start; Rivumi resumes without its outcome.",
        """The log ends in `tool.started` (not a read) or `verification.started` and the manifest is one
          ahead: the effect ran, or was running, and its completion event was lost. Rivumi repairs and
          resumes anyway, skipping its side-effect guard, and the model never sees the outcome
          (spec §4.1). The condition is `effect-unknown`.""",
    ),
    _r(
        "SA552",
        "manifest-sequence-mismatch",
        E,
        CORRUPT,
        "session.json's last_event_sequence is behind the log or two or more ahead of it.",
        """Only equal or exactly one ahead can come from Rivumi's write protocol. Anything else means
          lost or foreign events; Rivumi refuses ("manifest event sequence does not match
          events.jsonl").""",
    ),
    _r(
        "SA553",
        "events-missing",
        E,
        CORRUPT,
        "events.jsonl is missing although the manifest records committed events.",
        """The manifest records events up to some sequence but the log is gone; Rivumi refuses
          ("events.jsonl is missing").""",
    ),
    _r(
        "SA554",
        "stopped-during-side-effect",
        W,
        NEEDS_RECOVERY,
        "The log ends in tool.started or verification.started; Rivumi refuses to resume.",
        """Manifest and log agree and the last event starts a side effect: Rivumi cannot prove whether
          it completed and refuses to resume. The run needs a person (or a fork seed).""",
    ),
    _r(
        "SA555",
        "events-not-yet-written",
        N,
        None,
        "events.jsonl is absent and the manifest records no event (Rivumi accepts this).",
        """A run killed before its first event: the manifest says `last_event_sequence` −1 and there is
          no log. Rivumi resumes it from the start.""",
    ),
    _r(
        "SA556",
        "last-event-unrecognised",
        N,
        None,
        "A non-terminal run ends in an event the open-state table does not name; step-pending assumed.",
        """CONTRACT §4.1 assigns the open condition from the last event; an event it does not name (or an
          approval state that contradicts the manifest phase) gets `step-pending`, and this note says
          so.""",
    ),
    _r(
        "SA557",
        "terminal-state-disagreement",
        W,
        None,
        "The log's terminal event and the manifest's phase disagree.",
        """The manifest is saved before each event with that event's outcome, so when the two agree on
          the last sequence they must agree on the end: a `run.completed` log with a manifest phase
          that is not `completed` (or a terminal manifest over a log without its terminal event) was
          not produced by Rivumi's write protocol. The run state follows the log's terminal event.""",
    ),
    _r(
        "SA558",
        "native-readers-disagree",
        W,
        None,
        "Rivumi's resume and replay readers judge this event log differently.",
        """Rivumi reads a run's log with two different readers (spec §4, §5): resume validation and
          `rivumi sessions --replay-json`. They disagree about raw line separators, a missing final
          newline, out-of-order lines, NUL, oversize lines, extra keys and string-typed numbers
          (spec §4.1). `native.resume` and `native.replay` show both answers; this warning names the
          divergence.""",
    ),
    _r(
        "SA559",
        "writer-active",
        W,
        None,
        "A Rivumi writer holds the run's lock: the run is being written right now.",
        """Some process holds an exclusive `flock` on `.writer.lock` (seen in `/proc/locks`; sessaudit
          never takes a lock itself). The files may change during or after the audit, an open run may
          simply be running, and Rivumi's resume would refuse ("session already has an active
          writer").""",
    ),
    _r(
        "SA560",
        "workspace-not-resumable",
        N,
        None,
        "Rivumi would refuse to resume because of the run's workspace, not its records.",
        """Resume also checks `<run>/workspace` (a real directory, a Git worktree whose HEAD is the
          recorded `base_sha`). Copied evidence usually lacks the workspace; the refusal is shown in
          `native.resume` and noted here, and does not change the verdict of the records.""",
    ),
)
