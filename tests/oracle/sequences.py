"""Write sequences for the oracle tests: batches of many column types, the table's
options for each layout, a model of what every read must return, and the comparison of
two readers' rows.

A record's key is ``uuid``; its partition (``city``) never changes. Updates always carry a
larger ``ts`` than the stored record, so event-time and commit-time merging agree; a
batch may hold a key twice with different ``ts`` (the larger wins).
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
CITIES = ("sf", "la", "nyc")

SCHEMA = pa.schema([
    ("uuid", pa.string()),
    ("city", pa.string()),
    ("ts", pa.int64()),
    ("fare", pa.decimal128(10, 2)),
    ("day", pa.date32()),
    ("at", pa.timestamp("us", tz="UTC")),
    ("rider", pa.struct([("name", pa.string()), ("rating", pa.int32())])),
    ("tags", pa.list_(pa.string())),
    ("attrs", pa.map_(pa.string(), pa.int64())),
    ("blob", pa.binary()),
    ("note", pa.string()),
])
COLUMNS = tuple(SCHEMA.names)


def record(n: int, ts: int) -> dict[str, Any]:
    """Key ``k<n>`` at ordering value ``ts``; every value depends on both, and some are null."""
    v = n * 7 + ts
    return {
        "uuid": f"k{n:03d}",
        "city": CITIES[n % len(CITIES)],
        "ts": ts,
        "fare": None if v % 11 == 0 else decimal.Decimal(v * 37 % 100000) / 100,
        "day": None if v % 13 == 0 else dt.date(2020, 1, 1) + dt.timedelta(days=v % 1500),
        "at": None if v % 17 == 0 else dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=v * 3607, microseconds=v % 1000),
        "rider": None if v % 5 == 0 else {"name": f"r{v % 23}", "rating": None if v % 3 == 0 else v % 6},
        "tags": None if v % 7 == 0 else [f"t{i}" for i in range(v % 4)],
        "attrs": None if v % 9 == 0 else [(f"a{i}", v * i) for i in range(v % 3 + 1)],
        "blob": None if v % 8 == 0 else bytes([v % 256, (v * 3) % 256]),
        "note": None if v % 2 == 0 else f"note {v}",
    }


def batch(records: Iterable[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(list(records), SCHEMA)


@dataclass(frozen=True)
class Layout:
    """How a table is laid out: its type and partitioning."""

    table_type: str  # COPY_ON_WRITE or MERGE_ON_READ
    partitioning: str  # "hive" (city=sf), "plain" (sf) or "none"

    @property
    def id(self) -> str:
        return f"{'cow' if self.table_type == 'COPY_ON_WRITE' else 'mor'}-{self.partitioning}"

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    def options(self, name: str, **extra: str) -> dict[str, str]:
        """The write options of such a table, for hoodie and for Apache Hudi alike."""
        opts = {
            "hoodie.table.name": name,
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.datasource.write.recordkey.field": "uuid",
            "hoodie.datasource.write.precombine.field": "ts",
        }
        if self.partitioning == "none":
            opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        else:
            opts["hoodie.datasource.write.partitionpath.field"] = "city"
            opts["hoodie.datasource.write.keygenerator.class"] = "org.apache.hudi.keygen.SimpleKeyGenerator"
            opts["hoodie.datasource.write.hive_style_partitioning"] = str(self.partitioning == "hive").lower()
        return {**opts, **extra}


@dataclass
class Model:
    """The expected table after each write: the rows, as of every instant, and the keys
    each write changed (its incremental pull)."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    as_of: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    changed: dict[str, set[str]] = field(default_factory=dict)

    def apply(self, instant: str, op: str, records: list[dict[str, Any]]) -> None:
        keys: set[str] = set()
        if op == "delete":
            for r in records:
                self.rows.pop(r["uuid"], None)
        else:
            for r in records:  # the larger ts of a key wins (updates carry larger ones)
                cur = self.rows.get(r["uuid"])
                if cur is None or cur["ts"] <= r["ts"]:
                    self.rows[r["uuid"]] = r
                    keys.add(r["uuid"])
        self.as_of[instant] = dict(self.rows)
        self.changed[instant] = keys


def steps() -> list[tuple[str, list[dict[str, Any]]]]:
    """(operation, records) of the sequence every oracle test writes: inserts, an upsert
    of updates, inserts and in-batch duplicates, a delete (with a key never written), and
    an upsert of the survivors."""
    first = [record(n, 1) for n in range(24)]
    upsert = [record(n, 2) for n in range(0, 24, 3)] + [record(n, 1) for n in range(24, 30)]
    upsert += [record(1, 3), record(1, 4)]  # one key twice: ts 4 wins
    delete = [record(n, 9) for n in (2, 5, 24, 99)]
    again = [record(n, 5) for n in (0, 1, 4, 7, 25)]
    return [("insert", first), ("upsert", upsert), ("delete", delete), ("upsert", again)]


def _canonical(value: Any) -> Any:
    if isinstance(value, dt.datetime):  # readers differ in the tzinfo object, not the instant
        return value.astimezone(dt.timezone.utc).isoformat()
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        # a map (pyarrow gives its entries as pairs): entries have no order, and Apache
        # Hudi's merge of log records (a Java HashMap) does not keep the written one
        return sorted(_canonical(list(v)) for v in value)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (bytes, decimal.Decimal, dt.date)):
        return repr(value)
    return value


def rows(table: pa.Table, columns: Iterable[str] = META + COLUMNS) -> list[dict[str, Any]]:
    """The ``columns`` of every row, values made comparable, in a canonical order."""
    keep = list(columns)
    if table.num_rows == 0:  # (an empty read may come without columns)
        return []
    missing = [c for c in keep if c not in table.column_names]
    assert not missing, f"columns {missing} missing from a read of columns {table.column_names}"
    return _sorted([{c: _canonical(r[c]) for c in keep} for r in table.select(keep).to_pylist()])


def _sorted(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


def data(read: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The data columns of rows from :func:`rows` (meta columns left out)."""
    return _sorted([{c: r[c] for c in COLUMNS} for r in read])


def model_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return rows(batch(records), COLUMNS)
