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
        fix="""Rivumi's writer never produces this line: restore `events.jsonl` from a copy. Rivumi will not
          resume the run until the line is gone, and deleting it by hand loses an event and breaks the
          sequence.""",
        example=(
            "Input `events.jsonl`, line 2:\n"
            "\n"
            "```text\n"
            '{"a":"\\xff"}\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    error   SA501 event-line-invalid [line 2, byte 340]: line 2 is not a strict JSON "
            "event: invalid UTF-8 (invalid start byte): found byte(s) FF\n"
            "```"
        ),
    ),
    _r(
        "SA502",
        "event-not-object",
        E,
        CORRUPT,
        "An events.jsonl line holds JSON that is not an object.",
        """Every event is a JSON object (spec §2.2). An array, string or number on a line is refused by
          both Rivumi readers.""",
        fix="""Restore `events.jsonl` from a copy; a non-object line was written by another tool and both
          Rivumi readers refuse the log.""",
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
        fix="""Neither Rivumi reader loads this log. Keep the original as evidence and decide what the
          fragment was (compare with `session.json` and any backup); to continue, remove the fragment
          from a copy of the run so the log ends at its last complete event, and verify the copy again
          (a manifest one ahead is then repaired by Rivumi's resume).""",
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
        fix="""Before resuming, add the missing LF to a copy of the run (`printf '\\n' >> events.jsonl`) so
          the next append does not merge two events; verify the copy again.""",
    ),
    _r(
        "SA505",
        "event-blank-line",
        W,
        None,
        "events.jsonl holds a blank line (both Rivumi readers skip it).",
        """Rivumi never writes an empty or whitespace-only line; both of its readers skip one, so the
          log still loads, but something other than the writer touched the file.""",
        fix="""The log still loads; find out which tool touched the file. Restore it from a copy if other
          edits are possible.""",
    ),
    _r(
        "SA506",
        "event-line-crlf",
        W,
        None,
        "An events.jsonl line ends in CR LF; Rivumi writes a bare LF.",
        """Lines are split on LF only; a CR before it is whitespace to Rivumi's JSON parser, so the event
          still loads, but the file was rewritten by another tool (a text editor, a CRLF checkout).""",
        fix="""Restore the original LF-only bytes (disable line-ending conversion in the tool or git checkout
          that rewrote the file); the events still load as they are.""",
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
        fix="""Remove the extra key only on a restored or copied log, or restore `events.jsonl` from a copy;
          Rivumi's resume refuses the run while the key is there.""",
    ),
    _r(
        "SA508",
        "envelope-key-missing",
        E,
        CORRUPT,
        "An event lacks event_type, run_id or sequence.",
        """These three keys have no default: without them Rivumi's resume cannot parse the event and its
          replay cannot order it.""",
        fix="""Restore the event from a copy; an event without `event_type`, `run_id` or `sequence` cannot be
          placed in the run.""",
        example=(
            "Input `events.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '{"created_at":"2026-11-29T20:28:09.549592Z","data":{"arguments":{"path":"calc'
            '.py"},"effec…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    error   SA508 envelope-key-missing [line 5, byte 1288, seq 4, /run_id]: the event "
            "has no 'run_id'; Rivumi's writer always writes it\n"
            "```"
        ),
    ),
    _r(
        "SA509",
        "envelope-key-defaulted",
        W,
        None,
        "An event lacks task_id, data, event_id or created_at.",
        """Rivumi's model gives these keys defaults, so the event loads, but its writer always writes
          them: the line was produced by something else or an older version.""",
        fix="""Check which tool or Rivumi version wrote the event; the log still loads, but the missing field
          (an id, a time) is lost for the audit trail.""",
        example=(
            "Input `events.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '{"created_at":"2026-11-29T20:28:09.549592Z","data":{"arguments":{"path":"calc'
            '.py"},"effec…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    warning SA509 envelope-key-defaulted [line 5, byte 1288, seq 4, /event_id]: the "
            "event has no 'event_id'; Rivumi's writer always writes it\n"
            "```"
        ),
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
        fix="""Restore the event from a copy; if the value is only lax (`"sequence": "3"`), rewrite it as a
          JSON integer on a copy, since Rivumi's replay refuses it.""",
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
        fix="""Events were lost, duplicated or moved: restore `events.jsonl` from a copy. Do not renumber
          sequences; the run is trustworthy only up to the last contiguous event.""",
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
        fix="""Events of another run were mixed into this log: restore `events.jsonl` from a copy and find
          the run those events belong to.""",
    ),
    _r(
        "SA513",
        "task-id-mismatch",
        E,
        CORRUPT,
        "An event's non-null task_id differs from the run's.",
        """A non-null `task_id` must equal the manifest's. Rivumi's resume refuses drift; its replay does
          not read `task_id` at all.""",
        fix="""Restore the event from a copy; an event with another task's id was copied in or edited, and
          Rivumi's resume refuses the run.""",
    ),
    _r(
        "SA514",
        "event-type-unknown",
        N,
        None,
        "An event type the native loop is not known to write.",
        """The event type is not among those of spec §2.3. Versions differ, so an unknown type is only
          noted; its data is not checked.""",
        fix="""Nothing to fix if a newer Rivumi wrote the event; otherwise check which tool added it. Its
          data was not verified.""",
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
        fix="""Check the Rivumi version that wrote the run; if it should carry the key, the event was edited
          and the log should be restored from a copy.""",
        example=(
            "Input `events.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…-11-29T20:28:09.549592Z","data":[],"event_id":"5129fb7c6288e1a5cc45782198a6416d"'
            ',"event_ty…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    warning SA515 event-data-key-missing [line 5, byte 1288, seq 4, "
            "/data/tool_call_id]: tool.requested has no data key 'tool_call_id'\n"
            "```"
        ),
    ),
    _r(
        "SA516",
        "event-data-key-unknown",
        N,
        None,
        "A known event carries a data key not in the spec.",
        """A newer version may add keys; they are noted, never an error.""",
        fix="""Nothing to fix: a newer Rivumi probably added the key. Update sessaudit if you rely on it.""",
        example=(
            "Input `events.jsonl`, line 5 (excerpt):\n"
            "\n"
            "```text\n"
            '…read","name":"read_file","surprise":1,"tool_call_id":"call_1_1"},"event_id'
            '":"5129fb7c6288e…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    note    SA516 event-data-key-unknown [line 5, byte 1288, seq 4, /data/surprise]: "
            "tool.requested carries data key 'surprise', which the spec does not list\n"
            "```"
        ),
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
        fix="""Read the events around the reported line: a run that skipped a step of the loop (e.g. a tool
          started without a request or approval) may have done something nobody approved.""",
    ),
    _r(
        "SA518",
        "created-at-noncanonical",
        N,
        None,
        "created_at is a datetime, but not Rivumi's UTC `Z` form.",
        """Rivumi writes `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`. Another offset or form parses, and resume
          accepts it, but it was not written by Rivumi's writer.""",
        fix="""Nothing to fix for Rivumi; the time is still valid. Find the tool that rewrote it, since
          Rivumi writes UTC with `Z`.""",
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
        fix="""The log is valid; to resume with Rivumi, escape the character (`\\u2028`) inside the JSON
          string on a copy of the run, which keeps the event's meaning, or continue in a fork.""",
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
        fix="""Check the usage numbers against the provider's billing; the event is left out of sessaudit's
          usage totals until the value is a valid usage object.""",
        example=(
            "Input `events.jsonl`, line 4 (excerpt):\n"
            "\n"
            "```text\n"
            '…":["read_file"],"usage":{"cached_input_tokens":2,"input_tokens":1}},"event_id'
            '":"b4e1357d4a…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    warning SA520 event-usage-invalid [line 4, byte 856, seq 3, "
            "/data/usage/cached_input_tokens]: model.completed usage cached_input_tokens 2 exceeds "
            "input_tokens 1; not counted\n"
            "```"
        ),
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
        fix="""Check which tool wrote the value; the event is not what Rivumi's loop writes, and decisions
          based on it (an approval, a count) may be misread.""",
        example=(
            "Input `events.jsonl`, line 6 (excerpt):\n"
            "\n"
            "```text\n"
            '…"path\\": \\"calc.py\\"\\n}","reason":"whim","request_id":"adc0da7a16febaa0'
            '11af923d79fdef7c"},…\n'
            "```\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  events.jsonl\n"
            "    warning SA521 event-data-value-invalid [line 6, byte 1592, seq 5, /data/reason]: "
            "approval.requested data.reason is 'whim', not one of final_verification, model_tool\n"
            "```"
        ),
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
        fix="""Restore `session.json` from a copy of the run; without it Rivumi cannot resume. The event log
          is still verified, so its findings show how far the run got.""",
    ),
    _r(
        "SA531",
        "manifest-not-json",
        E,
        CORRUPT,
        "session.json is not a strict UTF-8 JSON object.",
        """The manifest is replaced atomically, so a torn or non-JSON manifest was not produced by a
          crash of Rivumi's writer.""",
        fix="""Restore `session.json` from a copy; Rivumi replaces it atomically, so a broken manifest means
          something else wrote it.""",
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
        fix="""Restore `session.json` from a copy; the message names the failing field. Rivumi refuses the
          run until the manifest matches the v1 schema.""",
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
        fix="""Restore `session.json` from a copy; the message names the rule. Editing the phase or
          `terminal` by hand changes what Rivumi would do next.""",
        example=(
            'A completed run whose `session.json` was edited to `"terminal": false`:\n'
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  runs/e3e70682c2094cac629f6fbed82c07cd/session.json\n"
            "    error   SA533 manifest-cross-field [/terminal]: terminal is false but phase is "
            "'completed'\n"
            "```"
        ),
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
        fix="""Known Rivumi defect, not damage: to resume the fork, remove `usage.total_tokens` from its
          `session.json` (on a copy) or continue from the source run instead.""",
    ),
    _r(
        "SA535",
        "artifact-too-large",
        W,
        None,
        "A run file is over Rivumi's 16 MiB resume limit.",
        """Rivumi's resume refuses session.json, request.json or events.jsonl above 16 MiB; sessaudit
          verifies them anyway.""",
        fix="""Rivumi will not resume this run as it is; if it is open, continue in a fork from `sessaudit
          seed`. sessaudit's own verification of the file is complete.""",
        example=(
            "A run whose `request.json` was padded to 16,777,668 bytes:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  runs/e3e70682c2094cac629f6fbed82c07cd/request.json\n"
            "    warning SA535 artifact-too-large: runs/e3e70682c2094cac629f6fbed82c07cd/request.json"
            " is 16777668 bytes; Rivumi's resume refuses files over 16 MiB\n"
            "```"
        ),
    ),
    _r(
        "SA536",
        "request-invalid",
        E,
        CORRUPT,
        "request.json is missing or not a valid TaskContract.",
        """Resume needs the task contract ("request.json is not a valid task contract"); it is checked
          against `schemas/rivumi-request.v1.schema.json`.""",
        fix="""Restore `request.json` from a copy of the run or from the task that started it; Rivumi needs
          the task contract to resume.""",
    ),
    _r(
        "SA537",
        "request-mismatch",
        E,
        CORRUPT,
        "request.json's task_id or base_sha differs from the manifest.",
        """Rivumi refuses a run whose contract belongs to another task or base commit ("request task_id
          does not match session", "request base_sha does not match session").""",
        fix="""The request belongs to another task or base commit: restore the right `request.json` (or
          `session.json`) from a copy of this run.""",
        example=(
            'A run whose `request.json` names another task (`"task_id": "task-other"`):\n'
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  runs/e3e70682c2094cac629f6fbed82c07cd/request.json\n"
            "    error   SA537 request-mismatch [/task_id]: task_id 'task-other' is not the "
            "manifest's 'task-fix-add'\n"
            "```"
        ),
    ),
    _r(
        "SA538",
        "lock-malformed",
        W,
        None,
        ".writer.lock is not `pid=<n> token=<32 hex>` + LF.",
        """The lock file names the last writer's pid and lease token (spec §6). Its content is advisory;
          the kernel lock is what counts.""",
        fix="""Nothing needs fixing for the evidence (the kernel lock is what counts); Rivumi rewrites the
          file on its next claim. Find the tool that wrote it if it was not Rivumi.""",
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
        fix="""Make sure no second writer is working on the run (see SA559) and that `session.json` and the
          lock come from the same moment; copy a run only while no writer is active.""",
    ),
    _r(
        "SA540",
        "lock-missing",
        N,
        None,
        "A run with a writer token has no .writer.lock.",
        """The manifest names a writer token but the lock file is gone (copied evidence often lacks it).
          Rivumi recreates it on the next claim.""",
        fix="""Nothing to fix: Rivumi recreates the lock when it claims the run. Copy `.writer.lock` too next
          time if you need it as evidence.""",
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
        fix="""Trust the log's `model.completed` events for usage; check the provider's billing if the
          difference matters, and find out whether events were lost or the manifest edited.""",
    ),
    _r(
        "SA542",
        "temp-file-left",
        N,
        None,
        "A temp file of an atomic write survived (a killed writer).",
        """Atomic replacement writes `.session.json.<random>` and renames it; a writer killed in between
          leaves the temp file. It is ignored, as Rivumi ignores it.""",
        fix="""Nothing to fix: the temp file is ignored. You may delete it once you no longer need it as
          evidence.""",
    ),
    _r(
        "SA543",
        "run-file-unreadable",
        E,
        UNREADABLE,
        "A run file is not a regular file or unreadable.",
        """A run file exists but is a symlink, a directory, a FIFO or cannot be read: sessaudit never
          follows links inside evidence and cannot verify what it cannot read.""",
        fix="""Make the run file a regular readable file (replace the symlink with the file it points to, fix
          permissions) in a copy and verify again; sessaudit never follows links inside evidence.""",
        example=(
            "A run whose `request.json` is a directory:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  runs/e3e70682c2094cac629f6fbed82c07cd/request.json\n"
            "    error   SA543 run-file-unreadable: runs/e3e70682c2094cac629f6fbed82c07cd/request.jso"
            "n is not a regular file\n"
            "```"
        ),
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
        fix="""Usually nothing: `rivumi resume` sets `last_event_sequence` back to the log's last event. If
          the run is open, also check the recovery condition before resuming.""",
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
        fix="""Do not let Rivumi resume blindly: check by hand whether the started tool or verification ran
          and what it did, then continue in a fork (`sessaudit seed`) whose context states the outcome.""",
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
        fix="""The manifest and log come from different moments or events were lost: restore both from the
          same copy; Rivumi refuses the run until they agree.""",
    ),
    _r(
        "SA553",
        "events-missing",
        E,
        CORRUPT,
        "events.jsonl is missing although the manifest records committed events.",
        """The manifest records events up to some sequence but the log is gone; Rivumi refuses
          ("events.jsonl is missing").""",
        fix="""Restore `events.jsonl` from a copy of the run; without it the manifest's events cannot be
          verified and Rivumi refuses to resume.""",
    ),
    _r(
        "SA554",
        "stopped-during-side-effect",
        W,
        NEEDS_RECOVERY,
        "The log ends in tool.started or verification.started; Rivumi refuses to resume.",
        """Manifest and log agree and the last event starts a side effect: Rivumi cannot prove whether
          it completed and refuses to resume. The run needs a person (or a fork seed).""",
        fix="""Check by hand whether the tool or verification finished and what it changed, then continue in
          a fork (`sessaudit seed` / `rivumi sessions --fork-from-event`) rather than editing the log.""",
    ),
    _r(
        "SA555",
        "events-not-yet-written",
        N,
        None,
        "events.jsonl is absent and the manifest records no event (Rivumi accepts this).",
        """A run killed before its first event: the manifest says `last_event_sequence` −1 and there is
          no log. Rivumi resumes it from the start.""",
        fix="""Nothing to fix: `rivumi resume` starts the run from the beginning.""",
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
        fix="""Check the last event and the manifest phase; `step-pending` is an assumption, so read
          `runs[].recovery` before resuming.""",
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
        fix="""Restore the run from a copy in which manifest and log agree; until then treat the run as ended
          the way the log says, and check why the manifest differs.""",
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
        fix="""Nothing to fix in the records if the other findings are clean; know that `rivumi resume` and
          `rivumi sessions --replay-json` will answer differently (see `native.resume`,
          `native.replay`).""",
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
        fix="""Wait until the writer finishes (or stop it) and audit again; for a stable result audit a copy
          taken while no writer holds the lock.""",
        example=(
            "A run directory while another process holds `flock(LOCK_EX)` on its `.writer.lock`:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  runs/e3e70682c2094cac629f6fbed82c07cd/.writer.lock\n"
            "    warning SA559 writer-active: a process holds the exclusive lock on .writer.lock: "
            "the run is being written right now; the files may change during or after this audit\n"
            "```"
        ),
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
        fix="""Nothing to fix in the records: restore or recreate `<run>/workspace` (a git worktree at the
          recorded `base_sha`) where you want to resume.""",
    ),
)

# this format's passages in the core rules' texts, by place (sessaudit.rules.PLACES)
CORE_RULE_PHRASES: dict[str, str] = {
    "findings-sources": "a Rivumi event log",
    "held-whole": (
        "A Rivumi run's `events.jsonl`, `session.json`, `request.json` or `.writer.lock` is "
        "read whole into memory (its replay and resume checks need all of it)"
    ),
    "held-whole-example": (
        "`sessaudit verify --max-file-bytes 1000 runs/6b9b…`, a Rivumi run whose "
        "`events.jsonl` has 5,026 bytes (exit 3):\n"
        "\n"
        "Finding (console report):\n"
        "\n"
        "```text\n"
        "  runs/6b9b…/events.jsonl\n"
        "    error   SA012 file-too-large: runs/6b9b…/events.jsonl is 5026 bytes, over the "
        "--max-file-bytes limit of 1000 bytes for a file read whole; the run was not verified\n"
        "```"
    ),
    "held-whole-fix": (
        "Rivumi itself cannot resume a run whose files pass 16 MiB; only its replay reads them."
    ),
    "held-whole-limits": "; Rivumi itself refuses to resume past 16 MiB",
    "held-whole-memory": "6 times a Rivumi event log's",
    "input-kinds": "Rivumi run directory",
    "inputs": "a Rivumi run directory",
    "inputs-named": "a Rivumi run directory (or a folder of runs)",
    "jsonl-lines": "a Rivumi event",
    "nesting-notes": "In Rivumi logs this is also where Rivumi's own replay crashes (near 980 levels).",
    "open-run-notes": "Rivumi: the run's last event is not terminal.",
    "own-recovery": "`rivumi resume`",
    "safe-replay-fix": (
        "Rivumi refuses to resume a log ending in `tool.started` (SA554): repeat the read in a "
        "fork (`sessaudit seed`)."
    ),
    "safe-replay-notes": "Rivumi: the log ends in `tool.started` of a `read` effect.",
    "unknown-outcome-notes": (
        "Rivumi: the log ends in `tool.started` (not a read) or `verification.started`."
    ),
    "unsupported": (
        "a Rivumi `session.json` with `schema_version` above 1, whose event log is still verified"
    ),
}
