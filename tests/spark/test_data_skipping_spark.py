"""Data skipping through Spark: ``spark.read.format("hoodie").load(p).where(...)`` reads
only the file slices whose column statistics in the metadata table may hold a matching
row, and returns exactly what the same read without skipping returns. The files read
are Spark's own list of the scan's files (``inputFiles``), compared with the Parquet
footers of the base files; tables are Apache Hudi's (the conformance tables with a
metadata table) and a merge-on-read table hoodie writes with log files."""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from mdt_checks import footer_stats, mdt_tables
from pyspark.sql import functions as F
from shared import cases_or_skip

import hoodie
from hoodie.metadata_table import MetadataTableReader
from hoodie.spark.pushdown import implied_filter
from hoodie.spark.skipping import SkippingDataFrame
from hoodie.table.table import HoodieTable

MDT_TABLES = mdt_tables()
COW = "sample_table/cow/v9_txns_simple_meta"
# a partitioned copy-on-write table and an unpartitioned merge-on-read one (one plain
# scan): the two ways the scan is built for tables with a metadata table
PICKED = [t for t in (COW, "sample_table/mor/avro/v9_nonpartitioned_rollback") if t in MDT_TABLES]
CASES = cases_or_skip(PICKED, PICKED, "tables with a metadata table")
OFF = {"hoodie.enable.data.skipping": "false"}

Footer = dict[str, tuple[Any, Any, int, int]]


def _between(column: str, lo: Any, hi: Any) -> Callable[[Footer], bool]:
    return lambda f: column not in f or (f[column][1] >= lo and f[column][0] <= hi)


# (a Spark condition, the same as hoodie.read's filters, the footer test a base file must
# pass to be read; ``named(keys)``: whether the record index, when the table has one,
# places one of ``keys`` in the file: a conjunction asking for keys reads only those files)
Named = Callable[[set[str]], bool]
CONDITIONS: list[tuple[str, list[Any], Callable[[Footer, Named], bool]]] = [
    (
        "amount >= 100.00 AND amount < 300.00",
        [("amount", ">=", Decimal("100.00")), ("amount", "<", Decimal("300.00"))],
        lambda f, named: _between("amount", Decimal("100.00"), Decimal("299.99"))(f),
    ),
    (
        "txn_id = 'TXN-002' OR txn_date > DATE'2024-01-20'",
        [[("txn_id", "=", "TXN-002")], [("txn_date", ">", dt.date(2024, 1, 20))]],
        lambda f, named: (named({"TXN-002"}) and _between("txn_id", "TXN-002", "TXN-002")(f))
        or "txn_date" not in f or f["txn_date"][1] > dt.date(2024, 1, 20),
    ),
    (
        "txn_id IN ('TXN-001', 'TXN-999')",
        [("txn_id", "in", ["TXN-001", "TXN-999"])],
        lambda f, named: named({"TXN-001", "TXN-999"}) and _between("txn_id", "TXN-001", "TXN-001")(f),
    ),
    (
        "NOT (txn_ts < 1700800000000)",
        [("txn_ts", ">=", 1700800000000)],
        lambda f, named: "txn_ts" not in f or f["txn_ts"][1] >= 1700800000000,
    ),
]


def _names(df: Any) -> set[str]:
    return {f.rsplit("/", 1)[-1] for f in df.inputFiles()}


def _latest_base_files(path: str) -> dict[str, Footer]:
    latest = HoodieTable.open(path).local_view().latest_slices_all()
    return {s.base_file.file_name: footer_stats(Path(s.base_file.path)) for s in latest if s.base_file is not None}


@pytest.mark.parametrize("name", CASES)
def test_spark_filters_read_only_the_files_whose_statistics_overlap(spark, helpers, conformance_table, name: str) -> None:
    path = str(conformance_table(name))
    base_files = _latest_base_files(path)
    df = spark.read.format("hoodie").load(path)
    assert isinstance(df, SkippingDataFrame)
    assert _names(df) == set(base_files)
    assert not isinstance(spark.read.format("hoodie").options(**OFF).load(path), SkippingDataFrame)
    table = HoodieTable.open(path)
    indexed = "record_index" in table.config.metadata_partitions

    def named_in(file_name: str) -> Callable[[set[str]], bool]:
        def named(keys: set[str]) -> bool:
            return not indexed or any(loc.file_id == file_name[:38] for loc in MetadataTableReader(table).record_locations(keys).values())

        return named

    for condition, filters, overlaps in CONDITIONS:
        got = df.where(condition)
        # the rows of the in-process read, filtered (and, without a record index, those
        # of the read without skipping: a key a table holds twice is found where the
        # index places it)
        assert helpers.rows(got) == helpers.rows(hoodie.read(path, filters=filters)), condition
        if not indexed:
            assert helpers.rows(got) == helpers.rows(hoodie.read(path, OFF, filters=filters)), condition
        assert _names(got) == {f for f, footer in base_files.items() if overlaps(footer, named_in(f))}, condition


def test_the_issue_reproduction_and_columns_of_the_loaded_dataframe(spark, helpers, conformance_table) -> None:
    """``load(p).where(...)`` with a range on a data column reads fewer files; conditions
    built from the loaded DataFrame's own columns, chained, after a ``select``, or used in
    ``df[...]`` and a later join, still resolve after skipping rebuilt the scan."""
    if COW not in MDT_TABLES:
        pytest.skip(f"conformance table {COW} not found")
    path = str(conformance_table(COW))
    everything = hoodie.read(path)
    df = spark.read.format("hoodie").load(path)
    got = df.where("txn_ts >= 1700800000000")
    assert sorted(r.txn_id for r in got.collect()) == ["TXN-017", "TXN-018"]
    assert len(got.inputFiles()) == len(got.hoodie_file_slices) == 2 < len(df.inputFiles())

    bound = df.where(df.txn_ts >= 1700800000000).where(df["amount"] > Decimal("0")).filter(F.col("txn_id") != "TXN-018")
    assert [r.txn_id for r in bound.collect()] == ["TXN-017"]
    assert len(bound.inputFiles()) <= 2
    assert [r.txn_id for r in df[df.txn_id == "TXN-017"].collect()] == ["TXN-017"]
    joined = bound.join(df.select("txn_id", F.col("region").alias("r")), "txn_id")
    assert [(r.txn_id, r.r) for r in joined.collect()] == [(r.txn_id, r.region) for r in bound.collect()]
    # after select: columns passed through skip, computed or renamed ones do not
    projected = df.select("txn_id", (df.amount * 2).alias("double_amount"), F.col("txn_ts").alias("amount"))
    assert isinstance(projected, SkippingDataFrame)
    narrowed = projected.where(projected.txn_id == "TXN-017")
    assert len(narrowed.inputFiles()) == len(narrowed.hoodie_file_slices) == 1
    assert [r.txn_id for r in narrowed.where(projected.double_amount > 0).collect()] == ["TXN-017"]
    assert [r.amount for r in narrowed.collect()] == [r.txn_ts for r in df.where("txn_id = 'TXN-017'").collect()]
    not_amount = projected.where("amount > 99999999")  # txn_ts values, not amount's statistics
    assert len(not_amount.hoodie_file_slices) == len(df.hoodie_file_slices)
    assert not_amount.count() == df.where("txn_ts > 99999999").count() > 0
    # nothing matches: no file is read, the schema stays
    none = df.where(df.amount > Decimal("99999999"))
    assert none.inputFiles() == [] and none.count() == 0 and none.columns == everything.column_names
    # a filter that rules nothing out keeps the scan as it is
    assert len(df.where("upper(currency) = 'USD'").hoodie_file_slices) == len(df.hoodie_file_slices)


def test_time_travel_read_optimized_and_incremental_reads_with_filters(spark, helpers, conformance_table) -> None:
    if COW not in MDT_TABLES:
        pytest.skip(f"conformance table {COW} not found")
    path = str(conformance_table(COW))
    first = HoodieTable.open(path).timeline.completed_writes()[0].timestamp
    condition = "amount > 1000.00"
    for options in ({"as.of.instant": first}, {"hoodie.datasource.query.type": "read_optimized"}):
        df = spark.read.format("hoodie").options(**options).load(path)
        assert isinstance(df, SkippingDataFrame)
        expected = hoodie.read(path, options, filters=[("amount", ">", Decimal("1000.00"))])
        got = df.where(condition)
        assert helpers.rows(got) == helpers.rows(expected)
        assert set(got.hoodie_file_slices) <= set(df.hoodie_file_slices)
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "0"}
    pulled = spark.read.format("hoodie").options(**incremental).load(path)
    assert not isinstance(pulled, SkippingDataFrame)  # incremental pulls filter rows only, as in process
    assert helpers.rows(pulled.where(condition)) == helpers.rows(hoodie.read(path, incremental, filters=[("amount", ">", Decimal("1000.00"))]))


def test_without_column_statistics_or_with_skipping_off_every_file_is_read(spark, conformance_table, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p"}
    hoodie.write(pa.table({"id": ["a", "b", "c"], "p": ["x", "y", "z"], "v": [1, 5, 9]}), path, options)
    df = spark.read.format("hoodie").load(path)
    assert not isinstance(df, SkippingDataFrame)
    assert _names(df.where("v > 6")) == set(_latest_base_files(path)) and len(_latest_base_files(path)) == 3
    assert [r.id for r in df.where("v > 6").collect()] == ["c"]
    if COW not in MDT_TABLES:
        pytest.skip(f"conformance table {COW} not found")
    cow = str(conformance_table(COW))
    for off in (OFF, {"hoodie.metadata.enable": "false"}):
        assert _names(spark.read.format("hoodie").options(**off).load(cow).where("txn_ts >= 1700800000000")) == set(_latest_base_files(cow))


def _mor_with_logs(path: str) -> None:
    """A merge-on-read table hoodie writes with column statistics in its metadata table:
    three inserts into new file groups (v of insert i in [10i, 10i + 3]), then an upsert
    that puts v = 500 into a log file of the first file group."""
    options = {
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true", "hoodie.parquet.small.file.limit": "0",
    }
    for i in range(3):
        rows = pa.table({"id": [f"k{i}{j}" for j in range(4)], "p": ["x", "x", "y", "y"], "ts": [i] * 4, "v": [i * 10 + j for j in range(4)]})
        hoodie.write(rows, path, {**options, "hoodie.datasource.write.operation": "insert"})
    hoodie.write(pa.table({"id": ["k00"], "p": ["x"], "ts": [9], "v": [500]}), path, {**options, "hoodie.datasource.write.operation": "upsert"})


def test_merged_slices_with_log_files_are_skipped_by_their_files_statistics(spark, helpers, tmp_path: Path) -> None:
    path = str(tmp_path / "mor")
    _mor_with_logs(path)
    df = spark.read.format("hoodie").load(path)
    assert isinstance(df, SkippingDataFrame)
    merged = [s for s in df.hoodie_file_slices if s.log_files]
    assert len(merged) == 1 and len(df.hoodie_file_slices) == 6
    footers = _latest_base_files(path)
    for condition, lo, hi in (("v >= 400", 400, 10**9), ("v = 1", 1, 1), ("v < 5", -(10**9), 4), ("v BETWEEN 20 AND 21", 20, 21)):
        got = df.where(condition)
        filters = [("v", ">=", lo), ("v", "<=", hi)]
        assert helpers.rows(got) == helpers.rows(hoodie.read(path, OFF, filters=filters)), condition
        expected = set()
        for s in df.hoodie_file_slices:
            assert s.base_file is not None
            overlaps = _between("v", lo, hi)(footers[s.base_file.file_name])
            # the log file holds v = 500 only: its statistics decide with the base file's
            if overlaps or (s.log_files and lo <= 500 <= hi):
                expected.add(s)
        assert set(got.hoodie_file_slices) == expected, condition
        assert _names(got) == {s.base_file.file_name for s in expected if s.base_file is not None and not s.log_files}, condition
    assert [r.v for r in df.where("v >= 400").collect()] == [500]
    assert len(df.where("v BETWEEN 20 AND 21").hoodie_file_slices) == 1  # the third insert's x file group only


def test_spark_conditions_become_the_row_filters_they_imply(spark) -> None:
    """The translation alone (Spark's analyzer resolves, nothing runs)."""
    df = spark.createDataFrame(
        [],
        "i int, l long, d double, f float, m decimal(10,2), s string, day date, at timestamp, ntz timestamp_ntz, b boolean, st struct<x: int>",
    )

    output = df._jdf.queryExecution().analyzed().output()
    columns = {output.apply(i).exprId().id() for i in range(output.size())}

    def implied(condition: Any, of: Any = df) -> list[list[tuple[str, str, Any]]] | None:
        plan = of.where(condition)._jdf.queryExecution().analyzed()
        row_filter = implied_filter(plan.condition(), columns)
        return None if row_filter is None else [list(c) for c in row_filter.conjunctions]

    assert implied("i > 10 AND l <= 5") == [[("i", ">", 10), ("l", "<=", 5)]]
    assert implied("10 < i") == [[("i", ">", 10)]]
    assert implied("NOT (i > 10 OR s = 'x')") == [[("i", "<=", 10), ("s", "!=", "x")]]
    assert implied("NOT (i > 10 AND s = 'x')") == [[("i", "<=", 10)], [("s", "!=", "x")]]
    assert implied("(i = 1 OR i = 2) AND s = 'a'") == [[("i", "=", 1), ("s", "=", "a")], [("i", "=", 2), ("s", "=", "a")]]
    assert implied("i > 10 OR upper(s) = 'A'") is None  # one side may match anything
    assert implied("i > 10 AND upper(s) = 'A'") == [[("i", ">", 10)]]
    assert implied("l > 10") == [[("l", ">", 10)]]
    assert implied("i > 2.5") == [[("i", ">", 2)]]  # as Spark rewrites it: cast(i as bigint) > 2
    assert implied("i = 2.5") == [[("i", "=", Decimal("2.5"))]]  # i widened to a decimal, exactly
    assert implied("m >= 100.5 AND m < 300") == [[("m", ">=", Decimal("100.50")), ("m", "<", Decimal("300.00"))]]
    assert implied("m > 10") == [[("m", ">", Decimal("10.00"))]]
    # floating columns: NaN is above every number in Spark and absent from statistics
    assert implied("d < 1.5") == [[("d", "<", 1.5)]]
    assert implied("d > 1.5") is None and implied("d != 1.5") is None and implied("f >= 1") is None
    assert implied("d < double('NaN')") is None
    assert implied(F.col("s").isin("a", None, "b")) == [[("s", "in", ["a", "b"])]]
    assert implied(F.col("d").isin(1.0, float("nan"))) is None
    assert implied("s IS NULL") == [[("s", "is null", None)]] and implied("NOT (s IS NULL)") == [[("s", "is not null", None)]]
    assert implied("s <=> 'a'") == [[("s", "=", "a")]] and implied("NOT (s <=> 'a')") is None
    assert implied("s = NULL") is None
    assert implied("day > '2024-01-20'") == [[("day", ">", dt.date(2024, 1, 20))]]
    assert implied(F.col("at") >= dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)) == [[("at", ">=", dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc))]]
    assert implied(F.col("ntz") < F.lit(dt.datetime(2024, 3, 1)).cast("timestamp_ntz")) == [[("ntz", "<", dt.datetime(2024, 3, 1))]]
    assert implied("b = true") == [[("b", "=", True)]]
    assert implied("i BETWEEN 2 AND 5") == [[("i", ">=", 2), ("i", "<=", 5)]]
    assert implied("NOT (i BETWEEN 2 AND 5)") == [[("i", "<", 2)], [("i", ">", 5)]]
    assert implied("i BETWEEN 2 AND l") == [[("i", ">=", 2)]]  # l is no constant
    assert implied("l BETWEEN 2 AND 5") == [[("l", ">=", 2), ("l", "<=", 5)]]  # int bounds of a long
    assert implied("d BETWEEN 2 AND 5") == [[("d", "<=", 5.0)]]  # a floating column: the upper bound only
    assert implied("m BETWEEN 1 AND 2") == [[("m", ">=", Decimal("1.00")), ("m", "<=", Decimal("2.00"))]]
    assert implied("day BETWEEN '2024-01-01' AND '2024-02-01'") == [[("day", ">=", dt.date(2024, 1, 1)), ("day", "<=", dt.date(2024, 2, 1))]]
    assert implied("st.x = 1") is None  # nested fields have no statistics here
    assert implied("s = i") is None and implied("s > 1") is None  # not a constant; a cast of s
    # a column of the same name that is not the stored one
    renamed = df.select(F.col("l").alias("i"), "s")
    assert implied("i > 10 AND s = 'a'", renamed) == [[("s", "=", "a")]]
