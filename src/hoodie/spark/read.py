"""Snapshot, time-travel, read-optimized and incremental reads as Spark DataFrames.

The query layer plans (``plan_snapshot``/``plan_incremental``: which slices) and names
the result schema (``output_schema``); this module only turns that plan into a lazy
DataFrame: slices that are base files only go through Spark's **native Parquet reader**,
slices with log files (merge-on-read) are merged on executors by the query layer's slice
merger, a few slices at a time; columns come in the in-process reader's order and types, and
the incremental ``_hoodie_commit_time`` range is a filter.

Partition columns: by default (``hoodie.datasource.read.extract.partition.values.from.path``
unset or true, or a table written without the partition columns in its files,
``hoodie.datasource.write.drop.partition.columns``) they take the values the partition path
determines exactly (see :mod:`hoodie.table.partition_values`), as Apache Hudi 1.x and 0.15's
copy-on-write reads show them, and Spark prunes files on its own, by the values it knows
per file *before* reading — for every filter, SQL on a view or after a join included:

* hive-style tables whose every partition path maps exactly to column values are read
  with ``option("basePath", table)``: Spark's partition discovery turns ``city=sf`` into
  the value of ``city`` (taking the column's type from the schema we pass, and dropping
  the same-named column stored in the file, which holds the same value), and
  ``PartitionFilters`` select the files;
* other tables with at most :data:`MAX_UNION_PARTITIONS` partitions are read as a union
  of one native scan per partition in which each exactly-known partition column is a
  literal, so Catalyst folds a partition filter to ``false`` and drops whole branches;
* anything else (timestamp-based or custom key generators, ambiguous paths such as the
  default partition of a string column, very many partitions) is one plain scan of the
  values the files hold, not pruned by partition.

With the option false, partition columns hold what the data files store: a record updated
in place with a new partition value — a global index such as ``RECORD_INDEX`` without
``update.partition.path`` keeps it in its old partition — shows the value it was written
with, as ``hoodie.read`` (and Apache Hudi 0.15's merge-on-read reads) show it. Spark cannot
prune such columns itself: a filter on the DataFrame the read returns prunes partitions by
the values their *paths* give the partition columns (as Hudi's file index does:
:func:`hoodie.query.skipping.prune_partitions`, through :mod:`hoodie.spark.skipping`), and
Spark applies it in full to the stored values of the rows read.

Data skipping: filters on the DataFrame of a snapshot, time-travel or read-optimized
read of a table with column statistics rebuild this scan over the slices those
statistics leave (:mod:`hoodie.spark.skipping`).

The scan names the base files themselves, which the file-system view has found. Past 32
paths Spark would look them up with a Spark job (0.3-0.6 s on a local session); for a
local table they are looked up on the driver instead (see ``_listing_on_driver``).

Nothing here writes.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, from_arrow_type
from pyspark.sql.types import StructType

from hoodie.errors import UnsupportedTableError
from hoodie.layout import InstantTime
from hoodie.metadata_table.index_lookup import has_record_index
from hoodie.metadata_table.listing import listed_through_metadata
from hoodie.query.incremental import range_filter, slices_for_range
from hoodie.query.options import ReadRequest
from hoodie.query.planner import plan_incremental, plan_snapshot
from hoodie.query.reader import COMMIT_TIME_COLUMN, output_schema
from hoodie.query.skipping import has_column_stats
from hoodie.query.slices import base_files_only, group_merges, run_slice_task
from hoodie.spark.skipping import SkippableRead, SkippingDataFrame
from hoodie.storage.base import Storage
from hoodie.storage.local import LocalStorage
from hoodie.table.file_group import FileSlice
from hoodie.table.partition_values import PartitionScheme
from hoodie.table.slice_reader.instants import CommitTimes, InstantFilter
from hoodie.table.slice_reader.merge import MergeSliceTask
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable

# Above this many partitions a per-partition union costs more to plan than pruning saves.
MAX_UNION_PARTITIONS = 64
# hoodie and Apache Hudi write dates and timestamps in the proleptic Gregorian calendar;
# without this Spark refuses ancient values in files that lack Spark's own metadata.
_PARQUET_OPTIONS = {"datetimeRebaseMode": "CORRECTED", "int96RebaseMode": "CORRECTED"}


def read_dataframe(spark: SparkSession, path: str, options: Mapping[str, Any] | None = None, *, storage: Storage | None = None) -> DataFrame:
    """The table at ``path`` as a DataFrame, as ``hoodie.read(path, options)`` reads it.

    Planning happens now (the DataFrame reads the files as they are at this call); rows
    are read lazily by Spark. An empty table is an empty DataFrame with the table schema.
    A snapshot, time-travel or read-optimized read of a table with column statistics in
    its metadata table is a :class:`~hoodie.spark.skipping.SkippingDataFrame`: its
    filters skip the slices those statistics rule out.
    """
    request = ReadRequest.of(options)
    # Spark's own switches for reading around damaged files count as the read options do
    ignore_missing = request.ignore_missing_files or _conf_true(spark, "spark.sql.files.ignoreMissingFiles")
    ignore_corrupt = request.ignore_corrupt_files or _conf_true(spark, "spark.sql.files.ignoreCorruptFiles")
    table = listed_through_metadata(HoodieTable.open(path, storage), request.listing)
    # unset: the path's values, so that Spark prunes partitions for SQL on views too
    from_path = request.values_from_path is not False or table.config.drop_partition_columns
    if request.query_type == "incremental":
        assert request.begin is not None
        plan = plan_incremental(table, request.begin, request.end, ignore_missing, request.fallback_full_scan)
        schema = output_schema(table, None, plan.slices)
        # merged slices keep their base rows of the range only, as in process
        rows = plan.rows_in_range if plan.filter_rows else None
        pull = functools.partial(_pull, spark, table, schema, range_filter(table, plan), ignore_corrupt, rows, from_path)
        slices = slices_for_range(table, plan)
        return _skippable(pull(slices), table, slices, pull, schema, from_path, statistics=False, by_key=False)
    slices = plan_snapshot(table, request.as_of, None, ignore_missing)
    if request.query_type == "read_optimized":
        slices = base_files_only(slices)
    schema = output_schema(table, request.as_of, slices)
    visible = InstantFilter.of_timeline(table.timeline, upto=request.as_of)
    snapshot = functools.partial(scan_with_merge, spark, table, schema=schema, visible=visible, ignore_corrupt=ignore_corrupt, from_path=from_path)
    # the record index places keys as they are now: only a read of the latest snapshot asks it
    by_key = request.as_of is None and request.query_type != "read_optimized" and has_record_index(table)
    statistics = request.data_skipping and (has_column_stats(table) or by_key)
    return _skippable(snapshot(slices), table, slices, snapshot, schema, from_path, statistics, by_key)


def _pull(
    spark: SparkSession, table: HoodieTable, schema: pa.Schema | None, visible: InstantFilter, ignore_corrupt: bool,
    rows: CommitTimes | None, from_path: bool, slices: Sequence[FileSlice],
) -> DataFrame:
    """The incremental pull's DataFrame over ``slices``: base rows outside the range left out."""
    df = scan_with_merge(spark, table, slices, schema, visible, ignore_corrupt, rows, from_path)
    if rows is None or COMMIT_TIME_COLUMN not in df.columns:
        return df
    return df.where(_in_range(rows))


def _skippable(
    df: DataFrame, table: HoodieTable, slices: Sequence[FileSlice], rescan: Callable[[Sequence[FileSlice]], DataFrame],
    schema: pa.Schema | None, from_path: bool, statistics: bool, by_key: bool,
) -> DataFrame:
    """``df``, or a :class:`SkippingDataFrame` over it when filters on it can skip slices:
    by the partition values of their paths (partition columns read from the files: Spark
    cannot prune them itself), by column statistics or by the record index."""
    by_partition = schema is not None and not from_path and PartitionScheme.of(table.config).value_paths
    if schema is None or not (by_partition or statistics):
        return df
    # filters on it skip slices (hoodie.spark.skipping)
    return SkippingDataFrame(df, SkippableRead(table, tuple(slices), rescan, by_key, schema if by_partition else None, statistics))


def _in_range(rows: CommitTimes) -> Column:
    """``rows`` as a filter of the commit-time column (:meth:`CommitTimes.filter`)."""
    commit_time = F.col(COMMIT_TIME_COLUMN)
    if rows.only is not None:
        return commit_time.isin(sorted(rows.only))
    # the InstantTime key of every row: a second-precision time is the end of its second
    key = F.when(F.length(commit_time) == 14, F.concat(commit_time, F.lit("999"))).otherwise(commit_time)
    keep = key.isNotNull()
    if rows.after is not None:
        keep &= key > F.lit(InstantTime(rows.after).key)
    if rows.upto is not None:
        keep &= key <= F.lit(InstantTime(rows.upto).key)
    return keep


def _conf_true(spark: SparkSession, key: str) -> bool:
    return str(spark.conf.get(key, "false")).strip().lower() == "true"


def scan_with_merge(
    spark: SparkSession,
    table: HoodieTable,
    slices: Sequence[FileSlice],
    schema: pa.Schema | None,
    visible: InstantFilter,
    ignore_corrupt: bool = False,
    base_rows: CommitTimes | None = None,
    from_path: bool = False,
) -> DataFrame:
    """Base-only slices through the native Parquet scan; slices with log files merged on
    executors, a few slices at a time (memory bounded by those slices' logs and one base
    file), as the in-process reader merges them; both unioned under ``schema``.
    ``base_rows`` keeps only those base rows of a slice with logs before its merge (an
    incremental read). ``ignore_corrupt`` reads around damaged base files and committed
    log blocks (Spark's ``ignoreCorruptFiles``) instead of failing. ``from_path``: partition
    columns take the values the partition paths determine (module docstring)."""
    plain = [s for s in slices if not s.log_files]
    with_logs = [s for s in slices if s.log_files]
    if from_path:  # by partition: a Spark task's run of one partition's slices shares its values
        with_logs.sort(key=lambda s: s.partition_path)
    df = scan(spark, table, plain, schema, ignore_corrupt, from_path)
    if not with_logs or schema is None:
        return df
    merge = MergeConfig.for_table(table.config)
    tasks = [MergeSliceTask(table.storage, s, schema, merge, visible, None, ignore_corrupt, base_rows) for s in with_logs]
    scheme = PartitionScheme.of(table.config)
    values = {s.partition_path: scheme.literals(s.partition_path, schema) for s in with_logs} if from_path else {}
    merged = _merged_scan(spark, tasks, schema, values)
    return merged if not plain else df.unionByName(merged)


def _merged_scan(spark: SparkSession, tasks: list[MergeSliceTask], schema: pa.Schema, values: Mapping[str, Mapping[str, Any]]) -> DataFrame:
    """The merged rows of ``tasks``; ``values`` (partition path -> column -> value) replace
    the stored partition columns of that partition's rows."""
    broadcast = spark.sparkContext.broadcast(tasks)
    n = max(1, min(len(tasks), spark.sparkContext.defaultParallelism * 2))

    def run(batches: Any) -> Any:
        for batch in batches:
            # a Spark task runs its slices one after another; a few at a time decode their
            # logs together, as the in-process read does (hoodie.query.slices)
            mine = [broadcast.value[i] for i in batch.column(0).to_pylist()]
            runs = itertools.groupby(mine, key=lambda t: t.file_slice.partition_path) if values else [("", iter(mine))]
            for partition, same in runs:
                for task in group_merges(list(same), parallelism=1):
                    yield from _with_values(run_slice_task(task).cast(schema), values.get(partition, {})).to_batches()

    return spark.range(0, len(tasks), 1, n).mapInArrow(run, from_arrow_schema(schema))


def _with_values(rows: pa.Table, values: Mapping[str, Any]) -> pa.Table:
    """``rows`` with each column of ``values`` holding its value in every row."""
    for name, value in values.items():
        i = rows.schema.get_field_index(name)
        rows = rows.set_column(i, rows.schema.field(i), pa.repeat(pa.scalar(value, rows.schema.field(i).type), rows.num_rows))
    return rows


# --- the scan ---------------------------------------------------------------------------------


def spark_uri(path: str) -> str:
    """A storage path as a URI for Spark: a cluster's default file system may be HDFS, so
    local paths are made explicit ``file:`` URIs."""
    return path if "://" in path else f"file://{path}"


def spark_path(path: str) -> str:
    """A data file path for ``DataFrameReader.parquet``: a URI with glob characters
    escaped, because Spark expands globs in read paths (a partition value may hold ``*``)."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", spark_uri(path))


def scan(
    spark: SparkSession, table: HoodieTable, slices: Sequence[FileSlice], schema: pa.Schema | None, ignore_corrupt: bool = False, from_path: bool = False
) -> DataFrame:
    """A native Parquet scan of the slices' base files with ``schema``'s columns, in its
    order: the values the files hold, or with ``from_path`` those the partition paths
    determine, pruned by partition where they allow it (module docstring)."""
    if schema is None:
        return spark.createDataFrame([], StructType([]))
    spark_schema = from_arrow_schema(schema)
    files: dict[str, list[str]] = {}
    for s in slices:
        if s.base_file is None:
            continue
        if not s.base_file.file_name.endswith(".parquet"):
            raise UnsupportedTableError(f"{table.base_path}: base file {s.base_file.file_name} is not Parquet; only Parquet base files can be read")
        files.setdefault(s.partition_path, []).append(s.base_file.path)
    if not files:
        return spark.createDataFrame([], spark_schema)
    options = {**_PARQUET_OPTIONS, "ignoreCorruptFiles": str(ignore_corrupt).lower()}
    with _listing_on_driver(spark, table, sum(len(fs) for fs in files.values())):
        if not from_path:
            return _parquet(spark, spark_schema, [f for fs in files.values() for f in fs], options)
        return _scan_files(spark, table, files, schema, spark_schema, options)


def _scan_files(
    spark: SparkSession, table: HoodieTable, files: dict[str, list[str]], schema: pa.Schema, spark_schema: StructType, options: dict[str, str]
) -> DataFrame:
    names = list(schema.names)
    scheme = PartitionScheme.of(table.config)
    if scheme.discoverable(list(files), schema):
        reader = spark.read.schema(spark_schema).options(**options).option("basePath", spark_uri(table.base_path))
        return reader.parquet(*[spark_path(f) for fs in files.values() for f in fs]).select(*[_col(n) for n in names])
    literals = {p: scheme.literals(p, schema) for p in files} if len(files) <= MAX_UNION_PARTITIONS else {}
    if not any(literals.values()):
        return _parquet(spark, spark_schema, [f for fs in files.values() for f in fs], options)
    branches = [
        _parquet(spark, spark_schema, paths, options).select(*[_column(n, schema.field(n).type, literals[p]) for n in names])
        for p, paths in sorted(files.items())
    ]
    return functools.reduce(DataFrame.unionByName, branches)


# Spark lists more than this many paths with a Spark job (0.3-0.6 s on a local session)
_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
# local files are stat'ed on the driver up to this many (~10 µs each); object stores keep
# Spark's parallel listing
_DRIVER_LISTING_MAX = 20000


@contextlib.contextmanager
def _listing_on_driver(spark: SparkSession, table: HoodieTable, paths: int) -> Iterator[None]:
    """While the scan is created, let Spark look up the base files (exact paths the
    file-system view already found) on the driver instead of in a Spark job, for a local
    table. The session's setting is restored afterwards."""
    current = spark.conf.get(_LISTING_THRESHOLD, None)
    if not isinstance(table.storage, LocalStorage) or paths > _DRIVER_LISTING_MAX or paths <= int(current or 32):
        yield
        return
    spark.conf.set(_LISTING_THRESHOLD, str(paths))
    try:
        yield
    finally:
        if current is None:
            spark.conf.unset(_LISTING_THRESHOLD)
        else:
            spark.conf.set(_LISTING_THRESHOLD, current)


def _parquet(spark: SparkSession, spark_schema: StructType, paths: list[str], options: dict[str, str]) -> DataFrame:
    return spark.read.schema(spark_schema).options(**options).parquet(*[spark_path(p) for p in paths])


def _col(name: str) -> Column:
    # quoted: a column named "a.b" is not field b of struct a
    return F.col("`" + name.replace("`", "``") + "`")


def _column(name: str, arrow_type: pa.DataType, literals: Mapping[str, Any]) -> Column:
    """The column ``name`` of a union branch: the stored one, or the partition's value."""
    if name not in literals:
        return _col(name)
    return F.lit(literals[name]).cast(from_arrow_type(arrow_type)).alias(name)
