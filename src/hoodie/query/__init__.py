"""Queries over a table: snapshot, time travel, read-optimized and incremental.

:mod:`planner` decides which file slices a query reads (timeline and file-system view
only); :mod:`slices` turns them into one Engine task per slice (or per few slices), each
read by :mod:`hoodie.table.slice_reader` (a base file, or a merge-on-read slice merged
with its log files for the instants the query sees); :mod:`reader` owns the query's
output schema; :mod:`snapshot` and :mod:`incremental` put these together;
:func:`read_table` is ``hoodie.read(path, options)``: it parses Hudi's read options and
dispatches. The query layer never writes.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from hoodie.engine import Engine
from hoodie.metadata_table.listing import listed_through_metadata
from hoodie.query.incremental import read_incremental
from hoodie.query.options import ReadRequest
from hoodie.query.planner import IncrementalPlan, plan_incremental, plan_snapshot, why_snapshot_is_empty
from hoodie.query.skipping import RowFilter
from hoodie.query.snapshot import read_optimized, read_snapshot
from hoodie.storage.base import Storage
from hoodie.table.slice_reader.for_compaction import merge_slice_for_compaction
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import (
    MergedSlice,
    MergeStats,
    merge_slice,
    read_slice,
)
from hoodie.table.slice_reader.merge_rules import MergeConfig, MergeMode
from hoodie.table.table import HoodieTable

__all__ = [
    "IncrementalPlan",
    "InstantFilter",
    "MergeConfig",
    "MergeMode",
    "MergeStats",
    "MergedSlice",
    "ReadRequest",
    "RowFilter",
    "merge_slice",
    "merge_slice_for_compaction",
    "plan_incremental",
    "plan_snapshot",
    "read_incremental",
    "read_optimized",
    "read_slice",
    "read_snapshot",
    "read_table",
    "why_snapshot_is_empty",
]


def read_table(
    path: str,
    options: Mapping[str, str] | None = None,
    storage: Storage | None = None,
    engine: Engine | None = None,
    filters: Sequence[Any] | None = None,
) -> pa.Table:
    """``hoodie.read(path, options)``: read the table at ``path`` as Hudi's options say.

    ``hoodie.datasource.query.type`` picks ``snapshot`` (default; with ``as.of.instant``
    for time travel), ``read_optimized`` (base files only) or ``incremental`` (needs
    ``hoodie.datasource.read.begin.instanttime``; ``...end.instanttime`` is optional).
    ``filters`` (pyarrow's DNF, as ``pq.read_table`` takes them) keep the matching rows;
    snapshot and read-optimized reads skip the files the metadata table's column
    statistics rule out (``hoodie.enable.data.skipping``, :mod:`hoodie.query.skipping`).
    """
    request = ReadRequest.of(options).values_from_files("hoodie.read")
    row_filter = RowFilter.of(filters)
    table = listed_through_metadata(HoodieTable.open(path, storage), request.listing)
    missing, corrupt = request.ignore_missing_files, request.ignore_corrupt_files
    if request.query_type == "incremental":
        assert request.begin is not None
        rows = read_incremental(
            table, request.begin, request.end, engine=engine, ignore_missing_files=missing, ignore_corrupt_files=corrupt,
            fallback=request.fallback_full_scan,
        )
        return row_filter.apply(rows) if row_filter is not None else rows
    read = read_optimized if request.query_type == "read_optimized" else read_snapshot
    return read(
        table, request.as_of, engine=engine, ignore_missing_files=missing, ignore_corrupt_files=corrupt,
        row_filter=row_filter, data_skipping=request.data_skipping,
    )
