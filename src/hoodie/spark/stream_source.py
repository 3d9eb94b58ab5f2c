"""``spark.readStream.format("hoodie").load(path)``: a table's new commits as micro-batches.

Each micro-batch is the incremental pull of a range ``(start, end]`` of completed commits
(:func:`~hoodie.query.planner.plan_incremental`, Apache Hudi's incremental semantics):
the records those commits inserted or updated, each in its latest state in the range,
deletes left out. Offsets are instants, as Apache Hudi's ``HoodieSourceOffset`` writes
them: ``{"commitTime": "20261127001530123"}``, on the range's time basis
(:mod:`hoodie.query.stream`: instant times on v6 tables, completion times on v8+). A
restarted query resumes after the offset its checkpoint holds, so no commit is read twice
or skipped.

Where a new query starts: ``hoodie.datasource.streaming.startOffset`` = ``earliest``
(default), ``latest`` or an instant time (``hoodie.datasource.read.begin.instanttime``
says the same). How much a micro-batch reads:
``hoodie.datasource.read.streaming.max.commits.per.batch`` commits at most (0: all that
are available), reported to Spark as the source's default read limit (``ReadMaxFiles``:
a commit is one completed file of the timeline), so ``Trigger.Once`` still reads
everything and ``Trigger.AvailableNow`` reads in bounded batches up to the commit that
was latest when the query started.

Falling behind: when the commits of the next range were archived or the files they wrote
cleaned, the micro-batch fails with an :class:`~hoodie.errors.InstantNotFoundError`
naming the range and ``hoodie.datasource.read.incr.fallback.fulltablescan.enable``; with
that option true it reads the latest snapshot's records committed in the range instead.

Planning runs where Spark plans the stream (a Python process beside the driver); each
input partition is one file slice, or a few slices with logs, read on an executor by the
query layer's slice reader and sent as Arrow batches.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxFiles, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from hoodie.config import options as opts
from hoodie.config.options import HoodieConfig
from hoodie.errors import ConfigError, InstantNotFoundError
from hoodie.layout import InstantTime
from hoodie.metadata_table.listing import listed_through_metadata
from hoodie.query.incremental import range_filter, slices_for_range
from hoodie.query.options import ReadRequest
from hoodie.query.planner import plan_incremental
from hoodie.query.reader import output_schema
from hoodie.query.slices import SliceTask, run_slice_task, slice_tasks
from hoodie.query.stream import EARLIEST, commit_offsets, next_offset, parse_start, start_offset
from hoodie.spark.source_write import path_option
from hoodie.table.slice_reader.instants import CommitTimes
from hoodie.table.table import HoodieTable

OFFSET_KEY = "commitTime"  # Apache Hudi's HoodieSourceOffset field
# input partitions with logs are grouped as for this many workers (hoodie.query.slices)
_PLANNING_PARALLELISM = 8
_STREAM_ONLY = (opts.STREAMING_START_OFFSET.key, opts.STREAMING_MAX_COMMITS.key, opts.QUERY_TYPE.key, opts.BEGIN_INSTANT.key)


@dataclass(frozen=True)
class StreamSettings:
    """What a streaming read was asked for, checked once (picklable)."""

    path: str
    start: str  # earliest, latest or an instant time
    max_commits: int  # 0: no limit
    request: ReadRequest  # how files are read: missing/corrupt files, listing, the fallback

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> StreamSettings:
        given = dict(options)
        path = path_option(given)
        if path is None:
            raise ConfigError("spark.readStream.format('hoodie').load() needs a table path: load(path) or option('path', path)")
        config = HoodieConfig.of({k: v for k, v in given.items() if k.lower() != "path"})
        if config.get(opts.QUERY_TYPE) == "read_optimized":
            raise ConfigError(f"a streaming read pulls each commit's changes incrementally: {opts.QUERY_TYPE.key}=read_optimized is not supported")
        for refused in (opts.END_INSTANT, opts.AS_OF_INSTANT):
            if config.has(refused):
                raise ConfigError(f"option {refused.key} cannot be used with a streaming read (it reads every new commit as it completes)")
        start = config.get(opts.STREAMING_START_OFFSET)
        begin = config.get(opts.BEGIN_INSTANT)
        if begin is not None:
            if config.has(opts.STREAMING_START_OFFSET) and start != begin:
                raise ConfigError(f"option {opts.BEGIN_INSTANT.key}={begin!r} conflicts with {opts.STREAMING_START_OFFSET.key}={start!r}")
            start = begin
        rest = {k: v for k, v in config.raw.items() if k not in _STREAM_ONLY}
        request = ReadRequest.of({**rest, opts.QUERY_TYPE.key: "incremental", opts.BEGIN_INSTANT.key: EARLIEST}).values_from_files("a streaming read")
        return cls(path, parse_start(start), config.get(opts.STREAMING_MAX_COMMITS), request)

    def open(self) -> HoodieTable:
        return listed_through_metadata(HoodieTable.open(self.path), self.request.listing)


def offset(commit_time: str) -> dict[str, str]:
    return {OFFSET_KEY: commit_time}


def commit_time(offset: Mapping[str, Any]) -> str:
    """The instant an offset holds; an offset of another shape (a checkpoint of another
    source) is refused, naming it."""
    value = offset.get(OFFSET_KEY) if isinstance(offset, Mapping) else None
    if not isinstance(value, str) or not value.isdigit():
        raise ConfigError(f"offset {offset!r} is not a hoodie streaming offset ({{{OFFSET_KEY!r}: instant time}}); is the checkpoint another query's?")
    return value


class SliceRead(InputPartition):
    """One input partition: a slice task, and which of its rows the range keeps."""

    def __init__(self, task: SliceTask, rows: CommitTimes | None) -> None:
        super().__init__(task)
        self.rows = rows


class HoodieStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming reader of one query (module docstring). Holds no open table: Spark
    pickles it to its executors, where :meth:`read` runs."""

    def __init__(self, settings: StreamSettings, schema: StructType) -> None:
        self.settings = settings
        self.schema = schema
        self._target: str | None = None  # Trigger.AvailableNow: read no further than this

    # --- planning (beside the driver) --------------------------------------------------------

    def initialOffset(self) -> dict[str, str]:  # noqa: N802 (PySpark's names)
        return offset(start_offset(self.settings.open().timeline, self.settings.start))

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        n = self.settings.max_commits
        return ReadMaxFiles(n) if n > 0 else ReadAllAvailable()

    def latestOffset(self, start: dict[str, str], limit: ReadLimit) -> dict[str, str]:  # noqa: N802
        offsets = commit_offsets(self.settings.open().timeline)
        n = limit.max_files if isinstance(limit, ReadMaxFiles) else 0
        return offset(next_offset(offsets, commit_time(start), self._target, n))

    def reportLatestOffset(self) -> dict[str, str] | None:  # noqa: N802
        offsets = commit_offsets(self.settings.open().timeline)
        return offset(offsets[-1]) if offsets else None

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        offsets = commit_offsets(self.settings.open().timeline)
        self._target = offsets[-1] if offsets else EARLIEST

    def partitions(self, start: dict[str, str], end: dict[str, str]) -> list[InputPartition]:
        begin, stop = commit_time(start), commit_time(end)
        if InstantTime(stop) <= InstantTime(begin):
            return []
        table = self.settings.open()
        request = self.settings.request
        try:
            plan = plan_incremental(table, begin, stop, request.ignore_missing_files, request.fallback_full_scan)
        except InstantNotFoundError as e:
            raise InstantNotFoundError(f"streaming read of {table.base_path} fell behind at offset {begin}: {e}") from e
        schema = output_schema(table, None, plan.slices)
        if plan.is_empty or schema is None:
            return []
        rows = plan.rows_in_range if plan.filter_rows else None
        tasks = slice_tasks(
            table, slices_for_range(table, plan), schema, range_filter(table, plan), None, _PLANNING_PARALLELISM, request.ignore_corrupt_files, rows
        )
        return [SliceRead(task, rows) for task in tasks]

    def commit(self, end: dict[str, str]) -> None:
        pass  # nothing to release: the table is read where it is

    # --- reading (on executors) ---------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_slices(partition, self.schema)


def read_slices(partition: InputPartition, schema: StructType) -> Iterator[pa.RecordBatch]:
    """The rows of an input partition (:class:`SliceRead`: its slice task, then the rows its
    range keeps) in ``schema``'s columns and types, on an executor; batch reads share it."""
    assert isinstance(partition, SliceRead)
    data = run_slice_task(partition.value)
    if partition.rows is not None:
        data = partition.rows.filter(data)
    yield from conform(data, to_arrow_schema(schema, timezone="UTC")).to_batches()


def conform(data: pa.Table, schema: pa.Schema) -> pa.Table:
    """``data`` with the stream's columns and types (fixed when the query started): columns
    the table gained since are left out, columns it lost are null."""
    columns = [
        data.column(f.name).cast(f.type) if f.name in data.column_names else pa.nulls(data.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)
