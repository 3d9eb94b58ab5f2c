"""The metadata table's records (``HoodieMetadataRecord``): decoded, encoded and merged.

Column-statistics values come in wrapper records: Hudi 0.x names the type by the wrapper
(``DateWrapper``, ``DecimalWrapper``, ``TimestampMicrosWrapper``, ...); Hudi 1.x stores
primitives (``IntWrapper``, ``BytesWrapper``, ...) and names the logical type in
``valueType``. Both decode to the same Python values.

A record is a key, a ``type`` and one payload: 1 the list of partitions and 2 a
partition's files (``filesystemMetadata``), 3 a file's column statistics and 6 a
partition's (``ColumnStatsMetadata``), 4 a file's bloom filter (``BloomFilterMetadata``),
5 a record key's location (``recordIndexMetadata``), 7 a secondary-index entry
(``SecondaryIndexMetadata``). Values are decoded with the schema their writer stored (the
HFile's file info, the log block's header), never a guessed one.

:func:`merge` is ``HoodieMetadataPayload.preCombine``: file lists are unions where a
later entry wins (sizes only grow: the larger is kept) and a deletion removes the file
(kept as a tombstone while nothing older is known, so a later merge with the base file
still removes it); column statistics of one file and column widen (min of the minima, max
of the maxima, counts added), unless either side is a deletion, when the later wins;
bloom filters, record locations and secondary-index entries: the later wins. A record
deleted by a log's delete block is gone until a later record brings it back.
"""
from __future__ import annotations

import datetime as dt
import functools
import io
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa

from hoodie.errors import FormatError
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON

__all__ = [
    "BloomFilterInfo",
    "ColumnStats",
    "FileInfo",
    "Float",
    "Long",
    "MetadataRecord",
    "Payload",
    "RecordLocation",
    "SecondaryIndexEntry",
    "decode_value",
    "encode_value",
    "is_deletion",
    "merge",
]

TYPE_PARTITION_LIST = 1
TYPE_FILE_LIST = 2
TYPE_COLUMN_STATS = 3
TYPE_BLOOM_FILTER = 4
TYPE_RECORD_INDEX = 5
TYPE_PARTITION_STATS = 6
TYPE_SECONDARY_INDEX = 7

_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class FileInfo:
    size: int
    is_deleted: bool = False


@dataclass(frozen=True)
class ColumnStats:
    """One column's statistics in one file (type 3) or one partition (type 6); ``min`` and
    ``max`` are Python values (``date``, ``datetime`` in UTC, ``Decimal``, ``str``, ...)."""

    file_name: str | None
    column_name: str | None
    min: Any
    max: Any
    value_count: int | None
    null_count: int | None
    total_size: int | None
    total_uncompressed_size: int | None
    is_deleted: bool = False
    is_tight_bound: bool = False


@dataclass(frozen=True)
class BloomFilterInfo:
    """A file's bloom filter: ``filter`` is its serialized text (as in a Parquet footer),
    ``type_code`` ``SIMPLE`` or ``DYNAMIC_V0``; ``timestamp`` the instant that wrote it."""

    type_code: str
    timestamp: str
    filter: bytes
    is_deleted: bool = False


@dataclass(frozen=True)
class RecordLocation:
    """Where a record key lives: the partition, the file group and the instant (epoch
    milliseconds as stored; see :meth:`MetadataTableReader.record_locations`)."""

    partition: str | None
    file_id: str
    instant_millis: int | None
    position: int | None = None


@dataclass(frozen=True)
class SecondaryIndexEntry:
    is_deleted: bool = False


Payload = dict[str, FileInfo] | ColumnStats | BloomFilterInfo | RecordLocation | SecondaryIndexEntry | None


@dataclass(frozen=True)
class MetadataRecord:
    """One record: ``payload`` is the partition or file map (types 1, 2), a
    :class:`ColumnStats` (3, 6), :class:`BloomFilterInfo` (4), :class:`RecordLocation`
    (5) or :class:`SecondaryIndexEntry` (7); None for a type this reader does not know."""

    key: str
    type: int
    payload: Payload

    @property
    def files(self) -> dict[str, FileInfo]:
        """The map of a type 1 or 2 record (empty for any other)."""
        return self.payload if isinstance(self.payload, dict) else {}

    def live_files(self) -> dict[str, int]:
        """The names and sizes of the files not deleted (partitions, for type 1)."""
        return {name: info.size for name, info in self.files.items() if not info.is_deleted}

    @property
    def is_deleted(self) -> bool:
        """A tombstone of the whole record (column stats, bloom filter, secondary index)."""
        return bool(getattr(self.payload, "is_deleted", False))


# --- decoding ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _parsed(schema_json: str) -> Any:
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
        raise FormatError(f"metadata record schema is unusable: {exc}") from exc


_NAMESPACE = "org.apache.hudi.avro.model."


# A record-index value names a location only (its key is the HFile entry's), and the keys
# of one file group written at one instant share it: decoding or encoding one through
# fastavro costs 20-50 us, which a lookup of 200,000 keys or a write inserting them would
# pay per key. Locations are immutable, so the values seen recently are kept both ways
# (bounded; emptied when full).
_RECENT_LIMIT = 1 << 16
_LOCATIONS_OF: dict[tuple[bytes, str], RecordLocation] = {}
_VALUES_OF: dict[RecordLocation, bytes] = {}


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _RECENT_LIMIT:
        cache.clear()
    cache[key] = value


def decode_value(key: str, value: bytes, schema_json: str, source: str) -> MetadataRecord:
    """The record stored under ``key`` as ``value`` (schemaless Avro of the writer's
    ``schema_json``); ``source`` names the file for errors."""
    location = _LOCATIONS_OF.get((value, schema_json))
    if location is not None:
        return MetadataRecord(key, TYPE_RECORD_INDEX, location)
    record = _decode_value(key, value, schema_json, source)
    if isinstance(record.payload, RecordLocation):
        _remember(_LOCATIONS_OF, (value, schema_json), record.payload)
    return record


def _decode_value(key: str, value: bytes, schema_json: str, source: str) -> MetadataRecord:
    try:
        raw = fastavro.schemaless_reader(
            io.BytesIO(value), _parsed(schema_json), None, return_record_name=True, return_record_name_override=True
        )
    except Exception as exc:  # fastavro raises whatever the bytes trip over
        raise FormatError(f"{source}: metadata record {key!r} cannot be decoded: {exc}") from exc
    if not isinstance(raw, dict):
        raise FormatError(f"{source}: metadata record {key!r} is not a record")
    try:
        return _typed(key, raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"{source}: metadata record {key!r} of type {raw.get('type')!r} is malformed: {exc!r}") from exc


def _typed(key: str, raw: Mapping[str, Any]) -> MetadataRecord:
    kind = int(raw["type"])
    payload: Payload
    if kind in (TYPE_PARTITION_LIST, TYPE_FILE_LIST):
        files = raw.get("filesystemMetadata") or {}
        payload = {name: FileInfo(int(info["size"]), bool(info["isDeleted"])) for name, info in files.items()}
    elif kind in (TYPE_COLUMN_STATS, TYPE_PARTITION_STATS):
        cs = raw["ColumnStatsMetadata"]
        value_type = cs.get("valueType")
        lo, hi = unwrap(cs.get("minValue")), unwrap(cs.get("maxValue"))
        if value_type is not None:
            lo, hi = (_logical(v, value_type["typeOrdinal"], value_type.get("additionalInfo")) for v in (lo, hi))
        payload = ColumnStats(
            cs.get("fileName"), cs.get("columnName"), lo, hi,
            cs.get("valueCount"), cs.get("nullCount"), cs.get("totalSize"), cs.get("totalUncompressedSize"),
            bool(cs.get("isDeleted", False)), bool(cs.get("isTightBound", False)),
        )
    elif kind == TYPE_BLOOM_FILTER:
        bf = raw["BloomFilterMetadata"]
        payload = BloomFilterInfo(bf["type"], bf["timestamp"], bytes(bf["bloomFilter"]), bool(bf["isDeleted"]))
    elif kind == TYPE_RECORD_INDEX:
        payload = _location(raw["recordIndexMetadata"])
    elif kind == TYPE_SECONDARY_INDEX:
        payload = SecondaryIndexEntry(bool((raw.get("SecondaryIndexMetadata") or {}).get("isDeleted", False)))
    else:
        payload = None  # a type of a later Hudi: recognised as a record, not read
    return MetadataRecord(key, kind, payload)


def _location(ri: Mapping[str, Any]) -> RecordLocation:
    if int(ri.get("fileIdEncoding") or 0) == 0:
        high, low = ri["fileIdHighBits"] & 0xFFFFFFFFFFFFFFFF, ri["fileIdLowBits"] & 0xFFFFFFFFFFFFFFFF
        file_id = f"{uuid.UUID(int=(high << 64) | low)}-{ri['fileIndex']}"
    else:
        file_id = ri["fileId"]
    return RecordLocation(ri.get("partitionName"), file_id, ri.get("instantTime"), ri.get("position"))


def unwrap(value: Any) -> Any:
    """A column-stats value out of its wrapper record (``(name, {"value": ...})`` as
    fastavro gives a union branch), as a Python value."""
    if value is None:
        return None
    name, body = value
    kind = name.rsplit(".", 1)[-1]
    if kind == "ArrayWrapper":
        return [unwrap(v) for v in body.get("wrappedValues") or []]
    inner = body["value"]
    if kind in ("DateWrapper", "LocalDateWrapper"):
        return _EPOCH_DAY + dt.timedelta(days=inner)
    if kind == "TimestampMicrosWrapper":
        return _EPOCH + dt.timedelta(microseconds=inner)
    if kind == "BytesWrapper":
        return bytes(inner)
    return inner


#: Hudi 1.x's ``ValueType`` ordinals of logical types, as the Arrow type of their values
#: (10 DECIMAL takes its scale from ``additionalInfo``; the others keep the wrapper's value)
_VALUE_TYPES = {
    12: pa.date32(), 13: pa.time32("ms"), 14: pa.time64("us"),
    15: pa.timestamp("ms", "UTC"), 16: pa.timestamp("us", "UTC"), 17: pa.timestamp("ns", "UTC"),
    18: pa.timestamp("ms"), 19: pa.timestamp("us"), 20: pa.timestamp("ns"),
}


def _logical(value: Any, ordinal: int, info: str | None) -> Any:
    """A 1.x value stored in a primitive wrapper, as the logical type ``valueType`` names."""
    if ordinal == 10:
        precision, scale = (int(x) for x in (info or "38,0").split(","))
        return as_arrow_type(value, pa.decimal128(min(precision, 38), scale))
    kind = _VALUE_TYPES.get(ordinal)
    return value if kind is None else as_arrow_type(value, kind)


def as_arrow_type(value: Any, kind: pa.DataType) -> Any:
    """A stored value as the Python value of a column of Arrow type ``kind``: the
    physical values Hudi 0.x stores for timestamps, dates, times and decimals become
    ``datetime``, ``date``, ``time`` and ``Decimal`` (others are returned as they are)."""
    if isinstance(value, list):
        return [as_arrow_type(v, kind) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, bytes)):
        return value
    if pa.types.is_timestamp(kind) and isinstance(value, int):
        micros = {"s": value * 1_000_000, "ms": value * 1000, "us": value, "ns": value // 1000}[kind.unit]
        when = _EPOCH + dt.timedelta(microseconds=micros)
        return when if kind.tz is not None else when.replace(tzinfo=None)
    if pa.types.is_date(kind) and isinstance(value, int):
        return _EPOCH_DAY + dt.timedelta(days=value if pa.types.is_date32(kind) else value // 86_400_000)
    if pa.types.is_time(kind) and isinstance(value, int):
        micros = {"s": value * 1_000_000, "ms": value * 1000, "us": value, "ns": value // 1000}[kind.unit]
        return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
    if pa.types.is_decimal(kind) and isinstance(value, bytes):
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-kind.scale)
    return value


# --- encoding (the writer side) ------------------------------------------------------------


class Long(int):
    """An integer Java holds as a ``long`` (an INT64 column, a timestamp's physical
    value): written in a ``LongWrapper`` whatever its size, as Hudi writes it."""


class Float(float):
    """A value of a 32-bit float column: written in a ``FloatWrapper``."""


def wrap(value: Any) -> tuple[str, dict[str, Any]] | None:
    """The wrapper record Java stores a column-stats value in, as fastavro writes a union
    branch: ``(full name, record)``."""
    if value is None:
        return None
    name, body = _wrapper(value)
    return (_NAMESPACE + name, body)


def _wrapper(value: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(value, bool):
        return ("BooleanWrapper", {"value": value})
    if isinstance(value, Long):
        return ("LongWrapper", {"value": int(value)})
    if isinstance(value, Float):
        return ("FloatWrapper", {"value": float(value)})
    if isinstance(value, int):
        return ("IntWrapper" if -(1 << 31) <= value < 1 << 31 else "LongWrapper", {"value": value})
    if isinstance(value, float):
        return ("DoubleWrapper", {"value": value})
    if isinstance(value, str):
        return ("StringWrapper", {"value": value})
    if isinstance(value, bytes):
        return ("BytesWrapper", {"value": value})
    if isinstance(value, Decimal):
        return ("DecimalWrapper", {"value": value.quantize(Decimal(1).scaleb(-15))})
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        return ("TimestampMicrosWrapper", {"value": (aware - _EPOCH) // dt.timedelta(microseconds=1)})
    if isinstance(value, dt.date):
        return ("DateWrapper", {"value": (value - _EPOCH_DAY).days})
    if isinstance(value, dt.time):
        return ("TimeMicrosWrapper", {"value": value})
    if isinstance(value, list):
        return ("ArrayWrapper", {"wrappedValues": [wrap(v) for v in value]})
    raise FormatError(f"column statistics cannot hold a {type(value).__name__} value: {value!r}")


def _raw(record: MetadataRecord) -> dict[str, Any]:
    raw: dict[str, Any] = {"key": record.key, "type": record.type}
    p = record.payload
    if isinstance(p, dict):
        raw["filesystemMetadata"] = {n: {"size": i.size, "isDeleted": i.is_deleted} for n, i in p.items()}
    elif isinstance(p, ColumnStats):
        raw["ColumnStatsMetadata"] = {
            "fileName": p.file_name, "columnName": p.column_name, "minValue": wrap(p.min), "maxValue": wrap(p.max),
            "valueCount": p.value_count, "nullCount": p.null_count, "totalSize": p.total_size,
            "totalUncompressedSize": p.total_uncompressed_size, "isDeleted": p.is_deleted, "isTightBound": p.is_tight_bound,
        }
    elif isinstance(p, BloomFilterInfo):
        raw["BloomFilterMetadata"] = {"type": p.type_code, "timestamp": p.timestamp, "bloomFilter": p.filter, "isDeleted": p.is_deleted}
    elif isinstance(p, RecordLocation):
        raw["recordIndexMetadata"] = _raw_location(p)
    elif isinstance(p, SecondaryIndexEntry):
        raw["SecondaryIndexMetadata"] = {"isDeleted": p.is_deleted}
    return raw


def _raw_location(p: RecordLocation) -> dict[str, Any]:
    out: dict[str, Any] = {"partitionName": p.partition, "instantTime": p.instant_millis, "position": p.position}
    head, _, index = p.file_id.rpartition("-")
    try:
        parsed = uuid.UUID(head)
        if str(parsed) != head or not index.isdigit():
            raise ValueError(head)
        bits = parsed.int
    except ValueError:
        return {**out, "fileId": p.file_id, "fileIdEncoding": 1}

    def signed(x: int) -> int:
        return x - (1 << 64) if x >= 1 << 63 else x

    # (Java leaves fileId an empty string when the id is in the bits)
    bits_of = {"fileIdHighBits": signed(bits >> 64), "fileIdLowBits": signed(bits & 0xFFFFFFFFFFFFFFFF), "fileIndex": int(index)}
    return {**out, "fileId": "", **bits_of, "fileIdEncoding": 0}


def is_deletion(record: MetadataRecord) -> bool:
    """Whether ``record`` deletes its key: a record-index key a write deleted (type 5
    without payload), written as an entry of a delete block, not as a value."""
    return record.type == TYPE_RECORD_INDEX and record.payload is None


def encode_value(record: MetadataRecord, schema_json: str = METADATA_RECORD_SCHEMA_JSON, blank_key: bool = True) -> bytes:
    """``record`` as schemaless Avro of ``schema_json`` (by default
    :data:`~hoodie.metadata_table.schema.METADATA_RECORD_SCHEMA`); the key field is left
    empty as in an HFile, whose entry key holds it, unless ``blank_key`` is False."""
    if is_deletion(record):
        raise FormatError(f"the record-index deletion of key {record.key!r} has no value to encode: it belongs in a delete block")
    location = record.payload if blank_key and schema_json == METADATA_RECORD_SCHEMA_JSON and isinstance(record.payload, RecordLocation) else None
    if location is not None:
        value = _VALUES_OF.get(location)
        if value is None:
            value = _encode_raw({**_raw(record), "key": ""}, schema_json)
            _remember(_VALUES_OF, location, value)
        return value
    raw = _raw(record)
    if blank_key:
        raw["key"] = ""
    return _encode_raw(raw, schema_json)


def _encode_raw(raw: Mapping[str, Any], schema_json: str) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _parsed(schema_json), raw)
    return buf.getvalue()


# --- merging -------------------------------------------------------------------------------


def merge(older: MetadataRecord | None, newer: MetadataRecord) -> MetadataRecord:
    """``newer`` combined with the ``older`` version of its key (None: nothing before)."""
    if older is None:
        return newer
    if older.type != newer.type:
        raise FormatError(f"metadata record {newer.key!r} changes type from {older.type} to {newer.type}")
    if newer.type in (TYPE_PARTITION_LIST, TYPE_FILE_LIST):
        return replace(newer, payload=_merge_files(older.files, newer.files))
    if isinstance(older.payload, ColumnStats) and isinstance(newer.payload, ColumnStats):
        return replace(newer, payload=_merge_stats(older.payload, newer.payload))
    return newer


def _merge_files(older: Mapping[str, FileInfo], newer: Mapping[str, FileInfo]) -> dict[str, FileInfo]:
    out = dict(older)
    for name, info in newer.items():
        before = out.get(name)
        if before is None:
            out[name] = info  # a tombstone with nothing before it is kept for the base file
        elif info.is_deleted:
            if before.is_deleted:
                out[name] = info
            else:
                del out[name]
        else:
            out[name] = FileInfo(max(before.size, info.size), False)
    return out


def _merge_stats(older: ColumnStats, newer: ColumnStats) -> ColumnStats:
    if newer.is_deleted or older.is_deleted:
        return newer
    return replace(
        newer,
        min=_bound(min, older.min, newer.min),
        max=_bound(max, older.max, newer.max),
        value_count=_sum(older.value_count, newer.value_count),
        null_count=_sum(older.null_count, newer.null_count),
        total_size=_sum(older.total_size, newer.total_size),
        total_uncompressed_size=_sum(older.total_uncompressed_size, newer.total_uncompressed_size),
    )


def _bound(pick: Any, a: Any, b: Any) -> Any:
    present = [v for v in (a, b) if v is not None]
    return pick(present) if present else None


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)
