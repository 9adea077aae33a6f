"""`--redact` (CONTRACT §2): message and tool contents masked in every output; ids, digests, names kept.

The report (and every seed inside it) is rewritten once, before any renderer or the seed writer sees it,
so every output is redacted by the same rules. The rules are an **allow-list**: a string survives only
under a key known to hold an id, a digest, a name, a type, a status, a time, a path or a count; every
other string is masked, so a field nobody listed here (a new format's field, a new report key) is masked
by default rather than leaked.

- A masked string becomes `[redacted: N chars]`: its length only. A hash would let anyone confirm a
  guess of short content (a password, a yes/no answer) offline, and a keyed hash would need a key the
  reader cannot check; the length is what a reader of a redacted report can use (empty or not, short or
  long).
- Under a tool-argument key (`arguments`, `args`, `input`…) everything is masked, numbers included,
  and only the object keys (the tool's parameter names) stay: an argument named `id` is still content.
- Elsewhere numbers, booleans and null stay (sequence numbers, offsets, token counts, flags).
- Object keys stay everywhere (field and parameter names are names).
- Sentences sessaudit writes (finding messages, warnings, `assumes`, skipped reasons, the source
  systems' own one-line answers) stay, but every quoted literal inside them (`'…'`, `"…"`, an
  unterminated quote to the end) is masked unless it is a value the allow-list keeps elsewhere in the
  same report (an id, a tool name, a path); this is how rules quote what they found.
- A native seed's exact bytes (`native_text`) and a source system's replay stdout (`native.replay.text`) are
  masked whole like any other unlisted string: exact bytes cannot be partly redacted."""

from __future__ import annotations

import json
import re
from typing import Any

from sessaudit.jsonout import pretty_json
from sessaudit.model import SEED_SCHEMA_ID, Report

MASK = "[redacted: {} chars]"
NUMBER_MASK = "[redacted: number]"

# keys whose string values are kept (ids, digests, names, kinds, states, times, places)
KEPT_KEYS = frozenset(
    {
        "$assign",
        "code",
        "column",
        "condition",
        "conditions",
        "effect",
        "event_type",
        "format",
        "format_version",
        "id",
        "kind",
        "last_event_type",
        "fork_point_event_type",
        "mode",
        "model",
        "name",
        "native_code",
        "operation",
        "outcome",
        "path",
        "phase",
        "pointer",
        "provider",
        "replay_key",
        "replayKey",
        "replay_policy",
        "result_slot",
        "resultSlot",
        "Name",
        "role",
        "rule",
        "schema",
        "seed_kind",
        "severity",
        "sha256",
        "state",
        "status",
        "from_status",
        "to_status",
        "stepKind",
        "stopReason",
        "stop_reason",
        "table",
        "timestamp",
        "toolName",
        "tool_name",
        "type",
        "verdict",
        "version",
    }
)
# suffixes of kept keys: ids, digests, times
KEPT_SUFFIXES = ("_id", "Id", "ID", "_ids", "Ids", "_digest", "Digest", "_at", "At", "_sha256", "Sha256")
# keys whose whole value is a tool's input: every leaf masked, ids and numbers too
OPAQUE_KEYS = frozenset({"arguments", "args", "Args", "input", "tool_input", "parameters_json", "args_json"})
# keys whose value is sessaudit's (or the source system's) own sentence: quoted literals masked
# places whose string (or list of strings) is a sentence: (key of the enclosing object, key); None is a
# seed printed on its own. A finding's message is found by the finding's shape (`rule`, `location`,
# `message`), wherever it sits (the baseline lists some too).
SENTENCE_PLACES = frozenset(
    {
        ("skipped", "reason"),
        ("resume", "message"),
        ("replay", "message"),
        *((parent, key) for parent in ("recovery", "seed", None) for key in ("assumes", "warnings")),
    }
)

# a quoted literal: JSON or Python repr, a bytes repr (`b'…'`) too; an unterminated one runs to the end
_QUOTED = re.compile(r"""(?<![\w])b?(?:"(?:[^"\\]|\\.)*(?:"|$)|'(?:[^'\\]|\\.)*(?:'|$))""", re.DOTALL)


def mask(text: str) -> str:
    return MASK.format(len(text))


def _kept_key(key: str) -> bool:
    return key in KEPT_KEYS or key.endswith(KEPT_SUFFIXES)


def _is_finding(value: dict[str, Any]) -> bool:
    return "rule" in value and "location" in value and "message" in value


class _Redactor:
    def __init__(self) -> None:
        self.kept: set[str] = set()

    # a first pass collects the strings the allow-list keeps, so sentences may still quote them
    def collect(self, value: Any, key: str | None = None) -> None:
        if isinstance(value, dict):
            for name, item in value.items():
                if name in OPAQUE_KEYS:
                    continue
                self.collect(item, str(name))
        elif isinstance(value, list):
            for item in value:
                self.collect(item, key)
        elif isinstance(value, str) and key is not None and _kept_key(key):
            self.kept.add(value)

    def sentence(self, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            literal = match.group()
            prefix = "b" if literal.startswith("b") else ""
            literal = literal.removeprefix(prefix)
            inner = literal[1:-1] if len(literal) > 1 and literal[-1] == literal[0] else literal[1:]
            if inner in self.kept or inner.replace("\\'", "'").replace('\\"', '"') in self.kept:
                return prefix + literal
            return prefix + literal[0] + mask(inner) + literal[0]

        return _QUOTED.sub(replace, text)

    def opaque(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {name: self.opaque(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self.opaque(item) for item in value]
        if isinstance(value, str):
            return mask(value)
        if isinstance(value, bool) or value is None:
            return value
        return NUMBER_MASK

    def value(self, value: Any, key: str | None) -> Any:
        if isinstance(value, dict):
            if _is_finding(value):
                return {
                    name: self.sentence(item)
                    if name == "message" and isinstance(item, str)
                    else self.value(item, name)
                    for name, item in value.items()
                }
            return {name: self.field(str(name), item, key) for name, item in value.items()}
        if isinstance(value, list):
            return [self.value(item, key) for item in value]
        if isinstance(value, str):
            if key is not None and _kept_key(key):
                return value
            return mask(value)
        return value

    def field(self, key: str, value: Any, parent: str | None) -> Any:
        if key in OPAQUE_KEYS and isinstance(value, dict | list | str):  # `usage.input` is a count
            return self.opaque(value)
        if (parent, key) in SENTENCE_PLACES:
            if isinstance(value, str):
                return self.sentence(value)
            if isinstance(value, list):
                return [
                    self.sentence(item) if isinstance(item, str) else self.value(item, key) for item in value
                ]
        return self.value(value, key)


def redact_document(document: dict[str, Any]) -> dict[str, Any]:
    """A report or seed document (plain JSON data) with contents masked; seeds say `"redacted": true`."""
    redactor = _Redactor()
    redactor.collect(document)
    redacted: dict[str, Any] = redactor.value(document, None)
    _mark_seeds(redacted)
    return redacted


def _mark_seeds(value: Any) -> None:
    if isinstance(value, dict):
        if value.get("schema") == SEED_SCHEMA_ID:
            value["redacted"] = True
        for item in value.values():
            _mark_seeds(item)
    elif isinstance(value, list):
        for item in value:
            _mark_seeds(item)


def redact_report(report: Report) -> Report:
    """The report with every content masked (the same model, so every renderer and the seed writer
    take it as they take any report)."""
    document = report.model_dump(mode="json", by_alias=True)
    # `settings` is what the user told sessaudit (selectors, levels, gates, the settings and baseline
    # files' paths), never content from a log: it is kept whole so a redacted report still says what
    # decided it
    return Report.model_validate(redact_document(document)).model_copy(update={"settings": report.settings})


def redact_text(text: str, report: Report) -> str:
    """A line sessaudit prints about this report (stderr): quoted literals masked as in messages."""
    redactor = _Redactor()
    redactor.collect(report.model_dump(mode="json", by_alias=True))
    return redactor.sentence(text)


def redact_baseline(text: str, report: Report) -> str:
    """A baseline file's text (written by `--write-baseline`) with each entry's message redacted; the
    fingerprints stay those of the findings as found, so the baseline matches later runs either way."""
    document = json.loads(text)
    redactor = _Redactor()
    redactor.collect(report.model_dump(mode="json", by_alias=True))
    for entry in document.get("findings", []):
        if isinstance(entry, dict) and isinstance(entry.get("message"), str):
            entry["message"] = redactor.sentence(entry["message"])
    return pretty_json(document)


def redact_error(text: str) -> str:
    """An exception's one-line message (exit 4) under `--redact`: every quoted literal masked."""
    return _Redactor().sentence(text)
