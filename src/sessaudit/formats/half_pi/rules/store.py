"""Half-Pi rules about the store as a whole (SA680–SA699): opening it safely, its files, its schema
generation, restart recovery already applied, unfinished requests, and `--claims`."""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, UNREADABLE, E, N, Rule, W, _rule

_r = partial(_rule, formats=("half-pi",))

# The claims file of the SA693-SA695 examples (one claim matches, one does not, one is unknown).
_CLAIMS_INTRO = "`sessaudit verify half-pi.db --claims claims.json` with this `claims.json`"
_CLAIMS_FILE = (
    "```json\n"
    "{\n"
    '  "claims": [\n'
    "    {\n"
    '      "approval_id": "3b05e392a6ea1c0d",\n'
    '      "tool": "bash",\n'
    '      "args": {\n'
    '        "command": "rm -rf build"\n'
    "      }\n"
    "    },\n"
    "    {\n"
    '      "approval_id": "3b05e392a6ea1c0d",\n'
    '      "tool": "bash",\n'
    '      "args": {\n'
    '        "command": "rm -rf /"\n'
    "      }\n"
    "    },\n"
    "    {\n"
    '      "approval_id": "0123456789abcdef",\n'
    '      "tool": "bash",\n'
    '      "args": {}\n'
    "    }\n"
    "  ]\n"
    "}\n"
    "```\n"
)

STORE_RULES: tuple[Rule, ...] = (
    _r(
        "SA680",
        "store-live",
        E,
        UNREADABLE,
        "The store changed while it was copied, every time: it is being written.",
        """sessaudit never opens evidence with SQLite (that would checkpoint the WAL and rewrite
          `-shm`); it copies the database with its `-wal` and `-shm` into a private folder and checks
          that the originals did not change meanwhile. They changed on every attempt, so no consistent
          copy exists: a Mind is writing the store now. Stop it, or copy the files yourself, then verify
          the copy.""",
        fix="""Take a consistent copy at one moment — a filesystem or volume snapshot of the database with
          its `-wal` and `-shm` — and verify that; or stop the Mind and verify again, knowing that a
          graceful stop itself marks runs already sent `lost` (`service_shutdown`) and cancels pending
          approvals. Never open the original with the sqlite3 shell: closing it checkpoints the WAL into
          the database.""",
        example=(
            "A Half-Pi store whose `-wal` grew during each of sessaudit's three copy attempts (a"
            " running writer):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  home/db/half-pi.db\n"
            "    error   SA680 store-live: home/db/half-pi.db: store is being written: its files"
            " changed during each of 3 copies\n"
            "```"
        ),
    ),
    _r(
        "SA681",
        "store-unreadable",
        E,
        UNREADABLE,
        "The store or one of its companions is missing, not a regular file, empty or unreadable.",
        """The database file is absent, empty or unreadable, a `-wal`/`-shm` lies there without its
          database, or one of the files is a symlink, FIFO or device (never opened, spec §1: they must be
          regular files).""",
        fix="""Name the database file itself (`<home>/db/half-pi.db`) with its `-wal` and `-shm` beside
          it: a `-wal` or `-shm` cannot be read without its database. Replace a symlink by a copy of the
          real file (`cp -L`), give the reading user access, and for a missing or empty database find the
          real file or restore it from a backup; the finding names the file and what is wrong with it.""",
        example=(
            "A Half-Pi store whose `half-pi.db-wal` is a directory (exit 3):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  home/db/half-pi.db\n"
            "    error   SA681 store-unreadable: home/db/half-pi.db: half-pi.db-wal is not a regular"
            " file\n"
            "```"
        ),
    ),
    _r(
        "SA682",
        "store-damaged",
        E,
        CORRUPT,
        "SQLite cannot read the store: it is truncated or not a valid database.",
        """The database is shorter than its header says, or SQLite cannot read its schema from the
          private copy. Nothing in it can be trusted; the finding says what SQLite answered.""",
        fix="""Keep the original untouched and copy it again from where it came, comparing sha256: a cut
          or partial copy is the usual cause. If the original itself is damaged, restore the store from a
          backup; rows salvaged from it (e.g. SQLite's `.recover` on a separate copy) cannot be verified
          and are not the record.""",
        example=(
            "A Half-Pi store cut to its first 3,000 bytes (exit 1):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  home/db/half-pi.db\n"
            "    error   SA682 store-damaged: 3000 bytes is not a whole number of 4096-byte pages\n"
            "```"
        ),
    ),
    _r(
        "SA683",
        "wal-ignored",
        W,
        None,
        "A -wal exists but SQLite ignores it (invalid header): its transactions are not in the store.",
        """A non-empty `-wal` whose header or checksums are invalid is skipped by SQLite's recovery, so
          whatever it held is lost to every reader. Keep the file: it is evidence of writes that never
          became durable.""",
        fix="""Preserve the `-wal` byte for byte before anything opens the store: Half-Pi's next start (or
          any SQLite writer) treats the invalid WAL as empty and can overwrite or delete it. Its
          transactions are lost to Half-Pi; if they matter, read its frames by hand, and find out what
          damaged the file (a partial copy, a disk fault, an edit).""",
        example=(
            "A checkpointed Half-Pi store beside a `half-pi.db-wal` that holds 64 bytes of text"
            " instead of a WAL header:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  home/db/half-pi.db-wal\n"
            "    warning SA683 wal-ignored: the -wal header is invalid\n"
            "```"
        ),
    ),
    _r(
        "SA684",
        "rollback-journal-present",
        W,
        None,
        "A -journal lies beside the store; SQLite would roll it back on open.",
        """Half-Pi runs in WAL mode, so a rollback journal was written by another tool. It was copied with
          the store (so the copy is what SQLite would see), and its presence is reported.""",
        fix="""Find out which program wrote the `-journal` (Half-Pi runs in WAL mode and never does), and
          keep the journal with the store as evidence. The copy was verified with the journal beside it,
          as SQLite opens it, so changes that program left uncommitted are not part of it.""",
        example=(
            "A Half-Pi store with a 512-byte `half-pi.db-journal` beside it:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  home/db/half-pi.db-journal\n"
            "    warning SA684 rollback-journal-present: a rollback journal lies beside a WAL store;"
            " it was copied with the store\n"
            "```"
        ),
    ),
    _r(
        "SA685",
        "not-wal-mode",
        W,
        None,
        "The database header is not in WAL mode, which every Half-Pi open sets.",
        """Header bytes 18/19 are not 2: something other than Half-Pi last changed the journal mode
          (spec §1), typically a copy through the sqlite3 shell.""",
        fix="""Find out what processed the file outside Half-Pi (often a copy through the sqlite3 shell,
          or a `PRAGMA journal_mode` change) and verify an original copy of the database with its `-wal`
          and `-shm` if one exists. Half-Pi sets WAL mode again at its next open, so the store itself
          needs no repair.""",
        example=(
            "A Half-Pi store switched to `PRAGMA journal_mode=DELETE`:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  home/db/half-pi.db\n"
            "    warning SA685 not-wal-mode: header bytes 18/19 are 1/1, not 2/2 (WAL)\n"
            "```"
        ),
    ),
    _r(
        "SA686",
        "permissions-wide",
        W,
        None,
        "A store's files are readable by others than their owner.",
        """Half-Pi forces the db, `-wal` and `-shm` to 0600 (spec §1): the store holds plaintext
          credentials. Wider permissions on evidence are worth a look; they are only a warning. One
          finding per store, at the database, names every file of the store with its mode.""",
        fix="""On an evidence copy, restrict access (`chmod 600` the files, `chmod 700` their folder): the
          store holds plaintext Hand and Face secrets. Half-Pi forces these modes itself (spec §1), so wider
          ones on a live store mean someone or something changed them; if other users could read it, rotate
          its Hand credentials and Face tokens.""",
    ),
    _r(
        "SA687",
        "mind-running",
        W,
        None,
        "run/mind.lock is held: a Half-Pi Mind is running on this store.",
        """Some process holds the flock of `<home>/run/mind.lock` (seen in `/proc/locks`; sessaudit never
          locks it). Open work may simply be in progress, and the next start will apply restart
          recovery.""",
        fix="""Findings about open runs, pending approvals or an unanswered last request may just be work
          in progress. For a settled view stop the Mind and verify again (a graceful stop marks runs
          already sent `lost` with `service_shutdown` and cancels pending approvals); to keep the
          in-flight state as evidence, first take a filesystem snapshot of the database, `-wal` and
          `-shm`.""",
        example=(
            "A Half-Pi store (`home/db/half-pi.db`) while another process holds `flock(LOCK_EX)` on"
            " `home/run/mind.lock`; the lock's absolute path is shown with its temporary directory as"
            " `$TMP`:\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  $TMP/home/run/mind.lock\n"
            "    warning SA687 mind-running: run/mind.lock is locked: a Mind process is running on"
            " this store\n"
            "```"
        ),
    ),
    _r(
        "SA688",
        "schema-generation-odd",
        N,
        None,
        "The tables and columns fit no single schema generation exactly.",
        """Half-Pi has no schema version; the generation is inferred from the tables and columns present
          (spec §3). A partial feature, an unknown table or column, or a missing expected index is noted:
          checks whose features are absent are skipped.""",
        fix="""Usually nothing to fix: the store predates some features, whose checks were skipped, so the
          report says less about it. An unknown table or column points to a modified Half-Pi build or an
          edit, and a missing expected index (such as `idx_messages_session_seq`) to a dropped one: find
          out who changed the schema.""",
    ),
    _r(
        "SA689",
        "credentials-present",
        N,
        None,
        "The store holds plaintext credentials (never shown).",
        """`hand_credentials`, `face_tokens` and `hand_tokens` hold live secrets in clear text (spec §4.7).
          sessaudit reports how many rows exist and whether their shapes are valid; it never prints,
          logs or loads a secret. Treat the evidence as sensitive.""",
        fix="""Nothing to fix in the store: handle the file and every copy of it as a secret (restricted
          access, no upload as a CI artifact). If a copy left your control, rotate the Hand credentials
          and Face tokens it holds.""",
    ),
    _r(
        "SA690",
        "recovered-at-restart",
        N,
        None,
        "A row was already changed by Half-Pi's restart recovery.",
        """A remote run lost by `startup_recovery`, a task marked stale, or an approval cancelled at
          restart (spec §8): the Mind restarted after a crash and closed what it could not know. What the
          Hand did remains unknown to the Mind.""",
        fix="""Nothing to fix: Half-Pi already closed the row at a restart. For a run lost by
          `startup_recovery`, ask the Hand (its logs, the target system) whether the command ran and how
          it ended, since the Mind will never know; a stale task is refreshed by reading it through the
          Mind (a Face task read or `get_hand_task`), and a cancelled approval ran nothing.""",
    ),
    _r(
        "SA691",
        "earlier-request-unfinished",
        N,
        None,
        "An earlier request of a session never got its answer; later requests continued.",
        """A request whose last message is a user row, a tool row or an assistant row with tool calls,
          followed by another request: the process died (or the answer was lost) and the conversation
          went on. History is kept exactly as persisted (spec §8), so the gap stays.""",
        fix="""Nothing to fix: Half-Pi keeps history exactly as persisted and never completes an earlier
          request. If the lost answer matters, check what that request did outside the conversation (its
          `security_decisions`, its remote runs, the Hand).""",
    ),
    _r(
        "SA692",
        "tool-decisions-unknown",
        N,
        None,
        "The store predates security_decisions: whether a local tool ran cannot be told.",
        """Stores before df4a275 record no tool admissions, so an unfinished last request is assumed to
          have run local tools (condition `effect-unknown`) rather than guessed to be a model request.""",
        fix="""Nothing to fix in the store: it cannot tell whether the unfinished last request ran local
          tools, so check their possible effects outside it (the workspace, files or systems the tools
          touch) before continuing. Its seed is a fork for this reason (`sessaudit seed STORE --run
          request:<id>`).""",
    ),
    _r(
        "SA693",
        "claim-matches",
        N,
        None,
        "A claimed tool call hashes to the approval's stored digest.",
        """`--claims`: the arguments you say were approved produce exactly the digest the approval row
          holds (spec §6.2/§6.3). Claims never change a verdict.""",
        fix="""Nothing to fix: the claimed call is the one approved. Whether it ran is another question:
          see the approval's security decisions and, for `use_hand`, its remote run.""",
        example=_CLAIMS_INTRO
        + ":\n\n"
        + _CLAIMS_FILE
        + (
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  half-pi.db\n"
            "    note    SA693 claim-matches [approval_audits row 1]: claim /claims/0: bash with the"
            " claimed arguments is what approval 3b05e392a6ea1c0d approved (digest"
            " sha256:ad1686665270a1d1d4adc015808205829ec2078bbeee89be03d1b3a0245f32a0)\n"
            "```"
        ),
    ),
    _r(
        "SA694",
        "claim-mismatch",
        E,
        None,
        "A claimed tool call does not hash to the approval's stored digest.",
        """`--claims`: the approval exists, but the arguments (or tool, run, Hand, background parameters)
          you claim produce a different digest than the one recorded: what was approved is not what you
          say. Both digests are in the finding. Claims never change a verdict.""",
        fix="""First rule out a mistake in the claims file: for a `use_hand` approval, `tool` and `args`
          are the remote tool and its inner arguments, and `run_id`, `hand_id` and
          `background.max_runtime_ms` must be the call's. If the claim is right, what was approved is not
          what you were told: take the real arguments from the request's `messages.tool_calls` and treat
          the approval as not covering the claimed call.""",
        example=_CLAIMS_INTRO
        + " (exit 1):\n\n"
        + _CLAIMS_FILE
        + (
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  half-pi.db\n"
            "    error   SA694 claim-mismatch [approval_audits row 1]: claim /claims/1: approval"
            " 3b05e392a6ea1c0d approved digest"
            " sha256:ad1686665270a1d1d4adc015808205829ec2078bbeee89be03d1b3a0245f32a0, but bash with"
            " the claimed arguments gives"
            " sha256:2f3b94579f43fb59e8df8ecf8d8a231a288b641d262c4c425043c107e8e72b82: not what was"
            " approved\n"
            "```"
        ),
    ),
    _r(
        "SA695",
        "claim-approval-unknown",
        E,
        None,
        "A claim names an approval that no verified store holds.",
        """`--claims`: no `approval_audits` row with this `approval_id` exists in any Half-Pi store of
          this audit. The finding points into the claims file (`/claims/<i>`).""",
        fix="""Check the claim's `approval_id` (16 lowercase hex, as in `approval_audits`) and that the
          store holding the approval is among the paths verified. If both are right, the approval was
          never recorded or its row was deleted: look for it in a backup of the store.""",
        example=_CLAIMS_INTRO
        + " (exit 1):\n\n"
        + _CLAIMS_FILE
        + (
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  claims.json\n"
            "    error   SA695 claim-approval-unknown [/claims/2]: claim /claims/2: approval"
            " 0123456789abcdef (bash) is in no Half-Pi store of this audit\n"
            "```"
        ),
    ),
    _r(
        "SA696",
        "claimed-value-in-audit",
        E,
        None,
        "A claimed raw argument value appears in an audit table, which should hold digests only.",
        """Approval, run, task, security and outbox rows store digests instead of raw parameters (spec
          §10 invariant 21). A value from a claim found in one of their text columns means a raw parameter
          leaked into the audit trail.""",
        fix="""Find out how the value got there (the finding names the table and column): a free-text
          reason that quotes the command, or a row written outside Half-Pi. If the value is a secret,
          rotate it, and restrict the store and every audit export made from it.""",
        example=(
            "The claims above (SA693), after the `reason` column of the approval's `approval_audits`"
            " row was set to the claimed command `rm -rf build` (exit 1):\n"
            "\n"
            "Finding (console report):\n"
            "\n"
            "```text\n"
            "  half-pi.db\n"
            "    error   SA696 claimed-value-in-audit [approval_audits row 1]: approval_audits"
            " approval_id 3b05e392a6ea1c0d: column reason holds the raw claim /claims/0 (12"
            " characters) (a value of a claimed call)\n"
            "```"
        ),
    ),
)
