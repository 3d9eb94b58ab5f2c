"""Test helper: files landing in a streamer's source folder, and the table they should make.

:func:`land` writes rows as one JSON-lines, CSV, Parquet or Avro file with a chosen
modification time (the file sources take files in (time, name) order), written under a
temporary name and renamed, as a well-behaved producer lands files. :func:`model` is the
upserted table the landed rows make: the row with the largest ``ts`` of each key.
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

#: the trips table the streamer tests write (uuid keys, city partitions, ts ordering)
STREAM_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.index.bloom.num_entries": "1000",
}
COLUMNS = ("uuid", "city", "ts", "fare")

_AVRO_SCHEMA = {
    "type": "record",
    "name": "trip",
    "fields": [{"name": "uuid", "type": "string"}, {"name": "city", "type": "string"}, {"name": "ts", "type": "long"}, {"name": "fare", "type": "double"}],
}


def trips(keys: Iterable[int], ts: int, cities: Sequence[str] = ("sf", "nyc")) -> list[dict[str, Any]]:
    """Trips of keys ``k<key>`` at time ``ts`` (fare derived from both, so versions differ)."""
    return [{"uuid": f"k{k}", "city": cities[k % len(cities)], "ts": ts, "fare": float(k * 1000 + ts)} for k in keys]


def land(folder: str | Path, name: str, rows: list[dict[str, Any]], fmt: str = "json", mtime_ms: int | None = None) -> Path:
    """Write ``rows`` as ``folder/name`` in ``fmt``; its modification time ``mtime_ms``."""
    target = Path(folder) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.tmp")
    temp.write_bytes(encode(rows, fmt))
    if mtime_ms is not None:
        os.utime(temp, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    temp.rename(target)
    return target


def encode(rows: list[dict[str, Any]], fmt: str) -> bytes:
    table = pa.Table.from_pylist(rows, schema=pa.schema([("uuid", pa.string()), ("city", pa.string()), ("ts", pa.int64()), ("fare", pa.float64())]))
    if fmt == "json":
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
    out = io.BytesIO()
    if fmt == "csv":
        pacsv.write_csv(table, out)
    elif fmt == "parquet":
        pq.write_table(table, out)
    elif fmt == "avro":
        fastavro.writer(out, _AVRO_SCHEMA, rows)
    else:
        raise ValueError(fmt)
    return out.getvalue()


def model(batches: Iterable[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """The upserted table of the landed rows: each key's row with the largest ts."""
    latest: dict[str, dict[str, Any]] = {}
    for rows in batches:
        for r in rows:
            if r["uuid"] not in latest or r["ts"] >= latest[r["uuid"]]["ts"]:
                latest[r["uuid"]] = r
    return sorted(tuple(r[c] for c in COLUMNS) for r in latest.values())


def table_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """A read table's trips, as :func:`model` gives them."""
    return sorted(tuple(r[c] for c in COLUMNS) for r in table.select(list(COLUMNS)).to_pylist())
