"""The state of a table's metadata table, as ``hoodie metadata stats`` shows it.

:func:`metadata_table_stats` gathers, without merging any record: which metadata
partitions the data table calls complete (``hoodie.table.metadata.partitions``) or still
building (``...partitions.inflight``) and which exist on storage; the latest slice of
every file group of each partition (its base HFile's size and entry count, its log files
with their blocks and the records of their HFILE_DATA blocks); the metadata timeline's
last completed instant and its pending ones. Log files are walked block by block
(headers, and the trailer of each HFILE_DATA block's HFile), so the counts cost one read
per file and no record decoding. A metadata table that is not complete is described too:
that is when one wants to look at it.
"""
from __future__ import annotations

from dataclasses import dataclass

from hoodie.errors import TableError
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import BlockType, CorruptBlock
from hoodie.formats.log.reader import LogFileReader
from hoodie.layout import HOODIE_FOLDER, METADATA_FOLDER
from hoodie.storage.paths import relative, under
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable

__all__ = ["INFLIGHT_PARTITIONS", "MetadataTableStats", "SliceStats", "metadata_table_stats", "open_metadata_table"]

#: the data table's property naming the metadata partitions being built
INFLIGHT_PARTITIONS = "hoodie.table.metadata.partitions.inflight"


@dataclass(frozen=True)
class SliceStats:
    """The latest slice of one file group of a metadata-table partition."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    base_file_size: int | None
    base_records: int | None  # entries of the base HFile (its trailer's count)
    log_files: int
    log_bytes: int
    log_blocks: int  # well-framed blocks of every kind
    log_records: int  # entries of the HFILE_DATA blocks (before merging)
    corrupt_blocks: int


@dataclass(frozen=True)
class MetadataTableStats:
    """A metadata table: its partitions, latest slices and timeline."""

    path: str
    complete: tuple[str, ...]
    inflight: tuple[str, ...]
    on_storage: tuple[str, ...]
    slices: tuple[SliceStats, ...]
    last_completed: tuple[str, str] | None  # (instant time, action)
    pending: tuple[tuple[str, str, str], ...]  # (instant time, action, state)


def open_metadata_table(data_table: HoodieTable) -> HoodieTable:
    """The metadata table of ``data_table`` as a table of its own; a
    :class:`~hoodie.errors.TableError` saying so when it has none."""
    path = under(data_table.base_path, HOODIE_FOLDER, METADATA_FOLDER)
    if not HoodieTable.exists(path, data_table.storage):
        marker = relative(HOODIE_FOLDER, METADATA_FOLDER, HOODIE_FOLDER, "hoodie.properties")
        raise TableError(f"{data_table.base_path} has no metadata table (no {marker})")
    return HoodieTable.open(path, data_table.storage)


def metadata_table_stats(data_table: HoodieTable) -> MetadataTableStats:
    """What the metadata table of ``data_table`` holds now (committed files only)."""
    mdt = open_metadata_table(data_table)
    view = mdt.local_view()
    partitions = tuple(view.all_partition_paths())
    slices = tuple(
        _slice_stats(mdt, partition, slc)
        for partition in partitions
        for slc in sorted(view.latest_slices(partition), key=lambda s: s.file_id)
    )
    inflight = tuple(p for p in data_table.config.props.get(INFLIGHT_PARTITIONS, "").split(",") if p.strip())
    completed = mdt.timeline.completed()
    return MetadataTableStats(
        mdt.base_path,
        tuple(data_table.config.metadata_partitions),
        inflight,
        partitions,
        slices,
        (completed[-1].timestamp, completed[-1].action) if completed else None,
        tuple((i.timestamp, i.action, i.state.value) for i in mdt.timeline.pending()),
    )


def _slice_stats(mdt: HoodieTable, partition: str, slc: FileSlice) -> SliceStats:
    base, base_records = slc.base_file, None
    if base is not None:
        with HFileReader.open(mdt.storage, base.path) as hfile:
            base_records = hfile.entry_count
    blocks = records = corrupt = 0
    for log in slc.log_files:
        with LogFileReader(mdt.storage, log.path) as reader:
            for found in reader.scan():
                if isinstance(found, CorruptBlock):
                    corrupt += 1
                    continue
                blocks += 1
                if found.block_type is BlockType.HFILE_DATA:
                    where = f"{log.path} (block at byte {found.offset})"
                    records += HFileReader.from_bytes(reader.read_content(found), where).entry_count
    return SliceStats(
        partition,
        slc.file_id,
        slc.base_instant,
        base.file_name if base else None,
        base.size if base else None,
        base_records,
        len(slc.log_files),
        sum(lf.size for lf in slc.log_files),
        blocks,
        records,
        corrupt,
    )
