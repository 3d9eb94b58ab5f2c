"""Writing a table's metadata table (``.hoodie/metadata``) as Apache Hudi 0.15 does.

:class:`MetadataWriter` owns three steps:

* **create and initialise** (:meth:`MetadataWriter.initialise`): the metadata table's own
  ``hoodie.properties`` (merge-on-read, HFile base files, key ``key``), then each enabled
  partition from ONE listing of the data table (its local view as of its latest completed
  instant): a metadata-only delta commit at ``<latest completed instant>010`` (``...011``,
  ... for the next partitions; ``00000000000000010`` on a table without any instant),
  one base HFile per file group holding its records and an empty first log file, as Java
  lays them out. The data table's ``hoodie.table.metadata.partitions.inflight`` names a
  partition while it is built, ``hoodie.table.metadata.partitions`` once it is complete
  (written with the backup protocol of :mod:`hoodie.table.properties_file`), so a reader
  never trusts a partition half built;
* **a delta commit at a data instant** (:meth:`MetadataWriter.apply`): the records of one
  data action, routed to the file group their key hashes to, written as ONE new log file
  per touched file group (its next version on the latest slice) holding one HFILE_DATA
  block; ``deltacommit`` requested, inflight (naming the log files it will write, so that
  a crash leaves them findable), completed with write stats. A delta commit already on
  the metadata timeline at that instant (a data action completed again after a crash), or
  a pending one at an older instant, is undone first (:mod:`.undo`);
* **delete** (:func:`delete_metadata_table`): the partitions cleared from the data table's
  properties first, then the folder, so no reader ever trusts a half-deleted table.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from hoodie.errors import TableError
from hoodie.formats.hfile import HFileSettings, encode_hfile
from hoodie.formats.log import DeleteBlock, DeleteRecord, HeaderKey, HFileDataBlock, encode_block
from hoodie.layout import (
    HOODIE_FOLDER,
    METADATA_FOLDER,
    PARTITION_METAFILE_PREFIX,
    LogFileName,
    base_file_name,
    parse_log_file_name,
    partition_metadata_content,
    write_token,
)
from hoodie.metadata_table.conversion import MdtRecords
from hoodie.metadata_table.keys import file_group_indices
from hoodie.metadata_table.metrics import INITIALIZE, MetadataMetrics
from hoodie.metadata_table.records import MetadataRecord, encode_value, is_deletion
from hoodie.metadata_table.schema import METADATA_RECORD_SCHEMA_JSON
from hoodie.metadata_table.settings import FILES, PARTITION_ORDER, MetadataSettings, file_group_ids
from hoodie.metadata_table.stats import INFLIGHT_PARTITIONS
from hoodie.metadata_table.undo import undo_delta_commit, undo_pending
from hoodie.storage.paths import relative, under
from hoodie.table.properties_file import load_table_config, store_table_config
from hoodie.table.table import HoodieTable
from hoodie.timeline.active import ActiveTimeline
from hoodie.timeline.commit_metadata import CommitMetadata, RuntimeStats, WriteStat
from hoodie.timeline.instant import Action, Instant, State

__all__ = ["COMPLETE_PARTITIONS", "MetadataWriter", "delete_metadata_table", "keeps_metadata_table", "metadata_path"]

log = logging.getLogger(__name__)

#: the data table's property naming the complete metadata partitions
COMPLETE_PARTITIONS = "hoodie.table.metadata.partitions"
#: what :meth:`MetadataWriter.initialise` is given: the records that build a partition at an instant
Builder = Callable[[str, str], MdtRecords]
#: told each partition built: (partition, how many so far, how many in all)
Progress = Callable[[str, int, int], None]
#: the instant a table without any completed instant initialises its metadata table at
SOLO_COMMIT_TIMESTAMP = "00000000000000"
_INIT_SUFFIX = 10  # Java: the n-th partition built at <instant><010 + n>
_OPERATION = "UPSERT_PREPPED"
_INIT_OPERATION = "BULK_INSERT"


def metadata_path(data_table: HoodieTable) -> str:
    return under(data_table.base_path, HOODIE_FOLDER, METADATA_FOLDER)


def metadata_table_properties(data_table: HoodieTable) -> dict[str, str]:
    """The metadata table's ``hoodie.properties``, as Apache Hudi 0.15 writes them."""
    return {
        "hoodie.table.name": f"{data_table.name}_metadata",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.table.recordkey.fields": "key",
        "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        "hoodie.populate.meta.fields": "false",
        "hoodie.datasource.write.drop.partition.columns": "false",
    }


def set_partition_state(data_table: HoodieTable, complete: Collection[str], inflight: Collection[str]) -> HoodieTable:
    """Record which metadata partitions are complete and which are being built in the data
    table's ``hoodie.properties`` (both keys always written, as Java does); the table
    reloaded, its completion hook kept."""
    current = load_table_config(data_table.storage, data_table.meta_path)
    updated = current.with_updates({COMPLETE_PARTITIONS: ",".join(sorted(set(complete))), INFLIGHT_PARTITIONS: ",".join(sorted(set(inflight)))})
    store_table_config(updated, data_table.storage, data_table.meta_path)
    return data_table.reload()


def keeps_metadata_table(data_table: HoodieTable) -> bool:
    """Whether the data table's properties name metadata partitions (complete or being
    built) or it has a metadata table folder."""
    props = data_table.config.props
    return COMPLETE_PARTITIONS in props or INFLIGHT_PARTITIONS in props or data_table.storage.exists(metadata_path(data_table))


def delete_metadata_table(data_table: HoodieTable) -> HoodieTable:
    """Drop the metadata table: the data table's properties stop naming its partitions
    first (readers stop trusting it), then its folder goes. The table, reloaded."""
    if not keeps_metadata_table(data_table):
        return data_table
    folder = metadata_path(data_table)
    updated = data_table.config.with_updates({COMPLETE_PARTITIONS: None, INFLIGHT_PARTITIONS: None})
    store_table_config(updated, data_table.storage, data_table.meta_path)
    data_table.storage.delete_dir(folder)
    for key in [k for k in _WRITTEN_PARTITIONS if k[0] == folder]:
        del _WRITTEN_PARTITIONS[key]  # one built again may reuse its instant times
    return data_table.reload()


def written_partitions(mdt: ActiveTimeline) -> set[str]:
    """The partitions the completed delta commits and compactions of the metadata table
    whose timeline is ``mdt`` wrote to. A completed instant never changes: each call reads
    only the instants completed since the last in this process."""
    completed = mdt.completed([Action.DELTA_COMMIT, Action.COMMIT])
    todo = [i for i in completed if (mdt.base_path, i.timestamp, i.action) not in _WRITTEN_PARTITIONS]
    for instant, meta in mdt.commit_metadata_of(todo):
        if len(_WRITTEN_PARTITIONS) >= _WRITTEN_PARTITIONS_KEPT:
            _WRITTEN_PARTITIONS.pop(next(iter(_WRITTEN_PARTITIONS)))  # the oldest entry
        _WRITTEN_PARTITIONS[(mdt.base_path, instant.timestamp, instant.action)] = frozenset(meta.partition_to_write_stats)
    written: set[str] = set()
    for instant in completed:
        written |= _WRITTEN_PARTITIONS.get((mdt.base_path, instant.timestamp, instant.action), frozenset())
    return written


# what written_partitions found, by (metadata table, instant time, action); dropped with
# the metadata table by delete_metadata_table
_WRITTEN_PARTITIONS: dict[tuple[str, str, str], frozenset[str]] = {}
_WRITTEN_PARTITIONS_KEPT = 16_384


@dataclass(frozen=True)
class _LogWrite:
    """One new log file of a delta commit: where it goes and what it holds."""

    partition: str
    file_id: str
    slice_instant: str
    name: LogFileName
    data: bytes
    records: int
    base_file: str
    log_files: tuple[str, ...]  # the slice's earlier log files

    def stat(self) -> WriteStat:
        return WriteStat(
            fileId=self.file_id,
            path=relative(self.partition, self.name.name),
            partitionPath=self.partition,
            prevCommit=self.slice_instant,
            numWrites=self.records,
            numUpdateWrites=self.records,
            totalWriteBytes=len(self.data),
            fileSizeInBytes=len(self.data),
            runtimeStats=RuntimeStats(),
            logVersion=self.name.version,
            logOffset=0,
            baseFile=self.base_file,
            logFiles=[*self.log_files, self.name.name],
        )


class MetadataWriter:
    """Writes the metadata table of ``data_table`` with ``settings``; each partition it
    initialises is recorded in ``metrics`` (its own when not given)."""

    def __init__(self, data_table: HoodieTable, settings: MetadataSettings, metrics: MetadataMetrics | None = None) -> None:
        self.data_table = data_table
        self.settings = settings
        self.metrics = metrics if metrics is not None else MetadataMetrics()
        self.storage = data_table.storage
        self.path = metadata_path(data_table)
        self.hfile = HFileSettings(block_size=settings.hfile_block_size)

    # --- the metadata table as a table -----------------------------------------------------
    def exists(self) -> bool:
        return HoodieTable.exists(self.path, self.storage)

    def open(self) -> HoodieTable:
        return HoodieTable.open(self.path, self.storage)

    def _open_or_create(self) -> HoodieTable:
        if self.exists():
            return self.open()
        return HoodieTable.create(self.path, metadata_table_properties(self.data_table), self.storage)

    # --- initialisation ----------------------------------------------------------------------
    def initialise(
        self, partitions: Collection[str], listing: Mapping[str, Mapping[str, int]], build: Builder, on_built: Progress | None = None
    ) -> HoodieTable:
        """Build the metadata ``partitions`` not built yet from ``listing`` (each data
        partition's committed files and sizes as of the data table's latest completed
        instant); ``build(partitions, instant)`` gives their records; ``on_built(partition,
        done, total)`` follows the progress. The data table, reloaded, with the partitions
        complete."""
        table = self.data_table
        if _unfinished(table) or (self.exists() and FILES not in table.config.metadata_partitions):
            # an initialisation that did not finish is started over, from nothing
            log.warning("metadata table of %s: an unfinished initialisation is started over", table.base_path)
            table = delete_metadata_table(table)
        done = set(table.config.metadata_partitions)
        todo = [p for p in PARTITION_ORDER if p in partitions and p not in done]
        if not todo:
            return table
        latest = table.timeline.completed()
        base_instant = latest[-1].timestamp if latest else SOLO_COMMIT_TIMESTAMP
        mdt = self._open_or_create()
        taken = {i.timestamp for i in mdt.timeline.instants}
        offset = 0
        for partition in todo:
            while f"{base_instant}{_INIT_SUFFIX + offset:03d}" in taken:
                offset += 1  # a partition built earlier took this one
            instant = f"{base_instant}{_INIT_SUFFIX + offset:03d}"
            taken.add(instant)
            table = set_partition_state(table, done, [partition])
            with self.metrics.timed(INITIALIZE, partition) as amounts:
                records = build(partition, instant).get(partition, [])
                groups = self._bulk_insert(mdt, partition, instant, records, listing)
                amounts.update(records=len(records), file_groups=groups)
            done.add(partition)
            table = set_partition_state(table, done, [])
            mdt = mdt.reload()
            if on_built is not None:
                on_built(partition, todo.index(partition) + 1, len(todo))
        self.data_table = table
        return table

    def _bulk_insert(self, mdt: HoodieTable, partition: str, instant: str, records: list[MetadataRecord], listing: Mapping[str, Mapping[str, int]]) -> int:
        """One metadata-only delta commit laying out ``partition``: a base HFile for each
        file group that holds records and an empty first log file for every file group.
        The number of file groups."""
        folder = under(self.path, partition)
        count = self.settings.file_group_count(partition, len(records))
        ids = file_group_ids(partition, count)
        groups = _route(records, count)
        writes: list[tuple[str, bytes]] = []
        stats: list[WriteStat] = []
        for i, file_id in enumerate(ids):
            mine = groups.get(i, [])
            if mine:
                name = base_file_name(file_id, write_token(i, 0, 0), instant, ".hfile")
                data = self._hfile(mine)
                writes.append((name, data))
                stats.append(WriteStat(
                    fileId=file_id, path=relative(partition, name), partitionPath=partition, numWrites=len(mine),
                    numInserts=len(mine), totalWriteBytes=len(data), fileSizeInBytes=len(data), runtimeStats=RuntimeStats(),
                ))
            # Java opens every file group with an empty log file: a delete block of no keys
            empty_log = LogFileName(file_id, instant, 1, write_token(0, 0, 0))
            writes.append((empty_log.name, encode_block(DeleteBlock.create([], instant))))
        metadata = CommitMetadata({partition: stats} if stats else {}, _INIT_OPERATION, {"schema": METADATA_RECORD_SCHEMA_JSON})
        timeline = mdt.timeline
        requested = timeline.create_requested(Instant(instant, Action.DELTA_COMMIT, State.REQUESTED))
        inflight = timeline.transition_to_inflight(requested, _planned(metadata, partition, [n for n, _ in writes]).to_json_bytes())
        self.storage.makedirs(folder)
        meta_file = under(folder, PARTITION_METAFILE_PREFIX)
        if not self.storage.exists(meta_file):
            self.storage.create_new(meta_file, partition_metadata_content(instant, partition))
        for name, data in writes:
            self.storage.create_new(under(folder, name), data, durable=False)
        timeline.transition_to_completed(inflight, metadata.to_json_bytes())
        log.info("metadata table of %s: %s built at %s (%d records, %d file groups)", self.data_table.base_path, partition, instant, len(records), count)
        return count

    # --- delta commits -----------------------------------------------------------------------
    def apply(self, instant: str, records: MdtRecords) -> HoodieTable:
        """The delta commit of data ``instant`` applying ``records`` to the complete
        metadata partitions (records of other partitions are dropped); the metadata table
        after it."""
        mdt = self.open()
        undo_pending(mdt, instant, self.storage)
        mdt = mdt.reload()
        complete = set(self.data_table.config.metadata_partitions)
        view = mdt.local_view()
        writes: list[_LogWrite] = []
        for partition in sorted(records):
            if partition not in complete or not records[partition]:
                continue
            slices = sorted(view.latest_slices(partition), key=lambda s: s.file_id)
            if not slices:
                raise TableError(f"metadata table {self.path}: partition {partition!r} has no file group (hoodie.table.metadata.partitions names it)")
            raw = [parse_log_file_name(f.name) for f in view.partition_files(partition)]
            for i, mine in sorted(_route(records[partition], len(slices)).items()):
                slc = slices[i]
                versions = [n.version for n in raw if n is not None and n.file_id == slc.file_id and n.instant == slc.base_instant]
                name = LogFileName(slc.file_id, slc.base_instant, max(versions, default=0) + 1, write_token(len(writes), 1, 0))
                header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: METADATA_RECORD_SCHEMA_JSON}
                values = [r for r in mine if not is_deletion(r)]
                # keys the write deleted (record index) follow in a delete block, as Java writes them
                gone = [DeleteRecord(r.key, partition) for r in mine if is_deletion(r)]
                data = encode_block(HFileDataBlock(self._hfile(values), header)) if values else b""
                if gone:
                    data += encode_block(DeleteBlock.create(gone, instant, METADATA_RECORD_SCHEMA_JSON))
                writes.append(_LogWrite(
                    partition, slc.file_id, slc.base_instant, name, data, len(mine),
                    slc.base_file.file_name if slc.base_file else "", tuple(lf.file_name for lf in slc.log_files),
                ))
        stats: dict[str, list[WriteStat]] = {}
        for w in writes:
            stats.setdefault(w.partition, []).append(w.stat())
        metadata = CommitMetadata(stats, _OPERATION, {"schema": METADATA_RECORD_SCHEMA_JSON})
        timeline = mdt.timeline
        requested = timeline.create_requested(Instant(instant, Action.DELTA_COMMIT, State.REQUESTED))
        # the inflight instant names every file the delta commit writes: what a crash
        # leaves behind is found without listing (undo.py)
        inflight = timeline.transition_to_inflight(requested, metadata.to_json_bytes())
        for w in writes:
            self.storage.create_new(under(self.path, w.partition, w.name.name), w.data, durable=False)
        timeline.transition_to_completed(inflight, metadata.to_json_bytes())
        return mdt.reload()

    def undo(self, instant: str) -> bool:
        """Undo the metadata table's delta commit at data ``instant``, completed or not:
        its files, then its instant. False when it has none."""
        mdt = self.open()
        for inst in mdt.timeline.instants:
            if inst.timestamp == instant and inst.action == Action.DELTA_COMMIT:
                undo_delta_commit(mdt, inst, self.storage)
                return True
        return False

    def _hfile(self, records: list[MetadataRecord]) -> bytes:
        entries = sorted((r.key, encode_value(r)) for r in records)
        return encode_hfile(entries, self.hfile, schema=METADATA_RECORD_SCHEMA_JSON)


def _unfinished(table: HoodieTable) -> bool:
    """Whether the data table names a metadata partition still being built."""
    return bool(table.config.props.get(INFLIGHT_PARTITIONS, "").strip(", "))


def _route(records: list[MetadataRecord], count: int) -> dict[int, list[MetadataRecord]]:
    """The records of each file group (by the index their key hashes to)."""
    out: dict[int, list[MetadataRecord]] = {}
    for r, i in zip(records, file_group_indices([r.key for r in records], count).tolist()):
        out.setdefault(i, []).append(r)
    return out


def _planned(metadata: CommitMetadata, partition: str, names: list[str]) -> CommitMetadata:
    """``metadata`` naming every file a delta commit will write (the empty logs too)."""
    stats = [WriteStat(fileId="", path=relative(partition, n), partitionPath=partition) for n in names]
    return CommitMetadata({partition: stats}, metadata.operation_type, metadata.extra_metadata)
