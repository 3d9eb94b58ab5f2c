"""``hoodie read``: rows of a table through :func:`hoodie.read`.

This module turns the command's flags into Hudi read options (snapshot, time travel with
``as.of.instant``, a read-optimized query of base files only, or an incremental pull
between two instants), reads with a progress display (the engine handed to
:func:`hoodie.read` counts the files read), then keeps the asked-for columns and the first
``--limit`` rows and prints them, or with ``--output FILE`` writes every row (or the first
``--limit``) to a file (:mod:`hoodie.cli.row_files`). Hudi's meta columns
(``_hoodie_commit_time``, ...) are left out unless ``--meta`` is given or ``--columns``
names them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from rich.text import Text

import hoodie
from hoodie.cli.errors import UsageError
from hoodie.cli.instants import parse_instant
from hoodie.cli.output import ProgressEngine, note, progress, stdout_console
from hoodie.cli.row_files import FILE_FORMATS, OutputFile, output_file, write_rows
from hoodie.cli.rows import FORMATS, print_rows
from hoodie.table import HoodieTable
from hoodie.timeline import InstantTime

DEFAULT_LIMIT = 20
META_PREFIX = "_hoodie_"
QUERY_TYPE = "hoodie.datasource.query.type"
AS_OF = "as.of.instant"
BEGIN = "hoodie.datasource.read.begin.instanttime"
END = "hoodie.datasource.read.end.instanttime"


@dataclass(frozen=True)
class ReadRequest:
    """What to read and how to print it, validated."""

    path: str
    options: dict[str, str]
    columns: tuple[str, ...] | None
    limit: int | None  # None: every row
    fmt: str
    meta: bool
    as_of: str | None = None
    output: OutputFile | None = None  # --output: the rows go to this file


def make_request(
    path: str,
    as_of: str | None,
    begin: str | None,
    end: str | None,
    limit: int | None,
    columns: str | None,
    fmt: str,
    meta: bool,
    read_optimized: bool = False,
    output: str | None = None,
    force: bool = False,
) -> ReadRequest:
    """Validate the flags of ``hoodie read``; :class:`UsageError` names the bad one.
    ``limit`` None: the default, 20 rows printed or every row written to ``output``."""
    if output is None and fmt not in FORMATS:
        hint = f" ({fmt} writes a file: give --output FILE)" if fmt in FILE_FORMATS else ""
        raise UsageError(f"unknown format {fmt!r} for --format (expected one of: {', '.join(FORMATS)}){hint}")
    if output is not None and fmt not in FILE_FORMATS and fmt != "table":
        raise UsageError(f"unknown format {fmt!r} for --format with --output (expected one of: {', '.join(FILE_FORMATS)})")
    if force and output is None:
        raise UsageError("--force replaces the file --output names: give --output FILE")
    if limit is None:
        limit = 0 if output is not None else DEFAULT_LIMIT
    if end is not None and begin is None:
        raise UsageError(f"--end {end} needs --begin (an incremental pull starts after --begin; use --begin 0 for the beginning)")
    if as_of is not None and begin is not None:
        raise UsageError(f"--as-of {as_of} cannot be combined with --begin {begin}: choose time travel or an incremental pull")
    if read_optimized and begin is not None:
        raise UsageError(f"--read-optimized cannot be combined with --begin {begin}: an incremental pull is not a snapshot")
    if limit < 0:
        raise UsageError(f"invalid value {limit} for --limit: expected 0 (every row) or a positive number")
    options: dict[str, str] = {QUERY_TYPE: "read_optimized"} if read_optimized else {}
    as_of_instant = None
    if as_of is not None:
        as_of_instant = parse_instant(as_of, "--as-of")
        options[AS_OF] = as_of_instant
    if begin is not None:
        options[QUERY_TYPE] = "incremental"
        options[BEGIN] = parse_instant(begin, "--begin", allow_zero=True)
        if end is not None:
            options[END] = parse_instant(end, "--end")
            if InstantTime(options[BEGIN]) > InstantTime(options[END]):
                raise UsageError(f"--begin {begin} is after --end {end}: an incremental pull reads the commits after --begin up to --end")
    # the file is checked before anything is read (a read may take long); "table" is the
    # default format: the file's suffix then says which
    out = output_file(output, fmt if fmt in FILE_FORMATS else None, force) if output is not None else None
    return ReadRequest(path, options, _parse_columns(columns), limit or None, fmt, meta, as_of_instant, out)


def _parse_columns(columns: str | None) -> tuple[str, ...] | None:
    if columns is None:
        return None
    names = tuple(c.strip() for c in columns.split(",") if c.strip())
    if not names:
        raise UsageError(f"invalid value {columns!r} for --columns: expected column names separated by commas")
    return names


def run_read(request: ReadRequest) -> None:
    """Read as ``request`` says and print the rows, or write them to its output file."""
    table = HoodieTable.open(request.path)  # fails fast, with hoodie's message, when there is no table
    # an empty read's reason is logged by the planner and shown as a note (warnings_as_notes)
    with progress(f"Reading {table.name}") as display:
        data = hoodie.read(request.path, request.options, engine=ProgressEngine(display))
        data = choose_columns(data, request.columns, request.meta)
        total = data.num_rows
        shown = data.slice(0, request.limit) if request.limit is not None else data
        if request.output is not None:
            task = display.add_task(f"Writing {request.output.path}", total=shown.num_rows)
            write_rows(shown, request.output, lambda n: display.advance(task, n))
    if request.output is not None:
        rows = f"{shown.num_rows:,} row{'s' if shown.num_rows != 1 else ''}"
        of_total = f" (the first of {total:,})" if shown.num_rows < total else ""
        stdout_console().print(Text(f"wrote {rows}{of_total} to {request.output.path} ({request.output.fmt})"), soft_wrap=True)
        return
    print_rows(shown, request.fmt)
    caption = _caption(shown.num_rows, total)
    if request.fmt == "table":
        stdout_console().print(Text(caption), soft_wrap=True)
    elif shown.num_rows < total:
        note(caption)


def choose_columns(data: pa.Table, columns: Sequence[str] | None, meta: bool) -> pa.Table:
    """``columns`` in that order, else every data column (and meta columns if ``meta``)."""
    if columns is None:
        return data if meta else data.select([c for c in data.column_names if not c.startswith(META_PREFIX)])
    missing = [c for c in columns if c not in data.column_names]
    if missing:
        available = ", ".join(data.column_names) or "none"
        raise UsageError(f"unknown column {missing[0]!r} for --columns (columns: {available})")
    return data.select(list(columns))


def _caption(shown: int, total: int) -> str:
    if shown < total:
        return f"first {shown:,} of {total:,} rows (use --limit 0 for all)"
    return f"{total:,} row{'s' if total != 1 else ''}"
