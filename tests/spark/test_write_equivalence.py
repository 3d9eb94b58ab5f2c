"""The Spark pipeline writes what the in-process client writes.

The same batches go through ``df.write.format("hoodie")`` and ``hoodie.write`` into two
tables, one operation after another (bulk_insert, upsert with in-batch duplicates and
stale updates, insert keeping duplicates, delete including a missing key, insert with
drop.duplicates, insert_overwrite, upsert into a new partition, insert_overwrite_table).
After every commit the two snapshots hold the same rows (meta columns that name instants
and files aside) and each partition has as many file groups; the commits record the same
counts. Finally hudi-rs reads the Spark-written table to exactly those rows. Both Spark
paths are compared: tagging shuffled by (partition, key) with a plan made on the driver,
and tasks holding whole partitions that plan and write them in one pass.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

import hoodie
from hoodie.table.table import HoodieTable


def _batch(records: list[tuple[str, str, int, float]]) -> pa.Table:
    uuid, city, ts, fare = zip(*records)
    return pa.table({
        "uuid": pa.array(uuid, pa.string()),
        "city": pa.array(city, pa.string()),
        "ts": pa.array(ts, pa.int64()),
        "fare": pa.array(fare, pa.float64()),
        "rider": pa.array([f"rider-{u}-{t}" for u, t in zip(uuid, ts)], pa.string()),
    })


CITIES = ("sf", "la", "nyc")


def _steps() -> list[tuple[str, dict[str, Any], pa.Table]]:
    first = [(f"k{i:02d}", CITIES[i % 3], 1, float(i)) for i in range(30)]
    upsert = (
        [(f"k{i:02d}", CITIES[i % 3], 2, 100.0 + i) for i in range(0, 10)]  # updates
        + [(f"k{i:02d}", CITIES[i % 3], 0, -1.0) for i in range(10, 14)]  # stale: stored record wins
        + [(f"n{i:02d}", CITIES[i % 3], 1, 200.0 + i) for i in range(6)]  # inserts
        + [("k20", "nyc", 5, 1.0), ("k20", "nyc", 5, 2.0), ("k20", "nyc", 4, 3.0)]  # tie: later record wins
        + [("n00", "sf", 3, 7.0), ("n00", "sf", 9, 8.0)]  # larger ordering value wins
    )
    insert = [(f"i{i:02d}", CITIES[i % 3], 1, 300.0 + i) for i in range(8)] + [("i00", "sf", 1, 399.0), ("i01", "la", 2, 398.0)]
    delete = [("k01", "la", 9, 0.0), ("k04", "la", 9, 0.0), ("k09", "sf", 9, 0.0), ("k09", "sf", 8, 0.0), ("zz", "sf", 9, 0.0)]
    drop_dups = [("k02", "nyc", 7, 0.0), ("k03", "sf", 7, 0.0), ("d00", "sf", 1, 1.0), ("d01", "la", 1, 2.0), ("d01", "la", 1, 3.0)]
    overwrite = [(f"o{i:02d}", "la", 1, 500.0 + i) for i in range(5)]
    new_partition = [(f"s{i:02d}", "sea", 1, 600.0 + i) for i in range(5)] + [("k00", "sf", 9, 9.0), ("o01", "la", 9, 9.0)]
    return [
        ("bulk_insert", {}, _batch(first)),
        ("upsert", {}, _batch(upsert)),
        ("insert", {}, _batch(insert)),
        ("delete", {}, _batch(delete)),
        ("insert", {"hoodie.datasource.write.insert.drop.duplicates": "true"}, _batch(drop_dups)),
        ("insert_overwrite", {}, _batch(overwrite)),
        ("upsert", {}, _batch(new_partition)),
        ("insert_overwrite_table", {}, _batch(new_partition[:3])),
    ]


def _file_groups(path: str) -> Counter[str]:
    view = HoodieTable.open(path).view()
    return Counter({p: len(view.file_groups(p)) for p in view.all_partition_paths()})


def _commit_counts(path: str) -> list[tuple[str, str, dict[str, int]]]:
    table = HoodieTable.open(path)
    out = []
    for inst in table.timeline.completed_writes():
        meta = table.commit_metadata(inst)
        totals = {k: v for k, v in meta.totals().items() if k != "bytes"}
        out.append((inst.action, meta.operation_type, totals))
    return out


# One shuffle task for the operations that consult the index: the batches span at least two
# partitions, so every task holds whole partitions and plans them itself (write_partitions).
ALIGNED = {f"hoodie.{op}.shuffle.parallelism": "1" for op in ("upsert", "delete", "insert")}


@pytest.mark.parametrize(("index_type", "aligned"), [("BLOOM", False), ("SIMPLE", False), ("BLOOM", True), ("SIMPLE", True)])
def test_same_table_as_in_process_client(spark, tmp_path, index_type: str, aligned: bool, helpers) -> None:
    h = helpers
    spark_path, local_path = str(tmp_path / "spark"), str(tmp_path / "local")
    # Small insert splits: several file groups per partition, then small-file packing.
    common = h.base_options(**{
        "hoodie.index.type": index_type,
        "hoodie.copyonwrite.insert.auto.split": "false",
        "hoodie.copyonwrite.insert.split.size": "8",
        **(ALIGNED if aligned else {}),
    })
    for step, (operation, extra, batch) in enumerate(_steps()):
        opts = {**common, **extra, "hoodie.datasource.write.operation": operation}
        h.to_df(spark, batch).write.format("hoodie").options(**opts).mode("append").save(spark_path)
        hoodie.write(batch, local_path, opts)
        expected, mine = hoodie.read(local_path), hoodie.read(spark_path)
        assert h.rows(mine, drop=h.VOLATILE) == h.rows(expected, drop=h.VOLATILE), f"step {step}: {operation}"
        seqnos = mine.column("_hoodie_commit_seqno").to_pylist()
        assert len(set(seqnos)) == len(seqnos), f"step {step}: sequence numbers repeat"
        assert _file_groups(spark_path) == _file_groups(local_path), f"step {step}: {operation}"
    assert _commit_counts(spark_path) == _commit_counts(local_path)
    # The independent reader sees the Spark-written table exactly as hoodie does.
    assert h.rows(h.hudi_rs_snapshot(spark_path), drop=h.VOLATILE) == h.rows(hoodie.read(local_path), drop=h.VOLATILE)


def test_column_types_round_trip(spark, tmp_path, helpers) -> None:
    """Timestamps, dates, decimals, lists, maps, structs, binary, small ints: the Spark
    write stores the DataFrame's values as the in-process client stores the same Arrow
    data, and the Spark read returns them with the in-process reader's types."""
    import datetime
    import decimal

    data = pa.table({
        "uuid": ["a", "b", "c"],
        "city": ["sf", "la", "sf"],
        "ts": pa.array([datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone.utc)] * 3, pa.timestamp("us", "UTC")),
        "day": pa.array([datetime.date(2024, 1, 2), None, datetime.date(1500, 3, 1)], pa.date32()),
        "amount": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], pa.decimal128(10, 2)),
        "tags": pa.array([["x", "y"], [], None], pa.list_(pa.string())),
        "attrs": pa.array([[("k", 1)], None, [("a", 2), ("b", 3)]], pa.map_(pa.string(), pa.int32())),
        "info": pa.array([{"x": 1, "y": "q"}, None, {"x": 3, "y": None}], pa.struct([("x", pa.int64()), ("y", pa.string())])),
        "raw": pa.array([b"\x00\x01", None, b""], pa.binary()),
        "flag": [True, False, None],
        "ts_order": pa.array([1, 2, 3], pa.int8()),
        "ratio": pa.array([1.5, 2.5, None], pa.float32()),
    })
    df = spark.createDataFrame(data)
    opts = helpers.base_options(**{"hoodie.datasource.write.precombine.field": "ts_order"})
    spark_path, local_path = str(tmp_path / "spark"), str(tmp_path / "local")
    df.write.format("hoodie").options(**opts).save(spark_path)
    hoodie.write(df.toArrow(), local_path, opts)  # the values the DataFrame holds
    mine, expected = hoodie.read(spark_path), hoodie.read(local_path)
    assert mine.schema.equals(expected.schema)
    assert helpers.rows(mine, drop=helpers.VOLATILE) == helpers.rows(expected, drop=helpers.VOLATILE)
    back = spark.read.format("hoodie").load(spark_path)
    assert helpers.df_types(back) == helpers.spark_types(expected.schema)
    assert helpers.rows(back) == helpers.rows(mine)


@pytest.mark.parametrize("values", [["a", None, "", "b"], [0.0, -0.0, 1.5, None]], ids=["shared-path", "float"])
def test_aligned_write_when_fields_do_not_name_paths(spark, tmp_path, values: list, helpers) -> None:
    """Partition values that share a path (null and "" are both the default partition) or
    that Spark's distinct merges (-0.0 and 0.0): the partition-aligned write shuffles on
    the computed paths instead of the fields, and matches the in-process client."""
    h = helpers
    spark_path, local_path = str(tmp_path / "spark"), str(tmp_path / "local")
    opts = h.base_options(**ALIGNED)
    n = 24
    first = pa.table({"uuid": [f"k{i:02d}" for i in range(n)], "city": [values[i % 4] for i in range(n)], "ts": [1] * n, "fare": [float(i) for i in range(n)]})
    second = pa.table(
        {"uuid": [f"k{i:02d}" for i in range(0, 2 * n, 3)], "city": [values[i % 4] for i in range(0, 2 * n, 3)], "ts": [2] * 16, "fare": [-1.0] * 16}
    )
    for batch in (first, second):
        h.to_df(spark, batch).write.format("hoodie").options(**opts).mode("append").save(spark_path)
        hoodie.write(batch, local_path, opts)
        assert h.rows(hoodie.read(spark_path), drop=h.VOLATILE) == h.rows(hoodie.read(local_path), drop=h.VOLATILE)
        assert _file_groups(spark_path) == _file_groups(local_path)
    assert _commit_counts(spark_path) == _commit_counts(local_path)
