"""Test helper: writer options of the "trips" tables most tests write (uuid keys, city
partitions, ts ordering), of the small key/part tables the safety tests threaten, and of k/p/ts inserts."""
from __future__ import annotations

from typing import Any

import pyarrow as pa


def trip_options(**extra: Any) -> dict[str, Any]:
    """The trips table's key options, plus ``extra``."""
    return {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        **extra,
    }


def kp_insert_options(**extra: Any) -> dict[str, Any]:
    """Inserts into a small table ``t`` keyed by ``k`` in partition ``p``, ordered by
    ``ts``, plus ``extra``."""
    return {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "insert",
        **extra,
    }


#: A merge-on-read trips table with small bloom filters (tests write few keys).
MOR_TRIPS = trip_options(**{"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.bloom.num_entries": "1000"})


#: A trips table whose metadata table keeps bloom filters and column stats (what the bloom
#: index reads with ``hoodie.bloom.index.use.metadata``).
BLOOM_IN_METADATA = trip_options(
    **{
        "hoodie.table.name": "bloom",
        "hoodie.metadata.enable": "true",
        "hoodie.metadata.index.bloom.filter.enable": "true",
        "hoodie.metadata.index.column.stats.enable": "true",
    }
)


#: A small table keyed by ``key`` in partition ``part``, services off (the tests run them,
#: through the library on tables opened plainly: no metadata table).
KEY_PART_OPTIONS = {
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    "hoodie.metadata.enable": "false",
}


def key_part_batch(keys: list[str], ts: int) -> pa.Table:
    """Records of ``keys`` in partition ``p``, ordered by (and valued as) ``ts``."""
    return pa.table({"key": keys, "part": ["p"] * len(keys), "ts": [ts] * len(keys), "val": [float(ts)] * len(keys)})
