"""Data skipping for ``spark.read.format("hoodie")``: filters on the DataFrame a read
returns prune its file slices by the metadata table's column statistics, before Spark
reads anything.

``spark.read.format("hoodie").load(path)`` plans the read on the driver (which slices, as
of which instant) and returns a :class:`SkippingDataFrame` when the table's metadata table
has column statistics and skipping is on (``hoodie.enable.data.skipping``,
``hoodie.metadata.enable``). Its ``filter``/``where`` (and ``df[condition]``) let Spark
resolve the condition as usual, turn the resolved condition into the row filter it
implies (:mod:`hoodie.spark.pushdown`), drop the slices whose statistics rule that out
(:func:`hoodie.query.skipping.prune_slices`) and, when any were dropped, build the scan
again over the kept slices only — the same scan (native Parquet reads of base-file-only
slices, merged slices with log files) — and apply every condition given so far to it.
Skipping only picks files: no filter is reported to Spark as handled, Spark evaluates
each condition in full on the rows read, so the result is the same with skipping off.

The rebuilt scan keeps the attribute ids of the first one (a projection aliasing its
columns to them), so columns taken from the DataFrame before (``df.fare > 10``, used
again in a later ``where`` or a join) still resolve against it.

Why not a Python DataSource with ``pushFilters`` (PySpark 4.1): its reader yields rows
or Arrow batches from Python workers, so base files would no longer be read by Spark's
native Parquet reader (vectorized decoding, column pruning, row-group filters, file
splits, partition pruning); and ``format("hoodie")`` is already taken by the
reader/writer patch of :mod:`hoodie.spark.datasource`. Pruning the planned slices when
the filter is applied keeps every read path as it is, at the price of reaching only
filters applied to the DataFrame ``load`` returned (before other transformations); a
query on a temporary view or after a ``select`` reads every planned slice (Spark's
Parquet reader still skips row groups by their footers).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from py4j.java_gateway import JavaObject
from pyspark.sql import Column
from pyspark.sql import DataFrame as AnyDataFrame
from pyspark.sql.classic.dataframe import DataFrame

from hoodie.query.skipping import prune_slices
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


class SkippingDataFrame(DataFrame):
    """The DataFrame of a hoodie read whose filters skip file slices (module docstring).

    Every other method is Spark's and returns a plain DataFrame."""

    def __init__(self, df: AnyDataFrame, read: SkippableRead, conditions: tuple[Condition, ...] = (), output: JavaObject | None = None):
        super().__init__(df._jdf, df.sparkSession)
        self._hoodie_read = read
        self._hoodie_conditions = conditions
        # the attributes of the first scan, which every rebuilt scan takes over
        self._hoodie_output = output if output is not None else df._jdf.queryExecution().analyzed().output()

    @property
    def hoodie_file_slices(self) -> tuple[FileSlice, ...]:
        """The file slices this DataFrame reads (after skipping)."""
        return self._hoodie_read.slices

    def filter(self, condition: Condition) -> SkippingDataFrame:
        filtered = DataFrame.filter(self, condition)  # Spark checks and resolves it
        conditions = (*self._hoodie_conditions, condition)
        read = self._hoodie_read
        plan = filtered._jdf.queryExecution().analyzed()
        row_filter = implied_filter(plan.condition()) if plan.nodeName() == "Filter" else None
        if row_filter is not None:
            kept = prune_slices(read.table, read.slices, row_filter)
            if len(kept) < len(read.slices):
                read = dataclasses.replace(read, slices=tuple(kept))
                filtered = _rebound(read.scan(kept), self._hoodie_output)
                for c in conditions:
                    filtered = filtered.filter(c)
        return SkippingDataFrame(filtered, read, conditions, self._hoodie_output)


def _rebound(df: AnyDataFrame, output: JavaObject) -> AnyDataFrame:
    """``df`` with its columns renamed to the attributes ``output`` (same names, same
    order): a projection aliasing each column to the attribute id of ``output``'s."""
    jvm = df.sparkSession._jvm
    assert jvm is not None
    new = df._jdf.queryExecution().analyzed().output()
    names = [new.apply(i).name() for i in range(new.size())]
    # the same plan's schema over fewer slices: the same columns, in the same order
    assert names == [output.apply(i).name() for i in range(output.size())], names
    catalyst = jvm.org.apache.spark.sql.catalyst
    scala = jvm.scala.jdk.javaapi.CollectionConverters
    empty = scala.asScala(jvm.java.util.ArrayList()).toSeq()
    aliases = jvm.java.util.ArrayList()
    for i in range(output.size()):
        old = output.apply(i)
        aliases.add(catalyst.expressions.Alias(new.apply(i), old.name(), old.exprId(), empty, jvm.scala.Option.empty(), empty))
    project = catalyst.plans.logical.Project(scala.asScala(aliases).toSeq(), df._jdf.logicalPlan())
    return DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(df._jdf.sparkSession(), project), df.sparkSession)
