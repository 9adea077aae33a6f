"""Record types and their top-level fields (docs/formats/claude-code.md §3), and the versions verified."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# The Claude Code versions (the `version` field of the lines) this verifier knows: 1.0.x through 2.1.x.
VERSIONS: Final = ("1.0", "2.0", "2.1")

# §3.1: the envelope of conversation records
ENVELOPE: Final = frozenset(
    {
        "type", "uuid", "parentUuid", "logicalParentUuid", "sessionId", "timestamp", "version", "cwd",
        "gitBranch", "isSidechain", "userType", "agentId", "isMeta", "entrypoint", "slug", "teamName",
        "agentName", "promptId", "effort",
    }
)  # fmt: skip
# per type: the fields besides the envelope (§3.2–§3.9); the types of §3.10 are known by name only
FIELDS: Final[dict[str, frozenset[str]]] = {
    "user": frozenset(
        {
            "message", "toolUseResult", "sourceToolAssistantUUID", "sourceToolUseID", "isCompactSummary",
            "isVisibleInTranscriptOnly", "isApiErrorMessage", "thinkingMetadata", "todos",
        }
    ),
    "assistant": frozenset(
        {"message", "requestId", "isApiErrorMessage", "apiErrorStatus", "error", "costUSD", "durationMs"}
    ),
    "system": frozenset(
        {
            "content", "level", "subtype", "toolUseID", "compactMetadata", "hasOutput", "hookErrors",
            "hookInfos", "preventedContinuation", "durationMs", "messageCount", "pendingBackgroundAgentCount",
            "rateLimits", "stopReason",
        }
    ),
    "summary": frozenset({"type", "summary", "leafUuid", "cwd"}),
    "file-history-snapshot": frozenset({"type", "messageId", "snapshot", "isSnapshotUpdate"}),
    "attachment": frozenset({"attachment"}),
    "queue-operation": frozenset({"type", "operation", "timestamp", "sessionId", "content"}),
    "progress": frozenset({"data", "toolUseID", "parentToolUseID"}),
}  # fmt: skip
# types whose fields are the envelope's plus their own (the others list all of theirs)
ENVELOPED: Final = frozenset({"user", "assistant", "system", "attachment", "progress"})
# §3.10: seen in 2.1.x files; accepted and indexed, their fields not checked
OTHER_TYPES: Final = frozenset(
    {
        "ai-title", "custom-title", "last-prompt", "tag", "mode", "permission-mode", "agent-name",
        "agent-color", "agent-setting", "pr-link", "worktree-state", "attribution-snapshot",
        "content-replacement", "cost-state",
    }
)  # fmt: skip
KNOWN_TYPES: Final = frozenset(FIELDS) | OTHER_TYPES


def known_type(name: str) -> bool:
    """A `type` value the spec lists (`marble-origami-*` by prefix)."""
    return name in KNOWN_TYPES or name.startswith("marble-origami-")


def unknown_fields(record: dict[str, object]) -> list[str]:
    """The top-level fields of a record of a §3.2–§3.9 type that the spec does not list, sorted."""
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in FIELDS:
        return []
    known = FIELDS[kind] | ENVELOPE if kind in ENVELOPED else FIELDS[kind]
    return sorted(key for key in record if key not in known)


# §4.2: user text that marks an interruption, not a prompt
INTERRUPT_PREFIX: Final = "[Request interrupted by user"


def content_blocks(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The blocks of a record's `message.content` when it is a list (§4.1); [] otherwise."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return [block for block in content if isinstance(block, Mapping)] if isinstance(content, list) else []


def message_text(record: Mapping[str, Any]) -> str | None:
    """A record's `message.content` as text: the string itself, or its text blocks joined; None else."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
        return "".join(text for text in texts if isinstance(text, str))
    return None


def is_prompt(record: Mapping[str, Any]) -> bool:
    """A user line a person typed, which starts a turn (a run): no tool result, not injected (isMeta, a
    compaction summary), not an interruption marker."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    if any(block.get("type") == "tool_result" for block in content_blocks(record)):
        return False
    text = message_text(record)
    return text is not None and not text.startswith(INTERRUPT_PREFIX)
