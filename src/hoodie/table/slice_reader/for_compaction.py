"""Merging the slices a compaction plan names into the records of their new base files:
the slice merge of :mod:`.merge`, seeing the completed writes up to the compaction
instant, with the meta columns exactly as stored, over log files checked against the
byte ranges their delta commits wrote."""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa

from hoodie.errors import FormatError
from hoodie.formats.meta_columns import stored_layout
from hoodie.layout import parse_base_file_name, parse_log_file_name
from hoodie.storage.base import Storage
from hoodie.storage.paths import under
from hoodie.table.file_group import BaseFile, FileSlice, LogExtent, LogFile
from hoodie.table.slice_reader.instants import InstantFilter
from hoodie.table.slice_reader.merge import MergedSlice, Visible, merge_slice, replay_together
from hoodie.table.slice_reader.merge_rules import MergeConfig, MergeMode
from hoodie.table.table import HoodieTable
from hoodie.timeline.compaction_plan import CompactionOperation


def _slice_of(base_path: str, op: CompactionOperation, committed: Mapping[str, tuple[LogExtent, ...]]) -> FileSlice:
    """A FileSlice from a compaction operation (partition, file id, base and log names);
    ``committed`` gives the byte ranges completed delta commits wrote into its logs, so that
    a compaction never folds a damaged log into a new base file as if it were whole."""
    directory = under(base_path, op.partition_path)
    base = None
    if op.base_file:
        base_name = parse_base_file_name(op.base_file)
        if base_name is None:
            raise FormatError(f"compaction operation names {op.base_file!r}, which is not a base file name")
        base = BaseFile(under(directory, op.base_file), base_name, 0)
    logs = []
    for log in op.log_files:
        log_name = parse_log_file_name(log)
        if log_name is None:
            raise FormatError(f"compaction operation names {log!r}, which is not a log file name")
        logs.append(LogFile(under(directory, log), log_name, 0, committed.get(log, ())))
    logs.sort(key=lambda lf: lf.name.sort_key())
    return FileSlice(op.partition_path, op.file_id, op.base_instant, base, tuple(logs))


def committed_log_extents(table: HoodieTable, ops: Sequence[CompactionOperation]) -> list[dict[str, tuple[LogExtent, ...]]]:
    """Per compaction operation, the byte ranges the table's completed delta commits wrote
    into its log files, by log name (their write stats: see :mod:`hoodie.table.committed`)."""
    committed = table.storage_view().committed  # (what commits wrote: nothing is listed)
    out = []
    for op in ops:
        logs = committed.partition(op.partition_path).logs
        out.append({log: tuple(logs[log]) for log in op.log_files if log in logs})
    return out


def compaction_merge_inputs(table: HoodieTable, instant: str, ordering_field: str | None = None) -> tuple[MergeConfig, InstantFilter]:
    """How a compaction at ``instant`` merges (the table's merge configuration, with
    ``ordering_field`` when given) and which log blocks it sees (completed writes up to
    the compaction instant). Computed once on the driver; both are picklable."""
    merge = MergeConfig.for_table(table.config)
    if ordering_field and merge.mode is MergeMode.EVENT_TIME_ORDERING:
        merge = MergeConfig(merge.mode, (ordering_field,), merge.populate_meta_fields, merge.delete_marker, merge.description)
    # no write shares the compaction's instant time, so "up to" it means "before" it
    return merge, InstantFilter.of_timeline(table.timeline, upto=instant)


def merge_slice_for_compaction(
    storage: Storage,
    base_path: str,
    op: CompactionOperation,
    schema: pa.Schema,
    ordering_field: str | None,
    instant: str,
    merge: MergeConfig | None = None,
    visible: Visible | None = None,
) -> MergedSlice:
    """Merge the slice a compaction operation names into the records of its new base file.

    ``op`` names the slice (partition, file id, base instant, base and log file names).
    ``schema`` is the table's data schema; the
    records have the five meta columns first, exactly as stored in the winning records.
    ``merge`` and ``visible`` default to :func:`compaction_merge_inputs` (which opens the
    table: pass them when merging many slices). The result also carries the merge
    counters (``stats.counters()``: ``updated``, ``deleted``, ``log_records``,
    ``log_blocks``, ``corrupt_blocks``, ``rollback_blocks``, ...) and the base file's
    footer, read in the same open as its records (its bloom filter carries over to the
    compacted file).
    """
    if merge is None or visible is None:
        table_merge, table_visible = compaction_merge_inputs(HoodieTable.open(base_path, storage), instant, ordering_field)
        merge = merge or table_merge
        visible = visible or table_visible
    return next(merge_slices_for_compaction(storage, base_path, [op], schema, merge, visible))


def merge_slices_for_compaction(
    storage: Storage,
    base_path: str,
    ops: Sequence[CompactionOperation],
    schema: pa.Schema,
    merge: MergeConfig,
    visible: Visible,
    committed: Sequence[Mapping[str, tuple[LogExtent, ...]]] | None = None,
) -> Iterator[MergedSlice]:
    """:func:`merge_slice_for_compaction` of several operations, one after another, their
    log blocks decoded together (:func:`replay_together`). Each merged slice is yielded
    before the next is merged: memory is the log blocks of all of them and the records of
    one. ``committed[i]`` maps the log names of ``ops[i]`` to the byte ranges completed
    delta commits wrote into them (:func:`committed_log_extents`)."""
    slices = [_slice_of(base_path, op, committed[i] if committed else {}) for i, op in enumerate(ops)]
    stored = stored_layout(schema)
    for s, replayed in zip(slices, replay_together(storage, slices, [visible] * len(slices))):
        yield merge_slice(storage, s, stored, merge, visible, keep_base_footer=True, replayed=replayed)
