"""Reading planned file slices through an Engine: a task per slice, or per few slices.

This module owns turning a query's slices into tasks. A slice that is a base file only
(copy-on-write, or merge-on-read without logs, or any slice of a read-optimized query)
becomes a :class:`~hoodie.table.slice_reader.base_file.BaseFileTask`; a slice with log files becomes a
:class:`~hoodie.table.slice_reader.merge.MergeSliceTask` that merges base and logs on the executor. When a read
has many slices with logs, up to four of them (with at most 4 MiB of log files) make one
task, :class:`MergeGroup`, that merges them one after another and decodes their log
blocks together (:func:`~hoodie.table.slice_reader.merge.run_merge_tasks`), which saves a third of the decoding
of typical thousand-record blocks; there are still at least four tasks per worker. So
an executor holds one base file and the logs of at most a few slices per task; the
driver only concatenates the results (slices with logs first, then the others, each in
plan order).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from hoodie.engine import Engine, LocalEngine, TaskContext
from hoodie.engine.runs import grouped_runs
from hoodie.errors import UnsupportedTableError
from hoodie.query.reader import project
from hoodie.table.file_group import FileSlice
from hoodie.table.slice_reader.base_file import BaseFileTask, read_base_file_task
from hoodie.table.slice_reader.instants import CommitTimes, InstantFilter
from hoodie.table.slice_reader.merge import GROUP_LOG_BYTES, GROUP_SLICES, TASKS_PER_WORKER, MergeSliceTask, run_merge_task, run_merge_tasks
from hoodie.table.slice_reader.merge_rules import MergeConfig
from hoodie.table.table import HoodieTable

__all__ = ["MergeGroup", "SliceTask", "base_files_only", "check_parquet", "group_merges", "read_file_slices", "run_slice_task", "slice_tasks"]



@dataclass(frozen=True)
class MergeGroup:
    """Slices with logs merged in one task (:func:`~hoodie.table.slice_reader.merge.run_merge_tasks`)."""

    tasks: tuple[MergeSliceTask, ...]


SliceTask = BaseFileTask | MergeSliceTask | MergeGroup


def base_files_only(slices: Sequence[FileSlice]) -> list[FileSlice]:
    """The slices as a read-optimized query sees them: log files dropped."""
    return [dataclasses.replace(s, log_files=()) if s.log_files else s for s in slices]


def run_slice_task(task: SliceTask, ctx: TaskContext | None = None) -> pa.Table:
    if isinstance(task, MergeGroup):
        return run_merge_tasks(task.tasks, ctx)
    if isinstance(task, MergeSliceTask):
        return run_merge_task(task, ctx)
    return read_base_file_task(task, ctx)


def group_merges(tasks: Sequence[MergeSliceTask], parallelism: int) -> list[MergeSliceTask | MergeGroup]:
    """``tasks`` in order, consecutive ones grouped (at most :data:`GROUP_SLICES` slices
    and :data:`GROUP_LOG_BYTES` of log files a group, a bigger slice alone) while every
    worker still gets :data:`TASKS_PER_WORKER` tasks."""
    runs = grouped_runs(tasks, lambda t: sum(lf.size for lf in t.file_slice.log_files), GROUP_LOG_BYTES, GROUP_SLICES, parallelism, TASKS_PER_WORKER)
    return [run[0] if len(run) == 1 else MergeGroup(tuple(run)) for run in runs]


def check_parquet(table: HoodieTable, s: FileSlice) -> None:
    if s.base_file is not None and not s.base_file.file_name.endswith(".parquet"):
        raise UnsupportedTableError(
            f"{table.base_path}: base file {s.base_file.file_name} is not Parquet; only Parquet base files can be read"
        )


def read_file_slices(
    table: HoodieTable,
    slices: Sequence[FileSlice],
    schema: pa.Schema,
    visible: InstantFilter,
    columns: Sequence[str] | None = None,
    engine: Engine | None = None,
    description: str = "read file slices",
    ignore_corrupt: bool = False,
    base_rows: CommitTimes | None = None,
) -> pa.Table:
    """Read every slice (merging the ones with logs) and concatenate under ``schema``
    projected to ``columns``; ``visible`` decides which log blocks count, ``base_rows``
    (when given) which base rows of a slice with logs are merged; ``ignore_corrupt``
    reads around damaged files with a warning instead of raising."""
    out_schema = project(schema, columns)
    engine = engine or LocalEngine()
    tasks = slice_tasks(table, slices, schema, visible, columns, engine.parallelism, ignore_corrupt, base_rows)
    if not tasks:
        return out_schema.empty_table()
    parts = engine.map(run_slice_task, tasks, description)
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def slice_tasks(
    table: HoodieTable,
    slices: Sequence[FileSlice],
    schema: pa.Schema,
    visible: InstantFilter,
    columns: Sequence[str] | None,
    parallelism: int,
    ignore_corrupt: bool = False,
    base_rows: CommitTimes | None = None,
) -> list[SliceTask]:
    """One task per slice, or per few slices with logs (:func:`group_merges` for
    ``parallelism`` workers), each returning ``schema`` projected to ``columns``; the
    arguments as for :func:`read_file_slices`."""
    out_schema = project(schema, columns)
    merge = MergeConfig.for_table(table.config)
    # fewer files than workers (one big file, say): let Arrow decode columns in parallel
    threads = len(slices) < parallelism
    tasks: list[SliceTask] = []
    merges: list[MergeSliceTask] = []
    names = tuple(columns) if columns is not None else None
    for s in slices:
        check_parquet(table, s)
        if s.log_files:
            merges.append(MergeSliceTask(table.storage, s, schema, merge, visible, names, ignore_corrupt, base_rows))
        elif s.base_file is not None:
            tasks.append(BaseFileTask(table.storage, s.base_file.path, out_schema, threads, ignore_corrupt))
    # merges first: the longest tasks, so the short base-file reads fill in at the end
    return [*group_merges(merges, parallelism), *tasks]
