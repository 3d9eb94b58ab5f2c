"""Partition pruning and data skipping for ``spark.read.format("hoodie")``: filters on the
DataFrame a read returns prune its file slices by the values their partition paths give
the partition columns and by the metadata table's column statistics, before Spark reads
anything.

``spark.read.format("hoodie").load(path)`` plans the read on the driver (which slices, as
of which instant) and returns a :class:`SkippingDataFrame` when the scan reads partition
columns from the files of a table whose paths name their values (Spark cannot prune
those itself: :mod:`hoodie.spark.read`), or when the table's metadata table has column
statistics and skipping is on (``hoodie.enable.data.skipping``, ``hoodie.metadata.enable``).
Its ``filter``/``where`` (and ``df[condition]``) let Spark
resolve the condition as usual, turn the resolved condition into the row filter it
implies (:mod:`hoodie.spark.pushdown`), drop the slices whose partition path or statistics
rule that out (:func:`hoodie.query.skipping.prune_partitions`,
:func:`hoodie.query.skipping.prune_slices`) and, when any were dropped, build the
DataFrame again over the kept slices only — the same scan (native Parquet reads of
base-file-only slices, merged slices with log files) under the same ``select``s and
conditions given so far — and apply the new condition to it. ``select`` keeps the
DataFrame skipping; only conditions on columns of the scan passed through unchanged are
read by statistics (a computed or renamed column is not the stored one). Skipping only
picks files: no filter is reported to Spark as handled, Spark evaluates each condition
in full on the rows read, so the result is the same with skipping off.

A rebuilt DataFrame keeps the attribute ids of the one it replaces (a projection
aliasing its columns to them), so columns taken from a DataFrame before (``df.fare >
10``, used again in a later ``where``, a ``select`` or a join) still resolve against it.

Why not a Python DataSource with ``pushFilters`` (PySpark 4.1): its reader yields rows
or Arrow batches from Python workers, so base files would no longer be read by Spark's
native Parquet reader (vectorized decoding, column pruning, row-group filters, file
splits, partition pruning); and ``format("hoodie")`` is already taken by the
reader/writer patch of :mod:`hoodie.spark.datasource`. Pruning the planned slices when
the filter is applied keeps every read path as it is, at the price of reaching only
filters applied through this DataFrame's ``where``/``filter`` after ``select``s; a query
on a temporary view, or a ``where`` after a join, an aggregation or ``withColumn``,
reads every planned slice (Spark's Parquet reader still skips row groups by their
footers).
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from py4j.java_gateway import JavaObject
from pyspark.sql import Column
from pyspark.sql import DataFrame as AnyDataFrame
from pyspark.sql.classic.dataframe import DataFrame

from hoodie.query.skipping import prune_partitions, prune_slices
from hoodie.spark.pushdown import implied_filter
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable

__all__ = ["SkippableRead", "SkippingDataFrame"]

Condition = Column | str


@dataclasses.dataclass(frozen=True)
class SkippableRead:
    """A planned read: the slices it reads, and how a scan of some of them is built."""

    table: HoodieTable
    slices: tuple[FileSlice, ...]
    scan: Callable[[Sequence[FileSlice]], AnyDataFrame]
    by_record_index: bool = False  # a read of the latest snapshot: filters by key ask the record index
    # the read's schema when filters prune partitions by the values of their paths (the
    # scan reads partition columns from the files, so Spark cannot prune them itself)
    partition_schema: pa.Schema | None = None
    by_statistics: bool = True  # filters skip by column statistics and the record index


class SkippingDataFrame(DataFrame):
    """The DataFrame of a hoodie read whose filters skip file slices (module docstring):
    the loaded DataFrame, and what ``filter``/``where`` and ``select`` make of it.

    Every other method is Spark's and returns a plain DataFrame."""

    def __init__(
        self,
        df: AnyDataFrame,
        read: SkippableRead,
        rebuild: Callable[[Sequence[FileSlice]], AnyDataFrame] | None = None,
        columns: frozenset[int] | None = None,
    ):
        super().__init__(df._jdf, df.sparkSession)
        self._hoodie_read = read
        if rebuild is None:  # the loaded DataFrame: every rebuilt scan takes over its attributes
            output = df._jdf.queryExecution().analyzed().output()
            columns = frozenset(output.apply(i).exprId().id() for i in range(output.size()))
            rebuild = functools.partial(_rebuilt_scan, read.scan, output)
        assert columns is not None
        # this DataFrame over some of the slices, with its own attribute ids
        self._hoodie_rebuild = rebuild
        # the ids of the scan's columns: only conditions on those are read by statistics
        self._hoodie_columns = columns

    @property
    def hoodie_file_slices(self) -> tuple[FileSlice, ...]:
        """The file slices this DataFrame reads (after skipping)."""
        return self._hoodie_read.slices

    def filter(self, condition: Condition) -> SkippingDataFrame:
        filtered = DataFrame.filter(self, condition)  # Spark checks and resolves it
        read, rebuild = self._hoodie_read, self._hoodie_rebuild
        plan = filtered._jdf.queryExecution().analyzed()
        row_filter = implied_filter(plan.condition(), self._hoodie_columns) if plan.nodeName() == "Filter" else None
        if row_filter is not None:
            kept = list(read.slices)
            if read.partition_schema is not None:
                kept = prune_partitions(read.table, kept, row_filter, read.partition_schema)
            if read.by_statistics:
                kept = prune_slices(read.table, kept, row_filter, read.by_record_index)
            if len(kept) < len(read.slices):
                read = dataclasses.replace(read, slices=tuple(kept))
                filtered = rebuild(kept).filter(condition)
        return SkippingDataFrame(filtered, read, functools.partial(_filtered, rebuild, condition), self._hoodie_columns)

    def select(self, *cols: Any) -> SkippingDataFrame:
        selected = DataFrame.select(self, *cols)
        output = selected._jdf.queryExecution().analyzed().output()
        rebuild = functools.partial(_selected, self._hoodie_rebuild, cols, output)
        return SkippingDataFrame(selected, self._hoodie_read, rebuild, self._hoodie_columns)


def _rebuilt_scan(scan: Callable[[Sequence[FileSlice]], AnyDataFrame], output: JavaObject, slices: Sequence[FileSlice]) -> AnyDataFrame:
    return _rebound(scan(slices), output)


def _filtered(rebuild: Callable[[Sequence[FileSlice]], AnyDataFrame], condition: Condition, slices: Sequence[FileSlice]) -> AnyDataFrame:
    return rebuild(slices).filter(condition)  # a filter keeps its input's attributes


def _selected(rebuild: Callable[[Sequence[FileSlice]], AnyDataFrame], cols: tuple[Any, ...], output: JavaObject, slices: Sequence[FileSlice]) -> AnyDataFrame:
    # computed columns get new ids each time a projection is made: give back the first's
    return _rebound(rebuild(slices).select(*cols), output)


def _rebound(df: AnyDataFrame, output: JavaObject) -> AnyDataFrame:
    """``df`` with its columns renamed to the attributes ``output`` (same names, same
    order): a projection aliasing each column to the attribute id of ``output``'s."""
    jvm = df.sparkSession._jvm
    assert jvm is not None
    new = df._jdf.queryExecution().analyzed().output()
    names = [new.apply(i).name() for i in range(new.size())]
    # the same plan over fewer slices: the same columns, in the same order
    assert names == [output.apply(i).name() for i in range(output.size())], names
    catalyst = jvm.org.apache.spark.sql.catalyst
    scala = jvm.scala.jdk.javaapi.CollectionConverters
    empty = scala.asScala(jvm.java.util.ArrayList()).toSeq()
    projection = jvm.java.util.ArrayList()
    for i in range(output.size()):
        old, column = output.apply(i), new.apply(i)
        if column.exprId().id() == old.exprId().id():
            projection.add(column)  # passed through a select: the same attribute already
        else:
            projection.add(catalyst.expressions.Alias(column, old.name(), old.exprId(), empty, jvm.scala.Option.empty(), empty))
    project = catalyst.plans.logical.Project(scala.asScala(projection).toSeq(), df._jdf.logicalPlan())
    return DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(df._jdf.sparkSession(), project), df.sparkSession)
