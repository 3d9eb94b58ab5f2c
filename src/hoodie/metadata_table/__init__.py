"""The metadata table (``.hoodie/metadata``, RFC-15): its records (:mod:`.records`, keys
in :mod:`.keys`, the writer schema in :mod:`.schema`) and the reader
(:class:`MetadataTableReader`): partitions and their files without listing storage,
column statistics, bloom filters and the record index; and its state, partition by
partition and slice by slice (:func:`metadata_table_stats`, in :mod:`.stats`)."""
from hoodie.metadata_table.reader import KeyLocation, MetadataTableReader
from hoodie.metadata_table.records import BloomFilterInfo, ColumnStats, FileInfo, MetadataRecord, RecordLocation
from hoodie.metadata_table.stats import MetadataTableStats, SliceStats, metadata_table_stats, open_metadata_table

__all__ = [
    "BloomFilterInfo",
    "ColumnStats",
    "FileInfo",
    "KeyLocation",
    "MetadataRecord",
    "MetadataTableReader",
    "MetadataTableStats",
    "RecordLocation",
    "SliceStats",
    "metadata_table_stats",
    "open_metadata_table",
]
