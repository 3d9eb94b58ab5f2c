"""Shared data of the TimestampBasedKeyGenerator end-to-end tests (in process and on
Spark): three writes of event records, the key generator scenarios and the partition each
surviving key lands in."""
from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

KEYGEN = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
BASE = {
    "hoodie.table.name": "events",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "event",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
}


def utc(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)


# (uuid, event time in UTC, ts, fare) per write
INSERT = [
    ("a", "2024-01-01T10:00:00", 1, 1.0),
    ("b", "2024-01-01T23:30:00", 1, 2.0),
    ("c", "2024-01-02T00:15:00", 1, 3.0),
    ("d", "2024-02-29T12:00:00", 1, 4.0),
]
UPSERT = [
    ("a", "2024-01-01T10:00:00", 2, 10.0),  # update
    ("c", "2024-01-02T00:15:00", 0, 30.0),  # stale: the stored record wins
    ("e", "2024-01-02T05:00:00", 1, 5.0),  # insert into an existing date
    ("f", "2023-12-31T08:00:00", 1, 6.0),  # insert into a new date
]
DELETE = [("b", "2024-01-01T23:30:00", 9, 0.0), ("zz", "2024-01-01T00:00:00", 9, 0.0)]  # zz: no such key

# scenario -> (key generator options, Arrow type of the event column, event value of a UTC
# time, partition path of each surviving key after the three writes)
SCENARIOS: dict[str, tuple[dict[str, str], pa.DataType, Any, dict[str, str]]] = {
    # DATE_STRING in, a three-level date path out
    "date_string": (
        {
            "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
            "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss'Z'",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        },
        pa.string(),
        lambda t: t + "Z",
        {"a": "2024/01/01", "c": "2024/01/02", "d": "2024/02/29", "e": "2024/01/02", "f": "2023/12/31"},
    ),
    # epoch milliseconds in, dates in Los Angeles out (c at 00:15 UTC is still Jan 1st there;
    # e at 05:00 UTC too; f at 08:00 UTC is Dec 31st 00:00), hive-style
    "epoch_millis_hive_la": (
        {
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
            "hoodie.keygen.timebased.timezone": "America/Los_Angeles",
            "hoodie.datasource.write.hive_style_partitioning": "true",
        },
        pa.int64(),
        lambda t: int(utc(t).timestamp() * 1000),
        {"a": "event=2024-01-01", "c": "event=2024-01-01", "d": "event=2024-02-29", "e": "event=2024-01-01", "f": "event=2023-12-31"},
    ),
}


def batch(records: list[tuple], event_type: pa.DataType, event_value, with_fare: bool = True) -> pa.Table:
    data = {
        "uuid": pa.array([r[0] for r in records], pa.string()),
        "event": pa.array([event_value(r[1]) for r in records], event_type),
        "ts": pa.array([r[2] for r in records], pa.int64()),
    }
    if with_fare:
        data["fare"] = pa.array([r[3] for r in records], pa.float64())
    return pa.table(data)


def expected_rows(event_value) -> list[tuple]:  # type: ignore[no-untyped-def]
    """(uuid, event, ts, fare) of the live records after the three writes: the larger
    ordering value wins, deletes remove their key."""
    model = {r[0]: r for r in INSERT}
    for r in UPSERT:
        if r[0] not in model or model[r[0]][2] <= r[2]:
            model[r[0]] = r
    for r in DELETE:
        model.pop(r[0], None)
    return sorted((u, event_value(e), ts, fare) for u, e, ts, fare in model.values())


def partitions_on_disk(path: str) -> set[str]:
    """Directories holding data files (base or log), relative to the table."""
    root = Path(path)
    return {
        p.parent.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".hoodie" not in p.relative_to(root).parts and (p.suffix == ".parquet" or ".log." in p.name)
    }
