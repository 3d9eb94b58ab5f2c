"""The metadata table (``.hoodie/metadata``, RFC-15): its records (:mod:`.records`, keys
in :mod:`.keys`, the writer schema in :mod:`.schema`) and the reader
(:class:`MetadataTableReader`): partitions and their files without listing storage,
column statistics, bloom filters and the record index; its state, partition by
partition and slice by slice (:func:`metadata_table_stats`, in :mod:`.stats`); its
validation against the data (:func:`validate_metadata_table`, in :mod:`.validate`); and
the metrics of the work done on it (:class:`MetadataMetrics`, in :mod:`.metrics`)."""
from hoodie.metadata_table.metrics import MetadataMetrics
from hoodie.metadata_table.reader import FILES, KeyLocation, MetadataTableReader
from hoodie.metadata_table.records import BloomFilterInfo, ColumnStats, FileInfo, MetadataRecord, RecordLocation
from hoodie.metadata_table.stats import ActionFigures, MetadataTableStats, SliceStats, metadata_table_stats, open_metadata_table
from hoodie.metadata_table.validate import CHECKS, Difference, MetadataValidation, validate_metadata_table

__all__ = [
    "CHECKS",
    "FILES",
    "ActionFigures",
    "BloomFilterInfo",
    "Difference",
    "ColumnStats",
    "FileInfo",
    "KeyLocation",
    "MetadataMetrics",
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
