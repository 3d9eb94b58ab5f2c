"""The ``hoodie`` typer application: command signatures, help texts and error handling.

Each command here declares its flags, opens the table and hands both to the module that
owns the command (:mod:`~hoodie.cli.timeline`, :mod:`~hoodie.cli.show`,
:mod:`~hoodie.cli.read`), which gathers and prints. Command bodies run inside
:func:`~hoodie.cli.errors.reporting_errors`, so that expected failures end as one red line
and exit code 1.
"""
from __future__ import annotations

import platform
from typing import Annotated, Optional

import typer

import hoodie
from hoodie.cli import read as read_cmd
from hoodie.cli import show as show_cmd
from hoodie.cli import timeline as timeline_cmd
from hoodie.cli.errors import UsageError, reporting_errors
from hoodie.cli.instants import parse_instant
from hoodie.cli.output import stdout_console
from hoodie.table.table import HoodieTable

app = typer.Typer(
    name="hoodie",
    help="Inspect and read Apache Hudi tables (hoodie: Hudi in Python, no JVM).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

PathArg = Annotated[str, typer.Argument(metavar="PATH", help="Base path of the table (local path or fsspec URL).", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _version_callback(value: bool) -> None:
    if value:
        _print_version()
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", help="Show the version and exit.", callback=_version_callback, is_eager=True)
    ] = False,
) -> None:
    """Inspect and read Apache Hudi tables."""


@app.command()
def timeline(
    path: PathArg,
    all_instants: Annotated[
        bool, typer.Option("--all", "-a", help="Also show pending instants and non-write actions (clean, rollback, ...).")
    ] = False,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", metavar="N", help="Show only the newest N instants.", show_default=False)] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the instants of the table's timeline with the records each commit wrote."""
    with reporting_errors():
        if limit is not None and limit < 1:
            raise UsageError(f"invalid value {limit} for --limit: expected a positive number")
        table = HoodieTable.open(path)
        listing = timeline_cmd.list_timeline(table, include_all=all_instants, limit=limit)
        timeline_cmd.print_timeline(table, listing, as_json)


@app.command()
def show(
    path: PathArg,
    partition: Annotated[
        Optional[str], typer.Option("--partition", "-p", metavar="P", help="Only this partition (relative path, e.g. 'year=2024/month=05').")
    ] = None,
    as_of: Annotated[
        Optional[str], typer.Option("--as-of", metavar="T", help="Show the file groups as of this instant (yyyyMMddHHmmss[SSS] or ISO time).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the table's configuration and its file groups and slices per partition."""
    with reporting_errors():
        instant = parse_instant(as_of, "--as-of") if as_of is not None else None
        table = HoodieTable.open(path)
        report = show_cmd.describe_table(table, partition, instant)
        show_cmd.print_report(report, as_json)


@app.command()
def read(
    path: PathArg,
    as_of: Annotated[Optional[str], typer.Option("--as-of", metavar="T", help="Time travel: the table as of this instant.")] = None,
    begin: Annotated[
        Optional[str], typer.Option("--begin", metavar="T", help="Incremental pull: records written after this instant (0: from the start).")
    ] = None,
    end: Annotated[Optional[str], typer.Option("--end", metavar="T", help="Incremental pull: up to and including this instant (needs --begin).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Print at most N rows (0: all).")] = read_cmd.DEFAULT_LIMIT,
    columns: Annotated[Optional[str], typer.Option("--columns", "-c", metavar="A,B", help="Comma-separated columns to print, in order.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="Output format: table, json or csv.")] = "table",
    meta: Annotated[bool, typer.Option("--meta", help="Include Hudi's _hoodie_* meta columns.")] = False,
    read_optimized: Annotated[
        bool, typer.Option("--read-optimized", help="Read base files only (merge-on-read tables: skip log files).")
    ] = False,
) -> None:
    """Print rows of the table: a snapshot, a time-travel read or an incremental pull."""
    with reporting_errors():
        request = read_cmd.make_request(path, as_of, begin, end, limit, columns, fmt.lower(), meta, read_optimized)
        read_cmd.run_read(request)


@app.command()
def version() -> None:
    """Show the version of hoodie and of the libraries it reads with."""
    _print_version()


def _print_version() -> None:
    import pyarrow

    console = stdout_console()
    console.print(f"hoodie {hoodie.__version__}", soft_wrap=True)
    console.print(f"pyarrow {pyarrow.__version__}, Python {platform.python_version()}", soft_wrap=True)


if __name__ == "__main__":  # python -m hoodie.cli.main
    app()
