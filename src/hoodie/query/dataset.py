"""Lazy views of a table (snapshot, time travel, incremental pull) as ``pyarrow.dataset`` datasets, for Python engines.

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
* An incremental query (``hoodie.datasource.query.type=incremental``) is a
  :class:`MergedDataset` of which hoodie reads every slice, as ``hoodie.read`` pulls it:
  the rows committed in the range, merged slices with the range's log blocks and base rows.
  So is every base file of a read with ``ignoreCorruptFiles``, which hoodie's reader reads
  around with a warning where Arrow would fail.

Filters given up front (pyarrow's DNF, as :func:`hoodie.read` takes them) also skip the
slices the metadata table's column statistics (and record index) rule out (snapshots
only, as for ``hoodie.read``), and stay on the dataset as its filter, so every scan
returns only matching rows. Time travel (``as.of.instant``) is a snapshot as of that
instant. It reads; it never writes.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from hoodie.errors import UnsupportedTableError
from hoodie.metadata_table.listing import listed_through_metadata
from hoodie.query.incremental import range_filter, slices_for_range
from hoodie.query.options import ReadRequest
from hoodie.query.planner import plan_incremental, plan_snapshot
from hoodie.query.reader import output_schema
from hoodie.query.skipping import RowFilter, prune_slices
from hoodie.query.slices import base_files_only, check_parquet, run_slice_task
from hoodie.storage.base import Storage, arrow_path
from hoodie.table.file_group import FileSlice
from hoodie.table.partition_values import PartitionScheme
from hoodie.table.slice_reader.base_file import BaseFileTask
from hoodie.table.slice_reader.instants import CommitTimes, InstantFilter
from hoodie.table.slice_reader.merge import MergeSliceTask
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable

__all__ = ["MergedDataset", "open_dataset", "pieces"]

# Slices hoodie reads ahead of the consumer: enough to keep two cores busy, few enough
# that memory stays a handful of slices.
MERGE_AHEAD = 2
# What hoodie's reader reads of one slice when a scan reaches it.
SliceRead = BaseFileTask | MergeSliceTask
# Appended to a slice's file to name its stand-in fragment (a path no file has).
STAND_IN = ".hoodie-slice"
# A plain dataset :func:`open_dataset` filtered -> the dataset before its filter, and the
# filter: Arrow gives no fragments of a filtered dataset, nor its filter, and :func:`pieces`
# needs both. Weak: the entry goes with the dataset.
_FILTERED: weakref.WeakKeyDictionary[ds.Dataset, tuple[ds.FileSystemDataset, pc.Expression]] = weakref.WeakKeyDictionary()


def open_dataset(path: str, options: Mapping[str, Any] | None = None, storage: Storage | None = None, filters: Sequence[Any] | None = None) -> ds.Dataset:
    """The table at ``path`` as a lazy ``pyarrow.dataset.Dataset`` (module docstring):
    its snapshot, read-optimized view, time travel or incremental pull, by Hudi's read
    options as :func:`hoodie.read` takes them."""
    request = ReadRequest.of(options).values_from_files("a dataset")
    row_filter = RowFilter.of(filters)
    table = listed_through_metadata(HoodieTable.open(path, storage), request.listing)
    if request.query_type == "incremental":
        return _incremental(table, request, row_filter)
    as_of = request.as_of
    slices = plan_snapshot(table, as_of, None, request.ignore_missing_files)
    read_optimized = request.query_type == "read_optimized"
    if read_optimized:
        slices = base_files_only(slices)
    schema = output_schema(table, as_of, slices)
    if schema is None:
        return _empty(table)
    if row_filter is not None:
        row_filter.check_columns(schema)
        if request.data_skipping:
            # the record index places keys as they are now: only the latest snapshot asks it
            slices = prune_slices(table, slices, row_filter, by_record_index=as_of is None and not read_optimized)
    merge = MergeConfig.for_table(table.config)
    visible = InstantFilter.of_timeline(table.timeline, upto=as_of)
    corrupt = request.ignore_corrupt_files

    def read_of(s: FileSlice) -> SliceRead | None:
        if s.log_files:
            return MergeSliceTask(table.storage, s, schema, merge, visible, ignore_corrupt=corrupt)
        if corrupt and s.base_file is not None:
            return BaseFileTask(table.storage, s.base_file.path, schema, ignore_corrupt=True)
        return None  # a Parquet fragment Arrow scans

    return _assemble(table, slices, schema, read_of, row_filter, None)


def _incremental(table: HoodieTable, request: ReadRequest, row_filter: RowFilter | None) -> ds.Dataset:
    """An incremental pull (:mod:`hoodie.query.incremental`), every slice read by hoodie."""
    assert request.begin is not None
    plan = plan_incremental(table, request.begin, request.end, request.ignore_missing_files, request.fallback_full_scan)
    schema = output_schema(table, None, plan.slices)
    if schema is None:
        return _empty(table)
    if row_filter is not None:
        row_filter.check_columns(schema)
    merge = MergeConfig.for_table(table.config)
    visible = range_filter(table, plan)
    rows = plan.rows_in_range if plan.filter_rows else None
    corrupt = request.ignore_corrupt_files

    def read_of(s: FileSlice) -> SliceRead | None:
        if s.log_files:
            return MergeSliceTask(table.storage, s, schema, merge, visible, ignore_corrupt=corrupt, base_rows=rows)
        assert s.base_file is not None
        return BaseFileTask(table.storage, s.base_file.path, schema, ignore_corrupt=corrupt)

    # a slice whose base file predates the range and that has no logs holds none of its rows
    slices = [s for s in slices_for_range(table, plan) if s.base_file is not None or s.log_files]
    return _assemble(table, slices, schema, read_of, row_filter, rows)


def _empty(table: HoodieTable) -> ds.Dataset:
    """A table with no schema at all (created, never written): no columns, no rows."""
    return ds.FileSystemDataset([], pa.schema([]), ds.ParquetFileFormat(), table.storage.arrow_filesystem()[0])


def _assemble(
    table: HoodieTable, slices: Sequence[FileSlice], schema: pa.Schema, read_of: Callable[[FileSlice], SliceRead | None],
    row_filter: RowFilter | None, keep_rows: CommitTimes | None,
) -> ds.Dataset:
    """The dataset of ``slices``: a Parquet fragment for each that ``read_of`` leaves to
    Arrow, and a stand-in fragment with hoodie's read for the others."""
    scheme = PartitionScheme.of(table.config)
    fmt = ds.ParquetFileFormat()
    fragments = []
    reads: dict[str, SliceRead] = {}
    for s in slices:
        check_parquet(table, s)
        partition = _partition_expression(scheme, s.partition_path, schema)
        read = read_of(s)
        fragment = _fragment(table.storage, fmt, s, partition, stand_in=read is not None)
        if read is not None:
            reads[fragment.path] = read
        fragments.append(fragment)
    fs, _ = table.storage.arrow_filesystem()
    dataset_filter = row_filter.expression() if row_filter is not None else None
    if not reads:
        plain = ds.FileSystemDataset(fragments, schema, fmt, fs)
        if dataset_filter is None:
            return plain
        filtered = plain.filter(dataset_filter)
        _FILTERED[filtered] = (plain, dataset_filter)
        return filtered
    return MergedDataset(fragments, schema, fs, reads, dataset_filter, keep_rows)


def _fragment(storage: Storage, fmt: ds.ParquetFileFormat, s: FileSlice, partition: pc.Expression, stand_in: bool) -> ds.Fragment:
    """The slice's base file as a fragment, or, for a slice hoodie reads, a stand-in: a
    path beside its first file that no file has, so that a scan bypassing
    :class:`MergedDataset` (Arrow's own ``Scanner.from_dataset`` of it, say) fails
    instead of returning rows hoodie would have merged or left out."""
    first = s.base_file if s.base_file is not None else s.log_files[0]
    fs, path = arrow_path(storage, first.path)
    if stand_in:
        return fmt.make_fragment(path + STAND_IN, fs, partition, file_size=first.size)
    return fmt.make_fragment(path, fs, partition, file_size=first.size)


def _partition_expression(scheme: PartitionScheme, partition_path: str, schema: pa.Schema) -> pc.Expression:
    """What the partition path says exactly about the partition columns, as an expression
    true for every row of the partition (``true`` when it says nothing)."""
    terms = [
        pc.field(name).is_null() if value is None else pc.field(name) == pa.scalar(value, schema.field(name).type)
        for name, value in scheme.literals(partition_path, schema).items()
    ]
    return functools.reduce(operator.and_, terms) if terms else pc.scalar(True)


class MergedDataset(ds.FileSystemDataset):
    """Parquet fragments Arrow scans, and slices hoodie reads when a scan reaches them:
    slices with logs merged, and on an incremental pull every slice, its rows kept when
    ``keep_rows`` (the range's commit times) keeps them.

    Engines call :meth:`scanner` (``to_table``, ``to_batches``, ``head``, ``count_rows``
    and ``take`` go through it): the fragments are pruned by their partition
    expressions as Arrow prunes them, the Parquet fragments scanned by Arrow with the
    projection and filter, and the rows hoodie reads filtered and projected alike, one
    record-batch stream. The Arrow dataset underneath holds a stand-in fragment (a path
    no file has) for each slice hoodie reads, so whatever reads it without this class
    fails instead of returning rows hoodie would have merged or left out.
    """

    def __init__(
        self, fragments: Sequence[ds.Fragment], schema: pa.Schema, filesystem: Any, reads: Mapping[str, SliceRead],
        row_filter: pc.Expression | None = None, keep_rows: CommitTimes | None = None,
    ) -> None:
        super().__init__(list(fragments), schema, ds.ParquetFileFormat(), filesystem)
        self._fragments = list(fragments)
        self._filesystem = filesystem
        self._reads = dict(reads)
        self._row_filter = row_filter
        self._keep_rows = keep_rows

    def _with(self, fragments: Sequence[ds.Fragment], row_filter: pc.Expression | None) -> MergedDataset:
        reads = {f.path: self._reads[f.path] for f in fragments if f.path in self._reads}
        return MergedDataset(fragments, self.schema, self._filesystem, reads, row_filter, self._keep_rows)

    def __reduce__(self) -> tuple[Any, ...]:
        # Polars pickles the dataset into its plan: rebuild this class, not a bare FileSystemDataset
        return (MergedDataset, (self._fragments, self.schema, self._filesystem, self._reads, self._row_filter, self._keep_rows))

    def filter(self, expression: pc.Expression) -> MergedDataset:
        return self._with(self._fragments, self._combined(expression))

    def scanner(self, columns: Any = None, filter: pc.Expression | None = None, **kwargs: Any) -> ds.Scanner:  # noqa: A002 (pyarrow's name)
        filter = self._combined(filter)  # noqa: A001
        wanted = list(ds.FileSystemDataset.get_fragments(self, filter=filter)) if filter is not None else self._fragments
        plain = [f for f in wanted if f.path not in self._reads]
        files = ds.FileSystemDataset(plain, self.schema, self.format, self._filesystem).scanner(columns=columns, filter=filter, **kwargs)
        reads = [self._reads[f.path] for f in wanted if f.path in self._reads]
        # a plain list of names can be read by hoodie's reader itself; expressions and the
        # rows kept by commit time need every column
        names = tuple(columns) if isinstance(columns, list) and filter is None and self._keep_rows is None else None
        merged_rows = ds.Scanner.from_batches(
            _read_batches(reads, names, self._keep_rows), schema=_projected(self.schema, names), columns=columns, filter=filter,
        )
        return ds.Scanner.from_batches(
            _chain(files, merged_rows), schema=files.projected_schema,
            **{k: v for k, v in kwargs.items() if k in ("batch_size", "use_threads", "memory_pool")},
        )

    def pieces(self, filter: pc.Expression | None = None) -> list[ds.Dataset]:  # noqa: A002
        """One dataset per Parquet fragment and per slice hoodie reads that ``filter``
        (with this dataset's own) may match by partition: the units an engine scans in
        parallel, each keeping this dataset's own filter."""
        combined = self._combined(filter)
        wanted = ds.FileSystemDataset.get_fragments(self, filter=combined) if combined is not None else self._fragments
        return [self._with([f], self._row_filter) if f.path in self._reads else self._plain(f) for f in wanted]

    def _plain(self, fragment: ds.Fragment) -> ds.Dataset:
        """A Parquet fragment as a dataset of its own, with this dataset's filter."""
        plain = ds.FileSystemDataset([fragment], self.schema, self.format, self._filesystem)
        return plain.filter(self._row_filter) if self._row_filter is not None else plain

    def _combined(self, filter: pc.Expression | None) -> pc.Expression | None:  # noqa: A002
        if self._row_filter is None:
            return filter
        return self._row_filter if filter is None else self._row_filter & filter

    def get_fragments(self, filter: pc.Expression | None = None) -> Iterator[ds.Fragment]:  # noqa: A002
        raise UnsupportedTableError(
            "the slices hoodie reads for this dataset (merged with their log files, or pulled incrementally) "
            "are not Arrow fragments; scan it (scanner, to_batches, to_table), or read a merge-on-read table's base files "
            "with hoodie.datasource.query.type=read_optimized"
        )

    def sort_by(self, sorting: Any, **kwargs: Any) -> ds.Dataset:
        return ds.InMemoryDataset(self.to_table()).sort_by(sorting, **kwargs)

    def join(self, right_dataset: Any, keys: Any, *args: Any, **kwargs: Any) -> ds.Dataset:
        return ds.InMemoryDataset(self.to_table()).join(right_dataset, keys, *args, **kwargs)

    def join_asof(self, right_dataset: Any, on: Any, by: Any, tolerance: Any, *args: Any, **kwargs: Any) -> ds.Dataset:
        return ds.InMemoryDataset(self.to_table()).join_asof(right_dataset, on, by, tolerance, *args, **kwargs)

    def replace_schema(self, schema: pa.Schema) -> MergedDataset:
        raise UnsupportedTableError("a hoodie dataset keeps the table's schema; project or cast its scan instead")


def pieces(dataset: ds.Dataset, filter: pc.Expression | None = None) -> list[ds.Dataset]:  # noqa: A002
    """The datasets :func:`open_dataset` made, cut in pieces (:meth:`MergedDataset.pieces`);
    a plain dataset's pieces are its fragments that ``filter`` (with the dataset's own) may
    match, each a dataset of its own that keeps the dataset's own filter."""
    if isinstance(dataset, MergedDataset):
        return dataset.pieces(filter)
    assert isinstance(dataset, ds.FileSystemDataset)
    plain, own = _FILTERED.get(dataset, (dataset, None))
    combined = filter if own is None else own if filter is None else own & filter
    fragments = plain.get_fragments(filter=combined) if combined is not None else plain.get_fragments()
    whole = [ds.FileSystemDataset([f], plain.schema, plain.format, plain.filesystem) for f in fragments]
    return whole if own is None else [p.filter(own) for p in whole]


def _projected(schema: pa.Schema, names: tuple[str, ...] | None) -> pa.Schema:
    return schema if names is None else pa.schema([schema.field(n) for n in names])


def _chain(*scanners: ds.Scanner) -> Iterator[pa.RecordBatch]:
    for scanner in scanners:
        yield from scanner.to_batches()


def _read_batches(reads: Sequence[SliceRead], columns: tuple[str, ...] | None, keep_rows: CommitTimes | None) -> Iterator[pa.RecordBatch]:
    """The rows hoodie reads of each slice in order (those ``keep_rows`` keeps), a few
    slices read ahead on threads (the merge spends its time in Arrow and numpy, which
    release the GIL)."""
    if not reads:
        return
    tasks = [_projected_read(r, columns) for r in reads]
    with ThreadPoolExecutor(MERGE_AHEAD, thread_name_prefix="hoodie-slice") as pool:
        ahead: list[Future[pa.Table]] = []

        def done() -> Iterator[pa.RecordBatch]:
            rows = ahead.pop(0).result()
            yield from (keep_rows.filter(rows) if keep_rows is not None else rows).to_batches()

        for task in tasks:
            ahead.append(pool.submit(run_slice_task, task))
            if len(ahead) > MERGE_AHEAD:
                yield from done()
        while ahead:
            yield from done()


def _projected_read(read: SliceRead, columns: tuple[str, ...] | None) -> SliceRead:
    if isinstance(read, MergeSliceTask):
        return read if read.columns == columns else dataclasses.replace(read, columns=columns)
    return read if columns is None else dataclasses.replace(read, schema=_projected(read.schema, columns))
