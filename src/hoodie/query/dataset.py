"""Lazy views of a table's snapshot as ``pyarrow.dataset`` datasets, for Python engines.

DuckDB, Polars (``scan_pyarrow_dataset``), pandas (through ``to_table``) and anything else
that scans a ``pyarrow.dataset.Dataset`` read a hoodie table through :func:`open_dataset`
without loading it: they ask the dataset's ``schema``, then call ``scanner(columns=...,
filter=...)`` (or ``to_batches``/``to_table``, which call it) and pull record batches.

* Copy-on-write tables, read-optimized queries and merge-on-read snapshots without log
  files are a plain :class:`pyarrow.dataset.FileSystemDataset` of the base files of the
  latest slices, as hoodie plans them (through the metadata table, or its listing: Arrow
  never lists a folder). Each fragment carries the partition expression its path
  determines exactly (:mod:`hoodie.table.partition_values`: partition columns typed as
  the table's), so Arrow prunes partitions, Parquet row groups by their statistics and
  columns by the projection.
* A merge-on-read snapshot with log files is a :class:`MergedDataset`: a
  ``FileSystemDataset`` subclass whose slices without logs stay Parquet fragments, while
  each slice with logs is merged by hoodie's slice reader when a scan reaches it, one
  slice at a time (a few in parallel). Its partition pruning is Arrow's, on the same
  partition expressions.

Filters given up front (pyarrow's DNF, as :func:`hoodie.read` takes them) also skip the
slices the metadata table's column statistics (and record index) rule out, and stay on
the dataset as its filter, so every scan returns only matching rows. Time travel
(``as.of.instant``) is a snapshot as of that instant. It reads; it never writes.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hoodie.errors import ConfigError, UnsupportedTableError
from hoodie.metadata_table.listing import listed_through_metadata
from hoodie.query.options import ReadRequest
from hoodie.query.planner import plan_snapshot
from hoodie.query.reader import output_schema
from hoodie.query.skipping import RowFilter, prune_slices
from hoodie.query.slices import base_files_only, check_parquet
from hoodie.storage.base import Storage, arrow_path
from hoodie.table.file_group import FileSlice
from hoodie.table.partition_values import PartitionScheme
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import MergeSliceTask, run_merge_task
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable

__all__ = ["MergedDataset", "open_dataset", "pieces"]

# Slices with logs merged ahead of the consumer: enough to keep two cores busy, few
# enough that memory stays a handful of slices.
MERGE_AHEAD = 2


def open_dataset(path: str, options: Mapping[str, Any] | None = None, storage: Storage | None = None, filters: Sequence[Any] | None = None) -> ds.Dataset:
    """The snapshot (or read-optimized view, or time travel) of the table at ``path`` as
    a lazy ``pyarrow.dataset.Dataset`` (module docstring). ``options`` are Hudi's read
    options; an incremental query is refused (``hoodie.read`` pulls one)."""
    request = ReadRequest.of(options)
    if request.query_type == "incremental":
        raise ConfigError(
            "hoodie.dataset reads snapshots, read-optimized views and time travel; "
            "hoodie.datasource.query.type=incremental is read with hoodie.read"
        )
    row_filter = RowFilter.of(filters)
    table = listed_through_metadata(HoodieTable.open(path, storage), request.listing)
    as_of = request.as_of
    slices = plan_snapshot(table, as_of, None, request.ignore_missing_files)
    read_optimized = request.query_type == "read_optimized"
    if read_optimized:
        slices = base_files_only(slices)
    schema = output_schema(table, as_of, slices)
    fs, _ = table.storage.arrow_filesystem()
    if schema is None:
        return ds.FileSystemDataset([], pa.schema([]), ds.ParquetFileFormat(), fs)
    if row_filter is not None:
        row_filter.check_columns(schema)
        if request.data_skipping:
            # the record index places keys as they are now: only the latest snapshot asks it
            slices = prune_slices(table, slices, row_filter, by_record_index=as_of is None and not read_optimized)
    for s in slices:
        check_parquet(table, s)
    scheme = PartitionScheme.of(table.config)
    fmt = ds.ParquetFileFormat()
    fragments = [_fragment(table.storage, fmt, s, _partition_expression(scheme, s.partition_path, schema)) for s in slices]
    dataset_filter = row_filter.expression() if row_filter is not None else None
    merges = {
        fragment.path: MergeSliceTask(
            table.storage, s, schema, MergeConfig.for_table(table.config), InstantFilter.of_timeline(table.timeline, upto=as_of),
            ignore_corrupt=request.ignore_corrupt_files,
        )
        for s, fragment in zip(slices, fragments)
        if s.log_files
    }
    if not merges:
        plain = ds.FileSystemDataset(fragments, schema, fmt, fs)
        return plain.filter(dataset_filter) if dataset_filter is not None else plain
    return MergedDataset(fragments, schema, fs, merges, dataset_filter)


def _fragment(storage: Storage, fmt: ds.ParquetFileFormat, s: FileSlice, partition: pc.Expression) -> ds.Fragment:
    """The slice's base file as a fragment; a slice with logs is stood for by its first
    log file, which no Parquet reader accepts: a scan that bypasses
    :class:`MergedDataset` (an Arrow join of the raw dataset, say) fails loudly instead of
    returning base rows without their updates."""
    if s.log_files:
        fs, path = arrow_path(storage, s.log_files[0].path)
        return fmt.make_fragment(path, fs, partition, file_size=s.log_files[0].size)
    assert s.base_file is not None
    fs, path = arrow_path(storage, s.base_file.path)
    return fmt.make_fragment(path, fs, partition, file_size=s.base_file.size)


def _partition_expression(scheme: PartitionScheme, partition_path: str, schema: pa.Schema) -> pc.Expression:
    """What the partition path says exactly about the partition columns, as an expression
    true for every row of the partition (``true`` when it says nothing)."""
    terms = [
        pc.field(name).is_null() if value is None else pc.field(name) == pa.scalar(value, schema.field(name).type)
        for name, value in scheme.literals(partition_path, schema).items()
    ]
    return functools.reduce(operator.and_, terms) if terms else pc.scalar(True)


class MergedDataset(ds.FileSystemDataset):
    """A merge-on-read snapshot: Parquet fragments for the slices without logs, slices
    with logs merged by hoodie when a scan reaches them.

    Engines call :meth:`scanner` (``to_table``, ``to_batches``, ``head``, ``count_rows``
    and ``take`` go through it): the fragments are pruned by their partition
    expressions as Arrow prunes them, the Parquet fragments scanned by Arrow with the
    projection and filter, and the merged slices' rows filtered and projected alike,
    one record-batch stream. The Arrow dataset underneath holds a stand-in fragment per
    slice with logs (its first log file), so whatever reads it without this class fails
    instead of reading stale rows.
    """

    def __init__(
        self, fragments: Sequence[ds.Fragment], schema: pa.Schema, filesystem: Any, merges: Mapping[str, MergeSliceTask],
        row_filter: pc.Expression | None = None,
    ) -> None:
        super().__init__(list(fragments), schema, ds.ParquetFileFormat(), filesystem)
        self._fragments = list(fragments)
        self._filesystem = filesystem
        self._merges = dict(merges)
        self._row_filter = row_filter

    def __reduce__(self) -> tuple[Any, ...]:
        # Polars pickles the dataset into its plan: rebuild this class, not a bare FileSystemDataset
        return (MergedDataset, (self._fragments, self.schema, self._filesystem, self._merges, self._row_filter))

    def filter(self, expression: pc.Expression) -> MergedDataset:
        return MergedDataset(self._fragments, self.schema, self._filesystem, self._merges, self._combined(expression))

    def scanner(self, columns: Any = None, filter: pc.Expression | None = None, **kwargs: Any) -> ds.Scanner:  # noqa: A002 (pyarrow's name)
        filter = self._combined(filter)  # noqa: A001
        wanted = ds.FileSystemDataset.get_fragments(self, filter=filter) if filter is not None else self._fragments
        plain: list[ds.Fragment] = []
        merged: list[ds.Fragment] = []
        for fragment in wanted:
            (merged if fragment.path in self._merges else plain).append(fragment)
        files = ds.FileSystemDataset(plain, self.schema, self.format, self._filesystem).scanner(columns=columns, filter=filter, **kwargs)
        tasks = [self._merges[f.path] for f in merged]
        # a plain list of names can be read by the merge itself; expressions need every column
        names = tuple(columns) if isinstance(columns, list) and filter is None else None
        merged_rows = ds.Scanner.from_batches(
            _merged_batches(tasks, names), schema=_projected(self.schema, names), columns=columns, filter=filter,
        )
        return ds.Scanner.from_batches(
            _chain(files, merged_rows), schema=files.projected_schema,
            **{k: v for k, v in kwargs.items() if k in ("batch_size", "use_threads", "memory_pool")},
        )

    def pieces(self, filter: pc.Expression | None = None) -> list[ds.Dataset]:  # noqa: A002
        """One dataset per Parquet fragment and per slice with logs that ``filter`` (with
        this dataset's own) may match by partition: the units an engine scans in parallel."""
        combined = self._combined(filter)
        wanted = ds.FileSystemDataset.get_fragments(self, filter=combined) if combined is not None else self._fragments
        return [
            MergedDataset([f], self.schema, self._filesystem, {f.path: self._merges[f.path]}, self._row_filter)
            if f.path in self._merges
            else ds.FileSystemDataset([f], self.schema, self.format, self._filesystem)
            for f in wanted
        ]

    def _combined(self, filter: pc.Expression | None) -> pc.Expression | None:  # noqa: A002
        if self._row_filter is None:
            return filter
        return self._row_filter if filter is None else self._row_filter & filter

    def get_fragments(self, filter: pc.Expression | None = None) -> Iterator[ds.Fragment]:  # noqa: A002
        raise UnsupportedTableError(
            "a merge-on-read snapshot with log files has no Arrow fragment for its merged slices; "
            "scan it (scanner, to_batches, to_table), or read it with hoodie.datasource.query.type=read_optimized"
        )

    def sort_by(self, sorting: Any, **kwargs: Any) -> ds.Dataset:
        return ds.InMemoryDataset(self.to_table()).sort_by(sorting, **kwargs)

    def join(self, right_dataset: Any, keys: Any, *args: Any, **kwargs: Any) -> ds.Dataset:
        return ds.InMemoryDataset(self.to_table()).join(right_dataset, keys, *args, **kwargs)

    def join_asof(self, right_dataset: Any, on: Any, by: Any, tolerance: Any, *args: Any, **kwargs: Any) -> ds.Dataset:
        return ds.InMemoryDataset(self.to_table()).join_asof(right_dataset, on, by, tolerance, *args, **kwargs)

    def replace_schema(self, schema: pa.Schema) -> MergedDataset:
        raise UnsupportedTableError("a merge-on-read snapshot keeps the table's schema; project or cast its scan instead")


def pieces(dataset: ds.Dataset, filter: pc.Expression | None = None) -> list[ds.Dataset]:  # noqa: A002
    """The datasets :func:`open_dataset` made, cut in pieces (:meth:`MergedDataset.pieces`);
    a plain dataset's pieces are its fragments, each a dataset of its own (without the
    plain dataset's filter: the caller applies it)."""
    if isinstance(dataset, MergedDataset):
        return dataset.pieces(filter)
    assert isinstance(dataset, ds.FileSystemDataset)
    fragments = dataset.get_fragments(filter=filter) if filter is not None else dataset.get_fragments()
    return [ds.FileSystemDataset([f], dataset.schema, dataset.format, dataset.filesystem) for f in fragments]


def _projected(schema: pa.Schema, names: tuple[str, ...] | None) -> pa.Schema:
    return schema if names is None else pa.schema([schema.field(n) for n in names])


def _chain(*scanners: ds.Scanner) -> Iterator[pa.RecordBatch]:
    for scanner in scanners:
        yield from scanner.to_batches()


def _merged_batches(tasks: Sequence[MergeSliceTask], columns: tuple[str, ...] | None) -> Iterator[pa.RecordBatch]:
    """The merged rows of ``tasks`` in order, a few slices merged ahead on threads (the
    merge spends its time in Arrow and numpy, which release the GIL)."""
    if not tasks:
        return
    tasks = [t if t.columns == columns else _with_columns(t, columns) for t in tasks]
    with ThreadPoolExecutor(MERGE_AHEAD, thread_name_prefix="hoodie-merge") as pool:
        ahead: list[Future[pa.Table]] = []
        for task in tasks:
            ahead.append(pool.submit(run_merge_task, task))
            if len(ahead) > MERGE_AHEAD:
                yield from ahead.pop(0).result().to_batches()
        for future in ahead:
            yield from future.result().to_batches()


def _with_columns(task: MergeSliceTask, columns: tuple[str, ...] | None) -> MergeSliceTask:
    return dataclasses.replace(task, columns=columns)
