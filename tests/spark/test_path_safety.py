"""No partition value reaches outside its table through ``df.write.format("hoodie")``:
executors check the values before any I/O of the batch, and the driver refuses the batch
with an error naming the value, the field and the record key; the table, a neighbouring
table and the folders around them stay byte for byte as they were. With
hoodie.datasource.write.partitionpath.urlencode=true the encodable values are written as
one folder each and read back as given through Spark, hoodie and hudi-rs. A partition
folder linked outside the table stops Spark's reads and writes with an error naming the
link."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from hostile_paths import (
    ALWAYS_REFUSED,
    HOSTILE,
    REFUSED_UNLESS_ENCODED,
    TABLE_TYPES,
    expect_refused,
    hostile_options,
    tree_state,
    trips,
)

import hoodie
from hoodie.errors import UnsafePathError

# One of each kind of refusal: leaving through "../" (one and two levels up), an absolute
# path, climbing from inside, a bare "..", a name too long, a control character.
SAMPLE = ["neighbour", "two-up", "absolute", "climb-out", "dot-dot", "too-long", "nul"]


def spark_write(spark, data: pa.Table, path: Path, opts: dict[str, str]) -> None:
    spark.createDataFrame(data).write.format("hoodie").options(**opts).mode("append").save(str(path))


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
@pytest.mark.parametrize("table_type", sorted(TABLE_TYPES))
@pytest.mark.parametrize("name", SAMPLE)
def test_hostile_value_is_refused_by_an_existing_table(spark, neighbourhood: Path, name: str, table_type: str, hive: bool) -> None:
    value = HOSTILE[name]
    a = neighbourhood / "a"
    opts = hostile_options(table_type, hive)
    spark_write(spark, trips(["sf", "nyc"]), a, opts)
    rows_before = hoodie.read(str(a)).sort_by("uuid")
    before = tree_state(neighbourhood.parent)
    expect_refused(value, lambda: spark_write(spark, trips(["sf", value, "la"], ts=2), a, opts))
    assert tree_state(neighbourhood.parent) == before
    assert hoodie.read(str(a)).sort_by("uuid") == rows_before
    assert hoodie.read(str(neighbourhood / "b")).num_rows == 2
    assert not os.path.exists("/abs")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_first_write_creates_no_table(spark, neighbourhood: Path, name: str) -> None:
    value = HOSTILE[name]
    before = tree_state(neighbourhood.parent)
    expect_refused(value, lambda: spark_write(spark, trips(["sf", value]), neighbourhood / "a", hostile_options("mor", False)))
    assert tree_state(neighbourhood.parent) == before


@pytest.mark.parametrize("operation", ["insert", "bulk_insert"])
def test_every_operation_checks_partition_values(spark, neighbourhood: Path, operation: str) -> None:
    a = neighbourhood / "a"
    opts = {**hostile_options("cow", True), "hoodie.datasource.write.operation": operation}
    spark_write(spark, trips(["sf", "nyc"]), a, opts)
    before = tree_state(neighbourhood.parent)
    expect_refused("../b/y", lambda: spark_write(spark, trips(["sf", "../b/y"]), a, opts))
    assert tree_state(neighbourhood.parent) == before


def test_partition_aligned_write_checks_before_any_partition_is_written(spark, neighbourhood: Path) -> None:
    """With one shuffle partition and many table partitions, every task plans and writes its
    own partitions: the values are still all checked before the first one is written."""
    a = neighbourhood / "a"
    opts = hostile_options("cow", False, **{"hoodie.upsert.shuffle.parallelism": "1"})
    spark_write(spark, trips(["sf", "nyc"]), a, opts)
    before = tree_state(neighbourhood.parent)
    many = pa.table({"uuid": ["k1"] + [f"x{i}" for i in range(20)], "city": ["../b/y"] + [f"c{i}" for i in range(20)], "ts": [1] * 21, "fare": [0.0] * 21})
    expect_refused("../b/y", lambda: spark_write(spark, many, a, opts))
    assert tree_state(neighbourhood.parent) == before


@pytest.mark.parametrize("hive", [False, True], ids=["plain", "hive"])
@pytest.mark.parametrize("table_type", sorted(TABLE_TYPES))
def test_url_encoding_round_trips_through_spark_hoodie_and_hudi_rs(spark, neighbourhood: Path, table_type: str, hive: bool, helpers) -> None:
    a = neighbourhood / "a"
    values = sorted(REFUSED_UNLESS_ENCODED.values())
    opts = hostile_options(table_type, hive, **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    b_before = tree_state(neighbourhood / "b")
    spark_write(spark, trips(values), a, opts)
    spark_write(spark, trips(values, ts=2), a, opts)  # updates find their encoded partitions
    read_by_spark = spark.read.format("hoodie").load(str(a)).select("city", "ts").collect()
    assert sorted(r.city for r in read_by_spark) == values
    assert {r.ts for r in read_by_spark} == {2}
    assert sorted(hoodie.read(str(a)).column("city").to_pylist()) == values
    assert sorted(helpers.hudi_rs_snapshot(a).column("city").to_pylist()) == values
    folders = {p.name for p in a.iterdir() if p.is_dir()} - {".hoodie"}
    assert len(folders) == len(values)
    assert tree_state(neighbourhood / "b") == b_before
    assert sorted(os.listdir(neighbourhood)) == ["a", "b"]


@pytest.mark.parametrize("name", sorted(ALWAYS_REFUSED))
def test_url_encoding_still_refuses_what_it_cannot_make_safe(spark, neighbourhood: Path, name: str) -> None:
    before = tree_state(neighbourhood.parent)
    opts = hostile_options("cow", True, **{"hoodie.datasource.write.partitionpath.urlencode": "true"})
    expect_refused(ALWAYS_REFUSED[name], lambda: spark_write(spark, trips(["sf", ALWAYS_REFUSED[name]]), neighbourhood / "a", opts))
    assert tree_state(neighbourhood.parent) == before


@pytest.mark.parametrize("table_type", sorted(TABLE_TYPES))
def test_a_linked_partition_folder_is_refused_by_spark_writes_and_reads(spark, neighbourhood: Path, table_type: str) -> None:
    """A partition folder of ``a`` linked to the neighbouring table's partition: Spark
    neither reads its Hudi-named Parquet files as ``a``'s data nor writes or deletes
    there; both stop with an error naming the link."""
    a = neighbourhood / "a"
    opts = hostile_options(table_type, False)
    spark_write(spark, trips(["sf", "nyc"]), a, opts)
    link = a / "la"
    link.symlink_to(neighbourhood / "b" / "y")
    before = tree_state(neighbourhood / "b")
    # a read lists partitions through a's metadata table (on by default), which never
    # named 'la': the neighbour's files are not read as a's data
    assert sorted(r["city"] for r in spark.read.format("hoodie").load(str(a)).collect()) == ["nyc", "sf"]
    for call in (
        lambda: spark.read.format("hoodie").option("hoodie.metadata.enable", "false").load(str(a)).collect(),
        lambda: spark_write(spark, trips(["sf", "la"], ts=2), a, opts),
        lambda: spark_write(spark, trips(["la"], ts=3), a, {**opts, "hoodie.datasource.write.operation": "insert_overwrite_table"}),
    ):
        with pytest.raises(UnsafePathError) as info:
            call()
        assert repr(str(link)) in str(info.value) and "symbolic link" in str(info.value), str(info.value)[:2000]
    assert tree_state(neighbourhood / "b") == before
    link.unlink()
    assert sorted(hoodie.read(str(a)).column("city").to_pylist()) == ["nyc", "sf"]
