"""The metadata table (``.hoodie/metadata``, RFC-15): its records (:mod:`.records`, keys
in :mod:`.keys`, the writer schema in :mod:`.schema`)."""
from hoodie.metadata_table.records import BloomFilterInfo, ColumnStats, FileInfo, MetadataRecord, RecordLocation

__all__ = ["BloomFilterInfo", "ColumnStats", "FileInfo", "MetadataRecord", "RecordLocation"]
