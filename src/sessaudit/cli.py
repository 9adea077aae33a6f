"""The command line: parse flags → engine → reporters → exit code (the only module that exits or prints)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
import traceback
from dataclasses import replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from sessaudit import __version__
from sessaudit.cli_limits import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_FINDINGS,
    DEFAULT_MAX_LINE_BYTES,
    AllowEmptyOption,
    ClusterOption,
    DebugOption,
    MaxFileBytesOption,
    MaxFilesOption,
    MaxFindingsOption,
    MaxLineBytesOption,
    RedactOption,
    limits_of,
)
from sessaudit.cli_plugins import PluginCommand, plugin_extras, plugin_takeover, take_over
from sessaudit.cli_show import show
from sessaudit.cli_warehouse import EXIT_INTERRUPTED, internal_message, interrupted, load, query
from sessaudit.cluster import ClusterPathError, ClusterUnavailable
from sessaudit.engine import AuditResult, audit
from sessaudit.jsonout import pretty_json
from sessaudit.outputsafety import safe
from sessaudit.parallel import default_jobs
from sessaudit.plugin import VerifyOptions
from sessaudit.policy import Policy, PolicyError, apply_policy, gate_failures, resolve_policy
from sessaudit.progress import progress_bar
from sessaudit.registry import code_range, registry
from sessaudit.reporters import OutputFormat, render
from sessaudit.reporters.timing import Stopwatch
from sessaudit.rules import catalogue, find_rule
from sessaudit.seedfiles import SeedClash
from sessaudit.verdicts import Severity

if TYPE_CHECKING:
    from sessaudit.model import Finding, Report

# The console reporter (rich), the GitHub summary, redaction, baselines written and seeds are imported
# where they are used: `verify --format json` of a small file imports none of them (tests/test_startup.py).

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 1, 2, 3, 4


class FailOn(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    NEVER = "never"


app = typer.Typer(
    name="sessaudit",
    help="Audit and forensically analyse AI-agent session logs ("
    + ", ".join(plugin.title for plugin in registry().plugins)
    + ").",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def exit_code(result: AuditResult, fail_on: FailOn) -> int:
    """CONTRACT §3: the highest applicable code wins (3 incomplete > 1 findings > 0)."""
    if result.incomplete:
        return EXIT_INCOMPLETE
    if fail_on is FailOn.NEVER:
        return EXIT_OK
    threshold = Severity(fail_on.value).rank
    if any(item.severity.rank >= threshold for item in result.report.findings):
        return EXIT_FINDINGS
    return EXIT_OK


class OutputWriteError(Exception):
    """An output file that cannot be written, named as the user gave it (never its temporary file)."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write {path}: {error.strerror or error}")


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename; a path that is not
    a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place, never renamed over. Any
    failure is an `OutputWriteError` naming `path`."""
    try:
        _write_atomically(path, text)
    except OSError as error:
        raise OutputWriteError(path, error) from error


def _write_atomically(path: Path, text: str) -> None:
    if path.exists() and not path.is_file():
        with path.open("w", encoding="utf-8") as handle:
            handle.write(text)
        return
    directory = path.parent if str(path.parent) else Path(".")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def utc_now() -> datetime:
    """The clock the console's relative times ("3 h ago") are read against (tests replace it)."""
    return datetime.now(UTC)


def console_width(terminal: bool) -> int:
    """The console report's width: the terminal's when writing to one; otherwise $COLUMNS when set, else
    80, so a report piped or written to a file does not depend on the terminal it was started from."""
    if terminal:
        return shutil.get_terminal_size((80, 24)).columns
    try:
        return max(int(os.environ.get("COLUMNS", "")), 40)
    except ValueError:
        return 80


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"sessaudit: {safe(message)}", err=True)  # messages may quote ids and paths from logs
    raise typer.Exit(code)


@app.command(cls=PluginCommand)
def verify(
    paths: Annotated[list[str], typer.Argument(help="Session files and directories (walked recursively).")],
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="Report format written to stdout or --output.")
    ] = OutputFormat.CONSOLE,
    output: Annotated[
        Path | None, typer.Option("--output", help="Write the report to FILE (atomically) instead of stdout.")
    ] = None,
    reports: Annotated[
        list[str] | None,
        typer.Option(
            "--report",
            metavar="FORMAT=FILE",
            help="Also write the report in FORMAT to FILE (atomically); repeatable.",
        ),
    ] = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on",
            help="Lowest finding severity that makes the exit code 1 (default: error).",
            show_default=False,
        ),
    ] = None,
    fail_on_verdict: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on-verdict",
            metavar="VERDICT[,VERDICT...]",
            help="Exit 1 when a source or one of its sessions has one of these verdicts (needs-recovery, "
            "corrupt, repairable, unreadable, unsupported, clean); repeatable; an empty value switches off "
            "the settings file's list.",
            show_default=False,
        ),
    ] = None,
    fail_on_condition: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on-condition",
            metavar="CONDITION[,CONDITION...]",
            help="Exit 1 when an open run has one of these conditions (any of its conditions, not only the "
            "first), e.g. effect-unknown, remote-run-in-flight; repeatable; an empty value switches off the "
            "settings file's list.",
            show_default=False,
        ),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select",
            metavar="CODES",
            help="Report only these rules: codes (SA104), prefixes (SA1) or names, comma-separated.",
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            metavar="CODES",
            help="Do not report these rules (codes, prefixes or names); repeatable.",
        ),
    ] = None,
    severity: Annotated[
        list[str] | None,
        typer.Option(
            "--severity",
            metavar="CODE=LEVEL",
            help="Report rule CODE at LEVEL (error, warning, note); changes the exit code, never a verdict.",
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Findings already in this baseline file do not fail; new ones do.",
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline",
            metavar="FILE",
            help="Write the findings to FILE as a baseline (atomically); they do not fail.",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="Read settings from FILE (sessaudit.toml or pyproject.toml). Without it: the nearest one "
            "from the working directory up to the repository root (a folder holding .git); outside a "
            "repository, the working directory's only.",
        ),
    ] = None,
    no_config: Annotated[
        bool, typer.Option("--no-config", help="Read no sessaudit.toml or pyproject.toml settings.")
    ] = False,
    seeds_dir: Annotated[
        Path | None,
        typer.Option("--seeds-dir", help="Write one seed file per open run into DIR (never overwriting)."),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, help="Verify N sources at a time, in N processes [default: all cores]"),
    ] = None,
    cluster: ClusterOption = None,
    redact: Annotated[
        bool,
        typer.Option(
            "--redact", help="Mask message and tool contents (not ids, digests, names) in every output."
        ),
    ] = False,
    timestamps: Annotated[
        bool,
        typer.Option(
            "--timestamps", help="Add the audit's start and end time (UTC) to SARIF and JUnit outputs."
        ),
    ] = False,
    max_line_bytes: MaxLineBytesOption = DEFAULT_MAX_LINE_BYTES,
    max_file_bytes: MaxFileBytesOption = DEFAULT_MAX_FILE_BYTES,
    max_files: MaxFilesOption = DEFAULT_MAX_FILES,
    max_findings: MaxFindingsOption = DEFAULT_MAX_FINDINGS,
    allow_empty: AllowEmptyOption = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="Print no report on stdout and no progress; the exit code tells.")
    ] = False,
    show_skipped: Annotated[
        bool,
        typer.Option(
            "--show-skipped", help="List every file skipped as no session log (the console counts them)."
        ),
    ] = False,
    debug: DebugOption = False,
) -> None:
    """Verify session logs: verdicts, findings with locations, open runs and what is unknown."""
    extra_outputs = _parse_reports(reports or [])
    policy = _resolve_policy(
        select, ignore, severity, baseline, (fail_on, fail_on_verdict, fail_on_condition), config, no_config
    )
    try:
        options = VerifyOptions(
            extras=plugin_extras(_usage_error),
            limits=limits_of(max_line_bytes, max_file_bytes, max_files, max_findings),
            allow_empty=allow_empty,
        )
        stopwatch = Stopwatch()
        if cluster is not None and jobs is not None:
            _fail("--cluster and --jobs: the cluster's workers are the jobs; give one of them", EXIT_USAGE)
        with progress_bar(sys.stderr.isatty() and not quiet) as bar:
            try:
                result = audit(
                    paths, options=options, jobs=jobs or default_jobs(), tracker=bar, cluster=cluster or None
                )
            except ClusterUnavailable as error:
                _fail(str(error), EXIT_USAGE)
            except ClusterPathError as error:
                _fail(f"audit incomplete: {error}", EXIT_INCOMPLETE)
        times = stopwatch.stop() if timestamps else None
        verified = result.report  # before filters: its findings decide what is verified history
        applied = apply_policy(result.report, policy)  # filters change findings and exit code, never verdicts
        result = replace(result, report=applied.report)
        if redact:  # before any output: reports, seeds and stderr lines all see the redacted report
            from sessaudit.redact import redact_report

            result = replace(result, report=redact_report(result.report))
        if write_baseline is not None:
            _write_baseline(write_baseline, applied.current, result.report if redact else None)
        seed_paths: dict[tuple[str, str], str] = {}
        if seeds_dir is not None:
            from sessaudit.seeds import write_report_seeds

            for item in write_report_seeds(result.report, seeds_dir):
                seed_paths[(item.source, item.run_id)] = str(item.path)
        # a baseline just written accepts every finding: only an incomplete audit fails
        code = exit_code(result, FailOn.NEVER if write_baseline is not None else FailOn(policy.fail_on))
        # verdicts and run conditions are not findings: a baseline never accepts them
        gate_lines = gate_failures(result.report, policy)
        if gate_lines:
            code = max(code, EXIT_FINDINGS)
        now = utc_now()

        def console(terminal: bool) -> str:
            from sessaudit.reporters.console import render_console

            return render_console(
                result.report,
                color=terminal,
                width=console_width(terminal),
                now=now,
                exit_status=code,
                show_skipped=show_skipped,
                seed_paths=seed_paths,
            )

        html = ""  # the HTML page, made once for --format and every --report html=
        if OutputFormat.HTML in {output_format, *(item for item, _ in extra_outputs)}:
            html, notes, code = _html_page(result.report, verified, code, max_line_bytes, redact)
            for note in notes:  # records that could not be read again to be drawn: the page says which
                typer.echo(f"sessaudit: html report incomplete: {safe(note)}", err=True)

        if output_format is OutputFormat.CONSOLE:
            text = console(output is None and sys.stdout.isatty())
        elif output_format is OutputFormat.HTML:
            text = html
        else:
            text = render(output_format, result.report, times)
        if output is not None:
            write_atomically(output, text)
        elif not quiet:
            sys.stdout.write(text)
        for extra_format, extra_path in extra_outputs:
            if extra_format is OutputFormat.CONSOLE:
                extra_text = console(False)
            elif extra_format is OutputFormat.HTML:
                extra_text = html
            else:
                extra_text = render(extra_format, result.report, times)
            write_atomically(extra_path, extra_text)
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        wants_github = OutputFormat.GITHUB in {output_format, *(item for item, _ in extra_outputs)}
        if step_summary and wants_github:  # GitHub expects the summary appended, not replaced
            from sessaudit.reporters.github import render_github_summary

            try:
                with open(step_summary, "a", encoding="utf-8") as handle:
                    handle.write(render_github_summary(result.report))
            except OSError as error:
                raise OutputWriteError(Path(step_summary), error) from error
        for reason in result.incomplete:
            shown = _redact_text(reason, result.report) if redact else reason
            typer.echo(f"sessaudit: audit incomplete: {safe(shown)}", err=True)
        for line in gate_lines:
            typer.echo(f"sessaudit: fails {safe(line)}", err=True)
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        interrupted()
    except (SeedClash, OutputWriteError) as error:
        _fail(str(error), EXIT_USAGE)
    except OSError as error:
        if debug:
            traceback.print_exc()
        _fail(f"cannot write the report: {error}", EXIT_USAGE)
    except Exception as error:  # a bug: one line, the traceback only on request (CONTRACT §3)
        if debug:
            traceback.print_exc()
        _fail(internal_message(error, _redact_error(str(error)) if redact else None), EXIT_INTERNAL)
    raise typer.Exit(code)


def _html_page(
    report: Report, verified: Report, exit_status: int, max_line_bytes: int, redact: bool
) -> tuple[str, list[str], int]:
    """The HTML incident report of this audit, why records of a source could not be drawn (if so), and
    the exit status with that said (3 at least when any could not: the page is incomplete)."""
    from sessaudit.reporters.html import SeedFile, render_html
    from sessaudit.seedfiles import seed_file_name, seed_text
    from sessaudit.seeds import report_seeds, seed_document
    from sessaudit.timeline import build_timelines, redact_timelines, timelines_json

    timelines = build_timelines(report, verified, max_line_bytes=max_line_bytes)
    if redact:
        timelines = redact_timelines(timelines, report)
    notes = [item.note for item in timelines if item.note]
    status = max(exit_status, EXIT_INCOMPLETE) if notes else exit_status
    hashes = {source.path: source.sha256 for source in report.sources}
    seeds = [
        SeedFile(
            path,
            run_id,
            seed_file_name(item.session_id, run_id, hashes.get(path)),
            seed_text(seed_document(item)),
        )
        for path, run_id, item in report_seeds(report)
    ]
    page = render_html(
        report, timelines_json(timelines), seeds=seeds, exit_status=status, generated_at=utc_now()
    )
    return page, notes, status


def _redact_text(text: str, report: Report) -> str:
    from sessaudit.redact import redact_text

    return redact_text(text, report)


def _redact_error(text: str) -> str:
    from sessaudit.redact import redact_error

    return redact_error(text)


def _parse_reports(values: list[str]) -> list[tuple[OutputFormat, Path]]:
    """`--report FORMAT=FILE` values; a bad one is a usage error (CONTRACT §3)."""
    parsed = []
    choices = ", ".join(item.value for item in OutputFormat)
    for value in values:
        name, separator, file_name = value.partition("=")
        if not separator or not file_name:
            _fail(f"--report {value!r}: expected FORMAT=FILE (FORMAT one of {choices})", EXIT_USAGE)
        try:
            chosen = OutputFormat(name.strip().lower())
        except ValueError:
            _fail(f"--report {value!r}: unknown format {name!r} (one of {choices})", EXIT_USAGE)
        parsed.append((chosen, Path(file_name)))
    return parsed


def _write_baseline(path: Path, findings: list[Finding], redacted: Report | None = None) -> None:
    """`redacted`: the redacted report whose kept values the baseline's messages may still quote."""
    from sessaudit.baseline import render_baseline
    from sessaudit.redact import redact_baseline

    try:
        text = render_baseline(findings)
        write_atomically(path, redact_baseline(text, redacted) if redacted is not None else text)
    except OutputWriteError as error:
        _fail(f"--write-baseline: {error}", EXIT_USAGE)


def _resolve_policy(
    select: list[str] | None,
    ignore: list[str] | None,
    severity: list[str] | None,
    baseline: Path | None,
    gates: tuple[FailOn | None, list[str] | None, list[str] | None],
    config: Path | None,
    no_config: bool,
) -> Policy:
    """Flags over the configuration file; an unknown rule, a bad config or baseline exits 2 (CONTRACT §3)."""
    try:
        return resolve_policy(
            select=select,
            ignore=ignore,
            severity=severity,
            baseline=baseline,
            fail_on=gates[0].value if gates[0] is not None else None,
            fail_on_verdict=gates[1],
            fail_on_condition=gates[2],
            config_file=config,
            no_config=no_config,
        )
    except PolicyError as error:
        _fail(str(error), EXIT_USAGE)


def _usage_error(message: str) -> NoReturn:
    _fail(message, EXIT_USAGE)


@app.command(cls=PluginCommand)
def seed(
    path: Annotated[
        str, typer.Argument(help="A session log (a file, a run directory, a store), or a folder of them.")
    ],
    run: Annotated[str | None, typer.Option("--run", help="The run whose seed to print.")] = None,
    sequence: Annotated[
        int | None,
        typer.Option(
            "--sequence",
            min=0,
            help="Fork at fact/event sequence N instead (a line number where a format has no sequence).",
        ),
    ] = None,
    max_line_bytes: MaxLineBytesOption = DEFAULT_MAX_LINE_BYTES,
    max_file_bytes: MaxFileBytesOption = DEFAULT_MAX_FILE_BYTES,
    max_files: MaxFilesOption = DEFAULT_MAX_FILES,
    max_findings: MaxFindingsOption = DEFAULT_MAX_FINDINGS,
    redact: RedactOption = False,
    debug: DebugOption = False,
) -> None:
    """Print the seed of one open run (--run), or of every open run as a JSON array."""
    from sessaudit.redact import redact_report, redact_text
    from sessaudit.seeds import refused_sources, report_seeds, seed_document

    takeover = plugin_takeover()
    if takeover is not None and redact:
        _fail(f"{takeover} prints the source system's exact bytes, which cannot be redacted", EXIT_USAGE)
    try:
        if takeover is not None:  # the plugin whose source `path` is answers
            raise typer.Exit(take_over(takeover, path, run, sequence, _usage_error))
        options = VerifyOptions(
            extras=plugin_extras(_usage_error),
            fork_run=run,
            fork_sequence=sequence,
            limits=limits_of(max_line_bytes, max_file_bytes, max_files, max_findings),
        )
        result = audit([path], options=options)
        if redact:
            result = replace(result, report=redact_report(result.report))
        refused = refused_sources(result.report, result.corrupt, run)
        if refused:  # fail closed: nothing is printed from a history that fails verification
            for reason in [*refused, *(f"audit incomplete: {item}" for item in result.incomplete)]:
                typer.echo(
                    f"sessaudit: {safe(redact_text(reason, result.report) if redact else reason)}", err=True
                )
            if len(result.report.sources) > 1:  # a folder: say how the intact runs' seeds are still had
                typer.echo(
                    "sessaudit: no seed is printed for any source of this folder; name an intact source, "
                    "or pick its run with --run RUN_ID",
                    err=True,
                )
            raise typer.Exit(EXIT_INCOMPLETE if result.incomplete else EXIT_FINDINGS)
        seeds = [(run_id, item) for _, run_id, item in report_seeds(result.report)]
        if run is not None:
            seeds = [(run_id, item) for run_id, item in seeds if run_id == run]
            if not seeds:
                _fail(f"no open run {run!r} with a seed in {path} (see `sessaudit verify`)", EXIT_USAGE)
        elif sequence is not None and not seeds:
            _fail(f"sequence {sequence} is not a verified fact of an open run in {path}", EXIT_USAGE)
        elif sequence is not None and len(seeds) != 1:
            _fail(f"--sequence needs --run: {path} has {len(seeds)} open runs with seeds", EXIT_USAGE)
        point = seeds[0][1].fork_point if seeds else None
        # a format without sequence numbers forks at a line: N is then that line's number
        forks_at = (point.seq if point.seq is not None else point.line) if point is not None else None
        if sequence is not None and point is not None and forks_at != sequence:
            _fail(f"sequence {sequence} is not a verified fact of {path}", EXIT_USAGE)
        documents = [seed_document(item) for _, item in seeds]
        chosen: object = documents[0] if run is not None else documents
        sys.stdout.write(pretty_json(chosen))
        for reason in result.incomplete:
            shown = redact_text(reason, result.report) if redact else reason
            typer.echo(f"sessaudit: audit incomplete: {safe(shown)}", err=True)
        code = EXIT_INCOMPLETE if result.incomplete else EXIT_OK
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        interrupted()
    except Exception as error:
        if debug:
            traceback.print_exc()
        _fail(internal_message(error), EXIT_INTERNAL)
    raise typer.Exit(code)


@app.command()
def rules(
    code: Annotated[str | None, typer.Argument(help="A rule code (SA205) or name (seq-mismatch).")] = None,
) -> None:
    """List the rule catalogue, or explain one rule."""
    if code is None:
        for entry in catalogue().rules:
            verdict = entry.verdict.value if entry.verdict else "-"
            typer.echo(
                f"{entry.code}  {entry.name:<36} {entry.severity.value:<8} {verdict:<15} {entry.summary}"
            )
        return
    found = find_rule(code)
    if found is None:
        _fail(f"unknown rule {code!r} (see `sessaudit rules`)", EXIT_USAGE)
    entry = found
    typer.echo(f"{entry.code} {entry.name}")
    typer.echo(f"  default severity: {entry.severity.value}")
    typer.echo(f"  verdict effect:   {entry.verdict.value if entry.verdict else 'none'}")
    if entry.native_code:
        typer.echo(f"  native code:      {entry.native_code}")
    typer.echo("")
    typer.echo(f"{entry.summary}")
    typer.echo("")
    typer.echo(entry.doc)
    if entry.fix:
        typer.echo("")
        typer.echo(f"How to fix: {entry.fix}")
    typer.echo("")
    owner = registry().owner(entry.code)
    if owner is None or owner.name in registry().builtin:
        typer.echo(f"Example and more: docs/rules.md#{entry.code.lower()} in the sessaudit sources")
    else:
        typer.echo(f"From the {owner.name} format plugin, not part of sessaudit: see its own documentation")


@app.command()
def formats() -> None:
    """List the installed formats: name, versions, rule codes, what each recognises; broken plugins last."""
    installed = registry()
    width = max(min(shutil.get_terminal_size().columns, 100), 40)

    def detail(text: str) -> None:
        typer.echo(textwrap.fill(text, width, initial_indent="    ", subsequent_indent="    "))

    versions = {plugin.name: ", ".join(plugin.versions) or "-" for plugin in installed.plugins}
    names = max((len(name) for name in versions), default=0) + 1
    shown = max((len(text) for text in versions.values()), default=0)
    for plugin in installed.plugins:
        said = versions[plugin.name]
        typer.echo(f"{plugin.name:<{names}} versions {said:<{shown}} rules {code_range(plugin)}")
        detail(plugin.recognises)
    for item in installed.broken:
        typer.echo(f"{item.name:<12} BROKEN ({safe(item.target)})")
        detail(safe(item.reason))
    if installed.broken:
        raise typer.Exit(EXIT_INCOMPLETE)


# the DuckDB warehouse (CONTRACT §7): its commands live in cli_warehouse.py
app.command()(load)
app.command()(query)
app.command(cls=PluginCommand)(show)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"sessaudit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Audit and forensically analyse AI-agent session logs."""


def main() -> None:
    """Console entry point: usage errors exit 2, internal errors 4 (one line on stderr)."""
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:  # outside a command (while starting): the same one line
        sys.stderr.write("sessaudit: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as error:  # pragma: no cover - a last guard outside any command
        sys.stderr.write(f"sessaudit: internal error: {type(error).__name__}: {error}\n")
        sys.exit(EXIT_INTERNAL)
