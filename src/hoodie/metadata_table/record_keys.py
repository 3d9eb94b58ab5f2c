"""The ``record_index`` records of a write, or of a table's first listing, as Apache Hudi
0.15 keeps them: the location (partition, file group, instant as epoch milliseconds) of
every key a write inserted, a deletion of every key it deleted, nothing for a key
updated in place (its file group does not change).

Hudi learns these from its write statuses; hoodie's commits do not carry keys, so they
are derived from the files the commit wrote, which costs reading record keys:

* a new base file of a new file group: its keys are inserts;
* a new base file of an existing file group (a copy-on-write merge, inserts packed into a
  small file): its keys against those of the group's previous base file: new keys are
  inserts, missing ones deletions (one ``_hoodie_record_key`` column read per file);
* a log file: the keys of its delete blocks of the instant are deletions; its data
  blocks' keys are inserts only when the write stat counts inserts, and then only those
  the slice did not hold before (base file and earlier blocks);
* a replace commit: the keys of each replaced file group's latest base file that the
  commit did not write again are deletions;
* a compaction changes no location: no records.

A deletion is a record of type 5 without a payload (``payload is None``): the writer puts
such keys in a delete block, as Java's ``EmptyHoodieRecordPayload`` does.

From a listing: every key of the latest slice of every live file group (base file keys,
then the data and delete blocks of completed instants in its log files, in order),
located at the slice's base instant.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone

from hoodie.errors import DamagedTableError
from hoodie.formats.log.blocks import AvroDataBlock, DeleteBlock, ParquetDataBlock
from hoodie.formats.log.reader import iter_log_file
from hoodie.formats.meta_columns import RECORD_KEY
from hoodie.formats.parquet import read_record_keys
from hoodie.layout import InstantTime, parse_base_file_name, parse_instant, parse_log_file_name
from hoodie.metadata_table.records import TYPE_RECORD_INDEX, MetadataRecord, RecordLocation
from hoodie.storage.paths import under
from hoodie.table.file_group import FileGroup
from hoodie.table.table import HoodieTable
from hoodie.timeline.commit_metadata import NULL_COMMIT, CommitMetadata
from hoodie.timeline.instant import Action

__all__ = ["instant_millis", "record_index_of_listing", "record_index_of_write"]

_COMPACTIONS = ("COMPACT", "LOG_COMPACT")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def instant_millis(instant: str, utc: bool) -> int:
    """An instant time as epoch milliseconds, read in UTC or in this process's zone (the
    data table's ``hoodie.table.timeline.timezone``), as Java's writer stores it."""
    when = parse_instant(instant)
    if not utc:  # the digits are a local wall-clock time
        when = when.replace(tzinfo=None).astimezone()
    return (when - _EPOCH) // timedelta(milliseconds=1)


def _utc(table: HoodieTable) -> bool:
    return table.config.props.get("hoodie.table.timeline.timezone", "LOCAL").upper() == "UTC"


def _location(key: str, partition: str, file_id: str, millis: int) -> MetadataRecord:
    return MetadataRecord(key, TYPE_RECORD_INDEX, RecordLocation(partition, file_id, millis))


def _deletion(key: str) -> MetadataRecord:
    return MetadataRecord(key, TYPE_RECORD_INDEX, None)


def record_index_of_write(table: HoodieTable, instant: str, commit: CommitMetadata) -> list[MetadataRecord]:
    """The record-index records of the write ``commit`` at ``instant`` (before or after
    the data table completes it)."""
    if commit.operation_type.upper() in _COMPACTIONS:
        return []
    storage, millis = table.storage, instant_millis(instant, _utc(table))
    inserted: dict[str, tuple[str, str]] = {}
    deleted: set[str] = set()
    groups: dict[str, dict[str, FileGroup]] = {}

    def group(partition: str, file_id: str) -> FileGroup | None:
        if partition not in groups:
            view = table.view()
            groups[partition] = {g.file_id: g for g in [*view.file_groups(partition), *view.replaced_file_groups(partition)]}
        return groups[partition].get(file_id)

    for partition, stats in commit.partition_to_write_stats.items():
        for stat in {s.path: s for s in stats if s.path}.values():
            path = under(table.base_path, stat.path, source=f"commit {instant}")
            base = parse_base_file_name(stat.file_name)
            if base is not None:
                keys = set(read_record_keys(storage, path).to_pylist())
                before: set[str] = set()
                if stat.prevCommit not in ("", NULL_COMMIT):
                    previous = _previous_base(table, group(partition, stat.fileId), stat.prevCommit, stat.path, instant)
                    before = set(read_record_keys(storage, previous).to_pylist())
                inserted.update((k, (partition, stat.fileId)) for k in keys - before)
                deleted.update(before - keys)
            elif parse_log_file_name(stat.file_name) is not None:
                data, gone = _log_keys(table, [path], {instant})
                deleted.update(gone)
                if stat.numInserts > 0:
                    held = _slice_keys_before(table, partition, stat.baseFile, stat.logFiles or [], path, instant)
                    inserted.update((k, (partition, stat.fileId)) for k in data - held)
    for partition, file_ids in commit.replaced_file_ids().items():
        for file_id in file_ids:
            replaced = group(partition, file_id)
            latest = _latest_base(replaced, instant)
            if latest is not None:
                deleted.update(read_record_keys(storage, latest).to_pylist())
    out = [_location(k, p, f, millis) for k, (p, f) in sorted(inserted.items())]
    out += [_deletion(k) for k in sorted(deleted - inserted.keys())]
    return out


def _previous_base(table: HoodieTable, group: FileGroup | None, prev_commit: str, written: str, instant: str) -> str:
    for slc in group.slices if group is not None else ():
        if slc.base_file is not None and slc.base_instant == prev_commit:
            return slc.base_file.path
    raise DamagedTableError(
        f"{table.base_path}: commit {instant} rewrote {written} from the base file of instant {prev_commit}, "
        "which the table no longer holds: its record-index changes cannot be told"
    )


def _latest_base(group: FileGroup | None, instant: str) -> str | None:
    """The newest base file of a group written before ``instant``."""
    if group is None:
        return None
    bases = [s for s in group.slices if s.base_file is not None and InstantTime(s.base_instant) < InstantTime(instant)]
    return bases[-1].base_file.path if bases and bases[-1].base_file is not None else None


def _log_keys(table: HoodieTable, paths: Iterable[str], instants: set[str] | None) -> tuple[set[str], set[str]]:
    """Keys of the data blocks, and of the delete blocks, of ``instants`` (None: of every
    completed instant) in the log files, replayed in order: a key deleted then written
    again is written, and the other way round."""
    done = {i.timestamp for i in table.timeline.completed()} if instants is None else instants
    data: set[str] = set()
    gone: set[str] = set()
    for path in paths:
        for block in iter_log_file(table.storage, path):
            if block.instant_time not in done:
                continue
            if isinstance(block, (AvroDataBlock, ParquetDataBlock)) and RECORD_KEY in block.records.column_names:
                keys = set(block.records.column(RECORD_KEY).to_pylist())
                data |= keys
                gone -= keys
            elif isinstance(block, DeleteBlock):
                keys = {d.record_key for d in block.keys if d.record_key is not None}
                gone |= keys
                data -= keys
    return data, gone


def _slice_keys_before(table: HoodieTable, partition: str, base_file: str | None, log_files: list[str], written: str, instant: str) -> set[str]:
    """The keys a slice held before ``instant`` appended to ``written``."""
    held: set[str] = set()
    if base_file:
        held = set(read_record_keys(table.storage, under(table.base_path, partition, base_file)).to_pylist())
    logs = [under(table.base_path, partition, name) for name in log_files]
    done = {i.timestamp for i in table.timeline.completed()} - {instant}
    data, gone = _log_keys(table, dict.fromkeys([*logs, written]), done)
    return (held - gone) | data


# --- from a listing ----------------------------------------------------------------------------


def record_index_of_listing(table: HoodieTable, files: Mapping[str, Mapping[str, int]]) -> list[MetadataRecord]:
    """The location of every key of the table's live file groups, from one listing."""
    utc = _utc(table)
    replaced = table.timeline.replaced_file_groups(table.timeline.completed([Action.REPLACE_COMMIT]))
    out: dict[str, MetadataRecord] = {}
    for partition, names in sorted(files.items()):
        bases: dict[str, tuple[InstantTime, str]] = {}
        logs: dict[str, list[tuple[InstantTime, tuple[str, int, str], str]]] = {}
        for name in names:
            base = parse_base_file_name(name)
            if base is not None:
                t = InstantTime(base.instant)
                if base.file_id not in bases or bases[base.file_id][0] < t:
                    bases[base.file_id] = (t, name)
                continue
            log = parse_log_file_name(name)
            if log is not None and not log.cdc:
                logs.setdefault(log.file_id, []).append((InstantTime(log.instant), log.sort_key(), name))
        for file_id in sorted((bases.keys() | logs.keys()) - replaced.get(partition, set())):
            base_time, base_name = bases.get(file_id, (None, None))
            slice_logs = sorted(x for x in logs.get(file_id, []) if base_time is None or x[0] >= base_time)
            keys: set[str] = set()
            if base_name is not None:
                keys = set(read_record_keys(table.storage, under(table.base_path, partition, base_name)).to_pylist())
            if slice_logs:
                data, gone = _log_keys(table, [under(table.base_path, partition, x[2]) for x in slice_logs], None)
                keys = (keys - gone) | data
            at = str(base_time) if base_time is not None else str(slice_logs[0][0])
            millis = instant_millis(at, utc)
            out.update((k, _location(k, partition, file_id, millis)) for k in keys)
    return [out[k] for k in sorted(out)]
