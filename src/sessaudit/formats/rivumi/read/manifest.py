"""session.json, request.json and .writer.lock checks (spec §3.2–§3.3, §4 step 3, §6); read-only."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from jsonschema import ValidationError  # type: ignore[import-untyped]

from sessaudit.formats.rivumi.spec.manifest_fields import TERMINAL_PHASES
from sessaudit.model import Finding
from sessaudit.resources import schema_validator
from sessaudit.rules import finding
from sessaudit.strictjson import NESTING_TOO_DEEP, LineProblem, loads_strict

SESSION_SCHEMA: Final = "rivumi-session.v1.schema.json"
REQUEST_SCHEMA: Final = "rivumi-request.v1.schema.json"
RESUME_SIZE_LIMIT: Final = 16 * 1024 * 1024
LOCK_LINE: Final = re.compile(rb"pid=([0-9]+) token=([0-9a-f]{32})\n")
FORK_WRITER: Final = "Rivumi's own fork command (`rivumi sessions --fork-from-event`)"


@dataclass(slots=True)
class JsonArtifact:
    """A checked JSON file of the run: the object (when it decoded to one) and the findings."""

    path: str
    document: dict[str, Any] | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.document is not None and not self.findings


def _pointer(error: ValidationError) -> str:
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # point at the first unexpected key rather than at the object holding it
        allowed = error.schema.get("properties", {})
        extra = sorted(key for key in error.instance if key not in allowed)
        parts += extra[:1]
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def _describe(error: ValidationError) -> str:
    message: str = error.message
    return message if len(message) <= 200 else message[:199] + "…"


def _decode(path: str, data: bytes, code: str, artifact: JsonArtifact) -> None:
    if len(data) > RESUME_SIZE_LIMIT:
        artifact.findings.append(
            finding(
                "SA535", f"{path} is {len(data)} bytes; Rivumi's resume refuses files over 16 MiB", path=path
            )
        )
    try:
        document = loads_strict(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        artifact.findings.append(finding(code, f"{path} is not UTF-8 (byte {error.start})", path=path))
        return
    except LineProblem as problem:
        # nesting past the decoder's limit is sessaudit's limit (SA011, unreadable), not a verdict on the file
        rule = problem.rule if problem.rule == NESTING_TOO_DEEP else code
        artifact.findings.append(
            finding(rule, f"{path} is not strict JSON: {problem.message}", path=path, pointer=problem.pointer)
        )
        return
    if not isinstance(document, dict):
        artifact.findings.append(
            finding(code, f"{path} holds a JSON {type(document).__name__}, not an object", path=path)
        )
        return
    artifact.document = document


def check_manifest(path: str, data: bytes | None, *, directory_name: str | None = None) -> JsonArtifact:
    """session.json (None: absent) against the v1 schema and the cross-field rules Rivumi's reader applies."""
    artifact = JsonArtifact(path)
    if data is None:
        artifact.findings.append(
            finding(
                "SA530", "the run directory has no session.json (Rivumi: missing session artifact)", path=path
            )
        )
        return artifact
    _decode(path, data, "SA531", artifact)
    manifest = artifact.document
    if manifest is None:
        return artifact
    version = manifest.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > 1:
        # a newer manifest is not a broken v1 one: it is not judged against v1 at all
        artifact.findings.append(
            finding(
                "SA003",
                f"session.json has schema_version {version}; this release verifies version 1 only (Rivumi "
                "versions that write it are newer than the spec)",
                path=path,
                pointer="/schema_version",
            )
        )
        return artifact
    fork = str(manifest.get("run_id", "")).startswith("fork-") and manifest.get("provider_name") == "fork"
    for error in sorted(schema_validator(SESSION_SCHEMA).iter_errors(manifest), key=_pointer):
        pointer = _pointer(error)
        if (
            list(error.absolute_path) == ["usage"]
            and error.validator == "additionalProperties"
            and "total_tokens" in error.instance
        ):
            writer = FORK_WRITER if fork else "an unknown writer (Rivumi's own saves never store it)"
            artifact.findings.append(
                finding(
                    "SA534",
                    "usage.total_tokens is stored, which SessionManifest v1 forbids (Rivumi cannot "
                    f"load this manifest); written by {writer}",
                    path=path,
                    pointer="/usage/total_tokens",
                    evidence={"writer": "rivumi-fork" if fork else None},
                )
            )
            continue
        artifact.findings.append(
            finding("SA532", f"{pointer or '/'}: {_describe(error)}", path=path, pointer=pointer)
        )
    artifact.findings.extend(cross_field_problems(path, manifest, directory_name))
    return artifact


def cross_field_problems(path: str, manifest: dict[str, Any], directory_name: str | None) -> list[Finding]:
    problems: list[Finding] = []

    def report(message: str, pointer: str, **evidence: Any) -> None:
        problems.append(finding("SA533", message, path=path, pointer=pointer, evidence=evidence))

    phase = manifest.get("phase", "created")
    terminal = manifest.get("terminal", False)
    if isinstance(phase, str) and isinstance(terminal, bool) and terminal != (phase in TERMINAL_PHASES):
        report(f"terminal is {str(terminal).lower()} but phase is {phase!r}", "/terminal", phase=phase)
    pending = manifest.get("pending_action")
    if phase == "waiting_approval" and pending is None:
        report("phase waiting_approval without a pending_action", "/pending_action")
    run_id = manifest.get("run_id")
    if isinstance(pending, dict) and "run_id" in pending and pending["run_id"] != run_id:
        report(
            f"pending_action.run_id {pending['run_id']!r} is not the manifest's run_id {run_id!r}",
            "/pending_action/run_id",
        )
    if directory_name is not None and isinstance(run_id, str) and run_id != directory_name:
        report(f"run_id {run_id!r} is not the run directory's name {directory_name!r}", "/run_id")
    return problems


def check_request(path: str, data: bytes | None, manifest: dict[str, Any] | None) -> JsonArtifact:
    """request.json as Rivumi's resume step 3 checks it: a TaskContract whose ids match the manifest."""
    artifact = JsonArtifact(path)
    if data is None:
        artifact.findings.append(finding("SA536", "the run directory has no request.json", path=path))
        return artifact
    _decode(path, data, "SA536", artifact)
    request = artifact.document
    if request is None:
        return artifact
    for error in schema_validator(REQUEST_SCHEMA).iter_errors(request):
        pointer = _pointer(error)
        artifact.findings.append(
            finding("SA536", f"{pointer or '/'}: {_describe(error)}", path=path, pointer=pointer)
        )
    if manifest is None:
        return artifact
    if "task_id" in manifest and request.get("task_id") != manifest["task_id"]:
        artifact.findings.append(
            finding(
                "SA537",
                f"task_id {request.get('task_id')!r} is not the manifest's {manifest['task_id']!r}",
                path=path,
                pointer="/task_id",
            )
        )
    base_sha, recorded = request.get("base_sha"), manifest.get("base_sha")
    if not isinstance(base_sha, str) or not isinstance(recorded, str) or base_sha.lower() != recorded.lower():
        artifact.findings.append(
            finding(
                "SA537",
                f"base_sha {base_sha!r} does not match the manifest's {recorded!r} (ignoring case)",
                path=path,
                pointer="/base_sha",
            )
        )
    return artifact


def check_lock(path: str, data: bytes | None, manifest: dict[str, Any] | None) -> list[Finding]:
    """`.writer.lock` content (§6). A stale pid is not a problem; live writers are detected elsewhere."""
    token = manifest.get("active_writer_token") if manifest is not None else None
    if data is None:
        if token is not None:
            return [
                finding("SA540", "the manifest names a writer token but there is no .writer.lock", path=path)
            ]
        return []
    match = LOCK_LINE.fullmatch(data)
    if match is None:
        return [
            finding(
                "SA538", f".writer.lock holds {data[:80]!r}, not `pid=<n> token=<32 hex>` + LF", path=path
            )
        ]
    found = match.group(2).decode("ascii")
    if manifest is not None and found != token:
        return [
            finding(
                "SA539",
                f".writer.lock token {found} is not the manifest's active_writer_token {token!r}",
                path=path,
                evidence={"lock_token": found, "manifest_token": token},
            )
        ]
    return []
