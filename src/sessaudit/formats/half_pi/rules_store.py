"""Half-Pi rules about the store as a whole (SA680–SA699): opening it safely, its files, its schema
generation, restart recovery already applied, unfinished requests, and `--claims`."""

from __future__ import annotations

from functools import partial

from sessaudit.rulebase import CORRUPT, UNREADABLE, E, N, Rule, W, _rule

_r = partial(_rule, formats=("half-pi",))

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
    ),
    _r(
        "SA682",
        "store-damaged",
        E,
        CORRUPT,
        "SQLite cannot read the store: it is truncated or not a valid database.",
        """The database is shorter than its header says, or SQLite cannot read its schema from the
          private copy. Nothing in it can be trusted; the finding says what SQLite answered.""",
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
    ),
    _r(
        "SA684",
        "rollback-journal-present",
        W,
        None,
        "A -journal lies beside the store; SQLite would roll it back on open.",
        """Half-Pi runs in WAL mode, so a rollback journal was written by another tool. It was copied with
          the store (so the copy is what SQLite would see), and its presence is reported.""",
    ),
    _r(
        "SA685",
        "not-wal-mode",
        W,
        None,
        "The database header is not in WAL mode, which every Half-Pi open sets.",
        """Header bytes 18/19 are not 2: something other than Half-Pi last changed the journal mode
          (spec §1), typically a copy through the sqlite3 shell.""",
    ),
    _r(
        "SA686",
        "permissions-wide",
        W,
        None,
        "A store file is readable by others than its owner.",
        """Half-Pi forces the db, `-wal` and `-shm` to 0600 (spec §1): the store holds plaintext
          credentials. Wider permissions on evidence are worth a look; they are only a warning.""",
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
    ),
    _r(
        "SA692",
        "tool-decisions-unknown",
        N,
        None,
        "The store predates security_decisions: whether a local tool ran cannot be told.",
        """Stores before df4a275 record no tool admissions, so an unfinished last request is assumed to
          have run local tools (condition `effect-unknown`) rather than guessed to be a model request.""",
    ),
    _r(
        "SA693",
        "claim-matches",
        N,
        None,
        "A claimed tool call hashes to the approval's stored digest.",
        """`--claims`: the arguments you say were approved produce exactly the digest the approval row
          holds (spec §6.2/§6.3). Claims never change a verdict.""",
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
    ),
    _r(
        "SA695",
        "claim-approval-unknown",
        E,
        None,
        "A claim names an approval that no verified store holds.",
        """`--claims`: no `approval_audits` row with this `approval_id` exists in any Half-Pi store of
          this audit. The finding points into the claims file (`/claims/<i>`).""",
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
    ),
)
