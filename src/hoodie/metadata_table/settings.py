"""What a writer keeps in the metadata table: :class:`MetadataSettings`, built once from
the write's options (``hoodie.metadata.*``, declared in :mod:`hoodie.config.options`).

Also the metadata table's partitions, in the order Apache Hudi builds them, with the
prefix of their file ids (``files-0000-0``, ``col-stats-0001-0``, ...) and how many
file groups each is built with.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from hoodie.config import options as o
from hoodie.config.options import HoodieConfig

__all__ = [
    "BLOOM_FILTERS",
    "COLUMN_STATS",
    "FILES",
    "PARTITION_ORDER",
    "RECORD_INDEX",
    "MetadataSettings",
    "file_group_ids",
]

FILES = "files"
BLOOM_FILTERS = "bloom_filters"
COLUMN_STATS = "column_stats"
RECORD_INDEX = "record_index"
#: the partitions in the order Apache Hudi initialises them (instants ``...010``, ``...011``, ...)
PARTITION_ORDER = (FILES, BLOOM_FILTERS, COLUMN_STATS, RECORD_INDEX)
_FILE_ID_PREFIX = {FILES: "files", BLOOM_FILTERS: "bloom-filters", COLUMN_STATS: "col-stats", RECORD_INDEX: "record-index"}
#: bytes Apache Hudi reckons a record-index entry takes when it sizes the partition
RECORD_INDEX_ENTRY_BYTES = 48


def file_group_ids(partition: str, count: int) -> list[str]:
    """The file ids of a metadata partition's ``count`` file groups, in index order."""
    return [f"{_FILE_ID_PREFIX[partition]}-{i:04d}-0" for i in range(count)]


@dataclass(frozen=True)
class MetadataSettings:
    """Whether the metadata table is kept, which of its partitions, and how they are laid out."""

    enable: bool = True
    column_stats: bool = False
    bloom_filters: bool = False
    record_index: bool = False
    column_stats_columns: tuple[str, ...] = ()  # empty: every column
    bloom_filter_columns: tuple[str, ...] = ()  # empty: the record key
    column_stats_file_groups: int = 2
    bloom_filter_file_groups: int = 4
    record_index_min_file_groups: int = 10
    record_index_max_file_groups: int = 10000
    record_index_max_file_group_bytes: int = 1024 * 1024 * 1024
    record_index_growth_factor: float = 2.0
    hfile_block_size: int = 1024 * 1024

    @classmethod
    def of(cls, config: HoodieConfig) -> MetadataSettings:
        return cls(
            enable=config.get(o.METADATA_ENABLE),
            column_stats=config.get(o.METADATA_COLUMN_STATS_ENABLE),
            bloom_filters=config.get(o.METADATA_BLOOM_FILTER_ENABLE),
            record_index=config.get(o.METADATA_RECORD_INDEX_ENABLE),
            column_stats_columns=config.get(o.METADATA_COLUMN_STATS_COLUMNS),
            bloom_filter_columns=config.get(o.METADATA_BLOOM_FILTER_COLUMNS),
            column_stats_file_groups=config.get(o.METADATA_COLUMN_STATS_FILE_GROUPS),
            bloom_filter_file_groups=config.get(o.METADATA_BLOOM_FILTER_FILE_GROUPS),
            record_index_min_file_groups=config.get(o.METADATA_RECORD_INDEX_MIN_FILE_GROUPS),
            record_index_max_file_groups=config.get(o.METADATA_RECORD_INDEX_MAX_FILE_GROUPS),
            record_index_max_file_group_bytes=config.get(o.METADATA_RECORD_INDEX_MAX_FILE_GROUP_SIZE),
            record_index_growth_factor=config.get(o.METADATA_RECORD_INDEX_GROWTH_FACTOR),
            hfile_block_size=config.get(o.HFILE_BLOCK_SIZE),
        )

    def keeping(self, partitions: Iterable[str]) -> MetadataSettings:
        """These settings, on, building exactly ``partitions`` (``files`` always): what
        builds a metadata table again with the partitions it had."""
        had = set(partitions)
        return replace(self, enable=True, column_stats=COLUMN_STATS in had, bloom_filters=BLOOM_FILTERS in had, record_index=RECORD_INDEX in had)

    def disabled(self, complete: Iterable[str]) -> tuple[str, ...]:
        """The ``complete`` partitions these settings no longer keep, which a write drops
        (Apache Hudi 0.15's ``HoodieTable.shouldDeleteMetadataPartition``): column_stats,
        bloom_filters and record_index, each when its own option is off and the metadata
        table on; ``files`` never (it goes with the whole metadata table)."""
        if not self.enable:
            return ()
        kept = set(self.partitions)
        return tuple(p for p in PARTITION_ORDER if p != FILES and p in set(complete) and p not in kept)

    @property
    def partitions(self) -> tuple[str, ...]:
        """The enabled partitions, in the order they are built (none when disabled)."""
        if not self.enable:
            return ()
        wanted = {FILES: True, BLOOM_FILTERS: self.bloom_filters, COLUMN_STATS: self.column_stats, RECORD_INDEX: self.record_index}
        return tuple(p for p in PARTITION_ORDER if wanted[p])

    def file_group_count(self, partition: str, record_count: int = 0) -> int:
        """How many file groups ``partition`` is built with; the record index's from the
        keys the table holds (``record_count``), as Apache Hudi estimates it."""
        if partition == FILES:
            return 1
        if partition == BLOOM_FILTERS:
            return self.bloom_filter_file_groups
        if partition == COLUMN_STATS:
            return self.column_stats_file_groups
        if partition == RECORD_INDEX:
            wanted = math.ceil(record_count * self.record_index_growth_factor * RECORD_INDEX_ENTRY_BYTES / self.record_index_max_file_group_bytes)
            return max(self.record_index_min_file_groups, min(self.record_index_max_file_groups, wanted))
        raise ValueError(f"unknown metadata table partition {partition!r}")
