"""Merging one file slice: its base file and its log files into the slice's live records.

This module owns the slice merge of a merge-on-read read, exactly as hudi-rs 0.5.0's
default file group reader (version 2) does it:

1. the slice's log blocks are replayed oldest first (:mod:`.log_scan` decides which
   count: no corrupt, invisible or rolled-back block); every data row and delete entry
   is merged into a buffer of one surviving version per record key
   (:mod:`.merge_rules`: delta merge, delta merge delete);
2. each base-file row is merged with the buffered version of its key (final merge);
   the winner takes the row's place, or the row disappears when a delete wins; a key
   met again further down the base file is not merged a second time (Java removes the
   buffered record on first use). An incremental read merges only the base rows
   committed in its range (``base_rows``), as Apache Hudi does;
3. the buffered data records whose key no base row had follow, in first-seen order.

The usual slice (data blocks only, one integer, floating or string ordering field, or
commit-time ordering) takes :func:`merge_columnar`, which applies the same rules to whole
columns; it lists the base rows that stay first and the versions replacing base rows
after them (row order within a slice is not part of a read's result). Anything else
goes record by record through the rules above.

Rows keep the five meta columns of the version that won (commit time and seqno as
stored). Log records are cast to the read schema, which is the schema base rows have.
Memory is one slice: the base file and the decoded log blocks of that slice (with
:func:`run_merge_tasks`, the decoded log blocks of its few slices and one base file).

Public API: :func:`read_slice` (query rows), :func:`merge_slice` (rows plus counters),
:func:`~.for_compaction.merge_slice_for_compaction` (meta columns exactly as stored, for compaction),
and :class:`MergeSliceTask` / :func:`run_merge_task` for one Engine task per slice
(:func:`run_merge_tasks` for a few slices in one task, their logs decoded together).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie.engine.base import TaskContext
from hoodie.errors import FormatError, SchemaError
from hoodie.formats.bloom_footer import FooterIndex
from hoodie.formats.conform import conform
from hoodie.formats.log.blocks import DeleteBlock
from hoodie.formats.meta_columns import COMMIT_TIME, RECORD_KEY
from hoodie.storage.base import Storage
from hoodie.table.file_group import BaseFile, FileSlice
from hoodie.table.slice_reader.base_file import BaseFileTask, read_base_file_and_footer, read_base_file_task
from hoodie.table.slice_reader.instants import CommitTimes, InstantFilter
from hoodie.table.slice_reader.log_scan import LogScanStats, ReplayBlock, decode_pending, replay_blocks, scan_log
from hoodie.table.slice_reader.merge_rules import (
    BufferedRecord,
    MergeConfig,
    MergeMode,
    delta_merge,
    delta_merge_delete,
    final_merge,
    newer_wins,
    surviving_versions,
)
from hoodie.table.slice_reader.ordering import column_ordering_values, columnar_kind, delete_ordering_value, sort_keys

__all__ = [
    "MergeSliceTask",
    "MergeStats",
    "MergedSlice",
    "merge_slice",
    "read_slice",
    "replay_together",
    "run_merge_task",
    "run_merge_tasks",
]

# A merge task's slices: few enough that the logs decoded together stay small, while
# the per-field decoding costs are shared (four thousand-record blocks decode together
# in 0.6× the time of four alone).
GROUP_SLICES = 4
GROUP_LOG_BYTES = 4 << 20
# Groups are formed only while every worker still gets this many tasks to balance.
TASKS_PER_WORKER = 4

IS_DELETED = "_hoodie_is_deleted"
OPERATION = "_hoodie_operation"
Visible = Callable[[str], bool] | set[str] | frozenset[str]


@dataclass
class MergeStats:
    """Counters of one slice merge (compaction write stats use them)."""

    base_records: int = 0
    log_records: int = 0  # data rows and delete entries replayed
    updated: int = 0  # base rows replaced by a log version
    deleted: int = 0  # base rows removed by a delete
    inserted: int = 0  # log records of keys no base row had
    scan: LogScanStats = field(default_factory=LogScanStats)

    def counters(self) -> dict[str, int]:
        return {
            "base_records": self.base_records,
            "log_records": self.log_records,
            "updated": self.updated,
            "deleted": self.deleted,
            "inserted": self.inserted,
            "log_files": self.scan.log_files,
            "log_blocks": self.scan.blocks,
            "corrupt_blocks": self.scan.corrupt_blocks,
            "rollback_blocks": self.scan.rollback_blocks,
        }


@dataclass(frozen=True)
class MergedSlice:
    records: pa.Table
    stats: MergeStats
    # the base file's record-key footer, when the merge was asked to keep it
    base_footer: FooterIndex | None = None


def _as_predicate(visible: Visible) -> Callable[[str], bool]:
    if isinstance(visible, (set, frozenset)):
        return visible.__contains__
    return visible


def _working_schema(schema: pa.Schema, merge: MergeConfig, columns: Sequence[str] | None, base_rows: CommitTimes | None) -> pa.Schema:
    """``schema`` restricted to ``columns`` plus what the merge itself reads."""
    if columns is None:
        return schema
    needed = set(columns) | {RECORD_KEY, IS_DELETED, OPERATION, *merge.ordering_fields, *_key_fields(merge)}
    if base_rows is not None:
        needed.add(COMMIT_TIME)
    if merge.delete_marker:
        needed.add(merge.delete_marker[0])
    return pa.schema([f for f in schema if f.name in needed])


def _delete_flags(data: pa.Table, merge: MergeConfig) -> np.ndarray:
    """Rows that are deletes themselves: ``_hoodie_is_deleted``, a ``D`` operation, or the
    table's custom delete marker (Java ``DeleteContext``)."""
    n = data.num_rows
    flags = np.zeros(n, dtype=bool)
    names = set(data.column_names)
    if IS_DELETED in names:
        flags |= pc.fill_null(data.column(IS_DELETED).cast(pa.bool_()), False).to_numpy(zero_copy_only=False)
    if OPERATION in names:
        flags |= pc.fill_null(pc.equal(data.column(OPERATION).cast(pa.string()), "D"), False).to_numpy(zero_copy_only=False)
    if merge.delete_marker and merge.delete_marker[0] in names:
        name, value = merge.delete_marker
        column = data.column(name).cast(pa.string())
        flags |= pc.fill_null(pc.equal(column, value), False).to_numpy(zero_copy_only=False)
    return flags


def _orderings(data: pa.Table, merge: MergeConfig) -> list[Any]:
    if merge.mode is MergeMode.COMMIT_TIME_ORDERING or not merge.ordering_fields:
        return [None] * data.num_rows
    missing = [f for f in merge.ordering_fields if f not in data.column_names]
    if missing:
        return [None] * data.num_rows
    return column_ordering_values([data.column(f) for f in merge.ordering_fields])


def _key_fields(merge: MergeConfig) -> tuple[str, ...]:
    return (RECORD_KEY,) if merge.populate_meta_fields else merge.record_key_fields


def _key_column(data: pa.Table, merge: MergeConfig) -> pa.ChunkedArray:
    """The record key of every row: ``_hoodie_record_key``, or for a table without meta
    fields the key fields' values (``field:value`` pairs joined by commas for several)."""
    fields = _key_fields(merge)
    if len(fields) == 1:
        return data.column(fields[0]).cast(pa.string())
    parts = [pc.binary_join_element_wise(f"{f}:", data.column(f).cast(pa.string()), "") for f in fields]
    return pc.binary_join_element_wise(*parts, ",")


def _keys(data: pa.Table, merge: MergeConfig, where: str) -> list[str]:
    keys = _key_column(data, merge).to_pylist()
    if any(k is None for k in keys):
        raise FormatError(f"{where}: a record has no record key ({', '.join(_key_fields(merge))})")
    return keys


class _LogBuffer:
    """The surviving log version of every key, and the decoded batches they point into."""

    def __init__(self, merge: MergeConfig, schema: pa.Schema, stats: MergeStats) -> None:
        self.merge = merge
        self.schema = schema
        self.stats = stats
        self.records: dict[str, BufferedRecord] = {}
        self.batches: list[pa.Table] = []

    def add_deletes(self, block: DeleteBlock) -> None:
        mode, records = self.merge.mode, self.records
        for entry in block.keys:
            key = entry.record_key
            if key is None:
                raise FormatError(f"delete block of instant {block.instant_time}: an entry has no record key")
            delete = BufferedRecord(delete_ordering_value(entry), True)
            records[key] = delta_merge_delete(mode, delete, records.get(key))
        self.stats.log_records += len(block.keys)

    def add_data(self, records_table: pa.Table, instant: str | None) -> None:
        data = conform(records_table, self.schema, f"log block of instant {instant}")
        if data.num_rows == 0:
            return
        index = len(self.batches)
        self.batches.append(data)
        mode, records = self.merge.mode, self.records
        keys = _keys(data, self.merge, f"log block of instant {instant}")
        for row, (key, ordering, is_delete) in enumerate(zip(keys, _orderings(data, self.merge), _delete_flags(data, self.merge).tolist())):
            records[key] = delta_merge(mode, BufferedRecord(ordering, is_delete, index, row), records.get(key))
        self.stats.log_records += data.num_rows


def _read_base(
    storage: Storage, base: BaseFile | None, schema: pa.Schema, with_footer: bool, ignore_corrupt: bool = False
) -> tuple[pa.Table, FooterIndex | None]:
    if base is None:
        return schema.empty_table(), None
    task = BaseFileTask(storage, base.path, schema, ignore_corrupt=ignore_corrupt)
    return read_base_file_and_footer(task) if with_footer else (read_base_file_task(task), None)


def merge_slice(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    merge: MergeConfig,
    visible: Visible,
    *,
    columns: Sequence[str] | None = None,
    keep_base_footer: bool = False,
    replayed: tuple[Sequence[ReplayBlock], LogScanStats] | None = None,
    ignore_corrupt: bool = False,
    base_rows: CommitTimes | None = None,
) -> MergedSlice:
    """Merge ``file_slice`` into its live records, conformed to ``schema``.

    ``visible`` says which instants' log blocks count (a predicate or a set; see
    :class:`~.instants.InstantFilter`). ``base_rows``, when given, keeps only the base
    rows of those commit times before the merge (an incremental read: see
    :mod:`hoodie.query.incremental`). ``columns`` projects the result (the merge
    still reads the key, ordering and delete-marker columns it needs). A slice without
    a base file merges its log records only. The records of keys no base row had come
    last (``stats.inserted`` of them): compaction hashes only those into the bloom filter
    it carries over from the base file (``keep_base_footer`` returns that file's footer,
    read in the same open as its records). ``replayed`` gives the slice's log blocks
    already replayed (:func:`~.log_scan.replay_blocks` with ``visible``) and what the
    replay met, as :func:`run_merge_tasks` decodes the blocks of several slices together.
    ``ignore_corrupt`` reads around a log block a completed instant wrote and that is
    now corrupt (see :mod:`~.log_scan`), with a warning, instead of raising.
    """
    merge.require_mergeable(f"file group {file_slice.file_id} in partition {file_slice.partition_path!r}")
    working = _working_schema(schema, merge, columns, base_rows)
    missing = [f for f in _key_fields(merge) if f not in working.names]
    if missing:
        raise SchemaError(f"merging file group {file_slice.file_id} needs the record key column(s) {', '.join(missing)}")
    if replayed is None:
        stats = MergeStats()
        blocks: Sequence[ReplayBlock] = replay_blocks(storage, file_slice.log_files, _as_predicate(visible), stats.scan, ignore_corrupt)
    else:
        blocks, scan = replayed
        stats = MergeStats(scan=scan)
    base, footer = _read_base(storage, file_slice.base_file, working, keep_base_footer, ignore_corrupt)
    if base_rows is not None:
        base = base_rows.filter(base)
    stats.base_records = base.num_rows
    out = None
    data_blocks = [b for b in blocks if not isinstance(b, DeleteBlock)]
    if len(data_blocks) == len(blocks):
        logs = [conform(b.records, working, f"log block of instant {b.instant_time}") for b in data_blocks]
        out = merge_columnar(base, [t for t in logs if t.num_rows], merge, stats)
    if out is None:
        # the record-at-a-time rules: delete blocks, delete flags, unusual orderings
        buffer = _LogBuffer(merge, working, stats)
        for block in blocks:
            if isinstance(block, DeleteBlock):
                buffer.add_deletes(block)
            else:
                buffer.add_data(block.records, block.instant_time)
        out = _merge_base(base, buffer, merge.mode, stats)
    return MergedSlice(out.select(list(columns)) if columns is not None else out, stats, footer)


def merge_columnar(base: pa.Table, logs: list[pa.Table], merge: MergeConfig, stats: MergeStats) -> pa.Table | None:
    """The same merge as the record-at-a-time rules, column at a time, for the usual slice:
    log data rows only (no delete blocks, no rows flagged as deletes) and commit-time
    ordering or one ordering field of integer, floating or string type; None otherwise.

    Those rules then reduce to: per key, the log version with the greatest ordering value
    wins, the later one on a tie (commit time: the latest); it replaces the first base row
    of its key unless that row's ordering value is greater; log keys no base row has are
    inserted in first-seen order. Base rows not replaced come first, in file order, then
    the replacing versions, then the inserts.
    """
    if not logs:
        return base
    log = pa.concat_tables(logs) if len(logs) > 1 else logs[0]
    if _delete_flags(log, merge).any():
        return None
    kind = _ordering_kind(log, merge)
    if kind is None:
        return None
    log_ord = None if kind == _COMMIT_TIME else sort_keys(log.column(merge.ordering_fields[0]), kind)
    if kind != _COMMIT_TIME and log_ord is None:
        return None
    keys = _key_column(log, merge).combine_chunks()
    if keys.null_count:
        return None  # the record-at-a-time path reports it, naming the block's instant
    encoded = keys.dictionary_encode()  # codes in first-seen order
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    winner = surviving_versions(codes, len(encoded.dictionary), log_ord)

    replaced_rows = np.zeros(0, dtype=np.int64)
    replacing = np.zeros(0, dtype=np.int64)
    matched = np.zeros(len(winner), dtype=bool)
    if base.num_rows:
        found = pc.index_in(_key_column(base, merge), value_set=encoded.dictionary)
        base_codes = pc.fill_null(found, -1).to_numpy(zero_copy_only=False)
        hit_rows = np.flatnonzero(base_codes >= 0)
        # a key met again further down the base file is not merged a second time
        first_codes, first_at = np.unique(base_codes[hit_rows], return_index=True)
        rows = hit_rows[first_at]
        matched[first_codes] = True
        versions = winner[first_codes]
        if kind == _COMMIT_TIME:
            log_wins = np.ones(len(rows), dtype=bool)
        else:
            field = merge.ordering_fields[0]
            log_wins = newer_wins(base.column(field).take(pa.array(rows)), log.column(field).take(pa.array(versions)))
        replaced_rows, replacing = rows[log_wins], versions[log_wins]
    inserts = winner[~matched]
    stats.log_records += log.num_rows
    stats.updated += len(replaced_rows)
    stats.inserted += len(inserts)
    kept = base
    if len(replaced_rows):
        keep = np.ones(base.num_rows, dtype=bool)
        keep[replaced_rows] = False
        kept = base.filter(pa.array(keep))
    return pa.concat_tables([kept, log.take(pa.array(np.concatenate([replacing, inserts])))])


_COMMIT_TIME = "commit_time"


def _ordering_kind(log: pa.Table, merge: MergeConfig) -> str | None:
    """``commit_time``, or the ordering class of the one ordering field; None when the
    columnar merge does not apply (several fields, or a class it does not compare)."""
    if merge.mode is MergeMode.COMMIT_TIME_ORDERING or not merge.ordering_fields:
        return _COMMIT_TIME
    if len(merge.ordering_fields) != 1:
        return None
    field = merge.ordering_fields[0]
    if field not in log.column_names:
        return _COMMIT_TIME  # no ordering values at all: the newer record always wins
    return columnar_kind(log.schema.field(field).type)


def _merge_base(base: pa.Table, buffer: _LogBuffer, mode: MergeMode, stats: MergeStats) -> pa.Table:
    records = buffer.records
    if not records:
        return base
    offsets = np.cumsum([base.num_rows] + [b.num_rows for b in buffer.batches])
    take = np.arange(base.num_rows, dtype=np.int64)
    keep = np.ones(base.num_rows, dtype=bool)
    if base.num_rows:
        candidates = pc.is_in(_key_column(base, buffer.merge), value_set=pa.array(list(records), pa.string()))
        rows = pc.indices_nonzero(pc.fill_null(candidates, False)).to_numpy()
        if len(rows):
            sub = base.take(pa.array(rows))
            base_orderings = _orderings(sub, buffer.merge)
            for i, key, ordering in zip(rows, _key_column(sub, buffer.merge).to_pylist(), base_orderings):
                log = records.pop(key, None)
                if log is None:  # a duplicate of a key already merged higher up
                    continue
                winner = final_merge(mode, BufferedRecord(ordering, False), log)
                if winner is log:
                    if log.is_delete:
                        keep[i] = False
                        stats.deleted += 1
                    else:
                        take[i] = offsets[log.batch] + log.row
                        stats.updated += 1
    inserts = [offsets[r.batch] + r.row for r in records.values() if not r.is_delete]
    stats.inserted = len(inserts)
    indices = np.concatenate([take[keep], np.asarray(inserts, dtype=np.int64)])
    combined = pa.concat_tables([base, *buffer.batches]) if buffer.batches else base
    return combined.take(pa.array(indices, pa.int64()))


def read_slice(
    storage: Storage,
    file_slice: FileSlice,
    schema: pa.Schema,
    merge: MergeConfig,
    visible: Visible,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """The live records of ``file_slice`` (see :func:`merge_slice`)."""
    return merge_slice(storage, file_slice, schema, merge, visible, columns=columns).records


# --- engine task ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergeSliceTask:
    """Merge one slice on an executor; picklable (storage, slice, schemas, filters)."""

    storage: Storage
    file_slice: FileSlice
    schema: pa.Schema  # the full query schema
    merge: MergeConfig
    visible: InstantFilter
    columns: tuple[str, ...] | None = None
    ignore_corrupt: bool = False  # read around damaged committed log blocks (ignoreCorruptFiles)
    base_rows: CommitTimes | None = None  # base rows merged (an incremental read's range); None: all


def run_merge_task(task: MergeSliceTask, ctx: TaskContext | None = None) -> pa.Table:
    """Run a :class:`MergeSliceTask`."""
    return run_merge_tasks((task,), ctx)


def run_merge_tasks(tasks: Sequence[MergeSliceTask], ctx: TaskContext | None = None) -> pa.Table:
    """Run several :class:`MergeSliceTask` one after another, their log blocks decoded
    together (:func:`~.log_scan.decode_pending`: the vectorized Avro codec's cost is
    largely per field, so a thousand-record block alone pays it mostly for its fields).
    Memory is the log files of all the slices and the base file of one; the result is
    the slices' records, concatenated in task order."""
    replayed = replay_together(tasks[0].storage, [t.file_slice for t in tasks], [t.visible for t in tasks], tasks[0].ignore_corrupt)
    parts = [
        merge_slice(
            task.storage, task.file_slice, task.schema, task.merge, task.visible,
            columns=task.columns, replayed=r, ignore_corrupt=task.ignore_corrupt, base_rows=task.base_rows,
        ).records
        for task, r in zip(tasks, replayed)
    ]
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def replay_together(
    storage: Storage, slices: Sequence[FileSlice], visible: Sequence[Visible], ignore_corrupt: bool = False
) -> list[tuple[list[ReplayBlock], LogScanStats]]:
    """The log blocks of each of ``slices`` replayed (``visible[i]`` deciding for slice
    ``i``) with what each replay met, as :func:`merge_slice` takes them (``replayed``),
    the blocks of all the slices decoded together."""
    scans = [LogScanStats() for _ in slices]
    pending = [scan_log(storage, s.log_files, _as_predicate(v), scan, ignore_corrupt) for s, v, scan in zip(slices, visible, scans)]
    decoded = decode_pending([p for slice_pending in pending for p in slice_pending])
    out, at = [], 0
    for slice_pending, scan in zip(pending, scans):
        out.append((decoded[at : at + len(slice_pending)], scan))
        at += len(slice_pending)
    return out
