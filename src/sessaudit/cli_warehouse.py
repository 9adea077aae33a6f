"""The `load` and `query` commands (CONTRACT §2, §7): thin wrappers over `sessaudit.warehouse`.

Exit codes follow CONTRACT §3: 0 done, 2 usage error (bad flag, unknown query or parameter, a database or
dataset folder that cannot be used, SQL that fails), 3 the load is incomplete, 4 internal error (one line)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

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
    limits_of,
)
from sessaudit.cluster import ClusterPathError, ClusterUnavailable
from sessaudit.outputsafety import safe
from sessaudit.parallel import default_jobs, worker_failure
from sessaudit.plugin import VerifyOptions
from sessaudit.warehouse import QueryFormat

if TYPE_CHECKING:
    from sessaudit.warehouse.dataset import DatasetResult
    from sessaudit.warehouse.loader import LoadResult

EXIT_OK, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command ended by Ctrl-C


def interrupted() -> NoReturn:
    """Ctrl-C: one line, exit 130, no traceback; outputs are written atomically, so none is half-written."""
    typer.echo("sessaudit: interrupted", err=True)
    raise typer.Exit(EXIT_INTERRUPTED)


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"sessaudit: {safe(message)}", err=True)  # messages may quote paths and ids from logs
    raise typer.Exit(code)


def internal_message(error: BaseException, detail: str | None = None) -> str:
    """The one line for an error no command expected (`detail`: its text, when it must be redacted): a
    dead worker named as such, anything else as an internal error (CONTRACT §3)."""
    shown = str(error) if detail is None else detail
    return worker_failure(error) or (
        f"internal error: {type(error).__name__}: {shown} (rerun with --debug for details)"
    )


def _internal(error: Exception, debug: bool) -> NoReturn:
    if debug:
        traceback.print_exc()
    _fail(internal_message(error), EXIT_INTERNAL)


def load(
    paths: Annotated[list[str], typer.Argument(help="Session files and directories (walked recursively).")],
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="The DuckDB warehouse file (without it, --parquet DIR is the warehouse).",
            dir_okay=False,
        ),
    ] = None,
    parquet: Annotated[
        Path | None,
        typer.Option(
            "--parquet",
            help="With --db: also write every table as a Hive-partitioned Parquet dataset (format, day) in "
            "DIR. Without --db: DIR is the warehouse, a Parquet dataset written by the workers (one file "
            "set per task, a manifest committed at the end; a re-run skips unchanged sources).",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, help="Verify N sources at a time, in N processes [default: all cores]"),
    ] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="A price table (JSON, schemas/prices.v1.schema.json) overriding genai-prices' bundled one.",
            dir_okay=False,
        ),
    ] = None,
    max_line_bytes: MaxLineBytesOption = DEFAULT_MAX_LINE_BYTES,
    max_file_bytes: MaxFileBytesOption = DEFAULT_MAX_FILE_BYTES,
    max_files: MaxFilesOption = DEFAULT_MAX_FILES,
    max_findings: MaxFindingsOption = DEFAULT_MAX_FINDINGS,
    allow_empty: AllowEmptyOption = False,
    cluster: ClusterOption = None,
    debug: DebugOption = False,
) -> None:
    """Verify session logs and load them into a DuckDB warehouse or a Parquet dataset (changed sources
    replace their rows)."""
    # imported here, not at the top: `verify` and every other command never load duckdb or pyarrow
    from sessaudit.prices import PricesFileError
    from sessaudit.warehouse.dataset import DatasetError, load_dataset
    from sessaudit.warehouse.loader import LoadOptions, WarehouseError, load_warehouse
    from sessaudit.warehouse.parquet import ExportError
    from sessaudit.warehouse.schema import SchemaMismatch

    if db is None and parquet is None:
        _fail("name the warehouse: --db FILE (DuckDB), or --parquet DIR (a Parquet dataset)", EXIT_USAGE)
    if cluster is not None and jobs is not None:
        _fail("--cluster and --jobs: the cluster's workers are the jobs; give one of them", EXIT_USAGE)
    try:
        limits = limits_of(max_line_bytes, max_file_bytes, max_files, max_findings)
        verify_options = VerifyOptions(limits=limits, allow_empty=allow_empty)
        options = LoadOptions(
            jobs=jobs or default_jobs(),
            parquet=parquet if db is not None else None,
            verify=verify_options,
            prices=prices,
            cluster=cluster or None,
        )
        if db is None:
            assert parquet is not None
            written = load_dataset(paths, parquet, options)
        else:
            result = load_warehouse(paths, db, options)
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        interrupted()
    except (SchemaMismatch, ExportError, WarehouseError, PricesFileError, DatasetError) as error:
        _fail(str(error), EXIT_USAGE)
    except ClusterUnavailable as error:
        _fail(str(error), EXIT_USAGE)
    except ClusterPathError as error:
        _fail(f"load incomplete: {error}", EXIT_INCOMPLETE)
    except Exception as error:  # a bug: one line, the traceback only on request (CONTRACT §3)
        _internal(error, debug)
    if db is None:
        _report_dataset(written, parquet)
        raise typer.Exit(EXIT_INCOMPLETE if written.incomplete else EXIT_OK)
    _report_load(result, db, parquet)
    raise typer.Exit(EXIT_INCOMPLETE if result.incomplete else EXIT_OK)


def _report_load(result: LoadResult, db: Path, parquet: Path | None) -> None:
    from sessaudit.warehouse.loader import LOADED, REPLACED, UNCHANGED
    from sessaudit.warehouse.schema import SOURCE_TABLES

    for item in result.outcomes:
        if item.status == REPLACED:
            typer.echo(
                f"sessaudit: {safe(item.source.path)} changed ({item.detail}); its rows were replaced",
                err=True,
            )
    for reason in result.incomplete:
        typer.echo(f"sessaudit: load incomplete: {safe(reason)}", err=True)
    new, replaced, unchanged = (len(result.paths(status)) for status in (LOADED, REPLACED, UNCHANGED))
    rows = ", ".join(f"{table} {result.rows.get(table, 0)}" for table in SOURCE_TABLES)
    typer.echo(
        f"loaded {new + replaced} source(s) into {safe(db)} ({new} new, {replaced} replaced, {unchanged} "
        f"unchanged); rows: {rows}"
    )
    if parquet is not None and result.exported is not None:
        total = sum(result.exported.values())
        typer.echo(f"wrote {total} rows as Parquet under {safe(parquet)} (partitioned by format and day)")


def _report_dataset(result: DatasetResult, directory: Path | None) -> None:
    from sessaudit.warehouse.schema import SOURCE_TABLES

    for path, detail in result.replaced:
        typer.echo(f"sessaudit: {safe(path)} changed ({detail}); its rows were replaced", err=True)
    for reason in result.incomplete:
        typer.echo(f"sessaudit: load incomplete: {safe(reason)}", err=True)
    rows = ", ".join(f"{table} {result.rows.get(table, 0)}" for table in SOURCE_TABLES)
    typer.echo(
        f"loaded {result.new + len(result.replaced)} source(s) into the dataset {safe(directory)} "
        f"({result.new} new, {len(result.replaced)} replaced, {result.unchanged} unchanged, of which "
        f"{result.hashed} only hashed, not verified again); rows: {rows}"
    )


def query(
    name: Annotated[str | None, typer.Argument(help="A bundled query (see --list).")] = None,
    db: Annotated[
        Path | None,
        typer.Option("--db", help="The DuckDB warehouse file (opened read-only).", dir_okay=False),
    ] = None,
    parquet: Annotated[
        Path | None,
        typer.Option(
            "--parquet", help="A Parquet dataset (written by load --parquet DIR without --db) instead."
        ),
    ] = None,
    sql: Annotated[str | None, typer.Option("--sql", help="Run this SQL instead of a bundled query.")] = None,
    output_format: Annotated[
        QueryFormat, typer.Option("--format", help="How the answer is written to stdout.")
    ] = QueryFormat.TABLE,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="A query parameter K=V (repeatable).")
    ] = None,
    list_queries: Annotated[bool, typer.Option("--list", help="List the bundled queries.")] = False,
    debug: DebugOption = False,
) -> None:
    """Answer a bundled query, or SQL, on a warehouse opened read-only."""
    from sessaudit.warehouse.queries import QueryError, bind, find_query, run_sql
    from sessaudit.warehouse.render import RENDERERS

    try:
        if list_queries:
            sys.stdout.write(_listing())
            raise typer.Exit(EXIT_OK)
        if (name is None) == (sql is None):
            _fail("name one bundled query or give --sql (see `sessaudit query --list`)", EXIT_USAGE)
        if (db is None) == (parquet is None):
            _fail("name the warehouse: --db FILE, or --parquet DIR (a dataset)", EXIT_USAGE)
        target = db if db is not None else parquet
        assert target is not None
        given = _parameters(param or [])
        if name is not None:
            chosen = find_query(name)
            answer = run_sql(target, chosen.sql, bind(chosen, given), dataset=db is None)
        else:
            answer = run_sql(target, str(sql), dict(given), dataset=db is None)
        sys.stdout.write(RENDERERS[output_format](answer))
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        interrupted()
    except QueryError as error:
        _fail(str(error), EXIT_USAGE)
    except Exception as error:
        _internal(error, debug)
    raise typer.Exit(EXIT_OK)


def _parameters(items: list[str]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in items:
        key, separator, value = item.partition("=")
        if not separator or not key.strip():
            _fail(f"--param {item!r}: expected K=V", EXIT_USAGE)
        given[key.strip()] = value
    return given


def _listing() -> str:
    from sessaudit.warehouse.queries import bundled_queries

    lines = []
    for entry in bundled_queries().values():
        lines.append(f"{entry.name:<22}{entry.purpose}")
        for parameter in entry.parameters:
            lines.append(f"  --param {parameter.name}=<{parameter.type}>  {parameter.description}")
    return "\n".join(lines) + "\n"
