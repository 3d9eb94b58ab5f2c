"""Test helper: writer options of the "trips" tables most tests write (uuid keys, city
partitions, ts ordering)."""
from __future__ import annotations

from typing import Any


def trip_options(**extra: Any) -> dict[str, Any]:
    """The trips table's key options, plus ``extra``."""
    return {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        **extra,
    }


#: A merge-on-read trips table with small bloom filters (tests write few keys).
MOR_TRIPS = trip_options(**{"hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.bloom.num_entries": "1000"})
