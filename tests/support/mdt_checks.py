"""Test helper: a table's metadata table, as hoodie's reader answers it, against what the
data says: partitions and files equal the committed files on storage, column statistics
the Parquet footers, bloom filters the footers' filters (holding every key of their
file), the record index the file group each live key is read from."""
from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from shared import shared_dir

import hoodie
from hoodie.formats.bloom import deserialize_filter
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.metadata_table import KeyLocation, MetadataTableReader
from hoodie.table.table import HoodieTable

BLOOM_KEY, BLOOM_TYPE_KEY = b"org.apache.hudi.bloomfilter", b"hoodie_bloom_filter_type_code"


def mdt_tables() -> list[str]:
    """The conformance tables that hold a metadata table, by name."""
    tables = shared_dir() / "conformance" / "tables"
    out = []
    for z in sorted(tables.rglob("*.zip")) if tables.is_dir() else []:
        with zipfile.ZipFile(z) as zf:
            if f"{z.stem}/.hoodie/metadata/.hoodie/hoodie.properties" in zf.namelist():
                out.append(z.relative_to(tables).with_suffix("").as_posix())
    return out


def stored_files(table: HoodieTable, partition: str) -> dict[str, int]:
    """The files of a partition's committed slices (every slice, and replaced file groups
    the cleaner has not removed yet: the metadata table lists them too)."""
    view = table.local_view()
    out = {}
    for group in [*view.file_groups(partition), *view.replaced_file_groups(partition)]:
        for slc in group.slices:
            if slc.base_file is not None:
                out[slc.base_file.file_name] = slc.base_file.size
            out.update((lf.file_name, lf.size) for lf in slc.log_files)
    return out


def check_files(reader: MetadataTableReader, table: HoodieTable) -> list[str]:
    """Partitions and files equal storage's committed files; returns the partitions."""
    partitions = table.local_view().all_partition_paths()
    assert reader.all_partition_paths() == partitions
    many = reader.files_in_many(partitions)
    for partition in partitions:
        expected = stored_files(table, partition)
        assert reader.files_in(partition) == many[partition] == expected, partition
    return partitions


def footer_stats(path: Path) -> dict[str, tuple[Any, Any, int, int]]:
    """Column → (min, max, values, nulls) over all row groups of a Parquet file."""
    meta = pq.ParquetFile(path).metadata
    out: dict[str, tuple[Any, Any, int, int]] = {}
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for c in range(group.num_columns):
            col = group.column(c)
            stats = col.statistics
            if stats is None or not stats.has_min_max:
                continue
            lo, hi, n, nulls = stats.min, stats.max, col.num_values, stats.null_count
            if col.path_in_schema in out:
                plo, phi, pn, pnulls = out[col.path_in_schema]
                lo, hi, n, nulls = min(plo, lo), max(phi, hi), pn + n, pnulls + nulls
            out[col.path_in_schema] = (lo, hi, n, nulls)
    return out


def same_value(stored: Any, footer: Any) -> bool:
    if isinstance(footer, dt.datetime) and isinstance(stored, dt.datetime):
        return stored == (footer if footer.tzinfo else footer.replace(tzinfo=dt.timezone.utc))
    if isinstance(footer, Decimal):
        return isinstance(stored, Decimal) and stored == footer
    if isinstance(footer, bytes) and isinstance(stored, str):
        return stored.encode() == footer
    return bool(stored == footer) and type(stored) is type(footer)


def check_column_stats(reader: MetadataTableReader, table: HoodieTable) -> int:
    """Every latest base file's statistics equal its footer's; returns how many columns
    were compared."""
    indexed = {r.payload.column_name for r in reader.records("column_stats") if hasattr(r.payload, "column_name")}
    checked = 0
    for slc in table.local_view().latest_slices_all():
        if slc.base_file is None:
            continue
        footer = footer_stats(Path(slc.base_file.path))
        stats = reader.column_stats(slc.partition_path, slc.base_file.file_name, sorted(indexed))
        assert stats, slc.base_file.file_name
        for column, cs in stats.items():
            assert cs.file_name == slc.base_file.file_name and cs.column_name == column
            if column not in footer:
                assert cs.min is None and cs.max is None, (column, cs)
                continue
            lo, hi, count, nulls = footer[column]
            assert same_value(cs.min, lo) and same_value(cs.max, hi), (slc.base_file.file_name, column, cs, lo, hi)
            assert (cs.value_count, cs.null_count) == (count, nulls), (column, cs)
            checked += 1
        # a key-prefix scan of one column finds the same record
        some = sorted(stats)[0]
        assert stats[some] in reader.column_stats_of(some, slc.partition_path)
        assert stats[some] in reader.column_stats_of(some)
    return checked


def check_bloom_filters(reader: MetadataTableReader, table: HoodieTable) -> int:
    """Every latest base file's filter equals its footer's and holds all its keys."""
    checked = 0
    for slc in table.local_view().latest_slices_all():
        if slc.base_file is None:
            continue
        path = Path(slc.base_file.path)
        meta = pq.read_metadata(path).metadata
        bloom = reader.bloom_filter(slc.partition_path, slc.base_file.file_name)
        assert bloom is not None, slc.base_file.file_name
        code = meta.get(BLOOM_TYPE_KEY)
        assert bloom == deserialize_filter(meta[BLOOM_KEY], code.decode() if code else None)
        keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert all(bloom.might_contain(k) for k in keys)
        checked += 1
    return checked


def check_record_index(reader: MetadataTableReader, base_path: str, gone: Sequence[str] = ()) -> dict[str, KeyLocation]:
    """Each live key (as hoodie reads the table) is placed in the partition and file
    group it is read from; keys in ``gone`` (deleted) are not placed at all."""
    rows = hoodie.read(base_path).select(["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]).to_pylist()
    where = {}
    for row in rows:
        name = row["_hoodie_file_name"]
        parsed = parse_base_file_name(name) or parse_log_file_name(name)
        # (records Apache Hudi 0.15 wrote into log files name their file group only)
        where[row["_hoodie_record_key"]] = (row["_hoodie_partition_path"], parsed.file_id if parsed else name)
    located = reader.record_locations([*where, *gone, "no-such-key"])
    assert {k: (loc.partition, loc.file_id) for k, loc in located.items()} == where
    # each key looked up alone reads only the file group it hashes to, and finds it there
    for key in list(where)[:5]:
        assert reader.record_locations([key]) == {key: located[key]}
    return located
