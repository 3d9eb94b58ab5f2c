"""The bucket index through Spark: ``df.write.format("hoodie")`` with
``hoodie.index.type=BUCKET`` writes the file groups (one a bucket) and rows the in-process
engine writes, on the partition-aligned path and the shuffled one; a key's bucket is
the JVM's ``List<String>.hashCode()`` of its hash values, as Apache Hudi computes it; and a
write giving the table other buckets or another index is refused."""
from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest
from bucket_tables import OPTS, bucket_opts

import hoodie
from hoodie.index.bucket import BucketSpec, bucket_ids, bucket_of_file_id, hash_values
from hoodie.table.table import HoodieTable


def test_buckets_are_the_jvms_list_hash_codes(spark) -> None:
    jvm = spark.sparkContext._jvm
    rng = random.Random(3)
    alphabet = "abcXYZ0189-_.é中ß😀\U0001f9ea"
    simple = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(120)]
    fields = ("id", "name")
    complex_keys = [f"id:{a},name:{b}" for a, b in zip(simple[:40], reversed(simple[:40]))] + ["id:__null__,name:x", "id:__empty__,name:"]
    for keys, spec in ((simple, BucketSpec(97, ("uuid",))), (complex_keys, BucketSpec(1 << 20, fields)), (complex_keys, BucketSpec(13, ("name",)))):
        expected = []
        for key in keys:
            values = jvm.java.util.ArrayList()
            for v in hash_values(key, spec.hash_fields):
                values.add(v)
            expected.append((values.hashCode() & 0x7FFFFFFF) % spec.num_buckets)
        assert bucket_ids(pa.array(keys), spec).tolist() == expected


def _batch(ids: list[int], ts: int, partitions: int) -> pa.Table:
    return pa.table(
        {"id": [f"key-{i:05d}" for i in ids], "p": [f"p{i % partitions:02d}" for i in ids], "ts": [ts] * len(ids), "v": [float(i * ts) for i in ids]}
    )


def _layout(path: str) -> tuple[dict[str, list[int]], list[tuple]]:
    """Buckets of the file groups per partition, and the live rows with their file group's bucket."""
    view = HoodieTable.open(path).view()
    numbers = {p: [bucket_of_file_id(g.file_id) for g in view.file_groups(p)] for p in view.all_partition_paths()}
    groups = {p: sorted(-1 if b is None else b for b in bs) for p, bs in numbers.items()}
    t = hoodie.read(path)
    buckets = [bucket_of_file_id(f) for f in t.column("_hoodie_file_name").to_pylist()]
    rows = sorted(zip(*(t.column(c).to_pylist() for c in ("id", "p", "ts", "v")), buckets))
    return groups, rows


@pytest.mark.parametrize(("table_type", "partitions"), [("COPY_ON_WRITE", 12), ("MERGE_ON_READ", 12), ("MERGE_ON_READ", 2)])
def test_spark_writes_the_file_groups_of_the_in_process_engine(spark, tmp_path: Path, table_type: str, partitions: int) -> None:
    opts = {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "5",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
    }
    steps = [
        ("bulk_insert", list(range(0, 90)), 1),
        ("upsert", list(range(45, 160, 2)), 2),
        ("delete", list(range(0, 200, 9)), 3),
        ("insert", list(range(160, 190)), 4),
    ]
    local, remote = str(tmp_path / "local"), str(tmp_path / "spark")
    for op, ids, ts in steps:
        data = _batch(ids, ts, partitions)
        hoodie.write(data, local, {**opts, "hoodie.datasource.write.operation": op})
        df = spark.createDataFrame(data.to_pandas())
        df.write.format("hoodie").options(**opts).option("hoodie.datasource.write.operation", op).mode("append").save(remote)
        assert _layout(remote) == _layout(local), f"after {op}"
    groups, rows = _layout(remote)
    assert all(len(b) <= 5 and len(set(b)) == len(b) and min(b) >= 0 for b in groups.values())
    spec = BucketSpec(5, ("id",))
    assert [r[4] for r in rows] == bucket_ids(pa.array([r[0] for r in rows]), spec).tolist()
    assert len(rows) == len({r[0] for r in rows}) > 100


def test_spark_write_with_other_buckets_or_another_index_is_refused(spark, tmp_path: Path) -> None:
    """A bucket table records its buckets (index.bucket_table): a Spark write giving another
    number of buckets or another index is refused before anything is written, and one
    leaving them out takes the table's."""
    path = str(tmp_path / "t")
    mor = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    opts, bucket = {**OPTS, **mor}, bucket_opts(3, **mor)
    spark.createDataFrame(_batch(list(range(0, 60, 2)), 1, 2).to_pandas()).write.format("hoodie").options(**bucket).mode("append").save(path)
    spark.createDataFrame(_batch(list(range(1, 60, 2)), 2, 2).to_pandas()).write.format("hoodie").options(**bucket).mode("append").save(path)
    instants = [i.timestamp for i in HoodieTable.open(path).timeline.instants]
    df = spark.createDataFrame(_batch(list(range(60)), 3, 2).to_pandas())
    refusals = [
        ({"hoodie.bucket.index.num.buckets": "6"}, "hoodie.bucket.index.num.buckets=6, but .* was created with hoodie.bucket.index.num.buckets=3"),
        ({"hoodie.index.type": "BLOOM"}, "hoodie.index.type=BLOOM, but .* is a bucket-indexed table"),
    ]
    for other, message in refusals:
        with pytest.raises(Exception, match=message):
            df.write.format("hoodie").options(**{**bucket, **other}).mode("append").save(path)
        assert [i.timestamp for i in HoodieTable.open(path).timeline.instants] == instants
    df.write.format("hoodie").options(**opts).mode("append").save(path)  # the table's own buckets
    groups, rows = _layout(path)
    assert all(len(b) <= 3 and min(b) >= 0 for b in groups.values())
    assert sorted(r[0] for r in rows) == [f"key-{i:05d}" for i in range(60)] and {r[2] for r in rows} == {3}
