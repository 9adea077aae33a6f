"""The `show` command: each session's timeline (sessaudit.timeline) in the terminal, or as JSON for tools.

Exit codes: 0 shown; 2 usage error (a bad flag, a --run no session has); 3 incomplete (the audit was, or a
source's records could not be read again to be drawn: its timeline says why); 4 internal error. Findings do
not change it: `show` is for looking, `verify` is the gate (docs/decisions.md)."""

from __future__ import annotations

import sys
import traceback
from enum import StrEnum
from typing import Annotated, NoReturn

import typer

from sessaudit.cli_limits import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_FINDINGS,
    DEFAULT_MAX_LINE_BYTES,
    DebugOption,
    MaxFileBytesOption,
    MaxFilesOption,
    MaxFindingsOption,
    MaxLineBytesOption,
    RedactOption,
    limits_of,
)
from sessaudit.cli_plugins import plugin_extras
from sessaudit.cli_warehouse import (
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    internal_message,
    interrupted,
)
from sessaudit.outputsafety import safe
from sessaudit.plugin import VerifyOptions


class ShowFormat(StrEnum):
    CONSOLE = "console"
    JSON = "json"


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"sessaudit: {safe(message)}", err=True)
    return typer.Exit(code)


def _usage_error(message: str) -> NoReturn:
    raise _fail(message, EXIT_USAGE)


def show(
    path: Annotated[
        str, typer.Argument(help="A session log (a file, a run directory, a store), or a folder of them.")
    ],
    run: Annotated[str | None, typer.Option("--run", help="Only the events of this run.")] = None,
    last: Annotated[int, typer.Option("--last", min=1, help="Show this many events (the last ones).")] = 30,
    around: Annotated[
        int | None,
        typer.Option("--around", help="Show the events around sequence SEQ instead of the last ones."),
    ] = None,
    output_format: Annotated[
        ShowFormat, typer.Option("--format", help="console (for people) or json (every event, for tools).")
    ] = ShowFormat.CONSOLE,
    max_line_bytes: MaxLineBytesOption = DEFAULT_MAX_LINE_BYTES,
    max_file_bytes: MaxFileBytesOption = DEFAULT_MAX_FILE_BYTES,
    max_files: MaxFilesOption = DEFAULT_MAX_FILES,
    max_findings: MaxFindingsOption = DEFAULT_MAX_FINDINGS,
    redact: RedactOption = False,
    debug: DebugOption = False,
) -> None:
    """Show each session's timeline: the events before the crash, with times, and the open call."""
    from sessaudit.engine import audit
    from sessaudit.jsonout import pretty_json
    from sessaudit.timeline import build_timelines, only_run, redact_timelines, timelines_json

    try:
        options = VerifyOptions(
            extras=plugin_extras(_usage_error),
            limits=limits_of(max_line_bytes, max_file_bytes, max_files, max_findings),
        )
        result = audit([path], options=options)
        timelines = build_timelines(result.report, max_line_bytes=max_line_bytes)
        if run is not None:
            timelines = only_run(timelines, run)
            if not timelines:
                raise _fail(f"no session in {path} has a run {run!r} (see `sessaudit verify`)", EXIT_USAGE)
        if redact:
            timelines = redact_timelines(timelines, result.report)
        document = timelines_json(timelines)
        if output_format is ShowFormat.JSON:
            sys.stdout.write(pretty_json(document))
        else:
            from sessaudit.cli import console_width
            from sessaudit.reporters.timeline import render_timelines

            terminal = sys.stdout.isatty()
            sys.stdout.write(
                render_timelines(
                    document, width=console_width(terminal), color=terminal, last=last, around=around
                )
            )
        notes = [item.note for item in timelines if item.note]
        for reason in [*result.incomplete, *notes]:
            typer.echo(f"sessaudit: incomplete: {safe(reason)}", err=True)
        code = EXIT_INCOMPLETE if result.incomplete or notes else EXIT_OK
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        interrupted()
    except Exception as error:
        if debug:
            traceback.print_exc()
        raise _fail(internal_message(error), EXIT_INTERNAL) from None
    raise typer.Exit(code)
