"""The metadata table (``.hoodie/metadata``, RFC-15): its records (:mod:`.records`, keys
in :mod:`.keys`, the writer schema in :mod:`.schema`) and the reader
(:class:`MetadataTableReader`): partitions and their files without listing storage,
column statistics, bloom filters and the record index."""
from hoodie.metadata_table.reader import KeyLocation, MetadataTableReader
from hoodie.metadata_table.records import BloomFilterInfo, ColumnStats, FileInfo, MetadataRecord, RecordLocation

__all__ = ["BloomFilterInfo", "ColumnStats", "FileInfo", "KeyLocation", "MetadataRecord", "MetadataTableReader", "RecordLocation"]
