"""The state of a table's metadata table, as ``hoodie metadata stats`` shows it.

:func:`metadata_table_stats` gathers, without merging any record: which metadata
partitions the data table calls complete (``hoodie.table.metadata.partitions``) or still
building (``...partitions.inflight``) and which exist on storage; the latest slice of
every file group of each partition (its base HFile's size and entry count, its log files
with their blocks and the records of their HFILE_DATA blocks); the metadata timeline's
last completed instant and its pending ones; the data table's completed instants it lacks
(:func:`~hoodie.metadata_table.reader.unsynced_instants`: out of sync when any); what the
metadata timeline's completed instants recorded of their own work (:class:`ActionFigures`,
the figures Apache Hudi persists: write stats of its delta commits and compactions, files
its cleans and rollbacks deleted, the time each took). Log files are walked block by block
(headers, and the trailer of each HFILE_DATA block's HFile), so the counts cost one read
per file and no record decoding. A metadata table that is not complete is described too:
that is when one wants to look at it. The walk's reads are recorded as
:data:`~.metrics.SCAN` in the metrics it is given.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from hoodie.errors import TableError
from hoodie.formats.hfile import HFileReader
from hoodie.formats.log import BlockType, CorruptBlock
from hoodie.formats.log.reader import LogFileReader
from hoodie.layout import HOODIE_FOLDER, METADATA_FOLDER
from hoodie.metadata_table.metrics import SCAN, MetadataMetrics
from hoodie.metadata_table.reader import unsynced_instants
from hoodie.storage.paths import relative, under
from hoodie.table.file_group import FileSlice
from hoodie.table.fs_view import walk_partitions
from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.instant import Action, Instant

__all__ = ["INFLIGHT_PARTITIONS", "ActionFigures", "MetadataTableStats", "SliceStats", "metadata_table_stats", "open_metadata_table", "timeline_figures"]

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
class ActionFigures:
    """What the completed instants of one action on the metadata table's active timeline
    recorded of their work: the files, records and bytes their commits wrote (a
    compaction's log files and bytes merged too), the files their cleans or rollbacks
    deleted, and the milliseconds they took (write stats' scan, upsert and create times; a
    clean's or rollback's own time)."""

    action: str
    instants: int
    files_written: int = 0
    records_written: int = 0  # records and deletions
    bytes_written: int = 0
    log_files_compacted: int = 0
    log_bytes_compacted: int = 0
    files_deleted: int = 0
    milliseconds: int = 0


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
    history: tuple[ActionFigures, ...] = ()  # per action of the completed instants
    unsynced: tuple[str, ...] = ()  # completed data instants it lacks (out of sync when any)


def open_metadata_table(data_table: HoodieTable) -> HoodieTable:
    """The metadata table of ``data_table`` as a table of its own; a
    :class:`~hoodie.errors.TableError` saying so when it has none."""
    path = under(data_table.base_path, HOODIE_FOLDER, METADATA_FOLDER)
    if not HoodieTable.exists(path, data_table.storage):
        marker = relative(HOODIE_FOLDER, METADATA_FOLDER, HOODIE_FOLDER, "hoodie.properties")
        raise TableError(f"{data_table.base_path} has no metadata table (no {marker})")
    return HoodieTable.open(path, data_table.storage)


def metadata_table_stats(data_table: HoodieTable, metrics: MetadataMetrics | None = None) -> MetadataTableStats:
    """What the metadata table of ``data_table`` holds now (committed files only); the
    reads recorded in ``metrics``."""
    mdt = open_metadata_table(data_table)
    view = mdt.local_view()
    # the folders storage holds: a partition the data table no longer names may be gone
    # while the metadata timeline still names its files (Apache Hudi drops one so), which
    # the view would take for damage
    partitions = tuple(sorted(p for p, _ in walk_partitions(mdt.storage, mdt.base_path)))
    metrics = metrics if metrics is not None else MetadataMetrics()
    inflight = tuple(p for p in data_table.config.props.get(INFLIGHT_PARTITIONS, "").split(",") if p.strip())
    # the slices of the partitions the data table names, which readers read (one it names
    # and storage lacks is damage: its view says so)
    named = set(data_table.config.metadata_partitions) | set(inflight)
    slices = tuple(
        _slice_stats(mdt, partition, slc, metrics)
        for partition in sorted(named | set(partitions))
        if partition in named
        for slc in sorted(view.latest_slices(partition), key=lambda s: s.file_id)
    )
    completed = mdt.timeline.completed()
    return MetadataTableStats(
        mdt.base_path,
        tuple(data_table.config.metadata_partitions),
        inflight,
        partitions,
        slices,
        (completed[-1].timestamp, completed[-1].action) if completed else None,
        tuple((i.timestamp, i.action, i.state.value) for i in mdt.timeline.pending()),
        timeline_figures(mdt.timeline),
        tuple(unsynced_instants(data_table.timeline, mdt.timeline)),
    )


def timeline_figures(timeline: ActiveTimeline) -> tuple[ActionFigures, ...]:
    """The figures each action's completed instants on ``timeline`` recorded (archived
    instants are not counted), in the order the actions first appear."""
    by_action: dict[str, list[Instant]] = {}
    for instant in timeline.completed():
        by_action.setdefault(instant.action, []).append(instant)
    return tuple(_figures(timeline, action, instants) for action, instants in by_action.items())


def _figures(timeline: ActiveTimeline, action: str, instants: list[Instant]) -> ActionFigures:
    if action in (Action.CLEAN, Action.ROLLBACK):
        done = [timeline.clean_metadata(i) if action == Action.CLEAN else timeline.rollback_metadata(i) for i in instants]
        return ActionFigures(
            action, len(instants), files_deleted=sum(d.total_files_deleted for d in done), milliseconds=sum(d.time_taken_ms for d in done)
        )
    if action not in (Action.DELTA_COMMIT, Action.COMMIT):
        return ActionFigures(action, len(instants))
    stats = [s for i in instants for s in timeline.commit_metadata(i).write_stats()]
    return ActionFigures(
        action,
        len(instants),
        files_written=len(stats),
        records_written=sum(s.numWrites + s.numDeletes for s in stats),
        bytes_written=sum(s.totalWriteBytes for s in stats),
        log_files_compacted=sum(s.totalLogFilesCompacted for s in stats),
        log_bytes_compacted=sum(s.totalLogSizeCompacted for s in stats),
        milliseconds=sum(r.totalScanTime + r.totalUpsertTime + r.totalCreateTime for s in stats if (r := s.runtimeStats) is not None),
    )


def _slice_stats(mdt: HoodieTable, partition: str, slc: FileSlice, metrics: MetadataMetrics) -> SliceStats:
    started = time.perf_counter()
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
    log_bytes = sum(lf.size for lf in slc.log_files)
    # the base HFile's trailer only: no block of it is read
    metrics.record(
        SCAN, partition, time.perf_counter() - started, base_files=int(base is not None), base_bytes=base.size if base else 0,
        log_files=len(slc.log_files), log_bytes=log_bytes, log_blocks=blocks + corrupt, records=(base_records or 0) + records,
    )
    return SliceStats(
        partition,
        slc.file_id,
        slc.base_instant,
        base.file_name if base else None,
        base.size if base else None,
        base_records,
        len(slc.log_files),
        log_bytes,
        blocks,
        records,
        corrupt,
    )
