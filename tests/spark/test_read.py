"""``spark.read.format("hoodie")`` returns what ``hoodie.read`` returns (columns, order,
types, rows) for snapshot, time travel, read-optimized and incremental queries, on
hoodie-written and on Apache Hudi-written (conformance) tables; filters on partition
columns skip the other partitions' files, proven by garbling those files after planning.
"""
from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from table_options import trip_options

import hoodie
from hoodie.layout import DEFAULT_PARTITION
from hoodie.spark import read_dataframe
from hoodie.table.table import HoodieTable


def _same(df, expected: pa.Table, helpers) -> None:
    assert df.columns == expected.column_names
    assert helpers.df_types(df) == helpers.spark_types(expected.schema)
    assert helpers.rows(df) == helpers.rows(expected)


def _trips(keys: list[str], cities: list[str | None], ts: int) -> pa.Table:
    return pa.table({
        "uuid": pa.array(keys, pa.string()),
        "city": pa.array(cities, pa.string()),
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "fare": pa.array([float(len(k) * ts) for k in keys], pa.float32()),
        "day": pa.array([datetime.date(2024, 1, 1 + i % 3) for i in range(len(keys))], pa.date32()),
    })


@pytest.fixture(scope="module")
def three_commits(tmp_path_factory) -> tuple[str, list[str]]:
    """A non-hive-style table: insert, upsert (updates, inserts, a null and an empty city:
    both in the default partition), delete."""
    path = str(tmp_path_factory.mktemp("read") / "t")
    opts = trip_options()
    cities = ["sf", "la", "nyc"]
    c1 = hoodie.write(_trips([f"k{i}" for i in range(9)], [cities[i % 3] for i in range(9)], 1), path, opts)
    c2 = hoodie.write(_trips(["k0", "k4", "n1", "n2", "n3"], ["sf", "la", "la", None, ""], 2), path, opts)
    c3 = hoodie.write(_trips(["k1", "k2"], ["la", "nyc"], 3), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    return path, [c1, c2, c3]


def test_snapshot_time_travel_incremental(spark, three_commits, helpers) -> None:
    path, (c1, c2, c3) = three_commits
    reader = spark.read.format("hoodie")
    _same(reader.load(path), hoodie.read(path), helpers)
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    _same(spark.read.format("hoodie").options(**ro).load(path), hoodie.read(path, ro), helpers)
    for instant in (c1, c2, c3):
        opts = {"as.of.instant": instant}
        _same(spark.read.format("hoodie").options(**opts).load(path), hoodie.read(path, opts), helpers)
    for begin, end in (("0", None), (c1, None), (c1, c2), (c2, c3), ("0", c1)):
        opts = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin}
        if end is not None:
            opts["hoodie.datasource.read.end.instanttime"] = end
        df = spark.read.format("hoodie").options(**opts).load(path)
        expected = hoodie.read(path, opts)
        _same(df, expected, helpers)
    # null and "" share the default partition; the data keeps them apart
    df = spark.read.format("hoodie").load(path)
    assert [r.uuid for r in df.filter(F.col("city").isNull()).collect()] == ["n2"]
    assert [r.uuid for r in df.filter(F.col("city") == "").collect()] == ["n3"]


def test_empty_table_has_the_table_schema(spark, tmp_path, helpers) -> None:
    path = str(tmp_path / "empty")
    opts = {"hoodie.table.name": "e", "hoodie.datasource.write.recordkey.field": "uuid", "hoodie.datasource.write.partitionpath.field": "city"}
    hoodie.write(_trips([], [], 1), path, opts)
    expected = hoodie.read(path)
    assert expected.num_rows == 0
    _same(read_dataframe(spark, path), expected, helpers)
    before = {"as.of.instant": "20000101000000000"}
    _same(read_dataframe(spark, path, before), hoodie.read(path, before), helpers)


def _garble_other_partitions(path: str, *keep: str) -> None:
    for f in Path(path).rglob("*.parquet"):
        if f.parent.name not in keep:
            f.write_bytes(b"garbled" * 64)


def test_partition_pruning_hive_style_uses_spark_discovery(spark, tmp_path, helpers) -> None:
    """Partitioned by a date column, hive-style, values taken from the path: Spark's
    partition discovery supplies the column (typed as the table says), in place of the same
    column stored in the files."""
    path = str(tmp_path / "hive")
    data = _trips([f"k{i}" for i in range(9)], ["sf"] * 9, 1)
    opts = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "day",
        "hoodie.datasource.write.hive_style_partitioning": "true",
    }
    hoodie.write(data, path, opts)
    expected = hoodie.read(path)
    df = spark.read.format("hoodie").option("hoodie.datasource.read.extract.partition.values.from.path", "true").load(path)
    _same(df, expected, helpers)
    day = datetime.date(2024, 1, 2)
    pruned = df.filter(F.col("day") == day)
    plan = pruned._jdf.queryExecution().executedPlan().toString()
    assert "PartitionFilters: [isnotnull(day" in plan and "(day" in plan
    want = expected.filter(pa.compute.equal(expected.column("day"), pa.scalar(day, pa.date32())))
    _garble_other_partitions(path, "day=2024-01-02")
    assert helpers.rows(pruned) == helpers.rows(want)
    with pytest.raises(Exception, match=r"(?i)parquet|FAILED_READ_FILE"):
        df.collect()  # the garbled files really are unreadable
    # unset, the option is true: the same pruned scan
    by_default = spark.read.format("hoodie").load(path).filter(F.col("day") == day)
    assert "PartitionFilters: [isnotnull(day" in by_default._jdf.queryExecution().executedPlan().toString()
    # false: the column is read from the files, and the filter prunes by the paths' dates
    stored = spark.read.format("hoodie").option("hoodie.datasource.read.extract.partition.values.from.path", "false").load(path)
    stored = stored.filter(F.col("day") == day)
    assert {s.partition_path for s in stored.hoodie_file_slices} == {"day=2024-01-02"}
    assert "PartitionFilters: []" in stored._jdf.queryExecution().executedPlan().toString()
    assert helpers.rows(stored) == helpers.rows(want)


@pytest.mark.parametrize("from_path", [False, True], ids=["stored-values", "values-from-path"])
def test_partition_pruning_without_hive_style(spark, three_commits, helpers, tmp_path, from_path) -> None:
    """Non-hive-style paths: a filter on the partition column leaves only the matching
    partition's files. By default the read prunes by the paths' values and reads the stored
    ones; taking values from the path, it is one scan per partition with the column as a
    literal, and Spark drops the other branches. The default partition holds null and ""
    cities, so its value is not known from the path: it stays."""
    source, _ = three_commits
    path = str(tmp_path / "copy")
    shutil.copytree(source, path)
    df = spark.read.format("hoodie").option("hoodie.datasource.read.extract.partition.values.from.path", str(from_path)).load(path)
    expected = hoodie.read(path)
    pruned = df.filter(F.col("city") == "la")
    assert {Path(f).parent.name for f in df.inputFiles()} == {"sf", "la", "nyc", DEFAULT_PARTITION}
    assert {Path(f).parent.name for f in pruned.inputFiles()} == {"la", DEFAULT_PARTITION}
    want = expected.filter(pa.compute.equal(expected.column("city"), "la"))
    _garble_other_partitions(path, "la", DEFAULT_PARTITION)
    assert helpers.rows(pruned) == helpers.rows(want)
    assert sorted(r.uuid for r in df.filter(F.col("city").isin("la", "x")).select("uuid").collect()) == sorted(want.column("uuid").to_pylist())


@pytest.mark.conformance(table_type="COPY_ON_WRITE")
def test_apache_hudi_tables(spark, conformance_case, conformance_table, helpers) -> None:
    path = str(conformance_table(conformance_case))
    commits = [i.timestamp for i in HoodieTable.open(path).timeline.completed_writes()]
    _same(spark.read.format("hoodie").load(path), hoodie.read(path), helpers)
    if commits:
        incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": commits[0]}
        _same(spark.read.format("hoodie").options(**incremental).load(path), hoodie.read(path, incremental), helpers)


def test_many_local_files_are_looked_up_without_a_listing_job(spark, tmp_path, helpers) -> None:
    """Past 32 paths Spark lists files with a Spark job; the base files of a local table
    are known already, so the scan is created without one, and the session's setting is
    left as it was."""
    path = str(tmp_path / "t")
    cities = [f"c{i:02d}" for i in range(70)]  # more than the union of per-partition scans takes
    expected = _trips([f"k{i}" for i in range(140)], [cities[i % 70] for i in range(140)], 1)
    hoodie.write(expected, path, trip_options())
    assert len(HoodieTable.open(path).view().latest_slices_all()) == 70
    key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(key, None)
    sc = spark.sparkContext
    sc.setJobGroup("hoodie-listing-test", "creating the scan")
    try:
        df = spark.read.format("hoodie").load(path)
        assert list(sc.statusTracker().getJobIdsForGroup("hoodie-listing-test")) == []
    finally:
        sc.setJobGroup("", "")
    assert spark.conf.get(key, None) == before
    assert sorted(r["uuid"] for r in df.select("uuid").collect()) == sorted(expected.column("uuid").to_pylist())
