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
    # when the trip was booked, as text: one date per city, so partitions by its date
    # (the timestamp key generator's DATE_STRING) are the cities'
    ("booked", pa.string()),
])
COLUMNS = tuple(SCHEMA.names)

#: write options that run the table services inline: compaction of merge-on-read tables
#: every two delta commits, cleaning that keeps the slices of the last two commits
SERVICES = {
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.cleaner.commits.retained": "2",
}


#: the metadata table with all four partitions (files, column stats, bloom filters,
#: record index), compacting itself every three delta commits
ALL_METADATA = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.compact.max.delta.commits": "3",
}


def inline_services(copy_on_write: bool) -> dict[str, str]:
    """:data:`SERVICES` for a table of that type (Apache Hudi refuses
    ``hoodie.compact.inline`` on copy-on-write: "Compaction is not supported on a
    CopyOnWrite table")."""
    return {k: v for k, v in SERVICES.items() if "compact" not in k} if copy_on_write else dict(SERVICES)


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
        "booked": f"2024-03-{1 + n % len(CITIES):02d} {n % 24:02d}:{n * 7 % 60:02d}:{n % 60:02d}",
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


TIMESTAMP_KEYS = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
#: the timestamp key generator on ``booked`` (DATE_STRING in, a three-level date out:
#: 2024/03/02): one date per city (``record``), so the model's partitions are still the
#: cities; Apache Hudi learns these options from ``hoodie.properties``
DATE_KEYS = {
    "hoodie.datasource.write.keygenerator.class": TIMESTAMP_KEYS,
    "hoodie.datasource.write.partitionpath.field": "booked",
    "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
    "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd HH:mm:ss",
    "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
}


@dataclass
class Model:
    """The expected table after each write: the rows, as of every instant, and the keys
    each write changed (its incremental pull).

    Within a batch the larger ``ts`` of a key wins. Against the stored record, the larger
    or equal ``ts`` wins (event-time ordering: DefaultHoodieRecordPayload, Hudi 1.x's
    EVENT_TIME_ORDERING), or the later write whatever its ``ts`` (``commit_time``:
    OverwriteWithLatestAvroPayload, Apache Hudi 0.15's default). ``insert_overwrite``
    replaces the partitions of its batch (the whole table when it is not partitioned).

    An incremental pull returns the keys a write changed; on merge-on-read also a stale
    update the snapshot drops (the pull reads the log records of its commits, in Apache
    Hudi 0.15 and 1.x as in hoodie), while on copy-on-write the merge keeps the stored
    record with its commit time, so the pull does not see it."""

    partitioned: bool
    mor: bool
    commit_time: bool = False
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    as_of: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    changed: dict[str, set[str]] = field(default_factory=dict)

    def apply(self, instant: str, op: str, records: list[dict[str, Any]]) -> None:
        winners: dict[str, dict[str, Any]] = {}
        for r in records:
            if r["uuid"] not in winners or winners[r["uuid"]]["ts"] <= r["ts"]:
                winners[r["uuid"]] = r
        keys: set[str] = set()
        if op == "delete":
            for key in winners:
                self.rows.pop(key, None)
        else:
            if op == "insert_overwrite":
                cities = {r["city"] for r in records}
                self.rows = {k: r for k, r in self.rows.items() if self.partitioned and r["city"] not in cities}
            for key, r in winners.items():
                cur = self.rows.get(key)
                if cur is None or self.commit_time or cur["ts"] <= r["ts"]:
                    self.rows[key] = r
                    keys.add(key)
                elif self.mor:  # a stale update: in the log, and in the pull
                    keys.add(key)
        self.as_of[instant] = dict(self.rows)
        self.changed[instant] = keys


    @classmethod
    def of(cls, layout: Layout, commit_time: bool = False) -> Model:
        return cls(partitioned=layout.partitioning != "none", mor=layout.is_mor, commit_time=commit_time)


def steps(first: str = "bulk_insert") -> list[tuple[str, list[dict[str, Any]]]]:
    """(operation, records) of the sequence every oracle test writes: a bulk insert (or
    ``first``), an upsert of updates, inserts and in-batch duplicates, a delete (with a key never
    written), an upsert of survivors with a stale update (a smaller ``ts`` than stored), and
    an insert_overwrite of the partition ``la`` (of the whole table, unpartitioned)."""
    inserts = [record(n, 1) for n in range(24)]
    upsert = [record(n, 2) for n in range(0, 24, 3)] + [record(n, 1) for n in range(24, 30)]
    upsert += [record(1, 3), record(1, 4)]  # one key twice: ts 4 wins
    delete = [record(n, 9) for n in (2, 5, 24, 99)]
    again = [record(n, 5) for n in (0, 1, 4, 7, 25)] + [record(3, 0)]  # k003 is stored at ts 2
    overwrite = [record(n, 7) for n in (1, 4, 31, 34)]  # all in la
    return [(first, inserts), ("upsert", upsert), ("delete", delete), ("upsert", again), ("insert_overwrite", overwrite)]


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


def differences(left: list[dict[str, Any]], right: list[dict[str, Any]], limit: int = 5) -> str:
    """The rows of two reads that differ, by record key: what an assertion shows."""
    a = {r["uuid"]: r for r in left}
    b = {r["uuid"]: r for r in right}
    out = []
    for key in sorted(a.keys() | b.keys()):
        if a.get(key) != b.get(key):
            if key not in a or key not in b:
                out.append(f"{key}: {'only right' if key not in a else 'only left'} {a.get(key) or b.get(key)}")
            else:
                out.append(f"{key}: " + ", ".join(f"{c}: {a[key][c]!r} != {b[key].get(c)!r}" for c in a[key] if a[key][c] != b[key].get(c)))
    if len(left) != len(a) or len(right) != len(b):
        out.append(f"duplicate keys: {len(left)} rows for {len(a)} keys, {len(right)} rows for {len(b)} keys")
    return "\n".join(out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else []))


def model_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return rows(batch(records), COLUMNS)
