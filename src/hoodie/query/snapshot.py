"""Snapshot, time-travel and read-optimized queries.

A snapshot reads the latest slice of every live file group (as of an instant for time
travel). Copy-on-write slices are plain base files; merge-on-read slices with log files
are merged (:mod:`hoodie.table.slice_reader.merge`), replaying only the log blocks of instants
completed at or before the as-of instant. The read-optimized query reads just the base
files of the same slices, as Hudi's read-optimized view does. Nothing here writes.
"""
from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from hoodie.engine import Engine
from hoodie.query.planner import PartitionFilter, as_instant, plan_snapshot
from hoodie.query.reader import output_schema
from hoodie.query.skipping import RowFilter, prune_slices
from hoodie.query.slices import base_files_only, read_file_slices
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.table import HoodieTable


def read_snapshot(
    table: HoodieTable,
    as_of: str | None = None,
    columns: Sequence[str] | None = None,
    partition_filter: PartitionFilter | None = None,
    engine: Engine | None = None,
    ignore_missing_files: bool = False,
    ignore_corrupt_files: bool = False,
    row_filter: RowFilter | None = None,
    data_skipping: bool = True,
) -> pa.Table:
    """Every live record of ``table`` (as of ``as_of``), as one Arrow table.

    A file that a completed instant wrote and that the read needs is missing or damaged:
    :class:`~hoodie.errors.DamagedTableError`, or, with ``ignore_missing_files`` /
    ``ignore_corrupt_files`` (Spark's ``ignoreMissingFiles`` / ``ignoreCorruptFiles``),
    a warning naming it and a read of the rest.

    ``row_filter`` keeps the rows it matches; with ``data_skipping`` the slices whose
    files' column statistics rule it out are not read (:mod:`hoodie.query.skipping`).

    The result has the query schema of :func:`hoodie.query.reader.output_schema`
    (optionally projected to ``columns``); an empty table keeps that schema, and a table
    with no schema at all (created, never written, no create schema) reads as an empty
    ``pa.table``.
    """
    return _read(table, as_of, columns, partition_filter, engine, False, ignore_missing_files, ignore_corrupt_files, row_filter, data_skipping)


def read_optimized(
    table: HoodieTable,
    as_of: str | None = None,
    columns: Sequence[str] | None = None,
    partition_filter: PartitionFilter | None = None,
    engine: Engine | None = None,
    ignore_missing_files: bool = False,
    ignore_corrupt_files: bool = False,
    row_filter: RowFilter | None = None,
    data_skipping: bool = True,
) -> pa.Table:
    """The base files of the latest slices only: on merge-on-read tables, the state as of
    the last compaction of each file group (log files are not read). Damaged files as
    for :func:`read_snapshot`, and so are ``row_filter`` and ``data_skipping``."""
    return _read(table, as_of, columns, partition_filter, engine, True, ignore_missing_files, ignore_corrupt_files, row_filter, data_skipping)


def _read(
    table: HoodieTable,
    as_of: str | None,
    columns: Sequence[str] | None,
    partition_filter: PartitionFilter | None,
    engine: Engine | None,
    read_optimized: bool,
    ignore_missing_files: bool,
    ignore_corrupt_files: bool,
    row_filter: RowFilter | None,
    skip: bool,
) -> pa.Table:
    as_of = as_instant(as_of) if as_of is not None else None
    slices = plan_snapshot(table, as_of, partition_filter, ignore_missing_files)
    if read_optimized:
        slices = base_files_only(slices)
    schema = output_schema(table, as_of, slices)
    if schema is None:
        return pa.table({})
    if row_filter is not None:
        row_filter.check_columns(schema)
        if skip:
            # the record index places keys as they are now: only the latest snapshot asks it
            slices = prune_slices(table, slices, row_filter, by_record_index=as_of is None and not read_optimized)
    visible = InstantFilter.of_timeline(table.timeline, upto=as_of)
    what = "read_optimized: read base files" if read_optimized else "snapshot: read file slices"
    if row_filter is None:
        return read_file_slices(table, slices, schema, visible, columns, engine, what, ignore_corrupt_files)
    # filter before projecting: the filter may name columns the projection leaves out
    rows = row_filter.apply(read_file_slices(table, slices, schema, visible, None, engine, what, ignore_corrupt_files))
    return rows.select(list(columns)) if columns is not None else rows
