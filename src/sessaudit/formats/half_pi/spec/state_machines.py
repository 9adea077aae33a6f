"""Half-Pi's state machines as data (spec §7): run and task statuses, the legal run edges, the recovery text.

One table for the builder that writes runs, the checks that walk them and recovery that closes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

RUN_TERMINAL: Final = frozenset({"succeeded", "failed", "rejected", "cancelled", "timed_out", "lost"})
RUN_NON_TERMINAL: Final = frozenset(
    {"created", "approved", "sent", "accepted", "running", "cancel_requested"}
)
TASK_TERMINAL: Final = frozenset({"succeeded", "failed", "cancelled", "timed_out", "lost"})
# protocol.CanTransitionRun (spec §7.1); terminal statuses lead nowhere
RUN_EDGES: Final[Mapping[str, frozenset[str]]] = {
    "created": frozenset({"approved", "rejected"}),
    "approved": frozenset({"sent", "rejected"}),
    "sent": frozenset({"accepted", "rejected", "cancel_requested", "timed_out", "lost"}),
    "accepted": frozenset({"running", "succeeded", "failed", "cancel_requested", "timed_out", "lost"}),
    "running": frozenset({"succeeded", "failed", "cancel_requested", "timed_out", "lost"}),
    "cancel_requested": frozenset({"succeeded", "failed", "rejected", "cancelled", "timed_out", "lost"}),
}
RECOVERY_MESSAGE: Final = "Mind restarted before terminal state"  # the startup_recovery event's message
