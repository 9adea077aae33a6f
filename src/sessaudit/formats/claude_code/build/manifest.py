"""The truth written beside the transcripts: what each scenario's files contain, by construction.

Per scenario: the files; every API response with its true final usage and what its lines logged; usage
totals; every tool call with its outcome; the open calls; the torn tail; resume copies; parents and
summary leaves that resolve in another file (or nowhere); roots; synthetic lines. Line numbers are
1-based, paths are relative to the root the builder was given (POSIX form).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from sessaudit.formats.claude_code.build.family import Family, FileState, ResponseRecord, complete_lines
from sessaudit.formats.claude_code.build.parts import JsonObject, changes_world

MANIFEST_NAME: Final = "manifest.json"
USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def rel(key: str) -> str:
    """A file key (below `projects/`) as a path relative to the root."""
    return f"projects/{key}"


def uuid_index(family: Family) -> dict[str, list[str]]:
    """uuid -> the files (relative paths) where a complete line carries it."""
    index: dict[str, list[str]] = {}
    for state in family.files.values():
        for line in complete_lines(state):
            if line.uuid is not None and rel(state.key) not in index.setdefault(line.uuid, []):
                index[line.uuid].append(rel(state.key))
    return index


def response_truth(family: Family, record: ResponseRecord) -> JsonObject:
    state = family.files[record.file]
    visible = [state.lines[i].data for i in record.lines if i < len(complete_lines(state))]
    logged = max((line["message"]["usage"]["output_tokens"] for line in visible), default=None)
    return {
        "message_id": record.message_id,
        "request_id": record.request_id,
        "session_id": record.session_id,
        "agent_id": record.agent_id,
        "model": record.model,
        "file": rel(record.file),
        "lines": [i + 1 for i in record.lines],
        "streaming": record.streaming,
        "usage": record.usage.as_manifest(),
        "logged_output_tokens": logged,
        "placeholder": logged is not None and logged < record.usage.output_tokens,
        "final_stop_reason": visible[-1]["message"]["stop_reason"] if visible else None,
    }


def totals(responses: list[JsonObject]) -> JsonObject:
    """Sums of the true usage over `responses`, with the 5m/1h split and the response count."""
    summed: JsonObject = {name: sum(item["usage"][name] for item in responses) for name in USAGE_FIELDS}
    for ttl in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"):
        summed[ttl] = sum(item["usage"]["cache_creation"][ttl] for item in responses)
    summed["responses"] = len(responses)
    return summed


def _calls(family: Family) -> list[JsonObject]:
    calls: list[JsonObject] = []
    for record in family.calls.values():
        result = record.result
        if result is not None and result[1] >= len(complete_lines(family.files[result[0]])):
            result = None  # the result line is the torn tail: it never reached the disk whole
        calls.append(
            {
                "id": record.call.id,
                "name": record.call.name,
                "session_id": record.session_id,
                "agent_id": record.agent_id,
                "file": rel(record.call.file),
                "line": record.call.line + 1,
                "assistant_uuid": record.call.assistant_uuid,
                "changes_world": changes_world(record.call.name),
                "has_result": result is not None,
                "result_line": None if result is None else result[1] + 1,
                "outcome": "unknown" if result is None else result[2],
            }
        )
    return calls


def _links(family: Family, index: dict[str, list[str]]) -> tuple[list[JsonObject], list[JsonObject]]:
    """(parents that do not resolve in their own file, roots), over the complete lines."""
    elsewhere: list[JsonObject] = []
    roots: list[JsonObject] = []
    for state in family.files.values():
        own = {line.uuid for line in complete_lines(state) if line.uuid is not None}
        for number, line in enumerate(complete_lines(state), 1):
            if line.uuid is None:
                continue
            parent = line.data.get("parentUuid")
            if parent is None:
                roots.append({"file": rel(state.key), "line": number, "uuid": line.uuid})
            elif parent not in own:
                found = index.get(parent, [])
                elsewhere.append(
                    {"file": rel(state.key), "line": number, "parent_uuid": parent, "resolves_in": found}
                )
    return elsewhere, roots


def _file(state: FileState) -> JsonObject:
    return {
        "path": rel(state.key),
        "kind": state.kind,
        "layout": state.layout,
        "session_id": state.session_id,
        "agent_id": state.agent_id,
        "lines": len(state.lines),
        "sidecar": None if state.sidecar is None else rel(state.sidecar[0]),
    }


def truth(family: Family) -> JsonObject:
    """The manifest entry of one scenario."""
    index = uuid_index(family)
    responses = [response_truth(family, record) for record in family.responses]
    calls = _calls(family)
    elsewhere, roots = _links(family, index)
    torn = [state for state in family.files.values() if state.torn_at is not None]
    copies = [
        {
            "file": rel(state.key),
            "line": number,
            "uuid": line.uuid,
            "original_file": rel(line.copy_of[0]),
            "original_line": line.copy_of[1] + 1,
        }
        for state in family.files.values()
        for number, line in enumerate(state.lines, 1)
        if line.copy_of is not None
    ]
    return {
        "files": [_file(state) for state in family.files.values()],
        "responses": responses,
        "totals": totals(responses),
        "tool_calls": calls,
        "open_calls": [call["id"] for call in calls if not call["has_result"]],
        "torn_tail": [
            {
                "file": rel(state.key),
                "line": len(state.lines),
                "uuid": state.lines[-1].uuid,
                "kept_bytes": state.torn_at,
            }
            for state in torn
        ],
        "resume_copies": copies,
        "parents_elsewhere": elsewhere,
        "roots": roots,
        "summaries": [
            {"file": rel(key), "line": line + 1, "leaf_uuid": leaf, "resolves_in": index.get(leaf, [])}
            for key, line, leaf in family.summaries
        ],
        "synthetic": [
            {"file": rel(key), "line": line + 1, "uuid": uuid} for key, line, uuid in family.synthetic
        ],
    }


def write_manifest(root: Path, scenarios: Mapping[str, JsonObject]) -> Path:
    """`<root>/manifest.json` (outside `projects/`), scenarios by name; refuses to overwrite."""
    path = root / MANIFEST_NAME
    text = json.dumps({"format": "claude-code", "scenarios": dict(scenarios)}, indent=2, ensure_ascii=False)
    root.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as stream:
        stream.write(text + "\n")
    return path
