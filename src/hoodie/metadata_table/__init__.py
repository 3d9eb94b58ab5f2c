"""The metadata table (``.hoodie/metadata``, RFC-15): its records (:mod:`.records`, keys
in :mod:`.keys`, the writer schema in :mod:`.schema`) and the reader
(:class:`MetadataTableReader`): partitions and their files without listing storage,
column statistics, bloom filters and the record index; its state, partition by
partition and slice by slice (:func:`metadata_table_stats`, in :mod:`.stats`); and its
validation against the data (:func:`validate_metadata_table`, in :mod:`.validate`)."""
from hoodie.metadata_table.reader import KeyLocation, MetadataTableReader
from hoodie.metadata_table.records import BloomFilterInfo, ColumnStats, FileInfo, MetadataRecord, RecordLocation
from hoodie.metadata_table.stats import MetadataTableStats, SliceStats, metadata_table_stats, open_metadata_table
from hoodie.metadata_table.validate import CHECKS, Difference, MetadataValidation, validate_metadata_table

__all__ = [
    "CHECKS",
    "BloomFilterInfo",
    "Difference",
    "ColumnStats",
    "FileInfo",
    "KeyLocation",
    "MetadataRecord",
    "MetadataTableReader",
    "MetadataTableStats",
    "MetadataValidation",
    "RecordLocation",
    "SliceStats",
    "metadata_table_stats",
    "open_metadata_table",
    "validate_metadata_table",
]
