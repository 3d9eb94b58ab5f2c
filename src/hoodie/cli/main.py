"""The ``hoodie`` typer application: command signatures, help texts and error handling.

Each command here declares its flags, opens the table and hands both to the module that
owns the command (:mod:`~hoodie.cli.timeline`, :mod:`~hoodie.cli.show`,
:mod:`~hoodie.cli.read`, :mod:`~hoodie.cli.metadata` to inspect; :mod:`~hoodie.cli.compaction`, :mod:`~hoodie.cli.clean`,
:mod:`~hoodie.cli.archive`, :mod:`~hoodie.cli.savepoint`, :mod:`~hoodie.cli.restore` and
:mod:`~hoodie.cli.explain` for the table services), which gathers and prints. Hudi options
for the services (``-o key=value``) are validated by :mod:`~hoodie.cli.options`. Command
bodies run inside
:func:`~hoodie.cli.errors.reporting_errors`, so that expected failures end as one red line
and exit code 1.
"""
from __future__ import annotations

import platform
from types import ModuleType
from typing import Annotated, Any

import typer

import hoodie
from hoodie.cli import archive as archive_cmd
from hoodie.cli import clean as clean_cmd
from hoodie.cli import compaction as compaction_cmd
from hoodie.cli import explain as explain_cmd
from hoodie.cli import metadata as metadata_cmd
from hoodie.cli import metadata_admin as metadata_admin_cmd
from hoodie.cli import read as read_cmd
from hoodie.cli import restore as restore_cmd
from hoodie.cli import savepoint as savepoint_cmd
from hoodie.cli import serve as serve_cmd
from hoodie.cli import show as show_cmd
from hoodie.cli import streamer as streamer_cmd
from hoodie.cli import timeline as timeline_cmd
from hoodie.cli import validate as validate_cmd
from hoodie.cli.errors import UsageError, reporting_errors
from hoodie.cli.instants import parse_instant
from hoodie.cli.options import CommandConfig, parse_options
from hoodie.cli.output import stdout_console, warnings_as_notes
from hoodie.cli.typer_app import HoodieTyper
from hoodie.config import HoodieConfig
from hoodie.metadata_table.listing import listed_through_metadata, metadata_listing
from hoodie.metadata_table.settings import MetadataSettings
from hoodie.metadata_table.sync import prepare_for_services, with_metadata_sync
from hoodie.table import HoodieTable

app = HoodieTyper(
    name="hoodie",
    help="Inspect, read and maintain Apache Hudi tables (hoodie: Hudi in Python, no JVM).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

PathArg = Annotated[str, typer.Argument(metavar="PATH", help="Base path of the table (local path or fsspec URL).", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
HudiOpts = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        metavar="KEY=VALUE",
        help="A Hudi option, e.g. -o hoodie.cleaner.commits.retained=5 (repeatable).",
        show_default=False,
    ),
]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Only print the plan; change nothing.")]
AsOfOpt = Annotated[
    str | None, typer.Option("--as-of", metavar="T", help="The table as of this instant (yyyyMMddHHmmss[SSS] or ISO time).", show_default=False)
]

compaction_app = HoodieTyper(
    name="compaction",
    help="Schedule, run and list compactions of merge-on-read tables.",
    no_args_is_help=True,
)
savepoint_app = HoodieTyper(
    name="savepoint",
    help="Create, delete and list savepoints (commits a table can be restored to).",
    no_args_is_help=True,
)
metadata_app = HoodieTyper(
    name="metadata",
    help="Inspect and validate the table's metadata table (.hoodie/metadata): partitions, files, state.",
    no_args_is_help=True,
)
app.add_typer(compaction_app)
app.add_typer(savepoint_app)
app.add_typer(metadata_app)


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
    warnings_as_notes()


@app.command()
def timeline(
    path: PathArg,
    all_instants: Annotated[
        bool, typer.Option("--all", "-a", help="Also show pending instants and non-write actions (clean, rollback, ...).")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", "-n", metavar="N", help="Show only the newest N instants.", show_default=False)] = None,
    calls: Annotated[bool, typer.Option("--calls", help="Also show the storage calls (lists, reads, writes, exists, deletes) each write made.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the instants of the table's timeline with the records each commit wrote."""
    with reporting_errors():
        if limit is not None and limit < 1:
            raise UsageError(f"invalid value {limit} for --limit: expected a positive number")
        table = HoodieTable.open(path)
        listing = timeline_cmd.list_timeline(table, include_all=all_instants, limit=limit)
        timeline_cmd.print_timeline(table, listing, as_json, calls)


@app.command()
def show(
    path: PathArg,
    partition: Annotated[
        str | None, typer.Option("--partition", "-p", metavar="P", help="Only this partition (relative path, e.g. 'year=2024/month=05').")
    ] = None,
    as_of: AsOfOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the table's configuration and its file groups and slices per partition."""
    with reporting_errors():
        table, instant = _table_as_of(path, as_of)
        report = show_cmd.describe_table(table, partition, instant)
        show_cmd.print_report(report, as_json)


@app.command()
def validate(path: PathArg, as_of: AsOfOpt = None, as_json: JsonOpt = False) -> None:
    """Check every file of the latest slices against the commit metadata; list what is missing or damaged."""
    with reporting_errors():
        table, instant = _table_as_of(path, as_of)
        report = validate_cmd.validate(table, instant)
    validate_cmd.print_report(report, as_json)


def _for_writing(path: str, config: CommandConfig, dry_run: bool = False) -> HoodieTable:
    """The table at ``path`` opened for a service that changes it: each instant it
    completes updates the table's metadata table first, once that metadata table is
    checked (and built again if another writer left it unusable) as a write checks it;
    a dry run changes nothing."""
    settings = MetadataSettings.of(config)
    if dry_run:
        return with_metadata_sync(_open(path, config), settings)
    return prepare_for_services(_open(path, config), settings)


def _table_as_of(path: str, as_of: str | None) -> tuple[HoodieTable, str | None]:
    """The table at ``path`` and the instant ``--as-of`` names (checked first)."""
    instant = parse_instant(as_of, "--as-of") if as_of is not None else None
    return _open(path), instant


def _open(path: str, config: HoodieConfig | None = None) -> HoodieTable:
    """The table at ``path``, its views listed through its metadata table unless
    ``-o hoodie.metadata.enable=false`` (:mod:`hoodie.metadata_table.listing`)."""
    return listed_through_metadata(HoodieTable.open(path), metadata_listing(config if config is not None else HoodieConfig.of({})))


@app.command()
def read(
    path: PathArg,
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="T", help="Time travel: the table as of this instant.")] = None,
    begin: Annotated[
        str | None, typer.Option("--begin", metavar="T", help="Incremental pull: records written after this instant (0: from the start).")
    ] = None,
    end: Annotated[str | None, typer.Option("--end", metavar="T", help="Incremental pull: up to and including this instant (needs --begin).")] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", metavar="N", help=f"At most N rows (0: all; default {read_cmd.DEFAULT_LIMIT} printed, all with --output)."),
    ] = None,
    columns: Annotated[str | None, typer.Option("--columns", "-c", metavar="A,B", help="Comma-separated columns to print, in order.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", metavar="FORMAT", help="Output format: table, json or csv; with --output parquet, csv, json or arrow.")
    ] = "table",
    meta: Annotated[bool, typer.Option("--meta", help="Include Hudi's _hoodie_* meta columns.")] = False,
    read_optimized: Annotated[
        bool, typer.Option("--read-optimized", help="Read base files only (merge-on-read tables: skip log files).")
    ] = False,
    output: Annotated[
        str | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Write the rows to FILE (.parquet, .csv, .json/.jsonl as JSON lines, .arrow/.feather) instead of printing."
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the --output file if it exists.")] = False,
) -> None:
    """Print rows of the table (or write them to a file): a snapshot, a time-travel read or an incremental pull."""
    with reporting_errors():
        request = read_cmd.make_request(path, as_of, begin, end, limit, columns, fmt.lower(), meta, read_optimized, output, force)
        read_cmd.run_read(request)


@compaction_app.command("schedule")
def compaction_schedule(
    path: PathArg,
    force: Annotated[bool, typer.Option("--force", help="Ignore the delta-commit threshold (hoodie.compact.inline.max.delta.commits).")] = False,
    options: HudiOpts = None,
    as_json: JsonOpt = False,
) -> None:
    """Plan a compaction now and save it as a requested compaction instant."""
    with reporting_errors():
        config = parse_options(options)
        compaction_cmd.schedule(_for_writing(path, config), config, force, as_json)


@compaction_app.command("run")
def compaction_run(
    path: PathArg,
    instant: Annotated[
        str | None, typer.Option("--instant", metavar="T", help="The pending compaction to run (default: the oldest).", show_default=False)
    ] = None,
    options: HudiOpts = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a pending compaction: merge each planned slice into a new base file."""
    with reporting_errors():
        config = parse_options(options)
        chosen = parse_instant(instant, "--instant") if instant is not None else None
        compaction_cmd.run(_for_writing(path, config), config, chosen, as_json)


@compaction_app.command("show")
def compaction_show(path: PathArg, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """List the pending compactions and the file slices each one compacts."""
    with reporting_errors():
        config = parse_options(options)
        compaction_cmd.show(_open(path, config), config, as_json)


@app.command()
def clean(path: PathArg, dry_run: DryRunOpt = False, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """Delete file slices that no retained commit reads any more (hoodie.cleaner.* options)."""
    _run_service(clean_cmd, path, dry_run, options, as_json)


@app.command()
def archive(path: PathArg, dry_run: DryRunOpt = False, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """Move the oldest instants to the archived timeline (hoodie.keep.min/max.commits)."""
    _run_service(archive_cmd, path, dry_run, options, as_json)


def _run_service(command: ModuleType, path: str, dry_run: bool, options: list[str] | None, as_json: bool) -> None:
    """A table service's CLI module (``run`` and ``dry_run``) on the table at ``path``."""
    with reporting_errors():
        config = parse_options(options)
        (command.dry_run if dry_run else command.run)(_for_writing(path, config, dry_run), config, as_json)


@savepoint_app.command("create")
def savepoint_create(
    path: PathArg,
    instant: Annotated[
        str | None, typer.Option("--instant", metavar="T", help="The completed commit to savepoint (default: the latest).", show_default=False)
    ] = None,
    user: Annotated[str, typer.Option("--user", metavar="U", help="Recorded as who made the savepoint.")] = "",
    comment: Annotated[str, typer.Option("--comment", metavar="C", help="Recorded with the savepoint.")] = "",
    options: HudiOpts = None,
    as_json: JsonOpt = False,
) -> None:
    """Savepoint a completed commit: its files are kept until the savepoint is deleted."""
    with reporting_errors():
        config = parse_options(options)
        chosen = parse_instant(instant, "--instant") if instant is not None else None
        savepoint_cmd.create(_for_writing(path, config), config, chosen, user, comment, as_json)


@savepoint_app.command("delete")
def savepoint_delete(
    path: PathArg,
    instant: Annotated[str, typer.Argument(metavar="T", help="The savepoint to delete (its instant time).", show_default=False)],
    options: HudiOpts = None,
) -> None:
    """Delete a savepoint; the files it kept can be cleaned again."""
    with reporting_errors():
        config = parse_options(options)
        chosen = parse_instant(instant, "T")
        savepoint_cmd.delete(_for_writing(path, config), config, chosen)


@savepoint_app.command("list")
def savepoint_list(path: PathArg, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """List the savepoints: commit, when, by whom, files kept, comment."""
    with reporting_errors():
        config = parse_options(options)
        savepoint_cmd.show_list(_open(path, config), config, as_json)


@app.command()
def restore(
    path: PathArg,
    to: Annotated[str, typer.Option("--to", metavar="T", help="The savepoint to restore to (its instant time).", show_default=False)],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    options: HudiOpts = None,
    as_json: JsonOpt = False,
) -> None:
    """Restore the table to a savepoint: undo every write after it, newest first."""
    with reporting_errors():
        config = parse_options(options)
        savepoint = parse_instant(to, "--to")
        restore_cmd.restore(_for_writing(path, config), config, savepoint, yes, as_json)


@app.command()
def explain(path: PathArg, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """Say whether compaction, cleaning and archival would run now, and why not."""
    with reporting_errors():
        config = parse_options(options)
        explain_cmd.print_explain(_open(path, config), config, as_json)


@metadata_app.command("list-partitions")
def metadata_list_partitions(
    path: PathArg,
    compare: Annotated[
        bool, typer.Option("--compare", help="Also list the partitions on storage; fail (exit 1) when the two differ.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the partitions the metadata table holds, and how long that took."""
    with reporting_errors():
        metadata_cmd.list_partitions(path, compare, as_json)


@metadata_app.command("list-files")
def metadata_list_files(
    path: PathArg,
    partition: Annotated[
        str | None,
        typer.Option("--partition", "-p", metavar="P", help="The partition (relative path; '.' or none: a non-partitioned table's root).", show_default=False),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the files and sizes the metadata table holds for a partition, and how long that took."""
    with reporting_errors():
        metadata_cmd.list_files(path, partition, as_json)


@metadata_app.command("stats")
def metadata_stats(path: PathArg, as_json: JsonOpt = False) -> None:
    """Show the metadata table's partitions (complete or not), latest slices and pending instants."""
    with reporting_errors():
        metadata_cmd.stats(path, as_json)


@metadata_app.command("create")
def metadata_create(path: PathArg, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """Build the metadata table of a table that has none, from one listing (-o hoodie.metadata.* picks its partitions)."""
    with reporting_errors():
        metadata_admin_cmd.create(path, parse_options(options), as_json)


@metadata_app.command("init")
def metadata_init(path: PathArg, options: HudiOpts = None, as_json: JsonOpt = False) -> None:
    """Delete the metadata table and build it again from one listing, with a progress bar."""
    with reporting_errors():
        metadata_admin_cmd.init(path, parse_options(options), as_json)


@metadata_app.command("delete")
def metadata_delete(path: PathArg, as_json: JsonOpt = False) -> None:
    """Remove the metadata table (hoodie.properties stops naming it first)."""
    with reporting_errors():
        metadata_admin_cmd.delete(path, as_json)


@metadata_app.command("validate")
def metadata_validate(
    path: PathArg,
    partition: Annotated[
        list[str] | None,
        typer.Option("--partition", "-p", metavar="P", help="Only this partition (repeatable; '.': a non-partitioned table's root).", show_default=False),
    ] = None,
    files: Annotated[bool, typer.Option("--files", help="Check the files partition: partitions, files and sizes.")] = False,
    column_stats: Annotated[bool, typer.Option("--column-stats", help="Check the column statistics against footers and log records.")] = False,
    bloom_filters: Annotated[bool, typer.Option("--bloom-filters", help="Check the bloom filters against the base files' footers and keys.")] = False,
    record_index: Annotated[bool, typer.Option("--record-index", help="Check the record index against the live keys.")] = False,
    repair: Annotated[
        bool, typer.Option("--repair", help="On any difference, rebuild the metadata table from a listing and validate again (no writer may be writing).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check the metadata table against the data (all the checks its partitions allow, or those named); exit 1 on any difference."""
    with reporting_errors():
        named = [c for c, on in (("files", files), ("column_stats", column_stats), ("bloom_filters", bloom_filters), ("record_index", record_index)) if on]
        metadata_cmd.validate(path, partition, named or None, as_json, metadata_admin_cmd.rebuild_as_it_was if repair else None)


@app.command("timeline-server")
def timeline_server(
    tables: Annotated[list[str], typer.Option("--table", metavar="PATH", help="A table to serve (repeatable).", show_default=False)],
    host: Annotated[str, typer.Option(help="Address to bind (a wildcard needs --allow-wildcard).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: a free one).")] = 26754,
    token: Annotated[
        str | None, typer.Option(help=f"Token every request must carry (default: ${serve_cmd.TOKEN_ENV}, else a new one, printed).", show_default=False)
    ] = None,
    batch_interval_ms: Annotated[int, typer.Option(help="hoodie.markers.timeline_server_based.batch.interval_ms (0: group commit)")] = 0,
    batch_threads: Annotated[int, typer.Option(help="hoodie.markers.timeline_server_based.batch.num_threads")] = 20,
    max_marker_bytes: Annotated[
        int, typer.Option(help="hoodie.markers.timeline_server_based.dir.max_bytes (bytes of marker names kept for one instant)")
    ] = 32 * 1024 * 1024,
    allow_wildcard: Annotated[bool, typer.Option(help="Allow a host that resolves to a wildcard address (every interface, as 0.0.0.0 or :: do).")] = False,
    view_store: Annotated[str, typer.Option(help="hoodie.filesystem.view.type: MEMORY, SPILLABLE_DISK or EMBEDDED_KV_STORE")] = "MEMORY",
    spillable_mem: Annotated[int, typer.Option(help="hoodie.filesystem.view.spillable.mem (bytes of listings in memory)")] = 100 * 1024 * 1024,
    rocksdb_path: Annotated[str, typer.Option(help="hoodie.filesystem.view.rocksdb.base.path")] = "/tmp/hoodie_timeline_rocksdb",
    no_token: Annotated[
        bool, typer.Option(help="Accept requests without a token, as Apache Hudi's writers send them (only with a loopback --host).")
    ] = False,
) -> None:
    """Serve tables' file-system views and markers to writers until interrupted (Ctrl-C)."""
    with reporting_errors():
        store = serve_cmd.store_settings(view_store, spillable_mem, rocksdb_path)
        batching = serve_cmd.marker_batching(batch_interval_ms, batch_threads, max_marker_bytes)
        serve_cmd.serve(tables, host, port, token, batching, allow_wildcard, store, require_token=not no_token)


def _flag(*names: str, metavar: str, help: str) -> Any:
    """A ``typer.Option`` that takes a value and shows no default."""
    return typer.Option(*names, metavar=metavar, help=help, show_default=False)


@app.command()
def streamer(
    path: PathArg,
    source: Annotated[str, _flag(
        "--source-class", "--source", metavar="KIND",
        help="json, csv, parquet, avro (files under hoodie.streamer.source.dfs.root) or hoodie (commits of the table "
        "hoodie.streamer.source.hoodieincr.path); Hudi's class names work too.",
    )],
    options: Annotated[list[str] | None, _flag(
        "--hoodie-conf", "--option", "-o", metavar="KEY=VALUE", help="A Hudi option (repeatable): write options and hoodie.streamer.*."
    )] = None,
    props: Annotated[str | None, _flag("--props", metavar="FILE", help="A properties file of Hudi options (key=value lines).")] = None,
    target_table: Annotated[str | None, _flag("--target-table", metavar="NAME", help="Table name (hoodie.table.name).")] = None,
    table_type: Annotated[str | None, _flag("--table-type", metavar="TYPE", help="COPY_ON_WRITE or MERGE_ON_READ.")] = None,
    op: Annotated[str | None, _flag("--op", metavar="OP", help="Write operation (upsert by default, insert, bulk_insert, ...).")] = None,
    ordering: Annotated[str | None, _flag(
        "--source-ordering-field", metavar="FIELD", help="The field whose larger value wins among versions of a key."
    )] = None,
    continuous: Annotated[bool, typer.Option("--continuous", help="Keep syncing until SIGINT or SIGTERM (otherwise one batch).")] = False,
    min_sync_interval: Annotated[float, typer.Option(
        "--min-sync-interval-seconds", metavar="S", help="Continuous mode: at least S seconds from one batch's start to the next."
    )] = 0.0,
    source_limit: Annotated[int | None, _flag(
        "--source-limit", metavar="BYTES", help="File sources: at most this many bytes of files a batch (at least one file)."
    )] = None,
    checkpoint: Annotated[str | None, _flag(
        "--checkpoint", metavar="C", help="Start from this checkpoint instead of the committed one (once per value)."
    )] = None,
    engine: Annotated[str, typer.Option("--engine", metavar="ENGINE", help="in-process, or spark (a local session, or spark-submit's).")] = "in-process",
    disable_compaction: Annotated[bool, typer.Option(
        "--disable-compaction", help="Never compact a merge-on-read target (otherwise inline when run once, asynchronously when continuous)."
    )] = False,
) -> None:
    """Ingest mini-batches from a source into the table at PATH, each batch one commit carrying its checkpoint."""
    with reporting_errors():
        flags = {"--target-table": target_table, "--table-type": table_type, "--op": op, "--source-ordering-field": ordering}
        settings = streamer_cmd.settings_from(path, source, props, options or [], flags, source_limit, checkpoint, not disable_compaction)
        streamer_cmd.run(settings, engine, continuous, min_sync_interval)


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
