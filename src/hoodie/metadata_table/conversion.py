"""One data action, or the first listing of a table, as metadata-table records: what
Apache Hudi 0.15's ``HoodieTableMetadataUtil`` makes of a completed instant.

:func:`records_for_action` takes the completed content of a commit, delta commit, replace
commit, compaction (completed as a commit), clean, rollback or restore;
:func:`records_for_listing` the files of every partition, for initialisation. Both give
:data:`MdtRecords`: for each metadata-table partition asked for, one record per key.

``files`` (types 1 and 2), as Hudi 0.15 writes them:

* a write (commit, delta commit, replace commit, compaction): ``__all_partitions__`` naming
  every partition it wrote to (``.`` for a non-partitioned table), and for each one the
  files it wrote with their sizes (a file written twice: the larger size, as sizes only
  grow; CDC files too). A replace commit's replaced file groups stay listed: their files
  leave the listing when the cleaner deletes them;
* a clean: each partition's deleted files (``deletePathPatterns``) as deletions; a
  partition the clean deleted whole (``isPartitionDeleted``) leaves ``__all_partitions__``;
* a rollback, and each rollback of a restore: the files it deleted as deletions, and with
  their sizes the log files it appended rollback command blocks in and those the undone
  write had appended to (they stay on storage); no partition list.

``column_stats`` and ``bloom_filters`` (:mod:`.file_stats`): the statistics of every base
and log file a write wrote and the bloom filter of every base file; tombstones of both
for the base files a clean, rollback or restore deleted. ``record_index``
(:mod:`.record_keys`): the location of every key a write inserted and the deletion of
every key it deleted (a type-5 record without payload: a delete-block entry).
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from hoodie.errors import TableError
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.metadata_table.file_stats import base_file_records, columns_to_index, deleted_bloom_filter, deleted_column_stats, log_file_stats
from hoodie.metadata_table.keys import ALL_PARTITIONS_KEY, partition_identifier
from hoodie.metadata_table.record_keys import record_index_of_listing, record_index_of_write
from hoodie.metadata_table.records import TYPE_FILE_LIST, TYPE_PARTITION_LIST, FileInfo, MetadataRecord
from hoodie.metadata_table.settings import BLOOM_FILTERS, COLUMN_STATS, FILES, RECORD_INDEX, MetadataSettings
from hoodie.storage.paths import check_name, under
from hoodie.table.table import HoodieTable
from hoodie.timeline import avro_metadata as avro
from hoodie.timeline.action_metadata import CleanMetadata
from hoodie.timeline.commit_metadata import CommitMetadata
from hoodie.timeline.instant import Action, Instant
from hoodie.timeline.rollback_metadata import RestoreMetadata, RollbackMetadata

__all__ = ["MdtRecords", "records_for_action", "records_for_listing"]

#: metadata-table partition → its records, one per key
MdtRecords = dict[str, list[MetadataRecord]]

#: completed actions that change no file of the table: no metadata-table records
_NO_FILES = (Action.SAVEPOINT, Action.SCHEMA_COMMIT, Action.INDEXING)
_WRITES = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING)


def records_for_action(
    data_table: HoodieTable, instant: Instant, content: bytes, partitions: Collection[str], settings: MetadataSettings
) -> MdtRecords:
    """The records of the completed data ``instant`` (``content``: its completed
    metadata) for each of the metadata-table ``partitions``; ``data_table`` is the table
    the instant completes in (before or after its completion)."""
    source = f"{instant.action} {instant.timestamp}"
    action = instant.action
    if action in _WRITES:
        commit = CommitMetadata.decode(content, instant.timestamp, completed=True)
        return _of_write(data_table, instant.timestamp, commit, partitions, settings)
    if action == Action.CLEAN:
        clean = CleanMetadata.from_avro(avro.decode(content, source), source)
        deleted = {p: list(pm.delete_path_patterns) for p, pm in clean.partition_metadata.items()}
        out = _of_deleted_files(data_table, instant.timestamp, deleted, partitions, settings, source)
        return _only(partitions, {**out, FILES: _files_of_clean(clean)})
    if action in (Action.ROLLBACK, Action.RESTORE):
        if action == Action.ROLLBACK:
            undone = [RollbackMetadata.from_avro(avro.decode(content, source), source)]
        else:
            restore = RestoreMetadata.from_avro(avro.decode(content, source), source)
            undone = [m for t in sorted(restore.rollbacks) for m in restore.rollbacks[t]]
        deleted = {}
        for rollback in undone:
            for partition, pm in rollback.partition_metadata.items():
                deleted.setdefault(partition, []).extend(_name(path, source) for path in pm.success_delete_files)
        out = _of_deleted_files(data_table, instant.timestamp, deleted, partitions, settings, source)
        return _only(partitions, {**out, FILES: _files_of_rollbacks(undone, source)})
    if action in _NO_FILES:
        return {}
    raise TableError(f"{source} of {data_table.base_path}: no metadata-table records for a {action!r} action")


def records_for_listing(
    data_table: HoodieTable,
    files: Mapping[str, Mapping[str, int]],
    partitions: Collection[str],
    settings: MetadataSettings,
    instant: str,
) -> MdtRecords:
    """The records that initialise the metadata-table ``partitions`` from one listing:
    ``files`` maps each data partition ("" for a non-partitioned table's root) to its
    committed files and their sizes, as of the data ``instant`` (the latest completed
    one). A log file's statistics are those of its blocks of completed instants."""
    out: MdtRecords = {}
    if FILES in partitions:
        out[FILES] = [
            _partition_list(files),
            *(_file_list(partition, sizes) for partition, sizes in sorted(files.items())),
        ]
    if COLUMN_STATS in partitions or BLOOM_FILTERS in partitions:
        columns = _columns(data_table, settings, None) if COLUMN_STATS in partitions else None
        stats: list[MetadataRecord] = []
        blooms: list[MetadataRecord] = []
        completed = {i.timestamp for i in data_table.timeline.completed()}
        for partition, sizes in sorted(files.items()):
            for name in sorted(sizes):
                path = under(data_table.base_path, partition, name, source="the listing")
                if parse_base_file_name(name) is not None:
                    found, bloom = base_file_records(data_table.storage, path, partition, name, instant, columns, BLOOM_FILTERS in partitions)
                    stats += found
                    blooms += [bloom] if bloom is not None else []
                elif columns and parse_log_file_name(name) is not None:
                    stats += log_file_stats(data_table.storage, path, partition, name, completed, columns)
        out.update(_only(partitions, {COLUMN_STATS: stats, BLOOM_FILTERS: blooms}))
    if RECORD_INDEX in partitions:
        out[RECORD_INDEX] = record_index_of_listing(data_table, files)
    return out


def _columns(table: HoodieTable, settings: MetadataSettings, schema: str | None) -> tuple[str, ...]:
    """The columns of column_stats: the configured ones, or those of the writer's schema
    (``schema``, else the table's latest)."""
    return columns_to_index(settings.column_stats_columns, schema or table.latest_avro_schema(), table.config.populate_meta_fields)


def _of_write(table: HoodieTable, instant: str, commit: CommitMetadata, partitions: Collection[str], settings: MetadataSettings) -> MdtRecords:
    out: MdtRecords = {}
    if FILES in partitions:
        out[FILES] = _files_of_write(commit)
    if COLUMN_STATS in partitions or BLOOM_FILTERS in partitions:
        columns = _columns(table, settings, commit.schema) if COLUMN_STATS in partitions else None
        stats: list[MetadataRecord] = []
        blooms: list[MetadataRecord] = []
        for partition, written in commit.partition_to_write_stats.items():
            for stat in {w.path: w for w in written if w.path}.values():  # a file appended to twice: once
                path = under(table.base_path, stat.path, source=f"commit {instant}")
                if parse_base_file_name(stat.file_name) is not None:
                    found, bloom = base_file_records(table.storage, path, partition, stat.file_name, instant, columns, BLOOM_FILTERS in partitions)
                    stats += found
                    blooms += [bloom] if bloom is not None else []
                elif columns and parse_log_file_name(stat.file_name) is not None:
                    stats += log_file_stats(table.storage, path, partition, stat.file_name, {instant}, columns)
        out.update(_only(partitions, {COLUMN_STATS: stats, BLOOM_FILTERS: blooms}))
    if RECORD_INDEX in partitions:
        out[RECORD_INDEX] = record_index_of_write(table, instant, commit)
    return out


def _of_deleted_files(
    table: HoodieTable, instant: str, deleted: Mapping[str, list[str]], partitions: Collection[str], settings: MetadataSettings, source: str
) -> MdtRecords:
    """Column statistics and bloom filters of the deleted base files, as tombstones."""
    out: MdtRecords = {}
    bases = [(p, check_name(n, source)) for p, names in deleted.items() for n in dict.fromkeys(names) if parse_base_file_name(n) is not None]
    if COLUMN_STATS in partitions:
        columns = _columns(table, settings, None)
        out[COLUMN_STATS] = [r for p, n in bases for r in deleted_column_stats(p, n, columns)]
    if BLOOM_FILTERS in partitions:
        out[BLOOM_FILTERS] = [deleted_bloom_filter(p, n, instant) for p, n in bases]
    return out


# --- files -----------------------------------------------------------------------------------


def _partition_list(partitions: Iterable[str], deleted: bool = False) -> MetadataRecord:
    names = {partition_identifier(p): FileInfo(0, deleted) for p in partitions}
    return MetadataRecord(ALL_PARTITIONS_KEY, TYPE_PARTITION_LIST, names)


def _file_list(partition: str, added: Mapping[str, int], deleted: Iterable[str] = ()) -> MetadataRecord:
    """``HoodieMetadataPayload.createPartitionFilesRecord``: a deletion wins over an
    addition of the same name."""
    entries = {name: FileInfo(size, False) for name, size in added.items()}
    entries.update((name, FileInfo(0, True)) for name in deleted)
    return MetadataRecord(partition_identifier(partition), TYPE_FILE_LIST, entries)


def _files_of_write(commit: CommitMetadata) -> list[MetadataRecord]:
    out = [_partition_list(commit.partition_to_write_stats)]
    for partition, stats in commit.partition_to_write_stats.items():
        sizes: dict[str, int] = {}
        for stat in stats:
            if not stat.path:  # a stat of an empty partition: no file
                continue
            # a file appended to twice within the commit: the sizes only grow
            sizes[stat.file_name] = max(sizes.get(stat.file_name, 0), stat.fileSizeInBytes)
            for cdc_path, cdc_size in (stat.cdcStats or {}).items():
                sizes[cdc_path.rsplit("/", 1)[-1]] = cdc_size
        out.append(_file_list(partition, sizes))
    return out


def _files_of_clean(clean: CleanMetadata) -> list[MetadataRecord]:
    out = [_file_list(p, {}, pm.delete_path_patterns) for p, pm in clean.partition_metadata.items()]
    gone = [p for p, pm in clean.partition_metadata.items() if pm.is_partition_deleted]
    if gone:
        out.append(_partition_list(gone, deleted=True))
    return out


def _files_of_rollbacks(rollbacks: Iterable[RollbackMetadata], source: str) -> list[MetadataRecord]:
    deleted: dict[str, list[str]] = {}
    appended: dict[str, dict[str, int]] = {}
    for rollback in rollbacks:
        for partition, pm in rollback.partition_metadata.items():
            # paths as Java records them (full paths): the metadata table keeps names
            names = [_name(path, source) for path in pm.success_delete_files]
            if names:
                deleted.setdefault(partition, []).extend(names)
            # the log files it appended command blocks to, and those the undone write
            # appended to (still on storage, their blocks neutralised), with their sizes
            for path, size in [*pm.rollback_log_files.items(), *pm.log_files_from_failed_commit.items()]:
                logs = appended.setdefault(partition, {})
                name = _name(path, source)
                logs[name] = max(logs.get(name, 0), size)
    partitions = list(dict.fromkeys([*deleted, *appended]))
    return [_file_list(p, appended.get(p, {}), deleted.get(p, ())) for p in partitions]


def _name(path: str, source: str) -> str:
    return check_name(path.rsplit("/", 1)[-1], source)


def _only(partitions: Collection[str], records: MdtRecords) -> MdtRecords:
    return {p: rs for p, rs in records.items() if p in partitions}
