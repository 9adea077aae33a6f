"""What `rivumi sessions --fork-from-event RUN --sequence N` prints (spec §5.3, seed-only), byte for byte.

This is the seed-only behaviour that CONTRACT §2 (`seed --native`) names: stdout is the seed's sorted compact
JSON plus a newline, exit 0; a refusal is `error: <message>` plus a newline on stderr, exit 2; a crash
(native/replay.py: bad UTF-8, a huge integer, deep nesting, unprintable output) is a traceback and exit 1.
The create-fork behaviour of 5dc5dc4 and later (a new `fork-<32hex>` run with a random id and an absolute
workspace path, see build/fork_run.py) cannot be predicted byte for byte and is not modelled here.

Order of checks, as Rivumi's `fork_seed_jsonl`: the file is loaded (§5.1 errors), then the sequence is
checked, then the whole log is normalised and reduced (so a duplicate, id drift or NUL anywhere fails), then
the fork point must exist, then the prefix (sequence <= N) is reduced again for `replay_state`.
`source_run_id` / `source_conversation_id` are the prefix's ids, not the whole log's.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from sessaudit.evidence import NotRegularFile, open_evidence, read_chunks
from sessaudit.formats.rivumi.native.replay import (
    CRASH_PREFIX,
    CRASH_STATUS,
    ReplayError,
    RivumiCrash,
    load_jsonl,
    missing_log_message,
    printable,
    reduce_events,
)
from sessaudit.formats.rivumi.spec.encoding import dump_sorted

REFUSAL_STATUS: Final = 2
UNREADABLE_STATUS: Final = 3  # CONTRACT §3: the evidence could not be read, so no answer is known


@dataclass(frozen=True, slots=True)
class NativeSeed:
    """Rivumi's answer: `text` (exact stdout, trailing LF included) and `value` (parsed), or a refusal.

    On a refusal `message` is Rivumi's ReplayValidationError text, `stderr` what the CLI prints, and
    `exit_status` 2; on success `exit_status` is 0. When Rivumi crashes instead (native/replay.py), `crash`
    names the exception, `message` is "Rivumi crashes: <name>: <detail>", `stderr` the last line of its
    traceback (the only predictable part) and `exit_status` 1. When sessaudit cannot read events.jsonl
    (a link it will not follow, a FIFO), `message` says so and `exit_status` is 3: no answer is known.
    """

    text: str | None
    value: dict[str, Any] | None
    message: str | None
    exit_status: int
    crash: str | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None

    @property
    def stderr(self) -> str:
        if self.message is None or self.exit_status == UNREADABLE_STATUS:
            return ""
        if self.crash is not None:
            return self.message.removeprefix(CRASH_PREFIX) + "\n"
        return f"error: {self.message}\n"

    def as_native(self) -> tuple[dict[str, Any] | None, str | None]:
        """The seed document's `native` and `native_text` (both null when Rivumi refuses or crashes)."""
        return self.value, self.text


def native_fork_seed(
    events: bytes | None,
    manifest: Mapping[str, Any] | None,
    request: Mapping[str, Any] | None,
    *,
    run_id: str,
    sequence: int,
    events_path: str | None = None,
    stdout_errors: str = "strict",
) -> NativeSeed:
    """Rivumi's fork seed of a run at event `sequence`, from the bytes of its events.jsonl.

    `events` None means events.jsonl is absent; the message then names `events_path` (default
    `<run_id>/events.jsonl`; Rivumi names the path it built from its run root, which we cannot know).
    `manifest` and `request` are not read: the seed-only CLI reads events.jsonl alone, so a missing or
    invalid session.json/request.json does not change its answer. They are accepted so that a caller
    holding a run passes it whole. `stdout_errors`: the error handler of the UTF-8 stdout Rivumi prints to.
    """
    del manifest, request  # not read by Rivumi's seed-only fork (see docstring)
    try:
        if events is None:
            path = events_path if events_path is not None else os.path.join(run_id, "events.jsonl")
            raise ReplayError(missing_log_message(path))
        value = fork_seed(load_jsonl(events), sequence)
        text = printable(dump_sorted(value) + "\n", stdout_errors)
    except ReplayError as error:
        return NativeSeed(None, None, str(error), REFUSAL_STATUS)
    except RivumiCrash as crash:
        return NativeSeed(None, None, CRASH_PREFIX + str(crash), CRASH_STATUS, crash.name)
    return NativeSeed(text, value, None, 0)


def directory_fork_seed(
    real_path: str, *, events_path: str, sequence: int | None, stdout_errors: str = "strict"
) -> NativeSeed:
    """`rivumi sessions --fork-from-event RUN --sequence N` for the run directory `real_path`, read-only.

    `sequence` None: sessaudit's default fork point, the last sequence of the whole log as Rivumi's reducer
    orders it (Rivumi itself has no default). A log that cannot be loaded or reduced has no last sequence,
    but then every fork point gets the same answer (Rivumi loads and reduces the whole log before it looks
    for the fork point), and that answer is returned; an empty log has no event to fork at, so it is asked
    for sequence 0 ("fork sequence 0 was not found")."""
    run_id = os.path.basename(os.path.normpath(real_path))
    try:
        events = _read_events(os.path.join(real_path, "events.jsonl"))
    except IsADirectoryError:
        message = f"could not read event JSONL: [Errno {errno.EISDIR}] Is a directory: {events_path!r}"
        return NativeSeed(None, None, message, REFUSAL_STATUS)
    except OSError as error:
        message = (
            f"sessaudit cannot read {events_path} ({error.strerror}): it follows no link and reads only "
            "regular files, so what Rivumi would answer is not known"
        )
        return NativeSeed(None, None, message, UNREADABLE_STATUS)
    if sequence is None:
        sequence = 0
        if events is not None:
            try:
                last = reduce_events(load_jsonl(events)).get("last_sequence")
            except (ReplayError, RivumiCrash):
                last = None  # the refusal or crash is the same at every fork point
            sequence = last if isinstance(last, int) else 0
    return native_fork_seed(
        events,
        None,
        None,
        run_id=run_id,
        sequence=sequence,
        events_path=events_path,
        stdout_errors=stdout_errors,
    )


def _read_events(path: str) -> bytes | None:
    try:
        stream, size = open_evidence(path)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        if os.path.isdir(path) and not os.path.islink(path):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path) from None
        raise
    with stream:
        return b"".join(read_chunks(stream, size))


def fork_seed(records: list[dict[str, Any]], sequence: int) -> dict[str, Any]:
    """Rivumi's `fork_seed_at_sequence(...).as_dict()` for loaded event objects; raises ReplayError."""
    if isinstance(sequence, bool) or not isinstance(sequence, int) or sequence < 0:
        raise ReplayError("fork sequence must be a non-negative integer")
    whole = reduce_events(records)  # normalises, bounds, sorts and reduces everything, as Rivumi does
    point = next((item for item in whole["timeline"] if item["sequence"] == sequence), None)
    if point is None:
        raise ReplayError(f"fork sequence {sequence} was not found")
    # every record normalised above, so `sequence` is a non-negative int in each
    prefix = reduce_events([record for record in records if record["sequence"] <= sequence])
    seed: dict[str, Any] = {
        "schema_version": 1,
        "fork_point_sequence": sequence,
        "fork_point_event_type": point["event_type"],
        "source_run_id": prefix.get("run_id"),
        "source_conversation_id": prefix.get("conversation_id"),
        "events_included": prefix["event_count"],
        "side_effects_replayed": False,
        "run_started": False,
        "replay_state": prefix,
    }
    return {key: item for key, item in seed.items() if item is not None}
