"""The metadata table as a write's index: the lookups ``index/`` asks for, answered from
the record index, the bloom filters and the record key's column statistics.

``index/`` cannot import the metadata table (they sit side by side), so it declares what
it needs (:class:`~hoodie.index.KeyLocator`, :class:`~hoodie.index.BloomSource`) and the
writer wires these implementations. Both are picklable and carry only the data table as
the write loaded it: whoever calls them (the driver, an engine task, a Spark executor)
opens the metadata table's reader once and keeps it, so only completed instants are seen.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hoodie.errors import FormatError
from hoodie.formats.bloom_footer import EncodedBloomFilter
from hoodie.formats.meta_columns import META_COLUMNS, RECORD_KEY, data_fields
from hoodie.metadata_table.reader import MetadataTableReader
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS, RECORD_INDEX
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import read_slice
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable

__all__ = ["MetadataBloomSource", "RecordIndexLocator", "has_bloom_filters", "has_record_index"]


def has_record_index(table: HoodieTable) -> bool:
    """Whether ``table``'s metadata table has a complete ``record_index`` partition."""
    return RECORD_INDEX in table.config.metadata_partitions


def has_bloom_filters(table: HoodieTable) -> bool:
    """Whether ``table``'s metadata table has a complete ``bloom_filters`` partition."""
    return BLOOM_FILTERS in table.config.metadata_partitions


class _Lookups:
    """The data table, and its metadata table's reader once a lookup opened it (not
    pickled: each process opens its own)."""

    def __init__(self, table: HoodieTable) -> None:
        self.table = table
        self._reader: MetadataTableReader | None = None

    def __getstate__(self) -> dict[str, object]:
        return {"table": self.table, "_reader": None}

    @property
    def reader(self) -> MetadataTableReader:
        if self._reader is None:
            self._reader = MetadataTableReader(self.table)
        return self._reader


class RecordIndexLocator(_Lookups):
    """:class:`~hoodie.index.KeyLocator` from the record index: one lookup per batch of
    keys, grouped by the index's file groups (each read once)."""

    def locate(self, keys: pa.Array, workers: int = 1) -> tuple[pa.Array, pa.Array]:
        """(see :class:`~hoodie.index.KeyLocator`) Each key's location taken from the few
        distinct ones found."""
        codes, where = self.reader.locate_many(keys, workers)
        at = pa.array(codes, mask=codes < 0)
        partitions = pa.array([w.partition for w in where], pa.string()).take(at)
        return partitions, pa.array([w.file_id for w in where], pa.string()).take(at)

    def stored_values(self, located: Mapping[str, tuple[str, str]], column: str | None) -> Mapping[str, Any]:
        """(see :class:`~hoodie.index.KeyLocator`) One merge of each file group's latest
        slice, reading the key and ``column`` only."""
        by_group: dict[tuple[str, str], list[str]] = defaultdict(list)
        for key, where in located.items():
            by_group[where].append(key)
        table = self.table
        data = table.data_schema()
        if data is None:
            return {}
        schema = pa.schema([pa.field(name, pa.string(), nullable=False) for name in META_COLUMNS] + data_fields(data))
        merge, visible = MergeConfig.for_table(table.config), InstantFilter.of_timeline(table.timeline)
        columns = [RECORD_KEY] if column is None else [RECORD_KEY, column]
        view = table.view()
        out: dict[str, Any] = {}
        for (partition, file_id), keys in sorted(by_group.items()):
            slc = next((s for s in view.latest_slices(partition) if s.file_id == file_id), None)
            if slc is None:
                continue
            rows = read_slice(table.storage, slc, schema, merge, visible, columns=columns)
            rows = rows.filter(pc.is_in(rows.column(RECORD_KEY), value_set=pa.array(keys, pa.string())))
            values = rows.column(column).to_pylist() if column is not None else [None] * rows.num_rows
            out.update(zip(rows.column(RECORD_KEY).to_pylist(), values))
        return out


class MetadataBloomSource(_Lookups):
    """:class:`~hoodie.index.BloomSource` from the ``bloom_filters`` partition (the
    filter text, probed as a footer's is) and, when ``column_stats`` is complete, the
    range of ``_hoodie_record_key`` (Apache Hudi's bloom index with
    ``hoodie.bloom.index.use.metadata``)."""

    def file_indexes(self, files: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], tuple[str | None, str | None, EncodedBloomFilter]]:
        """(see :class:`~hoodie.index.BloomSource`) One lookup in each partition, however
        many data partitions ``files`` span: each metadata file group is read once."""
        files = list(dict.fromkeys(files))
        infos = self.reader.bloom_filter_infos(files)
        ranges = self.reader.column_stats_many(files, [RECORD_KEY]) if COLUMN_STATS in self.reader.partitions else {}
        out: dict[tuple[str, str], tuple[str | None, str | None, EncodedBloomFilter]] = {}
        for (partition, name), info in infos.items():
            stats = ranges.get((partition, name), {}).get(RECORD_KEY)
            low, high = (stats.min, stats.max) if stats is not None else (None, None)
            try:
                bloom = EncodedBloomFilter(info.filter, info.type_code)
            except FormatError as exc:
                raise FormatError(f"metadata table {self.reader.base_path}: bloom filter of {name} in partition {partition!r}: {exc}") from exc
            out[(partition, name)] = (low if isinstance(low, str) else None, high if isinstance(high, str) else None, bloom)
        return out
