"""Reading planned file slices through an Engine: one task per slice.

This module owns turning a query's slices into tasks. A slice that is a base file only
(copy-on-write, or merge-on-read without logs, or any slice of a read-optimized query)
becomes a :class:`~.reader.BaseFileTask`; a slice with log files becomes a
:class:`~.merge.MergeSliceTask` that merges base and logs on the executor. Either task
holds one slice, so an executor never holds more than one slice's data per task; the
driver only concatenates the results in slice order.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa

from hoodie.engine import Engine, LocalEngine, TaskContext
from hoodie.errors import UnsupportedTableError
from hoodie.query.instants import InstantFilter
from hoodie.query.merge import MergeSliceTask, run_merge_task
from hoodie.query.merge_rules import MergeConfig
from hoodie.query.reader import BaseFileTask, project, read_base_file_task
from hoodie.table.file_group import FileSlice
from hoodie.table.table import HoodieTable

__all__ = ["base_files_only", "read_file_slices"]

SliceTask = BaseFileTask | MergeSliceTask


def base_files_only(slices: Sequence[FileSlice]) -> list[FileSlice]:
    """The slices as a read-optimized query sees them: log files dropped."""
    return [dataclasses.replace(s, log_files=()) if s.log_files else s for s in slices]


def run_slice_task(task: SliceTask, ctx: TaskContext | None = None) -> pa.Table:
    if isinstance(task, MergeSliceTask):
        return run_merge_task(task, ctx)
    return read_base_file_task(task, ctx)


def _check_parquet(table: HoodieTable, s: FileSlice) -> None:
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
) -> pa.Table:
    """Read every slice (merging the ones with logs) and concatenate under ``schema``
    projected to ``columns``; ``visible`` decides which log blocks count."""
    out_schema = project(schema, columns)
    merge = MergeConfig.for_table(table.config)
    engine = engine or LocalEngine()
    # fewer files than workers (one big file, say): let Arrow decode columns in parallel
    threads = len(slices) < engine.parallelism
    tasks: list[SliceTask] = []
    for s in slices:
        _check_parquet(table, s)
        if s.log_files:
            names = tuple(columns) if columns is not None else None
            tasks.append(MergeSliceTask(table.storage, s, schema, merge, visible, names))
        elif s.base_file is not None:
            tasks.append(BaseFileTask(table.storage, s.base_file.path, out_schema, threads))
    if not tasks:
        return out_schema.empty_table()
    parts = engine.map(run_slice_task, tasks, description)
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
