"""What one latest slice of a metadata-table file group is made of, in merge order: the
base HFile, then the HFILE_DATA and delete blocks of its visible log blocks, oldest first.

Both ways of reading a slice walk it through :func:`slice_parts`: the reader's record
merge (:meth:`~hoodie.metadata_table.reader.MetadataTableReader.merged_slice` and the
lookups) and the record index's bulk lookup over arrays (:mod:`.record_lookup`), so they
see the same blocks with the same errors, and :func:`record_scan` records what a read of
a slice met in the reader's metrics.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hoodie.errors import DamagedTableError, FormatError
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import HeaderKey, HFileDataBlock
from hoodie.formats.log.blocks import DeleteBlock
from hoodie.formats.log.reader import decode_block
from hoodie.metadata_table.metrics import SCAN, MetadataMetrics
from hoodie.storage.base import Storage
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.log_scan import METADATA_TABLE_BLOCKS, LogScanStats, scan_log

__all__ = ["HFilePart", "record_scan", "slice_parts"]


@dataclass(frozen=True)
class HFilePart:
    """An HFile of the slice (its base file, or a log block's content), open while the
    walk is at it, with the record schema its values are decoded with and its name for
    errors; ``is_base`` for the base file."""

    reader: HFileReader
    schema: str
    where: str
    is_base: bool


def slice_parts(
    storage: Storage, slc: FileSlice, visible: Callable[[str], bool], stats: LogScanStats, base_path: str
) -> Iterator[HFilePart | DeleteBlock]:
    """The parts of ``slc`` in merge order (``visible``: the instants whose log blocks
    count; ``stats`` learns what the log replay met). A damaged file is a
    :class:`~hoodie.errors.FormatError` naming it."""
    if slc.base_file is not None:
        with HFileReader.open(storage, slc.base_file.path) as reader:
            yield HFilePart(reader, _schema(reader, None, slc.base_file.path), slc.base_file.path, True)
    try:
        pending = scan_log(storage, slc.log_files, visible, stats, replayed=METADATA_TABLE_BLOCKS)
    except DamagedTableError as exc:
        raise FormatError(f"metadata table {base_path} is damaged: {exc}") from exc
    for p in pending:
        block = decode_block(p.path, p.info, p.content)
        if isinstance(block, HFileDataBlock):
            where = f"{p.path} (block at byte {p.info.offset})"
            reader = HFileReader.from_bytes(block.content, where)
            yield HFilePart(reader, _schema(reader, block.header.get(HeaderKey.SCHEMA), where), where, False)
        elif isinstance(block, DeleteBlock):
            yield block


def _schema(reader: HFileReader, header_schema: str | None, where: str) -> str:
    schema = reader.schema or header_schema
    if schema is None:
        raise FormatError(f"{where} has no record schema: neither in its HFile nor in its block header")
    return schema


def record_scan(metrics: MetadataMetrics, slc: FileSlice, seconds: float, base_blocks: int, log_blocks: int, records: int) -> None:
    """One read of ``slc`` in ``metrics`` (:data:`~.metrics.SCAN` by partition)."""
    metrics.record(
        SCAN, slc.partition_path, seconds,
        base_files=int(slc.base_file is not None), base_bytes=slc.base_file.size if slc.base_file is not None else 0,
        base_blocks=base_blocks, log_files=len(slc.log_files), log_bytes=sum(lf.size for lf in slc.log_files),
        log_blocks=log_blocks, records=records,
    )
