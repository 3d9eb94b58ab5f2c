"""The bucket index's test tables: options, batches, what a table holds (rows, file
groups, keys in their buckets), and a table as Apache Hudi makes it: hoodie's own bucket
entries removed from ``hoodie.properties`` (Apache Hudi records neither the index type nor
the number of buckets in the table)."""
from __future__ import annotations

import pyarrow as pa

import hoodie
from hoodie.config.table_config import TableConfig
from hoodie.index.bucket import BucketSpec, bucket_ids, bucket_of_file_id
from hoodie.index.bucket_table import RECORDED_OPTIONS
from hoodie.storage.local import LocalStorage
from hoodie.storage.paths import under
from hoodie.table.properties_file import load_table_config, store_table_config
from hoodie.table.table import HoodieTable

OPTS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


def bucket_opts(buckets: int = 4, **more: str) -> dict[str, str]:
    return {**OPTS, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(buckets), **more}


def batch(ids: range | list[int], ts: int, value: int | None = None) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {"id": [f"key-{i:04d}" for i in ids], "p": [f"p{i % 3}" for i in ids], "ts": [ts] * len(ids), "v": [value if value is not None else i for i in ids]}
    )


def live_rows(path: str) -> list[tuple]:
    t = hoodie.read(path)
    return sorted(zip(t.column("id").to_pylist(), t.column("p").to_pylist(), t.column("ts").to_pylist(), t.column("v").to_pylist()))


def file_groups(path: str) -> dict[str, list[str]]:
    view = HoodieTable.open(path).view()
    return {p: [g.file_id for g in view.file_groups(p)] for p in view.all_partition_paths()}


def check_buckets(path: str, buckets: int) -> None:
    """At most ``buckets`` groups a partition, one a bucket, each holding only keys of its bucket."""
    t = hoodie.read(path)
    spec = BucketSpec(buckets, ("id",))
    key_bucket = bucket_ids(t.column("_hoodie_record_key"), spec).tolist()
    for (partition, file_name), b in zip(zip(t.column("_hoodie_partition_path").to_pylist(), t.column("_hoodie_file_name").to_pylist()), key_bucket):
        assert bucket_of_file_id(file_name) == b, (partition, file_name)
    for partition, ids in file_groups(path).items():
        numbers = [bucket_of_file_id(f) for f in ids]
        assert len(ids) <= buckets and len(set(numbers)) == len(numbers) and all(n is not None and n < buckets for n in numbers), (partition, ids)


def forget_bucket_entries(path: str) -> None:
    storage = LocalStorage()
    meta = under(path, ".hoodie")
    props = dict(load_table_config(storage, meta).props)
    for opt in RECORDED_OPTIONS:
        props.pop(opt.key, None)
    store_table_config(TableConfig(props), storage, meta)
