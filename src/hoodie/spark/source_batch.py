"""Batch reads through hoodie's Python data source: ``spark.read.format("hoodie")`` when
:func:`~hoodie.spark.register` was not called (PySpark found the ``pyspark_hoodie``
package), and every SQL read of a catalog table ``USING hoodie`` (:mod:`hoodie.spark.catalog`).

The read is what ``hoodie.read(path, options)`` returns, by the same options
(:class:`~hoodie.query.options.ReadRequest`: snapshot, time travel with
``as.of.instant``, ``read_optimized``, ``incremental`` with begin/end instants): the query
layer plans the file slices where Spark plans the read; each input partition is one
slice, or a few slices with logs (:func:`~hoodie.query.slices.slice_tasks`), read on an
executor by the slice reader and sent as Arrow batches in the columns Spark asked for.

:func:`~hoodie.spark.register` stays the faster batch path where it is installed: its
``load`` reads base files with Spark's native Parquet reader (vectorized, pruned by
partition, data skipping by filters), which a Python data source cannot.

Where the path comes from: ``load(path)`` (or ``option("path", ...)``); for a catalog
table, to which Spark passes no options, the metadata :data:`SOURCE_KEY` the catalog sync
put on its first data column (path and query type); options given to the read win.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from hoodie.errors import ConfigError
from hoodie.metadata_table.listing import listed_through_metadata
from hoodie.query.incremental import range_filter, slices_for_range
from hoodie.query.options import ReadRequest
from hoodie.query.planner import plan_incremental, plan_snapshot
from hoodie.query.reader import output_schema
from hoodie.query.slices import base_files_only, slice_tasks
from hoodie.spark.source_write import path_option
from hoodie.spark.stream_source import SliceRead, read_slices
from hoodie.table.slice_reader.instants import CommitTimes, InstantFilter
from hoodie.table.table import HoodieTable

# field metadata of a catalog table's first data column: the table's path and read options
SOURCE_KEY = "hoodie.source"
# slices with logs are grouped into input partitions as for this many workers
_PLANNING_PARALLELISM = 8


def source_of(schema: StructType) -> dict[str, str] | None:
    """The path and options a registered table's schema carries (:data:`SOURCE_KEY`), or None."""
    for f in schema.fields:
        if SOURCE_KEY in (f.metadata or {}):
            return {str(k): str(v) for k, v in json.loads(f.metadata[SOURCE_KEY]).items()}
    return None


def read_target(options: Mapping[str, Any], schema: StructType | None) -> tuple[str, dict[str, str]]:
    """The table path and read options of a read given ``options`` and ``schema``."""
    given = {str(k): str(v) for k, v in options.items() if v is not None}
    path = path_option(given)
    rest = {k: v for k, v in given.items() if k.lower() != "path"}
    if path is not None:
        return path, rest
    catalog = source_of(schema) if schema is not None else None
    if catalog is None:
        raise ConfigError("spark.read.format('hoodie').load() needs a table path: load(path) or option('path', path)")
    catalog_path = catalog.pop("path")
    return catalog_path, {**catalog, **rest}


class HoodieBatchReader(DataSourceReader):
    """The batch reader of one read (module docstring). Holds no open table: Spark pickles
    it to its executors, where :meth:`read` runs."""

    def __init__(self, path: str, options: Mapping[str, str], schema: StructType) -> None:
        self.path = path
        self.request = ReadRequest.of(options).values_from_files("this reader")  # checked now: a bad option fails the read at once
        self.schema = schema

    def partitions(self) -> list[InputPartition]:
        request = self.request
        table = listed_through_metadata(HoodieTable.open(self.path), request.listing)
        rows: CommitTimes | None = None
        if request.query_type == "incremental":
            assert request.begin is not None
            plan = plan_incremental(table, request.begin, request.end, request.ignore_missing_files, request.fallback_full_scan)
            schema = output_schema(table, None, plan.slices)
            slices = slices_for_range(table, plan)
            visible = range_filter(table, plan)
            rows = plan.rows_in_range if plan.filter_rows else None
        else:
            slices = plan_snapshot(table, request.as_of, None, request.ignore_missing_files)
            if request.query_type == "read_optimized":
                slices = base_files_only(slices)
            schema = output_schema(table, request.as_of, slices)
            visible = InstantFilter.of_timeline(table.timeline, upto=request.as_of)
        if schema is None:
            return []
        tasks = slice_tasks(table, slices, schema, visible, None, _PLANNING_PARALLELISM, request.ignore_corrupt_files, rows)
        return [SliceRead(task, rows) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_slices(partition, self.schema)
