"""Rows of an Arrow table written to a file: ``hoodie read --output FILE``.

Formats: Parquet, CSV (a header row, values as :mod:`hoodie.cli.rows` prints them), JSON
lines (one object per line, values as ``--format json`` prints them) and Arrow IPC (the
Feather v2 file format). The format is ``--format`` when that names a file format, else
the file's suffix. The rows go to a hidden temporary file beside the target, which is
renamed over it only once every row is written: a failure (or Ctrl-C) part-way leaves no
file, and an existing file is replaced only with ``--force``, never half-overwritten.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import io
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.cli.errors import UsageError
from hoodie.cli.output import dumps
from hoodie.cli.rows import csv_value

# format name -> the suffixes that imply it
FILE_FORMATS: dict[str, tuple[str, ...]] = {
    "parquet": (".parquet",),
    "csv": (".csv",),
    "json": (".json", ".jsonl"),
    "arrow": (".arrow", ".feather"),
}
_BY_SUFFIX = {suffix: fmt for fmt, suffixes in FILE_FORMATS.items() for suffix in suffixes}
_BATCH_ROWS = 10_000  # rows written (and counted by the progress display) at a time


@dataclass(frozen=True)
class OutputFile:
    """Where ``hoodie read`` writes its rows, checked before anything is read."""

    path: str  # absolute
    fmt: str  # a key of FILE_FORMATS
    force: bool


def output_file(path: str, fmt: str | None, force: bool) -> OutputFile:
    """The file ``--output path`` names, in ``fmt`` (a file format given with ``--format``)
    or the one its suffix implies; :class:`UsageError` names a value that cannot be used."""
    target = os.path.abspath(os.path.expanduser(path))
    if fmt is None:
        suffix = os.path.splitext(target)[1].lower()
        if suffix not in _BY_SUFFIX:
            known = ", ".join(sorted(_BY_SUFFIX))
            raise UsageError(
                f"unknown file suffix {suffix or '(none)'!r} of --output {path}: expected one of {known}, "
                f"or give the format with --format {'|'.join(FILE_FORMATS)}"
            )
        fmt = _BY_SUFFIX[suffix]
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise UsageError(f"folder {parent} of --output {path} does not exist")
    if os.path.isdir(target):
        raise UsageError(f"--output {path} is a folder: give a file name")
    if os.path.lexists(target) and not force:
        raise UsageError(f"file {path} exists: use --force to replace it")
    return OutputFile(target, fmt, force)


def write_rows(data: pa.Table, out: OutputFile, advance: Callable[[int], None] = lambda n: None) -> None:
    """Write ``data`` to ``out`` whole or not at all; ``advance(n)`` after each ``n`` rows."""
    # (closed by the `with` below; opened first so that its name is known to the cleanup)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115
        dir=os.path.dirname(out.path), prefix=f".{os.path.basename(out.path)}.", suffix=".tmp", delete=False
    )
    tmp = handle.name
    try:
        with handle:
            _WRITERS[out.fmt](data, handle, advance)
        _publish(tmp, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _publish(tmp: str, out: OutputFile) -> None:
    """Move the finished temporary file to its name (readable as any file the user makes)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # NamedTemporaryFile makes it private to the owner
    if out.force:
        os.replace(tmp, out.path)
        return
    try:
        os.link(tmp, out.path)  # fails, rather than replaces, when the file appeared meanwhile
    except FileExistsError:
        raise UsageError(f"file {out.path} exists: use --force to replace it") from None
    except OSError:  # a file system without hard links: checked, then renamed
        if os.path.lexists(out.path):
            raise UsageError(f"file {out.path} exists: use --force to replace it") from None
        os.replace(tmp, out.path)
        return
    os.unlink(tmp)


def _batches(data: pa.Table) -> Iterator[pa.RecordBatch]:
    yield from data.to_batches(max_chunksize=_BATCH_ROWS)


def _write_batches(data: pa.Table, handle: IO[bytes], advance: Callable[[int], None], fmt: str) -> None:
    """Parquet or Arrow IPC: the table's record batches, with its Arrow types."""
    writer = pq.ParquetWriter(handle, data.schema) if fmt == "parquet" else pa.ipc.new_file(handle, data.schema)
    with writer:
        for batch in _batches(data):
            writer.write_batch(batch)
            advance(batch.num_rows)


def _write_json_lines(data: pa.Table, handle: IO[bytes], advance: Callable[[int], None]) -> None:
    for batch in _batches(data):
        handle.write("".join(dumps(row, indent=None) + "\n" for row in batch.to_pylist()).encode("utf-8"))
        advance(batch.num_rows)


def _write_csv(data: pa.Table, handle: IO[bytes], advance: Callable[[int], None]) -> None:
    text = io.TextIOWrapper(handle, encoding="utf-8", newline="")
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(data.column_names)
    for batch in _batches(data):
        writer.writerows([csv_value(row[name]) for name in data.column_names] for row in batch.to_pylist())
        advance(batch.num_rows)
    text.flush()
    text.detach()  # the handle stays open, its owner closes it


_WRITERS: dict[str, Callable[[pa.Table, IO[bytes], Callable[[int], None]], None]] = {
    "parquet": functools.partial(_write_batches, fmt="parquet"),
    "csv": _write_csv,
    "json": _write_json_lines,
    "arrow": functools.partial(_write_batches, fmt="arrow"),
}
