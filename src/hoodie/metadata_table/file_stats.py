"""The ``column_stats`` and ``bloom_filters`` records of one data file, as Apache Hudi 0.15
makes them (``HoodieTableMetadataUtil``, ``HoodieAppendHandle``).

Which columns: ``hoodie.metadata.index.column.stats.column.list``, or else every
top-level field of the writer's schema, the five meta columns first. A base file's
statistics come from its Parquet footer, each column chunk whose path is one of those
names (so a struct, list or map column has none: its leaves are ``rider.name``, ...),
row groups combined: min of the minima, max of the maxima, null and value counts and
compressed and uncompressed sizes summed. Values are Java's: a string, the bytes of a
binary column, a ``date``, a ``Decimal``, an ``int`` for INT32 and a :class:`Long` for
INT64 (a timestamp's physical value), a :class:`Float` or ``float``, a ``bool``.

A log file's statistics are those of the records the instant appended to it (its data
blocks with that ``INSTANT_TIME``; at initialisation, those of every completed instant),
every column of the list: value count the records,
null count the nulls (all values of a map column, which Java cannot compare), min and
max of comparable values only (none for structs, lists and maps), sizes 0; binary values
compare as Java's ``ByteBuffer`` does (signed bytes). A block of deletes only gives
statistics of no values.

A bloom filter record holds the footer's filter text and type (``SIMPLE`` when the
footer names none), stamped with the instant.

Deleting a file's statistics writes a tombstone per column with counts of -1, as Java's
stub does; unlike Hudi 0.15's cleaner, which names the file by a wrongly shortened name
(and so never reaches the real key), the key and name here are the file's own.
"""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Collection, Iterable, Sequence
from decimal import Context, Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.errors import FormatError
from hoodie.formats.log.blocks import AvroDataBlock, ParquetDataBlock
from hoodie.formats.log.reader import iter_log_file
from hoodie.formats.meta_columns import META_COLUMNS
from hoodie.formats.parquet import BaseFileReader
from hoodie.metadata_table.keys import bloom_filter_key, column_stats_key
from hoodie.metadata_table.records import (
    TYPE_BLOOM_FILTER,
    TYPE_COLUMN_STATS,
    BloomFilterInfo,
    ColumnStats,
    Float,
    Long,
    MetadataRecord,
)
from hoodie.storage.base import Storage

__all__ = ["base_file_records", "columns_to_index", "deleted_bloom_filter", "deleted_column_stats", "log_file_stats"]

_WIDE = Context(prec=100)  # decimals of any precision, unrounded
_EPOCH_DAY = dt.date(1970, 1, 1)


def columns_to_index(configured: Sequence[str], schema_json: str | None, meta_fields: bool) -> tuple[str, ...]:
    """The columns whose statistics are kept: the configured list, or every top-level
    field of the writer's Avro schema (``schema_json``), after the meta columns."""
    if configured:
        return tuple(configured)
    if not schema_json:
        return ()
    try:
        fields = [f["name"] for f in json.loads(schema_json)["fields"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise FormatError(f"the writer schema is unusable for column statistics: {exc!r}") from exc
    meta = [c for c in META_COLUMNS if meta_fields]
    return tuple(dict.fromkeys([*meta, *fields]))


# --- base files --------------------------------------------------------------------------------


def base_file_records(
    storage: Storage, path: str, partition: str, file_name: str, instant: str, columns: Sequence[str] | None, bloom: bool
) -> tuple[list[MetadataRecord], MetadataRecord | None]:
    """The column statistics (of ``columns``; None: none wanted) and the bloom filter
    record (when ``bloom``; None when the footer holds no filter) of one base file, from
    one read of its footer."""
    with BaseFileReader(storage, path) as reader:
        stats = _footer_stats(reader.metadata, partition, file_name, columns) if columns else []
        index = reader.footer.index if bloom else None
    filter_record = None
    if index is not None and index.bloom is not None:
        info = BloomFilterInfo(index.bloom.type_code, instant, index.bloom.text)
        filter_record = MetadataRecord(bloom_filter_key(partition, file_name), TYPE_BLOOM_FILTER, info)
    return stats, filter_record


def _footer_stats(md: pq.FileMetaData, partition: str, file_name: str, columns: Sequence[str]) -> list[MetadataRecord]:
    wanted = set(columns)
    acc: dict[str, list[Any]] = {}  # path → [min, max, values, nulls, size, uncompressed]
    for i in range(md.num_columns):
        path = md.schema.column(i).path
        if path not in wanted:
            continue
        convert = _footer_value(md.schema.column(i))
        if convert is None:
            continue  # a type Hudi cannot keep statistics of (INT96, a plain fixed)
        for rg in range(md.num_row_groups):
            chunk = md.row_group(rg).column(i)
            stats = chunk.statistics
            lo = hi = None
            if stats is not None and stats.has_min_max:
                lo, hi = convert(stats.min_raw), convert(stats.max_raw)
            # without statistics Java counts every value as null
            nulls = stats.null_count if stats is not None and stats.has_null_count else chunk.num_values
            entry = acc.setdefault(path, [None, None, 0, 0, 0, 0])
            entry[0] = _extreme(min, entry[0], lo)
            entry[1] = _extreme(max, entry[1], hi)
            entry[2] += chunk.num_values
            entry[3] += nulls
            entry[4] += chunk.total_compressed_size
            entry[5] += chunk.total_uncompressed_size
    return [
        _stats_record(partition, file_name, column, ColumnStats(file_name, column, *entry))
        for column, entry in acc.items()
    ]


def _footer_value(column: pq.ColumnSchema) -> Callable[[Any], Any] | None:
    """How a footer's physical min or max becomes the value Java keeps
    (``ParquetUtils.convertToNativeJavaType``)."""
    physical, converted = column.physical_type, column.converted_type
    if converted == "DECIMAL":
        scale = column.scale
        return lambda raw: Decimal(raw if isinstance(raw, int) else int.from_bytes(raw, "big", signed=True)).scaleb(-scale, _WIDE)
    if converted == "DATE":
        return lambda raw: _EPOCH_DAY + dt.timedelta(days=raw)
    if physical == "BYTE_ARRAY":
        if converted == "UTF8":
            return lambda raw: bytes(raw).decode("utf-8")
        return bytes
    simple: dict[str, Callable[[Any], Any]] = {"BOOLEAN": bool, "INT32": int, "INT64": Long, "FLOAT": Float, "DOUBLE": float}
    return simple.get(physical)


# --- log files ---------------------------------------------------------------------------------


def log_file_stats(storage: Storage, path: str, partition: str, file_name: str, instants: Collection[str], columns: Sequence[str]) -> list[MetadataRecord]:
    """The statistics of the records ``instants`` appended to one log file (the write's
    own; at initialisation, every completed one)."""
    tables = [
        block.records for block in iter_log_file(storage, path)
        if isinstance(block, (AvroDataBlock, ParquetDataBlock)) and block.instant_time in instants
    ]
    out = []
    for column in columns:
        count = nulls = 0
        lo = hi = None
        for table in tables:
            count += len(table)
            values = _column_of(table, column)
            if values is None:
                nulls += len(table)  # a record without the field: null
            elif pa.types.is_map(values.type):
                nulls += len(values)  # Java cannot compare maps: every value counts as null
            else:
                nulls += values.null_count
                low, high = _min_max(values)
                lo, hi = _extreme(min, lo, low), _extreme(max, hi, high)
        stats = ColumnStats(file_name, column, lo, hi, count, nulls, 0, 0)
        out.append(_stats_record(partition, file_name, column, stats))
    return out


def _column_of(table: pa.Table, column: str) -> pa.ChunkedArray | None:
    """A column by name, or a struct's field by dotted path; None when absent."""
    if column in table.column_names:
        return table.column(column)
    head, _, rest = column.partition(".")
    if not rest or head not in table.column_names:
        return None
    values: pa.ChunkedArray = table.column(head)
    for name in rest.split("."):
        if not pa.types.is_struct(values.type) or values.type.get_field_index(name) < 0:
            return None
        values = pc.struct_field(values, name)
    return values


def _min_max(values: pa.ChunkedArray) -> tuple[Any, Any]:
    kind = values.type
    if pa.types.is_struct(kind) or pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_null(kind):
        return None, None
    live = values.drop_null()
    if len(live) == 0:
        return None, None
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        items = live.to_pylist()
        return min(items, key=_signed), max(items, key=_signed)
    if pa.types.is_timestamp(kind) or pa.types.is_time(kind):
        physical = pa.int64() if kind.bit_width == 64 else pa.int32()
        live = live.cast(physical)
    found = pc.min_max(live)
    lo, hi = found["min"].as_py(), found["max"].as_py()
    if pa.types.is_integer(live.type) and live.type.bit_width == 64:
        return Long(lo), Long(hi)
    if pa.types.is_float32(kind):
        return Float(lo), Float(hi)
    return lo, hi


_SIGNED_ORDER = bytes(b ^ 0x80 for b in range(256))


def _signed(value: bytes) -> bytes:
    """A sort key ordering bytes as Java's ``ByteBuffer.compareTo`` does (signed)."""
    return value.translate(_SIGNED_ORDER)


# --- deletions and helpers ----------------------------------------------------------------------


def deleted_column_stats(partition: str, file_name: str, columns: Iterable[str]) -> list[MetadataRecord]:
    """Tombstones of a deleted file's statistics, one per column."""
    return [
        _stats_record(partition, file_name, column, ColumnStats(file_name, column, None, None, -1, -1, -1, -1, is_deleted=True))
        for column in columns
    ]


def deleted_bloom_filter(partition: str, file_name: str, instant: str) -> MetadataRecord:
    """The tombstone of a deleted base file's bloom filter."""
    return MetadataRecord(bloom_filter_key(partition, file_name), TYPE_BLOOM_FILTER, BloomFilterInfo("", instant, b"", True))


def _stats_record(partition: str, file_name: str, column: str, stats: ColumnStats) -> MetadataRecord:
    return MetadataRecord(column_stats_key(partition, file_name, column), TYPE_COLUMN_STATS, stats)


def _extreme(pick: Callable[..., Any], a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, bytes):
        return pick(a, b, key=_signed)
    return pick(a, b)
