"""Column statistics and bloom filters of a metadata table against the data files of one
partition (the two checks of :mod:`hoodie.metadata_table.validate` that read files).

What the data says, as Apache Hudi defines it:

* a base file's statistics are its Parquet footer's, over all row groups: per top-level
  column the smallest and largest value, the values and the nulls (a column whose footer
  has no min/max, such as a nested one, has none in the metadata table either);
* a log file's statistics are those of the records of its data blocks (what
  ``HoodieAppendHandle`` collects while it appends them): values = records, nulls, and
  min/max of each primitive column (none for nested ones);
* a base file's bloom filter is its footer's, and it holds every key of the file.

The metadata table must hold statistics of every file the partition holds for every
column it indexes (the columns it has statistics of in the partition), a filter of every
base file with one, and nothing of files the partition does not hold (the clean removes
them).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodie.errors import FormatError
from hoodie.formats.bloom import BloomFilter, serialized_text
from hoodie.formats.bloom_footer import read_footer_index
from hoodie.formats.log import DeleteBlock
from hoodie.formats.meta_columns import RECORD_KEY
from hoodie.metadata_table.keys import bloom_filter_key
from hoodie.metadata_table.reader import MetadataTableReader
from hoodie.metadata_table.records import ColumnStats
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS
from hoodie.storage.base import Storage, arrow_path
from hoodie.table.file_group import BaseFile, LogFile
from hoodie.table.slice_reader.log_scan import decode_pending, scan_log

__all__ = ["Difference", "FileStats", "bloom_filter_differences", "column_stats_differences", "footer_stats", "log_stats", "same_value"]

ABSENT = "absent"


@dataclass(frozen=True)
class Difference:
    """One way the metadata table differs from the data: which ``check`` found it, where
    (``partition``, and the data ``file``, record ``key`` or ``column`` it concerns) and
    both values: what the data says (``data``) and what the metadata table says
    (``metadata``); ``absent`` where one of them has nothing."""

    check: str
    partition: str
    data: str
    metadata: str
    file: str | None = None
    key: str | None = None
    column: str | None = None


@dataclass(frozen=True)
class FileStats:
    """One column's statistics in one data file, as the data says."""

    min: Any
    max: Any
    value_count: int
    null_count: int


def shown(value: Any) -> str:
    """A value as a difference prints it."""
    return ABSENT if value is None else repr(value) if isinstance(value, bytes) else str(value)


def footer_stats(meta: pq.FileMetaData) -> dict[str, FileStats]:
    """Column (its path in the schema) → statistics over all row groups of a Parquet
    footer; columns without min/max left out."""
    out: dict[str, FileStats] = {}
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for c in range(group.num_columns):
            col = group.column(c)
            stats = col.statistics
            if stats is None or not stats.has_min_max:
                continue
            lo, hi, n, nulls = stats.min, stats.max, col.num_values, stats.null_count
            prev = out.get(col.path_in_schema)
            if prev is not None:
                lo, hi, n, nulls = min(prev.min, lo), max(prev.max, hi), prev.value_count + n, prev.null_count + nulls
            out[col.path_in_schema] = FileStats(lo, hi, n, nulls)
    return out


def log_stats(storage: Storage, log_file: LogFile, visible: Callable[[str], bool]) -> dict[str, FileStats]:
    """Top-level column → statistics of the records of the data blocks ``visible`` instants
    wrote into ``log_file`` (empty for a log of delete or rollback blocks only)."""
    blocks = decode_pending(scan_log(storage, [log_file], visible))
    tables = [b.records for b in blocks if not isinstance(b, DeleteBlock) and b.records.num_rows]
    if not tables:
        return {}
    records = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    out = {}
    for name, column in zip(records.column_names, records.columns):
        lo = hi = None
        nulls = column.null_count
        if pa.types.is_map(column.type):
            nulls = len(column)  # Hudi cannot compare maps and counts each value a null
        elif pa.types.is_nested(column.type) or nulls == len(column):
            pass  # no min/max: a record or array has none the metadata table can hold
        elif pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type) or pa.types.is_fixed_size_binary(column.type):
            # Java compares the ByteBuffers of an Avro record, byte by byte, signed
            values = [v for v in column.to_pylist() if v is not None]
            lo, hi = min(values, key=_signed), max(values, key=_signed)
        else:
            bounds = pc.min_max(column)
            lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
        out[name] = FileStats(lo, hi, len(column), nulls)
    return out


_SIGNED_ORDER = bytes((b + 128) % 256 for b in range(256))


def _signed(value: bytes) -> bytes:
    """``value`` mapped so that comparing the results compares ``value``'s bytes signed."""
    return value.translate(_SIGNED_ORDER)


def same_value(stored: Any, data: Any) -> bool:
    """Whether a statistic the metadata table stored is the data's value: timestamps
    compare as instants (a naive one is UTC), decimals by value, a footer's bytes equal a
    stored string of them; anything else by value and type."""
    if isinstance(data, dt.datetime) and isinstance(stored, dt.datetime):
        return stored == (data if data.tzinfo else data.replace(tzinfo=dt.timezone.utc))
    if isinstance(data, Decimal):
        return isinstance(stored, Decimal) and stored == data
    if isinstance(data, bytes) and isinstance(stored, str):
        return stored.encode() == data
    return bool(stored == data) and type(stored) is type(data)


def _footer(storage: Storage, base: BaseFile) -> pq.FileMetaData:
    fs, path = arrow_path(storage, base.path)
    try:
        with fs.open_input_file(path) as f:
            return pq.ParquetFile(f).metadata
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(f"{base.path}: unreadable Parquet footer: {' '.join(str(exc).split())}") from exc


def column_stats_differences(
    reader: MetadataTableReader,
    partition: str,
    bases: Mapping[str, BaseFile],
    logs: Mapping[str, LogFile],
    columns: list[str],
    visible: Callable[[str], bool],
) -> tuple[list[Difference], int]:
    """The differences between the statistics the metadata table holds for ``partition``
    and the files it holds (``bases``, ``logs``: by name), and how many (file, column)
    statistics were compared."""
    stored: dict[str, dict[str, ColumnStats]] = {}
    for cs in reader.column_stats_in(partition, columns):
        stored.setdefault(cs.file_name or "", {})[cs.column_name or ""] = cs
    # (statistics of files the partition no longer holds are not differences: Apache Hudi
    # 0.15's clean leaves those of the files it deletes)
    indexed = {c for per_file in stored.values() for c in per_file}
    diffs: list[Difference] = []
    compared = 0
    data: dict[str, FileStats]
    for name in sorted({*bases, *logs}):
        if name in bases:
            # (a nested column's footer statistics are its leaves': none for the column)
            data, top_level_only = footer_stats(_footer(reader.storage, bases[name])), False
        else:
            data, top_level_only = log_stats(reader.storage, logs[name], visible), True
        mine = stored.get(name, {})
        if not mine and data and indexed:
            diffs.append(Difference(COLUMN_STATS, partition, f"statistics of {len(data)} column(s)", "no statistics", file=name))
            continue
        for column in sorted(indexed & set(data) - set(mine)):
            diffs.append(Difference(COLUMN_STATS, partition, _stats_text(data[column]), ABSENT, file=name, column=column))
        for column, cs in sorted(mine.items()):
            compared += 1
            diffs.extend(_compare(partition, name, column, cs, data.get(column), top_level_only))
    return diffs, compared


def _stats_text(s: FileStats | ColumnStats) -> str:
    return f"min {shown(s.min)}, max {shown(s.max)}, {s.value_count} value(s), {s.null_count} null(s)"


def _compare(partition: str, name: str, column: str, cs: ColumnStats, data: FileStats | None, counted: bool) -> list[Difference]:
    """``cs`` against the data's statistics of the column (None: the data has no min/max
    for it; then the metadata table must have none either). ``counted``: the data counts
    values of columns without min/max too (a log file's records)."""
    if data is None:
        if cs.min is None and cs.max is None:
            return []
        return [Difference(COLUMN_STATS, partition, "no min/max", _stats_text(cs), file=name, column=column)]
    same = cs.value_count == data.value_count and cs.null_count == data.null_count
    if data.min is None and data.max is None:
        same = same and cs.min is None and cs.max is None and counted
    else:
        same = same and same_value(cs.min, data.min) and same_value(cs.max, data.max)
    return [] if same else [Difference(COLUMN_STATS, partition, _stats_text(data), _stats_text(cs), file=name, column=column)]


def bloom_filter_differences(
    reader: MetadataTableReader, partition: str, bases: Mapping[str, BaseFile], leaving: Collection[str] = ()
) -> list[Difference]:
    """The differences between the bloom filters the metadata table holds for
    ``partition`` and the footers of its base files (``bases``, by name): a filter
    missing, different, or without some key of its file, and filters of files the
    partition does not hold (but for those a pending clean is deleting, ``leaving``)."""
    expected = {bloom_filter_key(partition, name): name for name in bases}
    deleting = {bloom_filter_key(partition, name) for name in leaving}
    diffs = [
        Difference(BLOOM_FILTERS, partition, ABSENT, f"the filter of a file the partition does not hold (key {key})")
        for key in sorted(reader.bloom_filter_keys(partition) - set(expected) - deleting)
    ]
    for name in sorted(bases):
        meta = _footer(reader.storage, bases[name])
        index = read_footer_index(meta.metadata)
        footer = index.bloom_filter if index is not None else None
        stored = reader.bloom_filter(partition, name)
        if footer is None or stored is None:
            if footer is not None or stored is not None:
                diffs.append(Difference(BLOOM_FILTERS, partition, _filter_text(footer), _filter_text(stored), file=name))
            continue
        if stored != footer:
            diffs.append(Difference(BLOOM_FILTERS, partition, _filter_text(footer), f"a different filter ({_filter_text(stored)})", file=name))
            continue
        if RECORD_KEY not in meta.schema.to_arrow_schema().names:
            continue  # no meta columns: the footer's filter is what there is to compare
        fs, path = arrow_path(reader.storage, bases[name].path)
        keys = pq.read_table(path, columns=[RECORD_KEY], filesystem=fs).column(0)
        absent = np.flatnonzero(~stored.might_contain_many(keys))
        if len(absent):
            first = keys[int(absent[0])].as_py()
            diffs.append(Difference(BLOOM_FILTERS, partition, "holds every key of the file", f"misses {len(absent)} key(s)", file=name, key=first))
    return diffs


def _filter_text(f: BloomFilter | None) -> str:
    return "no filter" if f is None else f"{type(f).__name__} of {len(serialized_text(f))} bytes serialized"
