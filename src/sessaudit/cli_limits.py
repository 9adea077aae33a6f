"""The resource-limit flags shared by `verify`, `seed` and `load` (`--max-line-bytes` is CONTRACT §2's)."""

from __future__ import annotations

from typing import Annotated

import typer

from sessaudit.limits import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_FINDINGS,
    DEFAULT_MAX_LINE_BYTES,
    Limits,
)

MaxLineBytesOption = Annotated[
    int,
    typer.Option(
        "--max-line-bytes",
        min=1,
        metavar="N",
        help="Longest JSONL line read and verified, in bytes; a longer one is reported (SA010), the audit "
        "is incomplete (exit 3). Peak memory is a few times N.",
    ),
]
MaxFileBytesOption = Annotated[
    int,
    typer.Option(
        "--max-file-bytes",
        min=1,
        metavar="N",
        help="Largest file read whole into memory (a run directory's event log and JSON files, a store's "
        "database or -wal), in bytes; a larger one is reported (SA012), exit 3.",
    ),
]
MaxFilesOption = Annotated[
    int,
    typer.Option(
        "--max-files",
        min=1,
        metavar="N",
        help="Most directory entries one walk of a named directory looks at; past it the walk stops "
        "(SA013), exit 3.",
    ),
]
MaxFindingsOption = Annotated[
    int,
    typer.Option(
        "--max-findings",
        min=1,
        metavar="N",
        help="Most findings one source records; past it checking stops and the rest is only hashed "
        "(SA014), exit 3.",
    ),
]
# not a limit, but an input rule `verify` and `load` share
AllowEmptyOption = Annotated[
    bool,
    typer.Option(
        "--allow-empty",
        help="A named directory without any session log is not an incomplete audit (its SA006 note stays).",
    ),
]

__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_FINDINGS",
    "DEFAULT_MAX_LINE_BYTES",
    "AllowEmptyOption",
    "MaxFileBytesOption",
    "MaxFilesOption",
    "MaxFindingsOption",
    "MaxLineBytesOption",
    "limits_of",
]


def limits_of(max_line_bytes: int, max_file_bytes: int, max_files: int, max_findings: int) -> Limits:
    """The flags' values as the Limits every reader gets through VerifyOptions."""
    return Limits(
        max_line_bytes=max_line_bytes,
        max_file_bytes=max_file_bytes,
        max_files=max_files,
        max_findings=max_findings,
    )


# options several commands share
DebugOption = Annotated[bool, typer.Option("--debug", help="Show a traceback on internal errors.")]
RedactOption = Annotated[
    bool, typer.Option("--redact", help="Mask message and tool contents (not ids, digests, names).")
]
ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        envvar="SESSAUDIT_CLUSTER",
        metavar="ADDRESS",
        help="Work on the Dask cluster at ADDRESS (tcp://host:8786), or local:N for N local workers; "
        "the inputs must be on a filesystem every worker sees. Needs pip install 'sessaudit[cluster]'.",
    ),
]
